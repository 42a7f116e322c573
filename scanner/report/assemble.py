"""Build a ``ReportData`` from the facts of a run; the one place derived views are computed."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import compress
from operator import attrgetter

from scanner.engine.types import RuleStatus
from scanner.errors import ReportError
from scanner.report.data import (
    COVERAGE_KINDS,
    FINDING_STATUSES,
    NOT_SCANNED_KINDS,
    SEVERITY_ORDER,
    STATUS_ORDER,
    CoverageEntry,
    ErrorEntry,
    ExceptionApplied,
    FindingGroup,
    GroupCounts,
    PolicyFindings,
    PolicyInfo,
    ReportData,
    ResourceInfo,
    ResultChange,
    ResultRecord,
    RunInfo,
    SourceCoverage,
    Summary,
    TrendPoint,
    coverage_kind,
)
from scanner.report.formatting import PerResource

CLUSTER_SCOPE = "(cluster)"
"""The namespace grouping key of cluster-scoped resources."""


def resource_order(namespace: str, kind: str, name: str, source: str, path: str,
                   line: int | None) -> tuple[str, str, str, str, str, int]:
    """Where a resource's result stands among a rule's results in reports (code-point order)."""
    return namespace, kind, name, source, path, line or 0


def _resource_sort_key(resource: ResourceInfo) -> tuple[str, str, str, str, str, int]:
    return resource_order(resource.namespace, resource.kind, resource.name, resource.source, resource.path,
                          resource.line)


def _change_sort_key(change: ResultChange) -> tuple[object, ...]:
    return (change.policy, change.rule, change.namespace, change.kind, change.name, change.source,
            change.path, change.line or 0)


def _distinct() -> PerResource[int]:
    """Equal resources as one number each: a resource is hashed (every field) once per object,
    not once per result."""
    numbers: dict[ResourceInfo, int] = {}
    return PerResource(lambda resource: numbers.setdefault(resource, len(numbers)))


def finding_groups(findings: Iterable[ResultRecord],
                   distinct: PerResource[int] | None = None) -> tuple[FindingGroup, ...]:
    """Findings grouped by defect: rule, status, source and the defining ``path:line``.

    A resource read as it is has its own ``path:line``; resources rendered from one base by
    several overlays share the base's, so one defect shows once with its overlays.
    ``distinct`` numbers equal resources (one shared by the calls of a report)."""
    number = distinct or _distinct()
    groups: dict[tuple[object, ...], list[ResultRecord]] = {}
    for r in findings:
        res = r.resource
        key = (r.rule, r.status, res.source, res.path, res.line) if res.overlay else (r.rule, r.status, number(res))
        groups.setdefault(key, []).append(r)
    return tuple(FindingGroup(rule=items[0].rule, status=items[0].status, source=items[0].resource.source,
                              path=items[0].resource.path, line=items[0].resource.line, findings=tuple(items))
                 for items in groups.values())


def _zero_status() -> dict[str, int]:
    return dict.fromkeys(STATUS_ORDER, 0)


def _group_key(resource: ResourceInfo, key_of: str) -> str:
    return (resource.namespace or CLUSTER_SCOPE) if key_of == "namespace" else resource.source


def _groups(counts: Mapping[str, Mapping[str, int]], resources: Mapping[str, int],
            failing: Mapping[str, int]) -> tuple[GroupCounts, ...]:
    ordered = sorted(counts, key=lambda k: (-counts[k]["fail"], k))
    return tuple(GroupCounts(key=k, counts=dict(counts[k]), resources=resources.get(k, 0),
                             failing_resources=failing.get(k, 0)) for k in ordered)


_RESOURCE, _STATUS = attrgetter("resource"), attrgetter("status")
_FINDING_VALUES = frozenset(s.value for s in FINDING_STATUSES)


_ByResource = dict[tuple[ResourceInfo, int, str], int]
"""Results per resource, its number (``_distinct``) and status (its value)."""


def _by_resource(results: Sequence[ResultRecord], statuses: Sequence[str], distinct: PerResource[int]) -> _ByResource:
    """The results per resource and status (``statuses``: each result's status value): counted
    per resource object (in C), then each object numbered once (equal resources are one)."""
    resources = list(map(_RESOURCE, results))
    per_object = Counter(zip(map(id, resources), statuses, strict=True))
    objects = {id(resource): resource for resource in resources}
    counted: _ByResource = defaultdict(int)
    for (object_id, status), count in per_object.items():
        resource = objects[object_id]
        counted[(resource, distinct(resource), status)] += count
    return counted


def _group(by_resource: _ByResource, key_of: str) -> tuple[GroupCounts, ...]:
    counts: dict[str, dict[str, int]] = defaultdict(_zero_status)
    resources: dict[str, set[int]] = defaultdict(set)
    failing: dict[str, set[int]] = defaultdict(set)
    for (resource, number, status), count in by_resource.items():
        key = _group_key(resource, key_of)
        counts[key][status] += count
        resources[key].add(number)
        if status == RuleStatus.FAIL.value:
            failing[key].add(number)
    return _groups(counts, {k: len(v) for k, v in resources.items()}, {k: len(v) for k, v in failing.items()})


@dataclass(frozen=True, slots=True)
class GroupTally:
    """Counts of one namespace or source: results by status, resources, failing resources."""

    counts: Mapping[str, int]
    resources: int = 0
    failing_resources: int = 0


@dataclass(frozen=True, slots=True)
class RunCounts:
    """What a report counts over every result of a run, taken from the report database when
    only the findings are read (namespaces of cluster-scoped resources are ``""``)."""

    by_status: Mapping[str, int]
    failures_by_severity: Mapping[str, int]
    resources: int
    by_namespace: Mapping[str, GroupTally]
    by_source: Mapping[str, GroupTally]


def _tally_groups(tallies: Mapping[str, GroupTally], key_of: str) -> tuple[GroupCounts, ...]:
    keys = {k: (k or CLUSTER_SCOPE) if key_of == "namespace" else k for k in tallies}
    counts = {keys[k]: {**_zero_status(), **t.counts} for k, t in tallies.items()}
    return _groups(counts, {keys[k]: t.resources for k, t in tallies.items()},
                   {keys[k]: t.failing_resources for k, t in tallies.items()})


def source_coverage(counts: Iterable[tuple[str, str, int, int]],
                    errors: Iterable[tuple[str, str, ErrorEntry]]) -> tuple[SourceCoverage, ...]:
    """Per source (by name): its entry points (``(source, overlay, resources, files)`` counts of
    the run's observations) by kind and label, and the errors of ``NOT_SCANNED_KINDS``
    (``(source, kind, entry)``) as what was not scanned."""
    entries: dict[str, list[CoverageEntry]] = defaultdict(list)
    for source, overlay, resources, files in counts:
        entries[source].append(CoverageEntry(coverage_kind(overlay), overlay, resources, files))
    gaps: dict[str, list[ErrorEntry]] = defaultdict(list)
    for source, kind, entry in errors:
        if source and kind in NOT_SCANNED_KINDS:
            gaps[source].append(entry)
    rank = {k: i for i, k in enumerate(COVERAGE_KINDS)}
    return tuple(SourceCoverage(
        source, tuple(sorted(entries.get(source, ()), key=lambda e: (rank[e.kind], e.entry))),
        tuple(sorted(gaps.get(source, ()), key=lambda e: (e.location, e.message))))
        for source in sorted({*entries, *gaps}))


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
    counts: RunCounts | None = None,
    not_evaluated: Iterable[ErrorEntry] = (),
    coverage: Iterable[SourceCoverage] = (),
    in_order: bool = False,
) -> ReportData:
    """Order the facts deterministically and derive the summary and groupings from them.

    ``results`` is every result of the run; or, with ``counts``, only its findings (fail,
    warn and error results), the counts over all results coming from ``counts`` (the data
    is then ``findings_only``). With ``in_order``, ``results`` come in report order already
    (policy, rule, namespace, kind, name, source, file, line; as ``read_run_results`` reads
    them) and are not sorted again. Raises ``ReportError`` when a result names a policy that is
    not in ``policies``, or a result that is not a finding comes with ``counts``.
    """
    policy_list = sorted(policies, key=lambda p: p.name)
    by_name = {p.name: p for p in policy_list}
    resource_keys = PerResource(_resource_sort_key)

    def sort_key(result: ResultRecord) -> tuple[object, ...]:  # each resource's part made once
        return (result.policy, result.rule, *resource_keys(result.resource))

    ordered = list(results) if in_order else sorted(results, key=sort_key)
    if unknown := {r.policy for r in ordered}.difference(by_name):
        result = next(r for r in ordered if r.policy in unknown)
        raise ReportError(f"result for unknown policy {result.policy!r} "
                          f"(rule {result.rule!r}, resource {result.resource.key})")
    statuses = list(map(str, map(_STATUS, ordered)))  # each result's status value (cheaper than the member)
    by_status = _zero_status()
    for status, count in Counter(statuses).items():
        by_status[status] += count
    listed = list(compress(ordered, map(_FINDING_VALUES.__contains__, statuses)))
    if counts is not None and len(listed) != len(ordered):
        result = next(r for r in ordered if r.status not in FINDING_STATUSES)
        raise ReportError(f"a {result.status.value} result given as a finding "
                          f"(policy {result.policy!r}, rule {result.rule!r})")
    by_severity = dict.fromkeys(SEVERITY_ORDER, 0)
    findings: dict[str, list[ResultRecord]] = defaultdict(list)
    finding_counts: dict[str, Counter[str]] = defaultdict(Counter)
    distinct = _distinct()
    for result in listed:
        status = result.status
        if status is RuleStatus.FAIL:
            by_severity[by_name[result.policy].severity_key] += 1
        findings[result.policy].append(result)
        finding_counts[result.policy][status.value] += 1
    severity_rank = {s: i for i, s in enumerate(SEVERITY_ORDER)}
    grouped = sorted(
        (PolicyFindings(policy=by_name[name], findings=tuple(items),
                        counts={s: finding_counts[name][s] for s in STATUS_ORDER},
                        groups=finding_groups(items, distinct))
         for name, items in findings.items()),
        key=lambda g: (severity_rank[g.policy.severity_key], -g.counts["fail"], g.policy.name),
    )
    if counts is None:
        by_resource = _by_resource(ordered, statuses, distinct)
        summary = Summary(by_status=by_status, failures_by_severity=by_severity,
                          resources=len({number for _, number, _ in by_resource}), policies=len(policy_list),
                          results=len(ordered))
        by_namespace, by_source = _group(by_resource, "namespace"), _group(by_resource, "source")
    else:
        status_counts = {**_zero_status(), **counts.by_status}
        summary = Summary(by_status=status_counts,
                          failures_by_severity={**dict.fromkeys(SEVERITY_ORDER, 0), **counts.failures_by_severity},
                          resources=counts.resources, policies=len(policy_list),
                          results=sum(status_counts.values()))
        by_namespace = _tally_groups(counts.by_namespace, "namespace")
        by_source = _tally_groups(counts.by_source, "source")
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
        by_namespace=by_namespace,
        by_source=by_source,
        findings_only=counts is not None,
        not_evaluated=tuple(sorted(not_evaluated, key=lambda e: (e.location, e.message))),
        coverage=tuple(sorted(coverage, key=lambda c: c.source)),
    )
