"""One shard job: evaluate a shard with the scan's worker code, then write everything it sent
in one transaction that also marks the shard done (``bookkeeping.claim_shard``): an attempt
killed midway leaves nothing behind, and a retry of a committed attempt writes nothing."""

from __future__ import annotations

import logging
from datetime import datetime

from sqlalchemy import select

from scanner.distributed import bookkeeping
from scanner.distributed.state import WorkerState
from scanner.errors import ScannerError, StoreError
from scanner.scan.collect import Collector
from scanner.scan.plan import SourceRun
from scanner.scan.progress import Silent
from scanner.scan.workers import ShardTask, run_task
from scanner.sources.provenance import SourceStats
from scanner.store import tables as t
from scanner.store.liveness import utc_now
from scanner.store.records import RunStatus
from scanner.store.writer import RunWriter

log = logging.getLogger("scanner.distributed")


class _AlreadyDone(StoreError):
    """An earlier attempt of the job wrote the shard: this one's writes are rolled back."""


def run_shard(state: WorkerState, run_id: int, config_digest: str, source: str, shard: int, shards: int) -> bool:
    """Evaluate and write one shard; False when there was nothing to do (the shard was written
    by an earlier attempt, or the run ended elsewhere)."""
    store = state.store
    with store.engine.connect() as connection:
        queued = bookkeeping.queued_run(connection, run_id)
        run = connection.execute(select(t.runs.c.status, t.runs.c.started_at)
                                 .where(t.runs.c.run_id == run_id)).first()
    if queued is None or run is None:
        raise StoreError(f"run {run_id} is not a run of the queue in {store.describe()}")
    if run.status != RunStatus.RUNNING:
        log.warning("run %s is %s: shard %s of source %s skipped", run_id, run.status, shard + 1, source)
        return False
    if queued.config_digest != config_digest:
        raise StoreError(f"run {run_id}: the job's config digest is not the run's")
    started = utc_now()
    task: ShardTask | None = None
    problem = ""
    try:
        plan = state.plan(queued, run.started_at)
    except ScannerError as exc:  # a config that changed, policies that no longer load: the source fails
        raise StoreError(f"run {run_id}: this worker cannot evaluate it: {exc}") from exc
    source_run = plan.runs[source]
    if source not in plan.tasks:
        problem = f"could not be prepared on {state.name}: {'; '.join(source_run.fatal) or 'no task'}"
    elif (queued.commits.get(source) or None) != plan.tasks[source].commit:
        problem = (f"is at commit {plan.tasks[source].commit} on {state.name}, but the run scans "
                   f"{queued.commits.get(source)} (the branch moved since the run was enqueued)")
    else:
        task = plan.shard(source, shard, shards)
    messages: list[tuple] = []
    if task is not None:
        run_task(task, messages.append)
    else:
        messages.append(("done", shard, SourceStats(), problem, None))
    return _write(state, run_id, source, shard, shards, messages, started,
                  SourceRun(source_run.cfg, source_run.source), task)


def record_failure(state: WorkerState, run_id: int, source: str, shard: int, shards: int, why: str) -> bool:
    """The shard's last attempt failed: its source is failed in the run (as a scan's source
    whose worker failed), so that the run can still be assembled."""
    with state.store.engine.connect() as connection:
        queued = bookkeeping.queued_run(connection, run_id)
    if queued is None:
        return False
    cfg = next(s for s in state.config.sources if s.name == source)
    return _write(state, run_id, source, shard, shards, [("done", shard, SourceStats(), why, None)], utc_now(),
                  SourceRun(cfg, None), None)


def _write(state: WorkerState, run_id: int, source: str, shard: int, shards: int, messages: list[tuple],
           started: datetime, source_run: SourceRun, task: ShardTask | None) -> bool:
    store = state.store
    writer = RunWriter.attach(store.engine, store.url, run_id, batch_size=store.batch_size)
    placeholder = task or ShardTask(shard, source, source_run.cfg.type)
    try:
        with writer.transaction(f"shard {shard + 1}/{shards} of source {source}") as connection:
            if not bookkeeping.claim_shard(connection, run_id, source, shard, state.name, started, utc_now()):
                raise _AlreadyDone(f"run {run_id}: shard {shard + 1}/{shards} of source {source} was written")
            collector = Collector(writer, {shard: placeholder}, {source: source_run}, Silent())
            for message in messages:
                collector(message)
            collector.flush()
            bookkeeping.record_shard(connection, run_id, source, shard, source_run.resources,
                                     sum(collector.tally.counts.values()), "; ".join(source_run.fatal), utc_now())
    except _AlreadyDone as done:
        log.info("%s: nothing written", done)
        return False
    return True
