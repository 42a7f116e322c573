"""Ending a run in one transaction: tallies, counts, finding lifecycles, the status flip, and
the run's link in the hash chain of runs (``scanner.store.chain``).

Findings are kept for sources the run scanned without error. A finding is a
(resource, check) failing with a status in ``FINDING_STATUSES``; it is opened the first run
it fails, stays open while it keeps failing, and ends the first run it does not, with the
reason: the resource is gone, the policy was removed, the policy changed, or it was fixed.

Each source's row says which completed run its findings reflect (``findings_run_id``):
after a finish, the open findings of a source are exactly the (resource, check) pairs that
run failed. A finish continues from that run (the source's row is locked first, so
finishes of one source follow each other in commit order, whatever the hosts' clocks say),
records it as the run source's ``previous_run_id`` and moves the pointer to itself. The
diff of a run against the run it continued from is then the findings it opened and ended.

On PostgreSQL the statistics of the tables a run filled are refreshed before the lifecycle
statements run (when it has ``ANALYZE_AFTER`` results or more): until then the planner takes
the new run for empty (its id is in no histogram yet) and may choose nested loops that rescan
the run once per row. The tables its finish changed are refreshed at the end, for the diff,
trend and summary queries that follow.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, Integer, bindparam, select, text

from scanner.errors import StoreError
from scanner.store import tables as t
from scanner.store.bulk import copy_rows
from scanner.store.chain import link_run
from scanner.store.liveness import utc_now
from scanner.store.records import COMPLETED_STATUSES, FINDING_STATUSES, NOT_EVALUATED, EndReason, RunStatus
from scanner.store.shared_rows import BLOCK_BITS, store_tallies
from scanner.store.tables import UTCDateTime

ANALYZE_AFTER = 1_000
"""Result rows from which a finished run refreshes PostgreSQL's planner statistics. Below it
a misplanned join over the run costs little; above it, one planned for an empty run can
rescan the run once per row (seconds at ten thousand results, minutes at a million)."""

RESULTS_PER_OBSERVATION = 10
"""About how many results a resource observation has (the 10k benchmark estate: 15)."""

_FAILING = ", ".join(f"'{s.value}'" for s in FINDING_STATUSES)

TALLY_COLUMNS = ("run_id", "source_id", "check_id", "namespace", "status", "policy_id", "count")
POLICY_TALLY_COLUMNS = ("run_id", "source_id", "policy_id", "status", "count")

_PREVIOUS = text("""
SELECT r.run_id, r.started_at FROM sources s JOIN runs r ON r.run_id = s.findings_run_id
WHERE s.source_id = :source
""").columns(run_id=Integer, started_at=UTCDateTime)

# What the lifecycle statements read of the run: the (resource, check) pairs it fails, and the
# resources it found; filled once per finish from the views, each read once.
_RUN_SETS = (
    "CREATE TEMPORARY TABLE finish_failing (resource_id INTEGER NOT NULL, check_id INTEGER NOT NULL, "
    "policy_id INTEGER NOT NULL, PRIMARY KEY (resource_id, check_id))",
    f"INSERT INTO finish_failing (resource_id, check_id, policy_id) "
    f"SELECT r.resource_id, r.check_id, MIN(r.policy_id) FROM results r "
    f"WHERE r.run_id = :run AND r.status IN ({_FAILING}) GROUP BY r.resource_id, r.check_id",
    "CREATE TEMPORARY TABLE finish_resources (resource_id INTEGER PRIMARY KEY)",
    "INSERT INTO finish_resources (resource_id) "
    "SELECT DISTINCT resource_id FROM resource_observations WHERE run_id = :run",
)
_DROP_RUN_SETS = ("DROP TABLE finish_failing", "DROP TABLE finish_resources")

# Ends the open findings of a source that the run no longer fails, with the first reason
# that applies: the resource is gone, the policy was removed, the policy changed, or fixed.
_CLOSE = text(f"""
UPDATE findings SET resolved_run_id = :run, resolved_at = :at,
       last_run_id = :last_run, last_seen_at = :last_at,
       end_reason = CASE
         WHEN NOT EXISTS (SELECT 1 FROM finish_resources o WHERE o.resource_id = findings.resource_id)
           THEN '{EndReason.RESOURCE_GONE.value}'
         WHEN NOT EXISTS (SELECT 1 FROM run_policies rp
                          JOIN policies p ON p.policy_id = rp.policy_id
                          JOIN checks c ON c.policy_kind = p.kind
                                       AND c.policy_namespace = p.namespace
                                       AND c.policy_name = p.name
                          WHERE rp.run_id = :run AND c.check_id = findings.check_id)
           THEN '{EndReason.POLICY_REMOVED.value}'
         WHEN findings.policy_id NOT IN (SELECT rp.policy_id FROM run_policies rp
                                         WHERE rp.run_id = :run)
           THEN '{EndReason.POLICY_CHANGED.value}'
         ELSE '{EndReason.FIXED.value}' END
WHERE source_id = :source AND resolved_at IS NULL
  AND NOT EXISTS (SELECT 1 FROM finish_failing r
                  WHERE r.resource_id = findings.resource_id AND r.check_id = findings.check_id)
""").bindparams(bindparam("at", type_=UTCDateTime), bindparam("last_at", type_=UTCDateTime))

_CONTINUED = (
    text("UPDATE run_sources SET previous_run_id = :last_run "
         "WHERE run_id = :run AND source_id = :source"),
    text("UPDATE sources SET findings_run_id = :run WHERE source_id = :source"),
)

_FOLLOW_POLICY = text("""
UPDATE findings SET policy_id = (
    SELECT r.policy_id FROM finish_failing r
    WHERE r.resource_id = findings.resource_id AND r.check_id = findings.check_id)
