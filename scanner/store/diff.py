"""The difference between two runs' failures: new, resolved, still failing.

Results are compared per (resource, check) over the sources both runs scanned without
error, so a source missing from one run does not show up as everything resolved or new.
A failing result is one with a status in ``FINDING_STATUSES``; counts are of result rows
(a resource found twice in a run counts twice).

Each list is one statement in two steps: the changed result rows are selected first (a
materialised CTE, so the planner cannot interleave it with the rest), then joined to their
resource, rule and provenance. The changed rows are found one of two ways, with the same
answer:

- ``findings``: when ``head`` continued the findings of every common source from ``base``
  (``run_sources.previous_run_id``; the usual case of a run and the one before it), the
  open findings before ``head`` were exactly ``base``'s failures, so its new failures are
  the findings ``head`` opened and the resolved ones those it ended. Both are index look-ups
  driven from ``findings``: the cost follows the size of the change, not of the runs.
- ``results``: otherwise each run's failing rows are compared with the other run's (an
  anti-join over the two runs' failing rows), which costs in proportion to the failures.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from sqlalchemy import Connection, TextClause, bindparam, text

from scanner.engine.types import RuleStatus
from scanner.store.records import FINDING_STATUSES
from scanner.store.storedtext import unescape_value
from scanner.store.views import DiffEntry, ResourceRef, RunDiff

Method = Literal["findings", "results"]

_FAILING = ", ".join(f"'{s.value}'" for s in FINDING_STATUSES)
_PASSING = ", ".join(f"'{s.value}'" for s in RuleStatus if s not in FINDING_STATUSES)
_ANY = ", ".join(f"'{s.value}'" for s in RuleStatus)

_COMMON_SOURCES = text("""
SELECT a.source_id, b.previous_run_id
FROM run_sources a JOIN run_sources b ON b.source_id = a.source_id
WHERE a.run_id = :base AND b.run_id = :head AND a.error = '' AND b.error = ''
ORDER BY a.source_id
""")

_ROW_COLUMNS = "r.observation_id, r.run_id, r.resource_id, r.check_id, r.status, r.message"

# The failing rows of run :{this} that are (not) failing in run :{other}.
_BY_RESULTS = f"""
SELECT {_ROW_COLUMNS}
FROM results r JOIN resources s ON s.resource_id = r.resource_id
WHERE r.run_id = :{{this}} AND r.status IN ({_FAILING}) AND s.source_id IN :sources
  AND {{negation}} EXISTS (SELECT 1 FROM results o
                           WHERE o.run_id = :{{other}} AND o.resource_id = r.resource_id
                             AND o.check_id = r.check_id AND o.status IN ({_FAILING}))
"""

# The failing rows of run :{this} of the findings that :head opened or ended, driven from
# the findings whatever the statistics say: CROSS JOIN fixes the loop order in SQLite
# (PostgreSQL plans it as an inner join) and the unary plus keeps SQLite off the source
# index, which would visit every finding of the source.
_BY_FINDINGS = f"""
SELECT {_ROW_COLUMNS}
FROM findings f CROSS JOIN results r
WHERE f.{{moment}}_run_id = :head AND +f.source_id IN :sources
  AND r.run_id = :{{this}} AND r.status IN ({_FAILING})
  AND r.resource_id = f.resource_id AND r.check_id = f.check_id
"""

_COUNT = "SELECT COUNT(*) FROM ({changed}) AS changed"

_DETAILS = """
WITH changed AS MATERIALIZED ({changed})
SELECT (SELECT COUNT(*) FROM changed) AS total,
       src.name AS source, s.api_version, s.kind, s.namespace, s.name,
       c.policy_namespace, c.policy_name, c.rule, r.status, r.message,
       ob.path AS file, ob.line, COALESCE(ob.commit_sha, rs.commit_sha, '') AS commit_sha, ob.overlay,
       (SELECT MIN(o.status) FROM results o
        WHERE o.run_id = :{other} AND o.status IN ({other_statuses})
          AND o.resource_id = r.resource_id AND o.check_id = r.check_id) AS other_status
FROM changed r
JOIN resources s ON s.resource_id = r.resource_id
JOIN sources src ON src.source_id = s.source_id
JOIN checks c ON c.check_id = r.check_id
JOIN observation_rows ob ON ob.observation_id = r.observation_id
LEFT JOIN run_sources rs ON rs.run_id = r.run_id AND rs.source_id = s.source_id
ORDER BY c.policy_namespace, c.policy_name, c.rule, s.namespace, s.kind, s.name, src.name,
         ob.path, ob.observation_id
