"""The ``validate.cel`` rules of the conformance corpus with their expected results.

Reads each suite's ``kyverno-test.yaml``, its policies and resources, and yields one
``CelCase`` per (rule, resource) expectation of a CEL rule. Matching is rough on purpose
(kinds, exclude namespaces, match label selectors, Pod-controller autogen): the full
match logic lives elsewhere; here it only decides which resources a rule meets.
Used by ``tests/engine/test_cel_library.py`` and ``benchmarks/bench_cel_choice.py``.
"""

from __future__ import annotations

import copy
import pathlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from scanner.yamldoc import load_documents

# shared/ sits beside the repository checkout
CORPUS = pathlib.Path(__file__).resolve().parents[3] / "shared/conformance/kyverno-policies"
CONTROLLERS = (
    "DaemonSet",
    "Deployment",
    "Job",
    "StatefulSet",
    "ReplicaSet",
    "ReplicationController",
    "CronJob",
)
CLUSTER_SCOPED = frozenset(
    {
        "Namespace", "Node", "PersistentVolume", "ClusterRole", "ClusterRoleBinding",
        "StorageClass", "PriorityClass", "IngressClass", "RuntimeClass",
        "CustomResourceDefinition", "APIService", "CSIDriver", "CSINode", "VolumeAttachment",
        "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration",
        "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding",
        "CertificateSigningRequest", "FlowSchema", "PriorityLevelConfiguration",
    }
)  # fmt: skip


@dataclass
class CelCase:
    suite: str
    policy: str
    rule: str  # the rule as declared
    kind: str
    resource_name: str  # "ns/name" or "name"
    expected: str
    cel: dict  # after the autogen rewrite when ``controller`` is set
    preconditions: list[dict] | None
    message: str
    resource: dict
    namespace: str  # "" for cluster-scoped resources
    controller: str | None = None
    texts: list[str] = field(default_factory=list)  # every CEL text of the rule

    @property
    def case_id(self) -> str:
        return f"{self.suite.split('__.')[0]}:{self.rule}:{self.kind}/{self.resource_name}"

    def request(self) -> dict:
        api = self.resource.get("apiVersion", "")
        group, _, version = api.rpartition("/")
        meta = self.resource.get("metadata") or {}
        return {
            "operation": "CREATE",
            "kind": {"group": group, "version": version, "kind": self.resource.get("kind")},
            "name": meta.get("name", ""),
            "namespace": self.namespace,
            "userInfo": {},
            "dryRun": False,
        }

    def namespace_object(self) -> dict | None:
        if not self.namespace or self.resource.get("kind") == "Namespace":
            return None
        return {"metadata": {"name": self.namespace}}


def _load(path: pathlib.Path) -> list[Any]:
    return [d.data for d in load_documents(path.read_text(encoding="utf-8"), str(path))]


def _kind_matches(pattern: str, resource: dict) -> bool:
    parts = pattern.split("/")
    if parts[-1] != resource.get("kind"):
        return False
    if len(parts) == 1:
        return True
    api = resource.get("apiVersion", "")
    return "/".join(parts[:-1]) in (api, api.split("/")[-1])


def _filters(block: dict | None) -> list[dict]:
    if not block:
        return []
    if "resources" in block:
        return [block]
    return list(block.get("any") or []) + list(block.get("all") or [])


def _filter_matches(flt: dict, resource: dict, namespace: str, kinds: list[str]) -> bool:
    res = flt.get("resources") or {}
    if res.get("kinds") and not any(_kind_matches(k, resource) for k in kinds):
        return False
    if res.get("namespaces") and namespace not in res["namespaces"]:
        return False
    labels = (resource.get("metadata") or {}).get("labels") or {}
    selector = (res.get("selector") or {}).get("matchLabels") or {}
    return all(labels.get(k) == v for k, v in selector.items())


