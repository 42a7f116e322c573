"""Kyverno CLI values (``cli.kyverno.io/v1alpha1`` Values) and user info, as engine data (spec 14.3-14.4)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any

from scanner.engine.dotted import set_path, split_dotted
from scanner.engine.match import ResourceView, UserInfo
from scanner.errors import EngineError


@dataclass(frozen=True, slots=True)
class Values:
    """A Kyverno CLI values file, parsed: global, per-resource and per-rule values, namespace labels."""

    global_values: dict[str, Any] = field(default_factory=dict)
    # policy name -> resource name -> values
    resource_values: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    # policy name -> rule name -> values
    rule_values: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    namespace_labels: dict[str, dict[str, Any]] = field(default_factory=dict)
    subresources: tuple[dict, ...] = ()
    # policy name -> rule name -> foreachValues (see ``ForeachValues``)
    rule_foreach_values: dict[str, dict[str, ForeachValues]] = field(default_factory=dict)

    @property
    def sets_variables(self) -> bool:
        """Whether any value enters a rule's variables (global, per resource, per rule or per
        foreach element); namespace labels and subresources do not."""
        return bool(self.global_values or self.resource_values or self.rule_values or self.rule_foreach_values)

    def for_resource(self, policy: str, resource: str) -> dict[str, Any]:
        """Global values overlaid with this policy's values for the resource (by name)."""
        out = dict(self.global_values)
        out.update(self.resource_values.get(policy, {}).get(resource, {}))
        return out

    def for_rule(self, policy: str, rule: str) -> dict[str, Any]:
        return _rule_entry(self.rule_values.get(policy, {}), rule) or {}

    def foreach_for_rule(self, policy: str, rule: str) -> ForeachValues | None:
        return _rule_entry(self.rule_foreach_values.get(policy, {}), rule)

    def operation(self, policy: str, resource: str) -> str:
        """The engine operation: UPDATE or DELETE when the values say so, CREATE for anything else
        (a ``request.operation: CONNECT`` value is visible to expressions but evaluated as CREATE)."""
        op = self.for_resource(policy, resource).get("request.operation")
        return op if op in ("UPDATE", "DELETE") else "CREATE"

    def object_for(self, policy: str, name: str, resource: dict) -> dict:
        """The resource (named ``name``) as ``policy`` sees it: values that write into
        ``request.object`` (``request.oldObject`` for a DELETE) change it, as the CLI reads the
        resource back from the context after adding the values; the same object when none does."""
        values = self.for_resource(policy, name)
        field_name = "oldObject" if self.operation(policy, name) == "DELETE" else "object"
        written = [(keys, value) for keys, value in ((split_dotted(k), v) for k, v in values.items())
                   if keys[:2] == ["request", field_name]]
        if not written:
            return resource
        tree: dict[str, Any] = {"request": {field_name: resource}}
        for keys, value in written:
            tree = set_path(tree, keys, value)
        changed = tree["request"][field_name]
        return changed if isinstance(changed, dict) else resource

    def seen_by(self, policy: str, resource: dict, view: ResourceView) -> tuple[dict, ResourceView]:
        """The resource and its view as ``policy`` sees them (see ``object_for``)."""
        seen = self.object_for(policy, view.name, resource)
        return (resource, view) if seen is resource else (seen, self.resource_view(seen))

    def labels_of(self, namespace: str) -> dict[str, Any] | None:
        return self.namespace_labels.get(namespace)

    def resource_view(self, resource: dict) -> ResourceView:
        """The resource as matching sees it: an object of a ``subresources`` entry's kind (a Scale,
        a PodExecOptions) is matched as its parent kind with that subresource (``Deployment/scale``),
        as the CLI does without a cluster; of several entries for one kind the last one counts."""
        view = ResourceView.of(resource)
        found = None
        for entry in self.subresources:
            sub, parent = _object(entry, "subresource"), _object(entry, "parentResource")
            if _gvk(sub) == (view.group, view.version, view.kind):
                found = (*_gvk(parent), str(sub.get("name") or "").partition("/")[2])
        if found is None:
            return view
        group, version, kind, subresource = found
        return replace(view, group=group, version=version, kind=kind, subresource=subresource)


