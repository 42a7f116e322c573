"""Retention: delete finished runs older than N days and what only they referenced (the
result cache rows included).

The hash chain of runs stays verifiable: the links of deleted runs at its start go, the last
of them kept as its anchor; those of other deleted runs stay, marked pruned
(``scanner.store.chain.retire``).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import Connection, bindparam, select, text

from scanner.store import tables as t
from scanner.store.chain import retire
from scanner.store.records import COMPLETED_STATUSES, RunStatus
from scanner.store.result_cache import prune_entries
from scanner.store.shared_rows import delete_unreferenced, discard_runs
from scanner.store.tables import UTCDateTime
from scanner.store.views import PruneResult

_COMPLETED = ", ".join(f"'{s.value}'" for s in COMPLETED_STATUSES)

_ORPHANS = {
    "resources": """DELETE FROM resources WHERE
        NOT EXISTS (SELECT 1 FROM observation_rows o
                    WHERE o.resource_id = resources.resource_id)
        AND NOT EXISTS (SELECT 1 FROM findings f WHERE f.resource_id = resources.resource_id)""",
    "checks": f"""DELETE FROM checks WHERE
        NOT EXISTS (SELECT 1 FROM tally_rows t WHERE t.check_id = checks.check_id)
        AND NOT EXISTS (SELECT 1 FROM findings f WHERE f.check_id = checks.check_id)
        AND checks.check_id NOT IN (
            SELECT r.check_id FROM results r JOIN runs u ON u.run_id = r.run_id
            WHERE u.status NOT IN ({_COMPLETED}))""",
    "policies": """DELETE FROM policies WHERE
        NOT EXISTS (SELECT 1 FROM run_policies rp WHERE rp.policy_id = policies.policy_id)
        AND NOT EXISTS (SELECT 1 FROM tally_rows t WHERE t.policy_id = policies.policy_id)
        AND NOT EXISTS (SELECT 1 FROM run_policy_tallies p WHERE p.policy_id = policies.policy_id)
        AND NOT EXISTS (SELECT 1 FROM findings f WHERE f.policy_id = policies.policy_id)""",
    "sources": """DELETE FROM sources WHERE
        NOT EXISTS (SELECT 1 FROM run_sources rs WHERE rs.source_id = sources.source_id)
        AND NOT EXISTS (SELECT 1 FROM resources r WHERE r.source_id = sources.source_id)
        AND NOT EXISTS (SELECT 1 FROM scan_errors e WHERE e.source_id = sources.source_id)
        AND NOT EXISTS (SELECT 1 FROM tally_rows t WHERE t.source_id = sources.source_id)
        AND NOT EXISTS (SELECT 1 FROM run_policy_tallies p WHERE p.source_id = sources.source_id)
        AND NOT EXISTS (SELECT 1 FROM findings f WHERE f.source_id = sources.source_id)""",
}


UNFINISHED = (RunStatus.FAILED, RunStatus.INTERRUPTED)


def discard_partial(connection: Connection, run_ids: list[int]) -> int:
    """Delete what the given (failed or interrupted) runs wrote as they went and that counts
    only if a run completes (its observations, results and tallies, where no other run shares
    them), so that retried runs do not grow the database: the runs keep their row, sources,
    policies and errors (why they failed). Returns how many result rows went."""
    deleted = 0
    for start in range(0, len(run_ids), 200):
        part = run_ids[start:start + 200]
        deleted += discard_runs(connection, part)
        connection.execute(text("DELETE FROM run_policy_tallies WHERE run_id IN :ids").bindparams(
            bindparam("ids", expanding=True)), {"ids": part})
    return deleted


def discard_unfinished(connection: Connection) -> int:
    """``discard_partial`` for every failed or interrupted run that still has rows."""
    # a run that finished as failed is part of the chain of runs: its rows are its record
    unfinished = select(t.runs.c.run_id).where(t.runs.c.status.in_(UNFINISHED),
                                               t.runs.c.run_id.not_in(select(t.run_chain.c.run_id)))
    with_rows = list(connection.execute(
        select(t.run_observation_blocks.c.run_id).distinct()
        .where(t.run_observation_blocks.c.run_id.in_(unfinished))
        .union(select(t.run_tally_blocks.c.run_id).distinct().where(t.run_tally_blocks.c.run_id.in_(unfinished)))
    ).scalars())
    return discard_partial(connection, sorted(with_rows))


def prune(connection: Connection, keep_days: int, now: datetime) -> PruneResult:
    """Delete runs that started before ``now - keep_days`` (running runs are kept)."""
    cutoff = now - timedelta(days=keep_days)
    old = list(connection.execute(
        select(t.runs.c.run_id).where(t.runs.c.started_at < cutoff, t.runs.c.status != RunStatus.RUNNING)
    ).scalars())
    retire(connection, old)  # their links in the chain of runs
    discarded = discard_unfinished(connection)
    findings = connection.execute(text(
        "DELETE FROM findings WHERE resolved_at IS NOT NULL AND resolved_at < :cutoff"
    ).bindparams(bindparam("cutoff", type_=UTCDateTime)), {"cutoff": cutoff}).rowcount
    for start in range(0, len(old), 200):
        ids = {"ids": old[start:start + 200]}
        for table in ("run_observation_blocks", "run_tally_blocks", "run_policy_tallies", "scan_errors",
                      "run_policies", "run_sources", "runs"):
            connection.execute(text(f"DELETE FROM {table} WHERE run_id IN :ids").bindparams(
                bindparam("ids", expanding=True)), ids)
    prune_entries(connection)  # the result cache rows no kept run wrote or reused
    # a running scan's writer holds the ids of resources, checks and policies it has not
    # referenced yet: while one runs, nothing unreferenced is deleted
    # (nor are the rows no run's block marks: it may be about to share them)
    running = connection.execute(select(t.runs.c.run_id).where(t.runs.c.status == RunStatus.RUNNING).limit(1)).first()
    if not running:
        delete_unreferenced(connection)
    counts = dict.fromkeys(_ORPHANS, 0) if running else {
        table: connection.execute(text(sql)).rowcount for table, sql in _ORPHANS.items()}
    return PruneResult(cutoff=cutoff, runs=len(old), resources=counts["resources"],
                       policies=counts["policies"], findings=findings, orphans_kept=running is not None,
                       discarded_results=discarded)
