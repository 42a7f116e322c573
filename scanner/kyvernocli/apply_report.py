"""``wgpolicyk8s.io/v1alpha2`` policy reports of ``scanner apply`` results, as Kyverno's CLI prints them.

A ``fail`` of a policy annotated ``policies.kyverno.io/scored: "false"`` is reported as ``warn``
with ``scored: false``, as Kyverno's ``ToPolicyReportResult`` reports it.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from scanner.engine.exceptions import exception_names, skipping_exceptions
from scanner.engine.policy import Policy
from scanner.engine.types import RuleResult, reported_status
from scanner.kyvernocli.resource_files import LoadedResource

_SUMMARY = ("pass", "fail", "warn", "error", "skip")
_SEVERITIES = frozenset({"critical", "high", "medium", "low", "info"})


def _resource_reference(resource: dict[str, Any]) -> dict[str, Any]:
    """The resource as a ``corev1.ObjectReference``: empty fields are left out."""
    meta = resource.get("metadata") or {}
    reference = {"apiVersion": resource.get("apiVersion"), "kind": resource.get("kind"),
                 "name": meta.get("name"), "namespace": meta.get("namespace"),
                 "uid": meta.get("uid"), "resourceVersion": meta.get("resourceVersion")}
    return {key: value for key, value in reference.items() if value}


def _properties(policy: Policy, r: RuleResult) -> dict[str, str]:
    """``process`` as Kyverno derives it from the policy, and the names of skipping exceptions."""
    properties = {"process": "background scan" if policy.background else "admission review"}
    exceptions = skipping_exceptions(r.message)
    if exceptions:
        properties["exceptions"] = exception_names(exceptions)
    return properties


def _result(loaded: LoadedResource, policy: Policy, r: RuleResult, seconds: int) -> dict[str, Any]:
    out: dict[str, Any] = {"policy": r.policy, "rule": r.rule, "result": str(reported_status(r.status, policy.scored))}
    if r.message:
        out["message"] = r.message
    out.update({
        "scored": policy.scored,
        "source": "kyverno",
        "timestamp": {"seconds": seconds, "nanos": 0},
        "resources": [_resource_reference(loaded.resource)],
        "properties": _properties(policy, r),
    })
    if policy.category:
        out["category"] = policy.category
    if policy.severity in _SEVERITIES:
        out["severity"] = policy.severity
    return out


def _report(kind: str, name: str, namespace: str | None, results: list[dict[str, Any]]) -> dict[str, Any]:
    counts = Counter(r["result"] for r in results)
    meta: dict[str, Any] = {"name": name}
    if namespace:
        meta["namespace"] = namespace
    return {
        "apiVersion": "wgpolicyk8s.io/v1alpha2",
        "kind": kind,
        "metadata": meta,
        "results": results,
        "summary": {k: counts.get(k, 0) for k in _SUMMARY},
    }


def policy_reports(evaluated: list[tuple[LoadedResource, Policy, RuleResult]], now: float) -> list[dict[str, Any]]:
    """A ClusterPolicyReport ``merged`` of the ClusterPolicies' results (when there are any), then
    one PolicyReport per namespaced Policy, named and placed like the policy."""
    cluster: list[dict[str, Any]] = []
    by_policy: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for loaded, policy, r in evaluated:
        item = _result(loaded, policy, r, int(now))
        if policy.kind == "Policy":
            by_policy.setdefault((policy.namespace, policy.name), []).append(item)
        else:
            cluster.append(item)
    docs = [_report("ClusterPolicyReport", "merged", None, cluster)] if cluster else []
    for namespace, name in sorted(by_policy):
        docs.append(_report("PolicyReport", name, namespace, by_policy[(namespace, name)]))
    return docs