# A rule's ``foreachValues``: per variable, its value for each foreach element (by element index),
# for every foreach of the rule (a mapping) or for the foreach at the same position (a list of mappings).
ForeachValues = dict[str, list[Any]] | list[dict[str, list[Any]]]


def _object(entry: Any, key: str) -> dict[str, Any]:
    value = entry.get(key) if isinstance(entry, dict) else None
    return value if isinstance(value, dict) else {}


def _gvk(api_resource: dict[str, Any]) -> tuple[str, str, str]:
    return (str(api_resource.get("group") or ""), str(api_resource.get("version") or ""),
            str(api_resource.get("kind") or ""))


def _rule_entry(rules: dict[str, Any], rule: str) -> Any:
    """The entry of ``rule``, or of the rule an ``autogen-`` rule was generated from."""
    if rule in rules:
        return rules[rule]
    for prefix in ("autogen-cronjob-", "autogen-"):
        if rule.startswith(prefix) and rule[len(prefix):] in rules:
            return rules[rule[len(prefix):]]
    return None


def foreach_element_values(values: ForeachValues, block: int, element: int) -> dict[str, Any]:
    """The variables ``values`` give the element at index ``element`` of the foreach at position
    ``block`` (those with no value for it are left out)."""
    by_name = values if isinstance(values, dict) else (values[block] if block < len(values) else {})
    return {name: seq[element] for name, seq in by_name.items() if element < len(seq)}


class ValuesError(EngineError, ValueError):
    """A values or user info document has the wrong shape; the message names the field and
    ``pointer`` is its JSON pointer in the document."""

    def __init__(self, where: str, problem: str) -> None:
        super().__init__(f"{where} {problem}")
        path = re.sub(r"\[(\d+)\]", r".\1", where).split(".")
        self.pointer = "" if where in _DOCUMENTS else "/" + "/".join(path)


_DOCUMENTS = {"values", "userinfo"}  # the names of whole documents in messages


