"""Kubernetes policy reports: ``wgpolicyk8s.io/v1alpha2`` and ``openreports.io/v1alpha1``.

One namespaced report (PolicyReport / Report) per namespace holding the results of that
namespace's resources, and one cluster report (ClusterPolicyReport / ClusterReport) for
cluster-scoped resources, written as a multi-document YAML stream for ``kubectl apply -f``.
Every result carries ``properties`` with a stable ``result_id`` (the same id as the SARIF
fingerprint and the JSON report) and the source, commit, path and line of the resource.
"""

from __future__ import annotations

import io
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from operator import attrgetter
from typing import Any, TextIO

from scanner.engine.exceptions import exception_names
from scanner.engine.types import FailureAction, RuleStatus, reported_status
from scanner.report.data import FINDING_STATUSES, PolicyInfo, ReportData, ResourceInfo, ResultRecord
from scanner.report.formatting import FindingIds, PerResource, finding_id
from scanner.report.yamltext import ScalarText

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


def policy_reports(data: ReportData, flavour: ReportFlavour = WGPOLICY, *,
                   findings_only: bool = False) -> list[dict[str, Any]]:
    """The report objects, cluster report first, then one per namespace in name order (with
    ``findings_only``, only the fail, warn and error results)."""
    started = data.run.started_at
    timestamp = {"seconds": int(started.timestamp()), "nanos": 0}  # whole seconds, as Kyverno writes
    policies = {p.name: p for p in data.policies}
    by_namespace: dict[str, list[dict[str, Any]]] = defaultdict(list)
    summaries: dict[str, dict[str, int]] = defaultdict(
        lambda: {s.value: 0 for s in (RuleStatus.PASS, RuleStatus.FAIL, RuleStatus.WARN,
                                      RuleStatus.ERROR, RuleStatus.SKIP)})
    for result in _listed(data, findings_only):
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


_POLICY, _STATUS = attrgetter("policy"), attrgetter("status")
_STATUSES = (RuleStatus.PASS, RuleStatus.FAIL, RuleStatus.WARN, RuleStatus.ERROR, RuleStatus.SKIP)


def _listed(data: ReportData, findings_only: bool) -> Iterable[ResultRecord]:
    if not findings_only:
        return data.results
    return (r for r in data.results if r.status in FINDING_STATUSES)


class _Text:
    """The YAML text of each place of a report that holds a string (see ``ScalarText``)."""

    def __init__(self) -> None:
        def places(*path: str | int, keys: tuple[str, ...]) -> dict[str, ScalarText]:
            return {key: ScalarText((*path, key)) for key in keys}

        self.top = places(keys=("apiVersion", "kind"))
        self.meta = places("metadata", keys=("name", "namespace"))
        self.run_label = ScalarText(("metadata", "labels", "scanner/run-id"))
        self.entry = places("results", 0, keys=("policy", "rule", "message", "severity", "category"))
        self.resource = places("results", 0, "resources", 0, keys=("apiVersion", "kind", "name", "namespace"))
        self.prop = places("results", 0, "properties", keys=(
            "result_id", "run_id", "source", "commit", "path", "action", "line", "overlay", "patches", "exceptions"))


