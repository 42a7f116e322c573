"""The worker processes of a scan: forked (or started from a fork server), handed shard tasks, and
read until every task reported back."""

from __future__ import annotations

import concurrent.futures
import contextlib
import multiprocessing
import os
import threading
from collections.abc import Callable
from queue import Empty

from scanner.scan.processes import end_with_parent, usable_cpus
from scanner.scan.workers import Compiled, EvaluationSetup, ShardTask, run_task, setup_process, setup_worker

JOBS_PER_CPU = 4
"""Worker processes per CPU at most: evaluation is CPU-bound, and beyond a few per core more
workers only cost memory and forks (``scan.jobs: 100000`` would fork thousands)."""


def worker_count(requested: int | None) -> int:
    """The workers a scan starts: ``requested`` (default: one per usable CPU), at most
    ``JOBS_PER_CPU`` per usable CPU."""
    cpus = usable_cpus()
    return max(1, min(requested or cpus, JOBS_PER_CPU * cpus))


def start_worker(*args: object) -> None:
    """A worker's first step: it ends with the process that started it (killed by the kernel,
    even in the middle of an evaluation), then ``setup_process``."""
    end_with_parent(os.getppid())
    setup_process(*args)  # type: ignore[arg-type]


class WorkerPool:
    """The worker processes of a scan, or this process alone (``jobs == 1``).

    They are forked first thing, while no thread runs (the run's heartbeat thread comes
    later), so that starting them is instant and safe, and they inherit the policies this
    process compiled. Where threads already run (under the scheduler) they start from a
    fork server instead and compile the policies themselves. ``close`` stops them at once,
    whatever they are doing: a worker still busy (the scan failed or was interrupted or
    terminated) is killed.
    """

    def __init__(self, setup: EvaluationSetup, jobs: int, compiled: Compiled) -> None:
        self.setup, self.compiled = setup, compiled
        self.pool: concurrent.futures.ProcessPoolExecutor | None = None
        self.tasks: list[ShardTask] = []
        self.futures: dict[concurrent.futures.Future[None], ShardTask] = {}
        self._threads: set[threading.Thread] = set()
        self._collected = False
        if jobs == 1:
            return
        alone = threading.active_count() == 1
        context: multiprocessing.context.BaseContext
        if alone:
            context = multiprocessing.get_context("fork")
            setup_worker(setup, compiled=compiled)  # the workers inherit it
        else:
            context = multiprocessing.get_context("forkserver")
            context.set_forkserver_preload(["scanner.scan.worker_signals", "scanner.scan.workers", "scanner.scan.pool"])
        self.queue = context.Queue(maxsize=16 * jobs)
        self.stop = context.Event()
        before = set(threading.enumerate())
        self.pool = concurrent.futures.ProcessPoolExecutor(jobs, mp_context=context, initializer=start_worker,
                                                           initargs=(setup, self.queue, self.stop))
        self.pool.submit(int)  # forks every worker now
        if alone:  # the pool's threads, which outlive ``close`` (one still starting ends before its starter)
            self._threads = {thread for thread in threading.enumerate() if thread.is_alive()} - before

    def add(self, tasks: list[ShardTask]) -> None:
        """Hand tasks out; their messages queue up until ``collect`` reads them."""
        self.tasks += tasks
        if self.pool is not None:
            self.futures.update((self.pool.submit(run_task, task), task) for task in tasks)

    def collect(self, handle: Callable[[tuple], None], failed: Callable[[ShardTask, BaseException], None],
                idle: Callable[[], None] | None = None) -> None:
        """Feed every message of the tasks to ``handle`` until all tasks are done; a worker that
        died with a task is reported to ``failed``; ``idle`` is called when no message came for a while."""
        if self.pool is None:
            setup_worker(self.setup, compiled=self.compiled)
            for task in self.tasks:
                run_task(task, handle)
            return
        finished: set[int] = set()
        while len(finished) < len(self.tasks):
            try:
                message = self.queue.get(timeout=0.5)
            except Empty:
                for future, task in self.futures.items():
                    error = future.exception() if task.task_id not in finished and future.done() else None
                    if error is not None:
                        finished.add(task.task_id)
                        failed(task, error)
                if idle is not None:
                    idle()
                continue
            handle(message)
            if message[0] in ("done", "footprint"):  # (a task's last message)
                finished.add(message[1])
        self._collected = True

    def close(self) -> None:
        """Stop the workers; their processes end on their own meanwhile (the pool's thread
        reaps them), not waited for here. Before every task reported back (the scan failed, or
        was interrupted or terminated), they are killed: one still evaluating would otherwise
        go on, a core busy, for as long as its evaluation takes."""
        if self.pool is not None:
            self.stop.set()
            busy = [] if self._collected else list(getattr(self.pool, "_processes", {}).values())
            self.pool.shutdown(wait=False, cancel_futures=True)
            for process in busy:  # they ignore SIGTERM (the scan's to handle): SIGKILL
                with contextlib.suppress(OSError, ValueError, AttributeError):
                    process.kill()
            self.pool = None

    def join(self, timeout: float = 5.0) -> None:
        """After ``close``: wait (up to ``timeout`` seconds) until the workers ended and the
        pool's threads with them, so that this process, alone again, can fork safely."""
        for thread in self._threads:
            thread.join(timeout)