def _mapping(value: Any, where: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ValuesError(where, "must be an object")
    return value


def _list(value: Any, where: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise ValuesError(where, "must be a list")
    return value


def _known(value: dict[str, Any], fields: frozenset[str], where: str = "") -> dict[str, Any]:
    """``value`` when it has only ``fields`` (Kyverno decodes values and user info strictly)."""
    unknown = sorted(set(value) - fields, key=str)
    if unknown:
        raise ValuesError(f"{where}.{unknown[0]}" if where else str(unknown[0]), "is not a known field")
    return value


_VALUES_FIELDS = frozenset({"apiVersion", "kind", "metadata", "globalValues", "policies", "namespaceSelector",
                            "namespaces", "subresources", "variables"})
_POLICY_FIELDS = frozenset({"name", "resources", "rules"})
_RESOURCE_FIELDS = frozenset({"name", "values"})
_RULE_FIELDS = frozenset({"name", "values", "foreachValues"})
_SELECTOR_FIELDS = frozenset({"name", "labels"})
_USERINFO_FIELDS = frozenset({"apiVersion", "kind", "metadata", "roles", "clusterRoles", "userInfo"})
_USER_FIELDS = frozenset({"username", "uid", "groups", "extra"})


def parse_values(doc: Any) -> Values:
    """Parse a Values document (also accepts the bare ValuesSpec of a Test's inline ``values``).
    Values of several entries for the same policy and resource are merged (later keys win); of several
    entries for the same rule the first one counts."""
    doc = _known(_mapping(doc, "values"), _VALUES_FIELDS)
    resource_values: dict[str, dict[str, dict[str, Any]]] = {}
    rule_values: dict[str, dict[str, dict[str, Any]]] = {}
    rule_foreach_values: dict[str, dict[str, ForeachValues]] = {}
    for i, pol in enumerate(_list(doc.get("policies"), "policies")):
        pol = _known(_mapping(pol, f"policies[{i}]"), _POLICY_FIELDS, f"policies[{i}]")
        name = str(pol.get("name") or "")
        for j, res in enumerate(_list(pol.get("resources"), f"policies[{i}].resources")):
            where = f"policies[{i}].resources[{j}]"
            res = _known(_mapping(res, where), _RESOURCE_FIELDS, where)
            resource_values.setdefault(name, {}).setdefault(str(res.get("name") or ""), {}).update(
                _mapping(res.get("values"), f"{where}.values"))
        for j, rule in enumerate(_list(pol.get("rules"), f"policies[{i}].rules")):
            where = f"policies[{i}].rules[{j}]"
            rule = _known(_mapping(rule, where), _RULE_FIELDS, where)
            rule_values.setdefault(name, {}).setdefault(str(rule.get("name") or ""),
                                                        _mapping(rule.get("values"), f"{where}.values"))
            if rule.get("foreachValues") is not None:
                rule_foreach_values.setdefault(name, {}).setdefault(
                    str(rule.get("name") or ""), _foreach_values(rule["foreachValues"], f"{where}.foreachValues"))
    labels: dict[str, dict[str, Any]] = {}
    for i, entry in enumerate(_list(doc.get("namespaceSelector"), "namespaceSelector")):
        entry = _known(_mapping(entry, f"namespaceSelector[{i}]"), _SELECTOR_FIELDS, f"namespaceSelector[{i}]")
        labels[str(entry.get("name") or "")] = _mapping(entry.get("labels"), f"namespaceSelector[{i}].labels")
    for i, ns in enumerate(_list(doc.get("namespaces"), "namespaces")):
        meta = _mapping(_mapping(ns, f"namespaces[{i}]").get("metadata"), f"namespaces[{i}].metadata")
        labels[str(meta.get("name") or "")] = _mapping(meta.get("labels"), f"namespaces[{i}].metadata.labels")
    return Values(
        global_values=_mapping(doc.get("globalValues"), "globalValues"),
        resource_values=resource_values,
        rule_values=rule_values,
        namespace_labels=labels,
        subresources=tuple(_list(doc.get("subresources"), "subresources")),
        rule_foreach_values=rule_foreach_values,
    )


def _foreach_values(raw: Any, where: str) -> ForeachValues:
    """``foreachValues``: a mapping of variable -> list of values, or a list of such mappings."""
    def by_name(value: Any, at: str) -> dict[str, list[Any]]:
        return {str(k): _list(v, f"{at}.{k}") for k, v in _mapping(value, at).items()}

    if isinstance(raw, list):
        return [by_name(item, f"{where}[{i}]") for i, item in enumerate(raw)]
    if not isinstance(raw, dict):
        raise ValuesError(where, "must be an object or a list of objects")
    return by_name(raw, where)


def parse_userinfo(doc: Any) -> UserInfo:
    """Parse a ``UserInfo`` document (roles, clusterRoles, userInfo.username/groups)."""
    doc = _known(_mapping(doc, "userinfo"), _USERINFO_FIELDS)
    info = _known(_mapping(doc.get("userInfo"), "userInfo"), _USER_FIELDS, "userInfo")
    return UserInfo(
        username=str(info.get("username") or ""),
        groups=tuple(str(g) for g in _list(info.get("groups"), "userInfo.groups")),
        roles=tuple(str(r) for r in _list(doc.get("roles"), "roles")),
        cluster_roles=tuple(str(r) for r in _list(doc.get("clusterRoles"), "clusterRoles")),
        uid=str(info.get("uid") or ""),
        extra=_mapping(info.get("extra"), "userInfo.extra"),
    )
