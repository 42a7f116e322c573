"""The difference between two runs' failures: new, resolved, still failing.

Results are compared per (resource, check) over the sources both runs scanned without
error, so a source missing from one run does not show up as everything resolved or new.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection, text

from scanner.engine.types import RuleStatus
from scanner.store.records import FINDING_STATUSES
from scanner.store.views import DiffEntry, ResourceRef, RunDiff

_FAILING = ", ".join(f"'{s.value}'" for s in FINDING_STATUSES)

_COMMON_SOURCES = """
SELECT a.source_id FROM run_sources a JOIN run_sources b ON b.source_id = a.source_id
WHERE a.run_id = :base AND b.run_id = :head AND a.error = '' AND b.error = ''
"""

# {this}: the run whose failing rows are listed; {other}: the run they are compared with.
_FAILING_IN = """
FROM results r JOIN resources s ON s.resource_id = r.resource_id{joins}
WHERE r.run_id = :{this} AND r.status IN (FAILING){sources}
  AND {negation} EXISTS (SELECT 1 FROM results o
                         WHERE o.run_id = :{other} AND o.resource_id = r.resource_id
                           AND o.check_id = r.check_id AND o.status IN (FAILING))
""".replace("FAILING", _FAILING)

_SOURCE_FILTER = f" AND s.source_id IN ({_COMMON_SOURCES})"
_HEAD_FAILING = """
SELECT COALESCE(SUM(t.count), 0) FROM run_tallies t
WHERE t.run_id = :head AND t.status IN (FAILING) AND t.source_id IN (COMMON)
""".replace("FAILING", _FAILING).replace("COMMON", _COMMON_SOURCES)

_DETAILS = """
SELECT src.name AS source, s.api_version, s.kind, s.namespace, s.name,
       c.policy_namespace, c.policy_name, c.rule, r.status, r.message,
       ob.path AS file, ob.line,
       (SELECT MIN(o.status) FROM results o WHERE o.run_id = :{other}
          AND o.status IN ('pass', 'fail', 'warn', 'error', 'skip')
          AND o.resource_id = r.resource_id AND o.check_id = r.check_id) AS other_status
{failing}
  AND src.source_id = s.source_id AND c.check_id = r.check_id
  AND ob.observation_id = r.observation_id
ORDER BY c.policy_namespace, c.policy_name, c.rule, s.namespace, s.kind, s.name, src.name,
         ob.path, ob.observation_id
"""


def _failing(this: str, other: str, negation: str, joins: str = "") -> str:
    return _FAILING_IN.format(this=this, other=other, negation=negation, joins=joins,
                              sources=_SOURCE_FILTER)


def _entries(connection: Connection, this: str, other: str, negation: str,
             params: dict[str, Any], limit: int | None, before_is_other: bool,
             ) -> tuple[int, tuple[DiffEntry, ...]]:
    """How many rows match, and the first ``limit`` of them (rows are streamed, not held)."""
    failing = _failing(this, other, negation,
                       joins=", sources src, checks c, resource_observations ob")
    statement = text(_DETAILS.format(other=other, failing=failing))
    entries = []
    count = 0
    for row in connection.execution_options(yield_per=2_000).execute(statement, params):
        count += 1
        if limit is not None and count > limit:
            continue
        mine = RuleStatus(row.status)
        theirs = RuleStatus(row.other_status) if row.other_status else None
        before, after = (theirs, mine) if before_is_other else (mine, theirs)
        entries.append(DiffEntry(
            resource=ResourceRef(source=row.source, api_version=row.api_version,
                                 kind=row.kind, namespace=row.namespace, name=row.name),
            policy=f"{row.policy_namespace}/{row.policy_name}" if row.policy_namespace
            else row.policy_name,
            rule=row.rule, status_before=before, status_after=after, message=row.message,
            file=row.file, line=row.line))
    return count, tuple(entries)


def diff_runs(connection: Connection, base_run_id: int, head_run_id: int, *,
              limit: int | None = None, include_still_failing: bool = False) -> RunDiff:
    """Failures new in ``head``, resolved since ``base``, and failing in both.

    The lists are ordered by policy, rule and resource and cut at ``limit``; the list of
    still-failing entries is filled only with ``include_still_failing`` (counts always).
    Still failing = head's failing rows (from its tallies) minus the new ones.
    """
    params = {"base": base_run_id, "head": head_run_id}
    new_count, new = _entries(connection, "head", "base", "NOT", params, limit, True)
    resolved_count, resolved = _entries(connection, "base", "head", "NOT", params, limit,
                                        False)
    head_failing = connection.execute(text(_HEAD_FAILING), params).scalar_one()
    still = ()
    if include_still_failing:
        still = _entries(connection, "head", "base", "", params, limit, True)[1]
    return RunDiff(
        base_run_id=base_run_id, head_run_id=head_run_id, new_count=new_count,
        resolved_count=resolved_count, still_failing_count=int(head_failing) - new_count,
        new=new, resolved=resolved, still_failing=still)