WHERE source_id = :source AND resolved_at IS NULL
  AND policy_id NOT IN (SELECT rp.policy_id FROM run_policies rp WHERE rp.run_id = :run)
""")

_OPEN = text("""
INSERT INTO findings (source_id, resource_id, check_id, policy_id, first_run_id,
                      first_seen_at)
SELECT s.source_id, r.resource_id, r.check_id, r.policy_id, :run, :at
FROM finish_failing r JOIN resources s ON s.resource_id = r.resource_id
WHERE s.source_id = :source
  AND NOT EXISTS (SELECT 1 FROM findings f
                  WHERE f.resource_id = r.resource_id AND f.check_id = r.check_id
                    AND f.resolved_at IS NULL)
""").bindparams(bindparam("at", type_=UTCDateTime))


def finish_run(connection: Connection, run_id: int, status: RunStatus,
               tallies: list[tuple[Any, ...]], results: Callable[[], str] | None = None) -> None:
    """End the run: its ``tallies`` (rows of ``TALLY_COLUMNS``, counted as its results were
    written) and their sums per policy, the finding lifecycles, the counts and the status flip."""
    at = connection.execute(
        select(t.runs.c.started_at).where(t.runs.c.run_id == run_id)).scalar_one()
    scanned = [row[0] for row in connection.execute(text(
        "SELECT source_id FROM run_sources WHERE run_id = :run AND error = '' "
        "ORDER BY source_id"), {"run": run_id})]
    postgres = connection.dialect.name == "postgresql"
    if postgres and scanned:
        # Serialise finishes that touch the same sources' findings.
        connection.execute(text("SELECT source_id FROM sources WHERE source_id = ANY(:ids) "
                                "ORDER BY source_id FOR UPDATE"), {"ids": scanned})
    big = postgres and _is_big(connection, run_id)
    if big:
        _analyze(connection, "result_rows", "observation_rows", "run_observation_blocks", "resources")
    store_tallies(connection, run_id, tallies)  # (before the sources move to this run)
    copy_rows(connection, "run_policy_tallies", POLICY_TALLY_COLUMNS, _policy_tallies(tallies))
    for statement in _RUN_SETS:
        connection.execute(text(statement), {"run": run_id})
    if status in COMPLETED_STATUSES:
        for source_id in scanned:
            _update_findings(connection, run_id, source_id, at)
    counts: dict[str, int] = {}
    for *_, status_value, _, count in tallies:
        counts[status_value] = counts.get(status_value, 0) + count
    values: dict[str, Any] = {f"{s}_count": int(counts.get(s, 0))
                              for s in ("pass", "fail", "warn", "error", "skip")}
    values["result_count"] = sum(values.values())
    values["resource_count"] = connection.execute(text("SELECT COUNT(*) FROM finish_resources")).scalar_one()
    for statement in _DROP_RUN_SETS:
        connection.execute(text(statement))
    values["error_record_count"] = connection.execute(text(  # notices of policies not evaluated are no errors
        "SELECT COUNT(*) FROM scan_errors WHERE run_id = :run AND kind <> :notice"),
        {"run": run_id, "notice": NOT_EVALUATED}).scalar_one()
    assignments = ", ".join(f"{name} = :{name}" for name in values)
    changed = connection.execute(text(
        f"UPDATE runs SET status = :status, finished_at = :now, {assignments} "
        "WHERE run_id = :run AND status = 'running'").bindparams(
            bindparam("now", type_=UTCDateTime)),
        {"status": status.value, "now": utc_now(), "run": run_id, **values}).rowcount
    if not changed:
        current = connection.execute(text("SELECT status FROM runs WHERE run_id = :run"),
                                     {"run": run_id}).scalar_one()
        raise StoreError(f"run {run_id} cannot finish: it is already {current} (marked by "
                         "another process after its heartbeat went stale)")
    if big:
        _analyze(connection, "findings", "tally_rows", "run_tally_blocks", "run_policy_tallies", "run_sources",
                 "run_policies", "sources", "checks", "policies")
    link_run(connection, run_id, results)  # last: the chain's head stays locked until the commit


def _policy_tallies(tallies: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """Rows of ``POLICY_TALLY_COLUMNS``: ``tallies`` summed over checks and namespaces."""
    sums: dict[tuple[Any, ...], int] = {}
    for run_id, source_id, _, _, status_value, policy_id, count in tallies:
        key = (run_id, source_id, policy_id, status_value)
        sums[key] = sums.get(key, 0) + count
    return [(*key, count) for key, count in sums.items()]


def _is_big(connection: Connection, run_id: int) -> bool:
    """Whether the run has at least ``ANALYZE_AFTER`` results, judged by the blocks of its
    observations (read alone: a planner that takes the run for empty may scan every result)."""
    blocks = connection.execute(text("SELECT COUNT(*) FROM run_observation_blocks WHERE run_id = :run"),
                                {"run": run_id}).scalar_one()
    return (blocks << BLOCK_BITS) * RESULTS_PER_OBSERVATION >= ANALYZE_AFTER  # (at most 32 observations a block)


def _analyze(connection: Connection, *tables: str) -> None:
    for table in tables:
        connection.execute(text(f"ANALYZE {table}"))


def _update_findings(connection: Connection, run_id: int, source_id: int,
                     at: datetime) -> None:
    previous = connection.execute(_PREVIOUS, {"source": source_id}).first()
    last_run, last_at = (previous[0], previous[1]) if previous else (None, None)
    params = {"run": run_id, "at": at, "source": source_id, "last_run": last_run,
              "last_at": last_at}
    connection.execute(_CLOSE, params)
    connection.execute(_FOLLOW_POLICY, params)
    connection.execute(_OPEN, params)
    for statement in _CONTINUED:
        connection.execute(statement, params)
