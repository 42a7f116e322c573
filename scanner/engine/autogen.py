"""Autogen: rules for pod controllers generated from Pod rules (spec 10)."""

from __future__ import annotations

import copy
import json
from typing import Any

from scanner.engine.match import is_version

POD_CONTROLLERS = ("DaemonSet", "Deployment", "Job", "StatefulSet", "ReplicaSet",
                   "ReplicationController", "CronJob")
_POD_AND_CONTROLLERS = frozenset((*POD_CONTROLLERS, "Pod"))
_GVK = {
    "DaemonSet": "apps/v1/DaemonSet",
    "Deployment": "apps/v1/Deployment",
    "Job": "batch/v1/Job",
    "StatefulSet": "apps/v1/StatefulSet",
    "ReplicaSet": "apps/v1/ReplicaSet",
    "ReplicationController": "v1/ReplicationController",
    "CronJob": "batch/v1/CronJob",
}
_SUBRULES = ("pattern", "deny", "podSecurity", "anyPattern", "foreach", "cel")
_JMESPATH_REWRITES = {
    "controllers": (
        ("request.object.spec", "request.object.spec.template.spec"),
        ("request.oldObject.spec", "request.oldObject.spec.template.spec"),
        ("request.object.metadata", "request.object.spec.template.metadata"),
        ("request.oldObject.metadata", "request.oldObject.spec.template.metadata"),
    ),
    "CronJob": (
        ("request.object.spec", "request.object.spec.jobTemplate.spec.template.spec"),
        ("request.oldObject.spec", "request.oldObject.spec.jobTemplate.spec.template.spec"),
        ("request.object.metadata", "request.object.spec.jobTemplate.spec.template.metadata"),
        ("request.oldObject.metadata", "request.oldObject.spec.jobTemplate.spec.template.metadata"),
    ),
}
_CEL_REWRITES = {
    "controllers": (
        ("object.spec", "object.spec.template.spec"),
        ("oldObject.spec", "oldObject.spec.template.spec"),
        ("object.metadata", "object.spec.template.metadata"),
        ("oldObject.metadata", "oldObject.spec.template.metadata"),
    ),
    "CronJob": (
        ("object.spec", "object.spec.jobTemplate.spec.template.spec"),
        ("oldObject.spec", "oldObject.spec.jobTemplate.spec.template.spec"),
        ("object.metadata", "object.spec.jobTemplate.spec.template.metadata"),
        ("oldObject.metadata", "oldObject.spec.jobTemplate.spec.template.metadata"),
    ),
}


def _filters(block: Any) -> list[dict]:
    if not isinstance(block, dict):
        return []
    if block.get("any") is not None or block.get("all") is not None:
        return [f for f in (block.get("any") or block.get("all") or []) if isinstance(f, dict)]
    return [block]


def _kinds(f: dict) -> list[str]:
    res = found if isinstance(found := f.get("resources"), dict) else {}
    return [k for k in (res.get("kinds") or []) if isinstance(k, str)]


def _kind_name(entry: str) -> str:
    """The kind a kinds entry names, read the way autogen reads it (subresource dropped)."""
    parts = entry.split("/")
    if len(parts) == 1:
        kind = entry.replace(".", "/", 1)
    elif len(parts) == 2:
        kind = parts[1].replace(".", "/", 1) if is_version(parts[0]) and parts != ["*", "*"] else entry
    elif len(parts) == 3:
        kind = f"{parts[1]}/{parts[2]}" if is_version(parts[0]) else parts[2].replace(".", "/", 1)
    elif len(parts) == 4:
        kind = f"{parts[2]}/{parts[3]}"
    else:
        kind = ""
    pieces = kind.split("/")
    return pieces[0] if len(pieces) == 2 else kind


def _is_pod(kind: str) -> bool:
    return _kind_name(kind) == "Pod"


def _blocks_autogen(f: dict) -> bool:
    """A name, names, selector or annotations condition, or Pod mixed with other kinds."""
    res = found if isinstance(found := f.get("resources"), dict) else {}
    if res.get("name") or res.get("names") or res.get("selector") is not None or res.get("annotations") is not None:
        return True
    kinds = _kinds(f)
    return len(kinds) > 1 and any(_is_pod(k) for k in kinds)


def autogen_controllers(policy: dict) -> frozenset[str]:
    """The controller kinds autogen applies to for this policy (empty when disabled, or when no
    rule is generated: computeRules then keeps every declared rule, ``autogen-`` ones included)."""
    spec = policy.get("spec") or {}
    rules = [r for r in (spec.get("rules") or []) if isinstance(r, dict)]
    mentions = False
    for rule in rules:
        if rule.get("generate") or _has_json6902(rule.get("mutate")):
            return frozenset()
        for part in ("match", "exclude"):
            for f in _filters(rule.get(part)):
                if _blocks_autogen(f):
                    return frozenset()
                mentions = mentions or not _POD_AND_CONTROLLERS.isdisjoint(_kinds(f))
    if not mentions or not any(can_generate(rule) for rule in rules):
        return frozenset()
    annotations = (policy.get("metadata") or {}).get("annotations") or {}
    value = annotations.get("pod-policies.kyverno.io/autogen-controllers")
    if value is None:
        return frozenset(POD_CONTROLLERS)
    return frozenset(str(value).split(",")).intersection(POD_CONTROLLERS)


def _has_json6902(mutate: Any) -> bool:
    if not isinstance(mutate, dict):
        return False
    if mutate.get("patchesJson6902"):
        return True
    return any(isinstance(f, dict) and f.get("patchesJson6902") for f in mutate.get("foreach") or [])


