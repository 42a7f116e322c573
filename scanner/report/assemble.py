"""Build a ``ReportData`` from the facts of a run; the one place derived views are computed."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable

from scanner.engine.types import RuleStatus
from scanner.errors import ReportError
from scanner.report.data import (
    FINDING_STATUSES,
    SEVERITY_ORDER,
    STATUS_ORDER,
    ErrorEntry,
    ExceptionApplied,
    GroupCounts,
    PolicyFindings,
    PolicyInfo,
    ReportData,
    ResourceInfo,
    ResultChange,
    ResultRecord,
    RunInfo,
    Summary,
    TrendPoint,
)

CLUSTER_SCOPE = "(cluster)"
"""The namespace grouping key of cluster-scoped resources."""


def _resource_sort_key(resource: ResourceInfo) -> tuple[str, str, str, str, str, int]:
    return (resource.namespace, resource.kind, resource.name, resource.source, resource.path,
            resource.line or 0)


def _result_sort_key(result: ResultRecord) -> tuple[object, ...]:
    return (result.policy, result.rule, *_resource_sort_key(result.resource))


def _change_sort_key(change: ResultChange) -> tuple[str, ...]:
    return (change.policy, change.rule, change.namespace, change.kind, change.name, change.source)


def _zero_status() -> dict[str, int]:
    return dict.fromkeys(STATUS_ORDER, 0)


def _group(results: Iterable[ResultRecord], key_of: str) -> tuple[GroupCounts, ...]:
    counts: dict[str, dict[str, int]] = defaultdict(_zero_status)
    resources: dict[str, set[ResourceInfo]] = defaultdict(set)
    failing: dict[str, set[ResourceInfo]] = defaultdict(set)
    for result in results:
        resource = result.resource
        if key_of == "namespace":
            key = resource.namespace or CLUSTER_SCOPE
        else:
            key = resource.source
        counts[key][result.status.value] += 1
        resources[key].add(resource)
        if result.status is RuleStatus.FAIL:
            failing[key].add(resource)
    ordered = sorted(counts, key=lambda k: (-counts[k]["fail"], k))
    return tuple(GroupCounts(key=k, counts=counts[k], resources=len(resources[k]),
                             failing_resources=len(failing[k])) for k in ordered)


def assemble_report(
    *,
    run: RunInfo,
    policies: Iterable[PolicyInfo],
    results: Iterable[ResultRecord],
    errors: Iterable[ErrorEntry] = (),
    previous_run_id: int | None = None,
    new_findings: Iterable[ResultChange] = (),
    resolved_findings: Iterable[ResultChange] = (),
    trend: Iterable[TrendPoint] = (),
    exceptions: Iterable[ExceptionApplied] = (),
) -> ReportData:
    """Order the facts deterministically and derive the summary and groupings from them.

    Raises ``ReportError`` when a result names a policy that is not in ``policies``.
    """
    policy_list = sorted(policies, key=lambda p: p.name)
    by_name = {p.name: p for p in policy_list}
    ordered = sorted(results, key=_result_sort_key)
    by_status = _zero_status()
    by_severity = dict.fromkeys(SEVERITY_ORDER, 0)
    findings: dict[str, list[ResultRecord]] = defaultdict(list)
    finding_counts: dict[str, Counter[str]] = defaultdict(Counter)
    resources: set[ResourceInfo] = set()
    for result in ordered:
        policy = by_name.get(result.policy)
        if policy is None:
            raise ReportError(f"result for unknown policy {result.policy!r} "
                              f"(rule {result.rule!r}, resource {result.resource.key})")
        by_status[result.status.value] += 1
        resources.add(result.resource)
        if result.status is RuleStatus.FAIL:
            by_severity[policy.severity_key] += 1
        if result.status in FINDING_STATUSES:
            findings[result.policy].append(result)
            finding_counts[result.policy][result.status.value] += 1
    severity_rank = {s: i for i, s in enumerate(SEVERITY_ORDER)}
    grouped = sorted(
        (PolicyFindings(policy=by_name[name], findings=tuple(items),
                        counts={s: finding_counts[name][s] for s in STATUS_ORDER})
         for name, items in findings.items()),
        key=lambda g: (severity_rank[g.policy.severity_key], -g.counts["fail"], g.policy.name),
    )
    summary = Summary(by_status=by_status, failures_by_severity=by_severity,
                      resources=len(resources), policies=len(policy_list), results=len(ordered))
    return ReportData(
        run=run,
        policies=tuple(policy_list),
        results=tuple(ordered),
        errors=tuple(sorted(errors, key=lambda e: (e.source, e.location, e.message))),
        previous_run_id=previous_run_id,
        new_findings=tuple(sorted(new_findings, key=_change_sort_key)),
        resolved_findings=tuple(sorted(resolved_findings, key=_change_sort_key)),
        trend=tuple(sorted(trend, key=lambda t: (t.started_at, t.run_id))),
        exceptions=tuple(sorted(exceptions, key=lambda x: (x.policy, x.rule, x.namespace,
                                                            x.name))),
        summary=summary,
        failures_by_policy=tuple(grouped),
        by_namespace=_group(ordered, "namespace"),
        by_source=_group(ordered, "source"),
    )
