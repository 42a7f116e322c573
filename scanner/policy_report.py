"""``wgpolicyk8s.io/v1alpha2`` policy reports of ``scanner apply`` results, as Kyverno's CLI prints them."""

from __future__ import annotations

from collections import Counter
from typing import Any

from scanner.engine.policy import Policy
from scanner.engine.types import RuleResult
from scanner.manifests import LoadedResource

_SUMMARY = ("pass", "fail", "warn", "error", "skip")


def _result(loaded: LoadedResource, policy: Policy, r: RuleResult, seconds: float) -> dict[str, Any]:
    res = loaded.resource
    meta = res.get("metadata") or {}
    out: dict[str, Any] = {
        "policy": r.policy,
        "rule": r.rule,
        "result": str(r.status),
        "message": r.message,
        "scored": policy.scored,
        "source": "kyverno",
        "timestamp": {"seconds": int(seconds), "nanos": int((seconds % 1) * 1e9)},
        "resources": [{
            "apiVersion": res.get("apiVersion"), "kind": res.get("kind"),
            "name": meta.get("name"), "namespace": meta.get("namespace"),
            **({"uid": meta["uid"]} if meta.get("uid") else {}),
        }],
    }
    if policy.category:
        out["category"] = policy.category
    if policy.severity:
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
    """One ClusterPolicyReport for ClusterPolicies and one PolicyReport per namespaced Policy's namespace."""
    cluster: list[dict[str, Any]] = []
    namespaced: dict[str, list[dict[str, Any]]] = {}
    for loaded, policy, r in evaluated:
        item = _result(loaded, policy, r, now)
        if policy.kind == "Policy":
            namespaced.setdefault(policy.namespace, []).append(item)
        else:
            cluster.append(item)
    docs = [_report("ClusterPolicyReport", "merged", None, cluster)]
    for ns in sorted(namespaced):
        docs.append(_report("PolicyReport", f"merged-{ns}", ns, namespaced[ns]))
    return docs