def can_generate(rule: dict) -> bool:
    """A declared rule produces generated rules (spec 10.2)."""
    name = rule.get("name")
    if not isinstance(name, str) or name.startswith("autogen-"):
        return False
    validate = rule.get("validate")
    if not isinstance(validate, dict) or _subrule(validate) is None:
        return False
    match_kinds = [k for f in _filters(rule.get("match")) for k in _kinds(f)]
    if not any(_is_pod(k) for k in match_kinds):
        return False
    exclude_kinds = [k for f in _filters(rule.get("exclude")) for k in _kinds(f)]
    return not exclude_kinds or any(_is_pod(k) for k in exclude_kinds)


def _subrule(validate: dict) -> str | None:
    """The validate part autogen carries over: the first one present (foreach only when it has entries)."""
    for key in _SUBRULES:
        value = validate.get(key)
        if value is not None and (key != "foreach" or value):
            return key
    return None


def _replace_kinds(block: Any, new_kinds: list[str], cronjob: bool, legacy_only_with_kinds: bool) -> Any:
    """The kinds rewrite of generateRule: in ``any``/``all`` the filters naming Pod (for the CronJob
    rule, which is built from the controllers rule, every filter); else the legacy block, whose
    exclude kinds are only replaced when it has some."""
    if not isinstance(block, dict):
        return block
    block = copy.deepcopy(block)
    for mode in ("any", "all"):
        if isinstance(block.get(mode), list):
            for f in block[mode]:
                if isinstance(f, dict) and (cronjob or any(_is_pod(k) for k in _kinds(f))):
                    f.setdefault("resources", {})["kinds"] = list(new_kinds)
            return block
    kinds = _kinds(block)
    if kinds or not legacy_only_with_kinds:
        block.setdefault("resources", {})["kinds"] = list(new_kinds)
    return block


def generate_rule(rule: dict, controllers: frozenset[str], target: str) -> dict | None:
    """The generated rule for ``target`` ("controllers" or "CronJob"), or None."""
    if target == "CronJob":
        if "CronJob" not in controllers:
            return None
        kinds = [_GVK["CronJob"]]
        name = f"autogen-cronjob-{rule['name']}"
    else:
        chosen = sorted(k for k in controllers if k != "CronJob")  # splitKinds sorts them
        if not chosen:
            return None
        kinds = [_GVK[k] for k in chosen]
        name = f"autogen-{rule['name']}"
    validate = dict(rule["validate"])
    chosen_sub = _subrule(validate)
    if chosen_sub is None:
        return None
    keep = {"message", "failureAction", "failureActionOverrides", "allowExistingViolations"}
    new_validate = {k: v for k, v in validate.items() if k in keep}
    new_validate[chosen_sub] = copy.deepcopy(validate[chosen_sub])
    if chosen_sub == "pattern":
        new_validate["pattern"] = _wrap(new_validate["pattern"], target)
    elif chosen_sub == "anyPattern" and isinstance(new_validate["anyPattern"], list):
        new_validate["anyPattern"] = [_wrap(p, target) for p in new_validate["anyPattern"]]
    generated: dict[str, Any] = {k: copy.deepcopy(v) for k, v in rule.items()
                                 if k not in ("name", "match", "exclude", "validate")}
    generated["name"] = name[:63]
    generated["match"] = _omit_empty_filters(_replace_kinds(rule.get("match"), kinds, target == "CronJob", False))
    if rule.get("exclude") is not None:
        generated["exclude"] = _omit_empty_filters(
            _replace_kinds(rule.get("exclude"), kinds, target == "CronJob", True))
    if isinstance(generated.get("preconditions"), dict):
        generated["preconditions"] = _omit_empty(generated["preconditions"], ("any", "all"))
    generated["validate"] = new_validate
    rewrites = (_CEL_REWRITES if chosen_sub == "cel" else _JMESPATH_REWRITES)[target]
    text = json.dumps(generated)
    for old, new in rewrites:
        text = text.replace(old, new)
    return json.loads(text)


# Kyverno serialises a generated rule's match/exclude and preconditions from typed structs
# whose lists and maps are ``omitempty``: one written empty is gone in the generated rule
_FILTER_LISTS = ("roles", "clusterRoles", "subjects")
_RESOURCE_LISTS = ("kinds", "names", "namespaces", "annotations", "operations")


def _omit_empty(mapping: dict, keys: tuple[str, ...]) -> dict:
    return {k: v for k, v in mapping.items() if not (k in keys and v in ([], {}))}


def _omit_empty_filters(block: Any) -> Any:
    if not isinstance(block, dict):
        return block
    block = _omit_empty(block, ("any", "all"))
    for mode in ("any", "all"):
        if isinstance(block.get(mode), list):
            block[mode] = [_omit_empty_filter(f) for f in block[mode]]
            return block
    return _omit_empty_filter(block)


def _omit_empty_filter(f: Any) -> Any:
    if not isinstance(f, dict):
        return f
    f = _omit_empty(f, _FILTER_LISTS)
    if isinstance(f.get("resources"), dict):
        f["resources"] = _omit_empty(f["resources"], _RESOURCE_LISTS)
    return f


def _wrap(pattern: Any, target: str) -> Any:
    if target == "CronJob":
        return {"spec": {"jobTemplate": {"spec": {"template": pattern}}}}
    return {"spec": {"template": pattern}}
