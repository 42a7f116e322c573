"""Queued runs an ``enqueue`` left unfinished when it ended early (killed, its machine lost),
found by the workers as they look for stalled jobs.

``scanner enqueue`` creates the run, then writes its sources, policies and shards in one
transaction, then defers a job per shard. Ended between the first two steps, it leaves a
``running`` run with nothing to run: the run is marked ``interrupted`` (what it wrote is
deleted, as for a scan whose process died). Ended while deferring, it leaves shards that no
job will ever run: their jobs are deferred, and the run completes as it would have. Only runs
older than a grace period are looked at: an enqueue still at work is left alone.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta

from sqlalchemy import Engine, text, update

from scanner.distributed.queue import SHARD_TASK
from scanner.store import tables as t
from scanner.store.connect import write_connection
from scanner.store.liveness import QUEUE_OWNER_PID, reclaim, utc_now
from scanner.store.records import RunStatus

log = logging.getLogger("scanner.distributed")

_UNQUEUED = text("""
SELECT r.run_id FROM runs r
WHERE r.status = 'running' AND r.owner_pid = :queue AND r.heartbeat_at < :before
  AND NOT EXISTS (SELECT 1 FROM scanner_queue_runs q WHERE q.run_id = r.run_id)
""")
_JOBLESS = text("""
SELECT s.run_id, q.config_digest, s.source, s.shard, s.shards
FROM scanner_queue_shards s
JOIN scanner_queue_runs q ON q.run_id = s.run_id
JOIN runs r ON r.run_id = s.run_id
WHERE r.status = 'running' AND r.heartbeat_at < :before AND s.status <> 'done'
  AND NOT EXISTS (SELECT 1 FROM procrastinate_jobs j
                  WHERE j.task_name = :task AND (j.args->>'run_id')::bigint = s.run_id
                    AND j.args->>'source' = s.source AND (j.args->>'shard')::int = s.shard)
ORDER BY s.run_id, s.source, s.shard
""")


@dataclass(frozen=True, slots=True)
class JoblessShard:
    """A shard of a queued run that no job runs."""

    run_id: int
    config_digest: str
    source: str
    shard: int
    shards: int


def recover_orphans(engine: Engine, defer: Callable[[JoblessShard], None],
                    grace: timedelta) -> tuple[list[int], list[JoblessShard]]:
    """Mark the runs an enqueue left without jobs ``interrupted`` and ``defer`` a job for each
    shard that has none; the runs marked and the shards deferred."""
    before = utc_now() - grace
    with engine.connect() as connection:
        unqueued = [row.run_id for row in
                    connection.execute(_UNQUEUED, {"queue": QUEUE_OWNER_PID, "before": before})]
        jobless = [JoblessShard(*row) for row in
                   connection.execute(_JOBLESS, {"before": before, "task": SHARD_TASK})]
    marked = []
    if unqueued:
        with write_connection(engine) as connection:
            for run_id in unqueued:
                if connection.execute(update(t.runs).where(t.runs.c.run_id == run_id,
                                                           t.runs.c.status == RunStatus.RUNNING)
                                      .values(status=RunStatus.INTERRUPTED, finished_at=utc_now())).rowcount:
                    marked.append(run_id)
        reclaim(engine, marked)
        for run_id in marked:
            log.warning("run %s: its enqueue ended before queuing its jobs: marked interrupted", run_id)
    for shard in jobless:
        log.warning("run %s: shard %s/%s of source %s had no job (its enqueue ended early): deferred",
                    shard.run_id, shard.shard + 1, shard.shards, shard.source)
        defer(shard)
    return marked, jobless
