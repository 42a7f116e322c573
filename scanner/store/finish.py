"""Ending a run in one transaction: tallies, counts, finding lifecycles, the status flip.

Findings are kept for sources the run scanned without error. A finding is a
(resource, check) failing with a status in ``FINDING_STATUSES``; it is opened the first run
it fails, stays open while it keeps failing, and ends the first run it does not, with the
reason: the resource is gone, the policy was removed, the policy changed, or it was fixed.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Connection, Integer, bindparam, select, text

from scanner.errors import StoreError
from scanner.store.liveness import utc_now
from scanner.store.models import Run, UTCDateTime
from scanner.store.records import COMPLETED_STATUSES, FINDING_STATUSES, EndReason, RunStatus

ANALYZE_AFTER = 50_000
"""Result rows from which a finished run refreshes PostgreSQL's planner statistics."""

_FAILING = ", ".join(f"'{s.value}'" for s in FINDING_STATUSES)
_COMPLETED = ", ".join(f"'{s.value}'" for s in COMPLETED_STATUSES)

_TALLY = text("""
INSERT INTO run_tallies (run_id, source_id, check_id, namespace, status, policy_id, count)
SELECT r.run_id, s.source_id, r.check_id, s.namespace, r.status, MIN(r.policy_id), COUNT(*)
FROM results r JOIN resources s ON s.resource_id = r.resource_id
WHERE r.run_id = :run
GROUP BY r.run_id, s.source_id, r.check_id, s.namespace, r.status
""")

_PREVIOUS = text(f"""
SELECT r.run_id, r.started_at FROM runs r JOIN run_sources rs ON rs.run_id = r.run_id
WHERE rs.source_id = :source AND rs.error = '' AND r.status IN ({_COMPLETED})
  AND r.run_id <> :run
ORDER BY r.finished_at DESC, r.run_id DESC LIMIT 1
""").columns(run_id=Integer, started_at=UTCDateTime)

_CLOSE = text(f"""
UPDATE findings SET resolved_run_id = :run, resolved_at = :at,
       last_run_id = :last_run, last_seen_at = :last_at
WHERE source_id = :source AND resolved_at IS NULL
  AND NOT EXISTS (SELECT 1 FROM results r
                  WHERE r.run_id = :run AND r.resource_id = findings.resource_id
                    AND r.check_id = findings.check_id AND r.status IN ({_FAILING}))
""")

_REASONS = (
    (EndReason.RESOURCE_GONE, """NOT EXISTS (
        SELECT 1 FROM resource_observations o
        WHERE o.run_id = :run AND o.resource_id = findings.resource_id)"""),
    (EndReason.POLICY_REMOVED, """NOT EXISTS (
        SELECT 1 FROM run_policies rp
        JOIN policies p ON p.policy_id = rp.policy_id
        JOIN checks c ON c.policy_kind = p.kind AND c.policy_namespace = p.namespace
                     AND c.policy_name = p.name
        WHERE rp.run_id = :run AND c.check_id = findings.check_id)"""),
    (EndReason.POLICY_CHANGED, """policy_id NOT IN (
        SELECT rp.policy_id FROM run_policies rp WHERE rp.run_id = :run)"""),
    (EndReason.FIXED, "1 = 1"),
)

_FOLLOW_POLICY = text(f"""
UPDATE findings SET policy_id = (
    SELECT MIN(r.policy_id) FROM results r
    WHERE r.run_id = :run AND r.status IN ({_FAILING})
      AND r.resource_id = findings.resource_id AND r.check_id = findings.check_id)
WHERE source_id = :source AND resolved_at IS NULL
  AND policy_id NOT IN (SELECT rp.policy_id FROM run_policies rp WHERE rp.run_id = :run)
""")

_OPEN = text(f"""
INSERT INTO findings (source_id, resource_id, check_id, policy_id, first_run_id,
                      first_seen_at)
SELECT s.source_id, r.resource_id, r.check_id, MIN(r.policy_id), :run, :at
FROM results r JOIN resources s ON s.resource_id = r.resource_id
WHERE r.run_id = :run AND r.status IN ({_FAILING}) AND s.source_id = :source
  AND NOT EXISTS (SELECT 1 FROM findings f
                  WHERE f.resource_id = r.resource_id AND f.check_id = r.check_id
                    AND f.resolved_at IS NULL)
GROUP BY s.source_id, r.resource_id, r.check_id
""").bindparams(bindparam("at", type_=UTCDateTime))


def finish_run(connection: Connection, run_id: int, status: RunStatus) -> None:
    at = connection.execute(
        select(Run.started_at).where(Run.run_id == run_id)).scalar_one()
    scanned = [row[0] for row in connection.execute(text(
        "SELECT source_id FROM run_sources WHERE run_id = :run AND error = '' "
        "ORDER BY source_id"), {"run": run_id})]
    if connection.dialect.name == "postgresql" and scanned:
        # Serialise finishes that touch the same sources' findings.
        connection.execute(text("SELECT source_id FROM sources WHERE source_id = ANY(:ids) "
                                "ORDER BY source_id FOR UPDATE"), {"ids": scanned})
    connection.execute(_TALLY, {"run": run_id})
    if status in COMPLETED_STATUSES:
        for source_id in scanned:
            _update_findings(connection, run_id, source_id, at)
    counts = dict(connection.execute(text(
        "SELECT status, SUM(count) FROM run_tallies WHERE run_id = :run GROUP BY status"),
        {"run": run_id}).all())
    values: dict[str, Any] = {f"{s}_count": int(counts.get(s, 0))
                              for s in ("pass", "fail", "warn", "error", "skip")}
    values["result_count"] = sum(values.values())
    values["resource_count"] = connection.execute(text(
        "SELECT COUNT(DISTINCT resource_id) FROM resource_observations WHERE run_id = :run"),
        {"run": run_id}).scalar_one()
    values["error_record_count"] = connection.execute(text(
        "SELECT COUNT(*) FROM scan_errors WHERE run_id = :run"), {"run": run_id}).scalar_one()
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
    if connection.dialect.name == "postgresql" and values["result_count"] >= ANALYZE_AFTER:
        # Fresh statistics after a big load, so that diffs plan as hash anti-joins instead
        # of probing row by row (autovacuum would get there, but later).
        for table in ("results", "resource_observations", "resources", "findings",
                      "run_tallies", "run_sources", "run_policies", "sources", "checks",
                      "policies"):
            connection.execute(text(f"ANALYZE {table}"))


def _update_findings(connection: Connection, run_id: int, source_id: int,
                     at: datetime) -> None:
    previous = connection.execute(_PREVIOUS, {"source": source_id, "run": run_id}).first()
    last_run, last_at = (previous[0], previous[1]) if previous else (None, None)
    connection.execute(_CLOSE, {"run": run_id, "at": at, "source": source_id,
                                "last_run": last_run, "last_at": last_at})
    for reason, condition in _REASONS:
        connection.execute(text(
            f"UPDATE findings SET end_reason = :reason WHERE resolved_run_id = :run "
            f"AND source_id = :source AND end_reason IS NULL AND {condition}"),
            {"reason": reason.value, "run": run_id, "source": source_id})
    connection.execute(_FOLLOW_POLICY, {"run": run_id, "source": source_id})
    connection.execute(_OPEN, {"run": run_id, "at": at, "source": source_id})
