"""Kubernetes policy reports: ``wgpolicyk8s.io/v1alpha2`` and ``openreports.io/v1alpha1``.

One namespaced report (PolicyReport / Report) per namespace holding the results of that
namespace's resources, and one cluster report (ClusterPolicyReport / ClusterReport) for
cluster-scoped resources, written as a multi-document YAML stream for ``kubectl apply -f``.
Every result carries ``properties`` with a stable ``result_id`` (the same id as the SARIF
fingerprint and the JSON report) and the source, commit, path and line of the resource.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

import yaml

from scanner.engine.exceptions import exception_names
from scanner.engine.types import RuleStatus, reported_status
from scanner.report.data import ReportData, ResultRecord
from scanner.report.formatting import finding_id

try:
    from yaml import CSafeDumper as _BaseDumper
except ImportError:  # pragma: no cover - libyaml missing
    from yaml import SafeDumper as _BaseDumper  # type: ignore[assignment]


class _Dumper(_BaseDumper):  # type: ignore[misc,valid-type]
    """Plain YAML: no anchors or aliases for repeated values."""

    def ignore_aliases(self, data: Any) -> bool:
        return True

REPORT_NAME = "scanner"
CLUSTER_REPORT_NAME = "scanner-cluster"
ENGINE_SOURCE = "scanner"


@dataclass(frozen=True, slots=True)
class ReportFlavour:
    """The API group, kinds and layout of one PolicyReport flavour."""

    api_version: str
    namespaced_kind: str
    cluster_kind: str
    source_on_report: bool


WGPOLICY = ReportFlavour("wgpolicyk8s.io/v1alpha2", "PolicyReport", "ClusterPolicyReport",
                         source_on_report=False)
OPENREPORTS = ReportFlavour("openreports.io/v1alpha1", "Report", "ClusterReport",
                            source_on_report=True)


def _result_entry(result: ResultRecord, data: ReportData, timestamp: dict[str, int],
                  policies: dict[str, Any]) -> dict[str, Any]:
    policy = policies[result.policy]
    resource = result.resource
    entry: dict[str, Any] = {
        "policy": result.policy,
        "rule": result.rule,
        "result": reported_status(result.status, policy.scored).value,
        "scored": policy.scored,
        "source": ENGINE_SOURCE,
        "timestamp": timestamp,
        "resources": [{"apiVersion": resource.api_version, "kind": resource.kind,
                       "name": resource.name,
                       **({"namespace": resource.namespace} if resource.namespace else {})}],
    }
    if result.message:
        entry["message"] = result.message
    if policy.severity is not None:
        entry["severity"] = policy.severity.value
    if policy.category:
        entry["category"] = policy.category
    properties = {
        "result_id": finding_id(resource, result.policy, result.rule),
        "run_id": str(data.run.run_id),
        "source": resource.source,
        "commit": resource.commit,
        "path": resource.path,
        "action": result.action.value,
    }
    if resource.line is not None:
        properties["line"] = str(resource.line)
    if resource.overlay:  # rendered: path and line are the base's; the overlay and patches that made it
        properties["overlay"] = resource.overlay
        if resource.patches:
            properties["patches"] = ", ".join(resource.patches)
    if result.exception:
        properties["exceptions"] = exception_names(result.exception.split(", "))
    entry["properties"] = properties
    return entry


def policy_reports(data: ReportData, flavour: ReportFlavour = WGPOLICY) -> list[dict[str, Any]]:
    """The report objects, cluster report first, then one per namespace in name order."""
    started = data.run.started_at
    timestamp = {"seconds": int(started.timestamp()), "nanos": 0}  # whole seconds, as Kyverno writes
    policies = {p.name: p for p in data.policies}
    by_namespace: dict[str, list[dict[str, Any]]] = defaultdict(list)
    summaries: dict[str, dict[str, int]] = defaultdict(
        lambda: {s.value: 0 for s in (RuleStatus.PASS, RuleStatus.FAIL, RuleStatus.WARN,
                                      RuleStatus.ERROR, RuleStatus.SKIP)})
    for result in data.results:
        namespace = result.resource.namespace
        entry = _result_entry(result, data, timestamp, policies)
        by_namespace[namespace].append(entry)
        summaries[namespace][entry["result"]] += 1
    reports = []
    for namespace in sorted(by_namespace):
        metadata: dict[str, Any] = {
            "name": REPORT_NAME if namespace else CLUSTER_REPORT_NAME,
            "labels": {"app.kubernetes.io/managed-by": "scanner",
                       "scanner/run-id": str(data.run.run_id)},
        }
        if namespace:
            metadata["namespace"] = namespace
        report: dict[str, Any] = {
            "apiVersion": flavour.api_version,
            "kind": flavour.namespaced_kind if namespace else flavour.cluster_kind,
            "metadata": metadata,
        }
        if flavour.source_on_report:
            report["source"] = ENGINE_SOURCE
        report["summary"] = summaries[namespace]
        report["results"] = by_namespace[namespace]
        reports.append(report)
    return reports


def render_policy_reports(data: ReportData, flavour: ReportFlavour = WGPOLICY) -> str:
    """The reports as a YAML stream (an empty stream when the run has no results)."""
    documents = policy_reports(data, flavour)
    return yaml.dump_all(documents, Dumper=_Dumper, sort_keys=False, allow_unicode=True,
                         width=100_000, explicit_start=True)
