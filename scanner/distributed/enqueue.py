"""``scanner enqueue``: create a run and one Procrastinate job per shard of each source.

The run is written as ``scanner scan`` begins one (policies, sources, the errors found while
preparing them) and owned by the queue (``QUEUE_OWNER_PID``): no scan marks it interrupted
while its jobs wait for a worker. Its last job assembles it.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import UTC, datetime

from scanner import __version__
from scanner.config import Config, load_config
from scanner.distributed import bookkeeping
from scanner.distributed.plan import plan_run, selected_sources
from scanner.distributed.queue import ASSEMBLE_TASK, QUEUE, SHARD_TASK, conninfo, ensure_schema, make_app
from scanner.scan.collect import error_row, not_evaluated_row, policy_error_row, unsupported_row
from scanner.scan.plan import policy_record, source_record
from scanner.store import records
from scanner.store.liveness import HOST, QUEUE_OWNER_PID, utc_now
from scanner.store.store import Store, create_run
from scanner.store.writer import RunWriter

log = logging.getLogger("scanner.schedule")


@dataclass(frozen=True, slots=True)
class Enqueued:
    run_id: int
    jobs: int  # shard jobs deferred
    failed_sources: tuple[str, ...]  # failed while being prepared (a Git checkout): no job


def enqueue(config: Config, only_sources: tuple[str, ...] = (), shards: int = 1,
            trigger: records.Trigger = records.Trigger.CLI, now: datetime | None = None) -> Enqueued:
    """Create the run and defer its jobs; raises on config and policy errors before writing."""
    conninfo(config.database_url)  # PostgreSQL only: refused before anything is read
    if shards < 1:
        raise ValueError("shards must be at least 1")
    started_at = now or datetime.now(UTC)
    selected = selected_sources(config, only_sources)
    plan = plan_run(config, selected)
    store = Store(config.database_url)
    app = make_app(store.url)
    try:
        bookkeeping.ensure_tables(store.engine)
        with app.open():
            ensure_schema(app, store.engine)
            run_id = create_run(store.engine, store.url, {
                "status": records.RunStatus.RUNNING, "trigger": trigger, "started_at": started_at,
                "heartbeat_at": utc_now(), "scanner_version": __version__, "config_digest": config.digest,
                "owner_host": HOST, "owner_pid": QUEUE_OWNER_PID})
            writer = RunWriter.attach(store.engine, store.url, run_id, batch_size=store.batch_size)
            counts = {name: shards for name in plan.tasks}
            with writer.transaction("enqueue") as connection:
                policy_set = plan.policy_set
                writer.add_policies(policy_record(p) for p in policy_set.policies)
                writer.add_errors([policy_error_row(e) for e in policy_set.errors])
                writer.add_errors([unsupported_row(u) for u in policy_set.unsupported])
                writer.add_errors([not_evaluated_row(n) for n in plan.not_evaluated])
                for source_run in plan.runs.values():
                    writer.add_source(source_record(source_run.cfg, source_run.source, "; ".join(source_run.fatal)))
                    writer.add_errors([error_row(e) for e in source_run.errors])
                writer.add_errors([error_row(record) for record in plan.gitops_records])
                bookkeeping.add_run(connection, run_id, config.digest, list(plan.runs), plan.commits(), counts)
            for name, count in counts.items():
                for index in range(count):
                    app.configure_task(SHARD_TASK, queue=QUEUE).defer(
                        run_id=run_id, config_digest=config.digest, source=name, shard=index, shards=count)
            if not counts:  # every source failed while being prepared: the run is assembled at once
                app.configure_task(ASSEMBLE_TASK, queue=QUEUE, queueing_lock=f"assemble-{run_id}").defer(
                    run_id=run_id)
    finally:
        store.close()
    failed = tuple(name for name, run in plan.runs.items() if run.fatal)
    return Enqueued(run_id, sum(counts.values()), failed)


def enqueue_scheduled(config_path: str, shards: int = 1) -> int:
    """``scanner schedule --distributed``'s job: load the config afresh and enqueue one run
    (trigger ``schedule``) under the lock ``scanner schedule`` takes for the same scan, so that
    one scheduler at a time enqueues it. Returns 0 (also when skipped for another scheduler)."""
    config = load_config(config_path)
    conninfo(config.database_url)
    store = Store(config.database_url)
    try:
        lock = store.try_lock("scan:" + config.scan_key)
        if lock is None:
            log.warning("enqueue skipped: another scheduler is enqueuing the same scan (sources and database) now")
            return 0
        try:
            done = enqueue(config, shards=shards, trigger=records.Trigger.SCHEDULE)
        finally:
            lock.release()
    finally:
        store.close()
    log.info("run %s: %s job%s enqueued", done.run_id, done.jobs, "s" if done.jobs != 1 else "")
    for name in done.failed_sources:
        log.error("run %s: source %s failed while being prepared", done.run_id, name)
    return 0
