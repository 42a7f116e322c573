"""``scanner worker``: run the queue's jobs on this machine, one at a time per process.

Each process is a Procrastinate worker beating a heartbeat; jobs of a worker whose heartbeat
stopped (killed, its machine lost) are put back in the queue by the other workers, which look
for them every heartbeat. ``--concurrency N`` starts N such processes (evaluation is CPU work:
processes, not threads).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import subprocess
import sys
from datetime import timedelta
from functools import partial
from typing import Any

from scanner.distributed import bookkeeping
from scanner.distributed.assemble import assemble
from scanner.distributed.orphans import JoblessShard, recover_orphans
from scanner.distributed.queue import ASSEMBLE_TASK, QUEUE, SHARD_ATTEMPTS, SHARD_TASK, ensure_schema, make_app
from scanner.distributed.shard import record_failure, run_shard
from scanner.distributed.state import WorkerState

log = logging.getLogger("scanner.distributed")


def register(app: Any, state: WorkerState) -> None:
    """The two tasks of a run, run in this process with ``state``."""

    @app.task(name=SHARD_TASK, queue=QUEUE, retry=SHARD_ATTEMPTS, pass_context=True)
    def scan_shard(context: Any, run_id: int, config_digest: str, source: str, shard: int, shards: int) -> None:
        try:
            run_shard(state, run_id, config_digest, source, shard, shards)
        except Exception as exc:
            if context.job.attempts < SHARD_ATTEMPTS:
                raise
            why = f"shard {shard + 1}/{shards} failed {context.job.attempts + 1} times: {type(exc).__name__}: {exc}"
            log.error("run %s: source %s: %s", run_id, source, why)
            record_failure(state, run_id, source, shard, shards, why)
        request_assembly(app, state, run_id)

    @app.task(name=ASSEMBLE_TASK, queue=QUEUE, retry=SHARD_ATTEMPTS)
    def assemble_run(run_id: int) -> None:
        assemble(state, run_id)


def request_assembly(app: Any, state: WorkerState, run_id: int) -> None:
    """Defer the run's assembly once its last shard is written (one job queued at a time)."""
    with state.store.engine.connect() as connection:
        if bookkeeping.pending_shards(connection, run_id):
            return
    from procrastinate.exceptions import AlreadyEnqueued

    with contextlib.suppress(AlreadyEnqueued):
        app.configure_task(ASSEMBLE_TASK, queue=QUEUE, lock=f"assemble-{run_id}",
                           queueing_lock=f"assemble-{run_id}").defer(run_id=run_id)


async def _recover_stalled(app: Any, state: WorkerState, every: float, stalled_after: float) -> None:
    """Put back in the queue the jobs of workers whose heartbeat stopped, and recover the runs
    an enqueue left unfinished (``orphans``)."""
    while True:
        try:
            for job in await app.job_manager.get_stalled_jobs(queue=QUEUE, seconds_since_heartbeat=stalled_after):
                log.warning("job %s (%s %s) of a stalled worker: queued again", job.id, job.task_name, job.task_kwargs)
                with contextlib.suppress(Exception):  # another worker retried it first
                    await app.job_manager.retry_job(job)
            await asyncio.to_thread(recover_orphans, state.store.engine, partial(_defer_shard, app),
                                    timedelta(seconds=stalled_after))
        except Exception as exc:  # the database is unreachable for now: try again at the next beat
            log.warning("looking for stalled jobs: %s", exc)
        await asyncio.sleep(every)


def _defer_shard(app: Any, shard: JoblessShard) -> None:
    """The job of a shard that has none (one at a time: a duplicate would find it written)."""
    from procrastinate.exceptions import AlreadyEnqueued

    with contextlib.suppress(AlreadyEnqueued):
        app.configure_task(SHARD_TASK, queue=QUEUE,
                           queueing_lock=f"shard-{shard.run_id}-{shard.source}-{shard.shard}").defer(
            run_id=shard.run_id, config_digest=shard.config_digest, source=shard.source, shard=shard.shard,
            shards=shard.shards)


async def _serve(app: Any, state: WorkerState, heartbeat: float, stalled_after: float, wait: bool) -> None:
    """The Procrastinate worker, started again when it ends through a database error (a query of
    its own in flight when PostgreSQL restarted, say) rather than a stop request. The first
    SIGTERM or SIGINT stops it once its running job ends (the worker task cancelled: Procrastinate
    makes that a graceful stop); a second one ends the process."""
    loop = asyncio.get_running_loop()
    pause = max(heartbeat, 1.0)  # between a worker run that failed and the next
    stopping = False
    current: asyncio.Task[Any] | None = None

    def stop() -> None:
        nonlocal stopping
        stopping = True
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(signum)
        if current is not None:
            current.cancel()

    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop)
    async with app.open_async():
        recover = asyncio.create_task(_recover_stalled(app, state, heartbeat, stalled_after))
        try:
            while not stopping:
                current = asyncio.create_task(app.run_worker_async(
                    queues=[QUEUE], concurrency=1, wait=wait, name=state.name, update_heartbeat_interval=heartbeat,
                    stalled_worker_timeout=stalled_after, delete_jobs="never", install_signal_handlers=False))
                try:
                    await current
                    cause = "a task of its own failed"
                except asyncio.CancelledError:
                    if stopping:
                        break
                    raise
                except Exception as exc:  # (the database unreachable: it is tried again below)
                    if stopping or not wait:
                        raise
                    cause = f"{type(exc).__name__}: {exc}"
                if stopping or not wait:
                    break
                log.warning("the worker stopped (%s): it starts again in %gs", cause, pause)
                await asyncio.sleep(pause)
        finally:
            for signum in (signal.SIGINT, signal.SIGTERM):
                loop.remove_signal_handler(signum)
            recover.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await recover


def serve(config_path: str, *, heartbeat: float = 10.0, stalled_after: float = 30.0, wait: bool = True) -> None:
    """Run jobs in this process until stopped (SIGTERM, Ctrl-C), or, without ``wait``, until
    the queue is empty."""
    state = WorkerState(config_path)
    try:
        bookkeeping.ensure_tables(state.store.engine)
        app = make_app(state.store.url)
        with app.open():
            ensure_schema(app, state.store.engine)
        register(app, state)
        asyncio.run(_serve(app, state, heartbeat, stalled_after, wait))
    finally:
        state.close()


def serve_many(argv: list[str], concurrency: int) -> int:
    """``concurrency`` worker processes, each ``scanner worker`` with ``argv`` and concurrency 1;
    a SIGTERM or Ctrl-C is passed on to them. Returns the first non-zero exit code."""
    command = [sys.executable, "-m", "scanner", "worker", *argv, "--concurrency", "1"]
    children = [subprocess.Popen(command) for _ in range(concurrency)]

    def stop(signum: int, _frame: object) -> None:
        for child in children:
            with contextlib.suppress(OSError):
                child.send_signal(signum)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    codes = [child.wait() for child in children]
    return next((code for code in codes if code), 0)
