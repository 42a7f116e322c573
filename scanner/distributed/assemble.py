"""Assembling a queued run once its shards are all written: the sources that failed in a shard,
the status, the tallies (counted from the stored results: no one process saw them all), the
finding lifecycles and the chain, in the one transaction of ``finish_run``, under a lock on
the run's row: it happens once, whichever workers ask. Then its reports, rendered once."""

from __future__ import annotations

import logging

from sqlalchemy import Connection, select, text, update

from scanner.distributed import bookkeeping
from scanner.distributed.state import WorkerState
from scanner.errors import ConfigError, StoreError
from scanner.scan.report_data import render_configured_reports
from scanner.store import tables as t
from scanner.store.connect import translate_errors, write_connection
from scanner.store.finish import finish_run
from scanner.store.liveness import utc_now
from scanner.store.records import RunStatus

log = logging.getLogger("scanner.distributed")

# rows of ``finish.TALLY_COLUMNS``: what a RunWriter counts as it writes, counted afterwards
_TALLIES = text("""
SELECT r.run_id, s.source_id, r.check_id, s.namespace, r.status, r.policy_id, COUNT(*)
FROM results r JOIN resources s ON s.resource_id = r.resource_id
WHERE r.run_id = :run
GROUP BY r.run_id, s.source_id, r.check_id, s.namespace, r.status, r.policy_id
""")


def assemble(state: WorkerState, run_id: int) -> RunStatus | None:
    """Finish the run if every shard is written and no one finished it; render its reports if
    no one did. Returns the run's status, None while shards are pending."""
    store = state.store
    with translate_errors(store.url, f"run {run_id}: assemble"), write_connection(store.engine) as connection:
        queued = bookkeeping.queued_run(connection, run_id, lock=True)  # one assembly at a time
        if queued is None:
            raise StoreError(f"run {run_id} is not a run of the queue in {store.describe()}")
        if bookkeeping.pending_shards(connection, run_id):
            return None
        status = RunStatus(connection.execute(select(t.runs.c.status).where(t.runs.c.run_id == run_id))
                           .scalar_one())
        if status == RunStatus.RUNNING:
            status = _finish(connection, run_id, queued)
    if queued.reports_at is None and status != RunStatus.RUNNING:
        try:
            config = state.config_of(queued.config_digest)
        except ConfigError as exc:  # the run stands; its reports wait for the config it was enqueued with
            log.error("run %s is %s, but its reports were not rendered: %s; render them with "
                      "`scanner report --run %s`", run_id, status, exc, run_id)
            return status
        render_configured_reports(store, run_id, config)
        with write_connection(store.engine) as connection:
            bookkeeping.mark_reported(connection, run_id, utc_now())
    return status


def _finish(connection: Connection, run_id: int, queued: bookkeeping.QueuedRun) -> RunStatus:
    fatal: dict[str, list[str]] = {}
    for shard in bookkeeping.shard_states(connection, run_id):
        if shard.fatal:
            known = fatal.setdefault(shard.source, [])
            if shard.fatal not in known:  # (every shard of a source may fail the same way)
                known.append(shard.fatal)
    rows = connection.execute(
        select(t.sources.c.name, t.sources.c.source_id, t.run_sources.c.error)
        .join(t.run_sources, t.run_sources.c.source_id == t.sources.c.source_id)
        .where(t.run_sources.c.run_id == run_id)).all()
    failed = 0
    for name, source_id, error in rows:
        if name in fatal:
            error = "; ".join(filter(None, [error, *fatal[name]]))
            connection.execute(update(t.run_sources)
                               .where(t.run_sources.c.run_id == run_id, t.run_sources.c.source_id == source_id)
                               .values(error=error))
        failed += bool(error)
    status = (RunStatus.FAILED if rows and failed == len(rows)
              else RunStatus.PARTIAL if failed else RunStatus.SUCCEEDED)
    tallies = sorted(tuple(row) for row in connection.execute(_TALLIES, {"run": run_id}))
    finish_run(connection, run_id, status, tallies)
    log.info("run %s assembled: %s", run_id, status)
    return status
