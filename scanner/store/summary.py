"""Counting queries over the tallies: a run's summary, and trend series. What does not need
checks or namespaces reads the per-policy sums (``run_policy_tallies``), a few rows per run."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from datetime import datetime
from typing import Literal

from sqlalchemy import Connection, func, select

from scanner.store import tables as t
from scanner.store.records import COMPLETED_STATUSES
from scanner.store.views import GroupCount, RunSummary, StatusCounts, TrendPoint

TrendGroup = Literal["policy", "severity", "source"] | None
TrendBucket = Literal["run", "day"]
CLUSTER_SCOPE = ""  # the namespace key of cluster-scoped resources


def normal_severity(severity: str) -> str:
    """A policy's ``policies.kyverno.io/severity`` as stored and shown: ``Medium`` is ``medium``."""
    return severity.strip().lower()


def _ref(namespace: str, name: str) -> str:
    return f"{namespace}/{name}" if namespace else name


def _groups(counts: dict[tuple[str, ...], dict[str, int]]) -> tuple[GroupCount, ...]:
    return tuple(GroupCount(key=key, counts=StatusCounts.from_mapping(value))
                 for key, value in sorted(counts.items()))


def summarize_run(connection: Connection, run_id: int) -> RunSummary:
    """A run's counts by status, policy, rule, namespace, severity and source."""
    dims: dict[str, dict[tuple[str, ...], dict[str, int]]] = {
        d: defaultdict(lambda: defaultdict(int))
        for d in ("status", "policy", "rule", "namespace", "severity", "source")}
    # status, policy, severity and source from the per-policy sums: a few rows per policy
    query = (select(t.policies.c.namespace, t.policies.c.name, t.policies.c.severity, t.sources.c.name,
                    t.run_policy_tallies.c.status, t.run_policy_tallies.c.count)
             .join(t.policies, t.policies.c.policy_id == t.run_policy_tallies.c.policy_id)
             .join(t.sources, t.sources.c.source_id == t.run_policy_tallies.c.source_id)
             .where(t.run_policy_tallies.c.run_id == run_id))
    for ns, name, severity, source, status, count in connection.execute(query):
        for dim, key in (("status", ()), ("policy", (_ref(ns, name),)), ("severity", (normal_severity(severity),)),
                         ("source", (source,))):
            dims[dim][key][status] += count
    # rule and namespace from the tallies, summed by the database (a row per check, namespace
    # and status would be thousands)
    by_rule, by_namespace = dims["rule"], dims["namespace"]
    total = func.sum(t.run_tallies.c.count)
    for ns, name, rule, status, count in connection.execute(
            select(t.checks.c.policy_namespace, t.checks.c.policy_name, t.checks.c.rule, t.run_tallies.c.status, total)
            .join(t.checks, t.checks.c.check_id == t.run_tallies.c.check_id).where(t.run_tallies.c.run_id == run_id)
            .group_by(t.checks.c.check_id, t.run_tallies.c.status)):
        by_rule[(_ref(ns, name), rule)][status] += count
    for namespace, status, count in connection.execute(
            select(t.run_tallies.c.namespace, t.run_tallies.c.status, total).where(t.run_tallies.c.run_id == run_id)
            .group_by(t.run_tallies.c.namespace, t.run_tallies.c.status)):
        by_namespace[(namespace,)][status] += count
    return RunSummary(
        run_id=run_id, by_status=StatusCounts.from_mapping(dims["status"].get((), {})),
        by_policy=_groups(dims["policy"]), by_rule=_groups(dims["rule"]),
        by_namespace=_groups(dims["namespace"]), by_severity=_groups(dims["severity"]),
        by_source=_groups(dims["source"]))


def trend(connection: Connection, *, since: datetime, until: datetime | None = None,
          group_by: TrendGroup = None, bucket: TrendBucket = "run",
          sources: Iterable[str] = (), statuses: Iterable[str] = ()) -> list[TrendPoint]:
    """Counts per run (or per UTC day) of completed runs started in [since, until); only of
    ``statuses`` when given (a run's tallies are mostly passes: a failure trend skips them)."""
    keys = {None: (), "policy": (t.policies.c.namespace, t.policies.c.name), "severity": (t.policies.c.severity,),
            "source": (t.sources.c.name,)}[group_by]
    query = (select(t.runs.c.run_id, t.runs.c.started_at, t.run_policy_tallies.c.status,
                    func.sum(t.run_policy_tallies.c.count).label("n"), *keys)
             .join(t.runs, t.runs.c.run_id == t.run_policy_tallies.c.run_id)
             .where(t.runs.c.status.in_(COMPLETED_STATUSES), t.runs.c.started_at >= since)
             .group_by(t.runs.c.run_id, t.runs.c.started_at, t.run_policy_tallies.c.status, *keys))
    if group_by in ("policy", "severity"):
        query = query.join(t.policies, t.policies.c.policy_id == t.run_policy_tallies.c.policy_id)
    wanted = list(sources)
    if group_by == "source" or wanted:
        query = query.join(t.sources, t.sources.c.source_id == t.run_policy_tallies.c.source_id)
    if wanted:
        query = query.where(t.sources.c.name.in_(wanted))
    if until is not None:
        query = query.where(t.runs.c.started_at < until)
    counted = list(statuses)
    if counted:
        query = query.where(t.run_policy_tallies.c.status.in_(counted))
    points: dict[tuple[str, str], dict[str, int]] = defaultdict(lambda: defaultdict(int))
    starts: dict[tuple[str, str], datetime] = {}
    runs: dict[tuple[str, str], set[int]] = defaultdict(set)
    for row in connection.execute(query):
        key = (_ref(*row[4:]) if group_by == "policy" else normal_severity(row[4]) if group_by == "severity"
               else "".join(row[4:]))
        label = str(row.run_id) if bucket == "run" else row.started_at.date().isoformat()
        start = row.started_at if bucket == "run" else row.started_at.replace(
            hour=0, minute=0, second=0, microsecond=0)
        points[(label, key)][row.status] += int(row.n)
        starts[(label, key)] = min(start, starts.get((label, key), start))
        runs[(label, key)].add(row.run_id)
    return sorted((TrendPoint(bucket=label, started_at=starts[(label, key)], key=key,
                              counts=StatusCounts.from_mapping(counts),
                              runs=tuple(sorted(runs[(label, key)])))
                   for (label, key), counts in points.items()),
                  key=lambda p: (p.started_at, p.bucket, p.key))