"""

_HEAD_FAILING = f"""
SELECT COALESCE(SUM(t.count), 0) FROM run_policy_tallies t
WHERE t.run_id = :head AND t.status IN ({_FAILING}) AND t.source_id IN :sources
"""


@dataclass(frozen=True, slots=True)
class DiffPlan:
    """The sources two runs are compared over, and how their changed rows are found."""

    sources: tuple[int, ...]
    method: Method


@dataclass(frozen=True, slots=True)
class _List:
    """One list of the diff: rows of run ``this``, compared with run ``other``."""

    this: str
    other: str
    changed: str
    before_is_other: bool
    other_statuses: str  # what the pair's rows in ``other`` can be: the fewer, the faster

    def sql(self, template: str) -> str:
        return template.format(
            changed=self.changed.format(this=self.this, other=self.other),
            other=self.other, other_statuses=self.other_statuses)


def plan_diff(connection: Connection, base_run_id: int, head_run_id: int) -> DiffPlan:
    """``findings`` when ``head`` continued every common source's findings from ``base``."""
    pairs = connection.execute(_COMMON_SOURCES, {"base": base_run_id, "head": head_run_id}
                               ).all()
    continued = bool(pairs) and all(previous == base_run_id for _, previous in pairs)
    return DiffPlan(sources=tuple(source for source, _ in pairs),
                    method="findings" if continued else "results")


def diff_runs(connection: Connection, base_run_id: int, head_run_id: int, *,
              limit: int | None = None, include_still_failing: bool = False,
              method: Method | None = None) -> RunDiff:
    """Failures new in ``head``, resolved since ``base``, and failing in both.

    The lists are ordered by policy, rule and resource and cut at ``limit``; the list of
    still-failing entries is filled only with ``include_still_failing`` (counts always).
    Still failing = head's failing rows (from its tallies) minus the new ones. ``method``
    overrides the choice of ``plan_diff`` (``findings`` only where it applies).
    """
    plan = plan_diff(connection, base_run_id, head_run_id)
    if method == "findings" and plan.method != "findings":
        raise ValueError(f"run {head_run_id} did not continue from run {base_run_id}: "
                         "their diff cannot be read from the findings")
    if not plan.sources:
        return RunDiff(base_run_id=base_run_id, head_run_id=head_run_id, new_count=0,
                       resolved_count=0, still_failing_count=0, new=(), resolved=(),
                       still_failing=())
    if (method or plan.method) == "findings":
        new = _List("head", "base", _BY_FINDINGS.replace("{moment}", "first"), True,
                    _PASSING)
        resolved = _List("base", "head", _BY_FINDINGS.replace("{moment}", "resolved"), False,
                         _PASSING)
    else:
        changed = _BY_RESULTS.replace("{negation}", "NOT")
        new = _List("head", "base", changed, True, _PASSING)
        resolved = _List("base", "head", changed, False, _PASSING)
    params = {"base": base_run_id, "head": head_run_id, "sources": list(plan.sources)}
    new_count, new_entries = _entries(connection, new, params, limit)
    resolved_count, resolved_entries = _entries(connection, resolved, params, limit)
    head_failing = connection.execute(_statement(_HEAD_FAILING), params).scalar_one()
    still: tuple[DiffEntry, ...] = ()
    if include_still_failing:
        failing_in_both = _List("head", "base", _BY_RESULTS.replace("{negation}", ""), True,
                                _ANY)
        still = _entries(connection, failing_in_both, params, limit)[1]
    return RunDiff(
        base_run_id=base_run_id, head_run_id=head_run_id, new_count=new_count,
        resolved_count=resolved_count, still_failing_count=int(head_failing) - new_count,
        new=new_entries, resolved=resolved_entries, still_failing=still)


def _statement(sql: str) -> TextClause:
    return text(sql).bindparams(bindparam("sources", expanding=True))


def _entries(connection: Connection, side: _List, params: dict[str, Any],
             limit: int | None) -> tuple[int, tuple[DiffEntry, ...]]:
    """How many rows the list has, and its first ``limit`` rows in order."""
    if limit is not None and limit <= 0:
        return connection.execute(_statement(side.sql(_COUNT)), params).scalar_one(), ()
    details = side.sql(_DETAILS) + ("" if limit is None else " LIMIT :limit")
    rows = connection.execute(_statement(details), {**params, "limit": limit}).all()
    total = rows[0][0] if rows else 0
    return total, tuple(_entry(row, side.before_is_other) for row in rows)


_STATUSES = {s.value: s for s in RuleStatus}


def _entry(row: Any, before_is_other: bool) -> DiffEntry:
    # raw SQL: its text columns come back as stored, and are unescaped here
    (_, source, api_version, kind, namespace, name, policy_namespace, policy_name, rule,
     status, message, file, line, commit_sha, overlay, other_status) = unescape_value(tuple(row))
    mine = _STATUSES[status]
    theirs = _STATUSES[other_status] if other_status else None
    before, after = (theirs, mine) if before_is_other else (mine, theirs)
    return DiffEntry(
        resource=ResourceRef(source=source, api_version=api_version, kind=kind,
                             namespace=namespace, name=name),
        policy=f"{policy_namespace}/{policy_name}" if policy_namespace else policy_name,
        rule=rule, status_before=before, status_after=after, message=message, file=file,
        line=line, commit_sha=commit_sha or "", overlay=overlay or "")