class _Entries:
    """The text of each result's entry; each resource's lines built once, and each policy's,
    rule's and status's lines once (a status is written by ``str.__format__``: its value)."""

    def __init__(self, data: ReportData, text: _Text) -> None:
        self.text = text
        self.run_id = text.prop["run_id"](str(data.run.run_id))
        started = int(data.run.started_at.timestamp())  # whole seconds, as Kyverno writes
        self.timestamp = f"  timestamp:\n    seconds: {started}\n    nanos: 0\n"
        self.policies: dict[str, tuple[str, str, bool]] = {}
        for p in data.policies:
            self.policies[p.name] = (text.entry["policy"](p.name), self._policy_tail(p), p.scored)
        self.resources = PerResource(self._resource)
        self.heads: dict[tuple[str, str, str], str] = {}
        self.actions = {a: f"    action: {text.prop['action'](a.value)}\n" for a in FailureAction}
        self.finding_id = FindingIds()

    def _policy_tail(self, policy: PolicyInfo) -> str:
        entry = self.text.entry
        severity = f"  severity: {entry['severity'](policy.severity.value)}\n" if policy.severity is not None else ""
        category = f"  category: {entry['category'](policy.category)}\n" if policy.category else ""
        return severity + category

    def _resource(self, res: ResourceInfo) -> tuple[str, str, str]:
        """The resource's ``resources`` entry, its properties before the action and after it."""
        r, p = self.text.resource, self.text.prop
        namespace = f"    namespace: {r['namespace'](res.namespace)}\n" if res.namespace else ""
        block = (f"  resources:\n  - apiVersion: {r['apiVersion'](res.api_version)}\n"
                 f"    kind: {r['kind'](res.kind)}\n    name: {r['name'](res.name)}\n{namespace}")
        before = (f"    run_id: {self.run_id}\n    source: {p['source'](res.source)}\n"
                  f"    commit: {p['commit'](res.commit)}\n    path: {p['path'](res.path)}\n")
        after = f"    line: {p['line'](str(res.line))}\n" if res.line is not None else ""
        if res.overlay:
            after += f"    overlay: {p['overlay'](res.overlay)}\n"
            if res.patches:
                after += f"    patches: {p['patches'](', '.join(res.patches))}\n"
        return block, before, after

    def _head(self, policy: str, rule: str, status: str) -> str:
        """The entry's lines before its resource: policy, rule, result, scored, source, timestamp."""
        policy_text, _, scored = self.policies[policy]
        return (f"- policy: {policy_text}\n  rule: {self.text.entry['rule'](rule)}\n  result: {status}\n"
                f"  scored: {'true' if scored else 'false'}\n  source: {ENGINE_SOURCE}\n{self.timestamp}")

    def reported(self, policy: str, status: str) -> str:
        """A result's status (its value) as the report gives it (see ``reported_status``)."""
        return reported_status(RuleStatus(status), self.policies[policy][2]).value

    def __call__(self, result: ResultRecord) -> str:
        """The entry's text."""
        res = result.resource
        block, before, after = self.resources(res)
        policy, rule = result.policy, result.rule
        _, tail, scored = self.policies[policy]
        status = f"{reported_status(result.status, scored)}"
        head = self.heads.get((policy, rule, status))
        if head is None:
            head = self.heads[(policy, rule, status)] = self._head(policy, rule, status)
        message = f"  message: {self.text.entry['message'](result.message)}\n" if result.message else ""
        exceptions = (f"    exceptions: {self.text.prop['exceptions'](exception_names(result.exception.split(', ')))}\n"
                      if result.exception else "")
        result_id = self.text.prop["result_id"].hex_digest(self.finding_id(res, policy, rule))
        return (f"{head}{block}{message}{tail}  properties:\n    result_id: {result_id}\n{before}"
                f"{self.actions[result.action]}{after}{exceptions}")


def write_policy_reports(data: ReportData, out: TextIO, flavour: ReportFlavour = WGPOLICY, *,
                         findings_only: bool = False) -> None:
    """Write the reports as a YAML stream to ``out``: the text ``yaml.dump_all`` gives for
    ``policy_reports``, written a namespace at a time (an empty stream when the run has no
    results). With ``findings_only``, only the fail, warn and error results (and their counts)."""
    text = _Text()
    entries = _Entries(data, text)
    by_namespace: dict[str, list[ResultRecord]] = defaultdict(list)
    for result in _listed(data, findings_only):
        by_namespace[result.resource.namespace].append(result)
    run_label = text.run_label(str(data.run.run_id))
    source = f"source: {ENGINE_SOURCE}\n" if flavour.source_on_report else ""
    for namespace in sorted(by_namespace):
        results = by_namespace[namespace]
        summary = dict.fromkeys((s.value for s in _STATUSES), 0)
        pairs = Counter(zip(map(_POLICY, results), map(str, map(_STATUS, results)), strict=True))
        for (policy, status), count in pairs.items():
            summary[entries.reported(policy, status)] += count
        kind = flavour.namespaced_kind if namespace else flavour.cluster_kind
        name = REPORT_NAME if namespace else CLUSTER_REPORT_NAME
        out.write(f"---\napiVersion: {text.top['apiVersion'](flavour.api_version)}\n"
                  f"kind: {text.top['kind'](kind)}\nmetadata:\n  name: {text.meta['name'](name)}\n"
                  "  labels:\n    app.kubernetes.io/managed-by: scanner\n"
                  f"    scanner/run-id: {run_label}\n"
                  + (f"  namespace: {text.meta['namespace'](namespace)}\n" if namespace else "")
                  + source + "summary:\n" + "".join(f"  {k}: {v}\n" for k, v in summary.items())
                  + "results:\n")
        for start in range(0, len(results), 1024):
            out.write("".join([entries(r) for r in results[start:start + 1024]]))


def render_policy_reports(data: ReportData, flavour: ReportFlavour = WGPOLICY, *,
                          findings_only: bool = False) -> str:
    """The reports as a YAML stream (an empty stream when the run has no results)."""
    out = io.StringIO()
    write_policy_reports(data, out, flavour, findings_only=findings_only)
    return out.getvalue()