def _rule_applies(rule: dict, resource: dict, namespace: str) -> tuple[bool, str | None]:
    """(matches, controller kind when matched through autogen)."""
    controller = None
    matched = False
    for flt in _filters(rule.get("match")):
        kinds = list((flt.get("resources") or {}).get("kinds") or [])
        if _filter_matches(flt, resource, namespace, kinds):
            matched = True
            break
        if "Pod" in kinds and resource.get("kind") in CONTROLLERS:
            autogen_kinds = [*kinds, resource["kind"]]
            if _filter_matches(flt, resource, namespace, autogen_kinds):
                matched, controller = True, resource["kind"]
                break
    if not matched:
        return False, None
    for flt in _filters(rule.get("exclude")):
        res = flt.get("resources") or {}
        kinds = list(res.get("kinds") or []) + ([controller] if controller else [])
        if _filter_matches(flt, resource, namespace, kinds):
            return False, None
    return True, controller


def _cel_texts(cel: dict, pre: list[dict] | None) -> list[str]:
    texts = [v["expression"] for v in cel.get("variables") or []]
    for e in cel.get("expressions") or []:
        texts.append(e["expression"])
        if e.get("messageExpression"):
            texts.append(e["messageExpression"])
    texts += [p["expression"] for p in pre or []]
    return texts


def _autogen(value: Any, controller: str, rewrite: Any) -> Any:
    if isinstance(value, str):
        return rewrite(value, controller)
    if isinstance(value, dict):
        return {k: _autogen(v, controller, rewrite) for k, v in value.items()}
    if isinstance(value, list):
        return [_autogen(v, controller, rewrite) for v in value]
    return value


def iter_cases(rewrite: Any, root: pathlib.Path = CORPUS) -> Iterator[CelCase]:
    """Every expectation of a CEL rule in the corpus whose resource the rule matches.

    ``rewrite(text, controller)`` is the autogen text rewrite to apply.
    """
    for test_file in sorted(root.glob("*/kyverno-test.yaml")):
        suite = test_file.parent
        test = _load(test_file)[0]
        policies = [p for f in test.get("policies", []) for p in _load(suite / f)]
        resources = [r for f in test.get("resources", []) for r in _load(suite / f)]
        for row in test.get("results") or []:
            policy = next((p for p in policies if p["metadata"]["name"] == row["policy"]), None)
            if policy is None:
                continue
            rule = next((r for r in policy["spec"]["rules"] if r["name"] == row["rule"]), None)
            if rule is None or "cel" not in (rule.get("validate") or {}):
                continue
            names = row.get("resources") or [row["resource"]]
            for name in names:
                yield from _cases_for(suite.name, policy, rule, row, name, resources, rewrite)


def _cases_for(suite, policy, rule, row, name, resources, rewrite) -> Iterator[CelCase]:
    ns_wanted, _, short = name.rpartition("/")
    for resource in resources:
        meta = resource.get("metadata") or {}
        if meta.get("name") != short or not _kind_matches(row["kind"], resource):
            continue
        namespaced = resource.get("kind") not in CLUSTER_SCOPED
        namespace = (meta.get("namespace") or "default") if namespaced else ""
        if ns_wanted and ns_wanted != namespace:
            continue
        applies, controller = _rule_applies(rule, resource, namespace)
        if not applies:
            continue
        cel = copy.deepcopy(rule["validate"]["cel"])
        pre = copy.deepcopy(rule.get("celPreconditions"))
        if controller is not None:
            cel, pre = _autogen(cel, controller, rewrite), _autogen(pre, controller, rewrite)
        yield CelCase(
            suite=suite,
            policy=policy["metadata"]["name"],
            rule=rule["name"],
            kind=row["kind"],
            resource_name=name,
            expected=row["result"],
            cel=cel,
            preconditions=pre,
            message=rule["validate"].get("message", ""),
            resource=resource,
            namespace=namespace,
            controller=controller,
            texts=_cel_texts(cel, pre),
        )
