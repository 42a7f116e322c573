"""``scanner worker``'s loop around the Procrastinate worker: a worker run ended by a database
error starts again; a stop request (SIGTERM) ends it for good; without ``wait`` an error is
the process's. (The worker against a real PostgreSQL restart: ``test_restart``.)"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import AsyncIterator
from typing import Any

import pytest

from scanner.distributed.worker import _serve


class _App:
    """What ``_serve`` uses of a Procrastinate app: each run of its worker does the next step."""

    def __init__(self, *steps: str) -> None:
        self.steps = list(steps)
        self.runs: list[dict[str, Any]] = []
        self.job_manager = None  # (looking for stalled jobs fails, is logged, and is tried again)

    @contextlib.asynccontextmanager
    async def open_async(self) -> AsyncIterator[None]:
        yield

    async def run_worker_async(self, **options: Any) -> None:
        self.runs.append(options)
        step = self.steps.pop(0)
        if step == "database error":
            raise ConnectionError("connection to server was lost")
        if step == "ends":
            return
        os.kill(os.getpid(), signal.SIGTERM)  # "stop": asked to stop while running a job
        await asyncio.sleep(30)  # (cancelled by the stop request)


class _State:
    name = "test-worker"


def test_a_worker_run_ended_by_a_database_error_starts_again_until_asked_to_stop() -> None:
    app = _App("database error", "ends", "stop")
    asyncio.run(asyncio.wait_for(_serve(app, _State(), 0.01, 1.0, True), 20))  # type: ignore[arg-type]
    assert len(app.runs) == 3 and not app.steps
    assert all(run["install_signal_handlers"] is False for run in app.runs)  # the loop takes the signals


def test_without_wait_a_database_error_ends_the_worker() -> None:
    app = _App("database error", "stop")
    with pytest.raises(ConnectionError):
        asyncio.run(_serve(app, _State(), 0.01, 1.0, False))  # type: ignore[arg-type]
    assert len(app.runs) == 1
