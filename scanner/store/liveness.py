"""Who is alive: process identity, heartbeats of running runs, and stale-run detection.

A run records its owner's host and pid and beats every few seconds from a background
thread. A ``running`` run is interrupted when its owner is a dead process on this host,
or when its heartbeat is older than the store's ``stale_after``. A run owned by a task queue
(``QUEUE_OWNER_PID``: ``scanner enqueue``) has no one process to watch: its last task ends it.
"""

from __future__ import annotations

import os
import socket
import threading
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

from sqlalchemy import Engine, select, update
from sqlalchemy.exc import SQLAlchemyError

from scanner.store import tables as t
from scanner.store.connect import write_connection
from scanner.store.prune import discard_partial
from scanner.store.records import RunStatus

HOST = socket.gethostname()
QUEUE_OWNER_PID = -1  # the owner pid of a run whose shards are jobs of a task queue


def utc_now() -> datetime:
    return datetime.now(UTC)


def owner_token() -> str:
    return f"{HOST}:{os.getpid()}:{uuid.uuid4().hex[:12]}"


def pid_alive(pid: int) -> bool:
    """Whether ``pid`` is a live (not zombie) process on this host."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    stat = Path(f"/proc/{pid}/stat")
    try:
        state = stat.read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True
    return state not in ("Z", "X")


def owner_dead(host: str, pid: int, last_beat: datetime, now: datetime,
               stale_after: timedelta) -> bool:
    if host == HOST and pid != os.getpid() and not pid_alive(pid):
        return True
    return now - last_beat > stale_after


def mark_interrupted(engine: Engine, stale_after: timedelta) -> list[int]:
    """Mark ``running`` runs whose owner is gone as ``interrupted``; return their ids."""
    now = utc_now()
    with engine.connect() as connection:
        rows = connection.execute(
            select(t.runs.c.run_id, t.runs.c.owner_host, t.runs.c.owner_pid, t.runs.c.heartbeat_at)
            .where(t.runs.c.status == RunStatus.RUNNING)).all()
    dead = [row for row in rows if row.owner_pid != QUEUE_OWNER_PID
            and owner_dead(row.owner_host, row.owner_pid, row.heartbeat_at, now, stale_after)]
    marked: list[int] = []
    if not dead:
        return marked
    with write_connection(engine) as connection:
        for row in dead:
            changed = connection.execute(
                update(t.runs)
                .where(t.runs.c.run_id == row.run_id, t.runs.c.status == RunStatus.RUNNING,
                       t.runs.c.heartbeat_at == row.heartbeat_at)
                .values(status=RunStatus.INTERRUPTED, finished_at=now)).rowcount
            if changed:
                marked.append(row.run_id)
    reclaim(engine, marked)
    return marked


def reclaim(engine: Engine, run_ids: list[int]) -> None:
    """Delete what the given runs, just marked failed or interrupted, wrote as they went. In a
    transaction of its own: where it cannot be done now (a full disk), ``scanner db prune``
    does it later."""
    if not run_ids:
        return
    try:
        with write_connection(engine) as connection:
            discard_partial(connection, run_ids)
    except SQLAlchemyError:
        return


class Beater(threading.Thread):
    """Calls ``beat`` every ``interval`` seconds until stopped (daemon thread)."""

    def __init__(self, beat: Callable[[], bool], interval: float, name: str) -> None:
        super().__init__(name=name, daemon=True)
        self._beat = beat
        self._interval = interval
        self._stop_event = threading.Event()
        self.failure: BaseException | None = None

    def run(self) -> None:
        while not self._stop_event.wait(self._interval):
            try:
                if not self._beat():
                    return
            except SQLAlchemyError as e:  # a transient failure is retried at the next beat
                self.failure = e

    def stop(self) -> None:
        self._stop_event.set()
        if self.is_alive() and threading.current_thread() is not self:
            self.join(timeout=self._interval + 5)


def run_heartbeat(engine: Engine, run_id: int, interval: float) -> Beater:
    def beat() -> bool:
        with write_connection(engine) as connection:
            return bool(connection.execute(
                update(t.runs).where(t.runs.c.run_id == run_id, t.runs.c.status == RunStatus.RUNNING)
                .values(heartbeat_at=utc_now())).rowcount)

    beater = Beater(beat, interval, name=f"scanner-run-{run_id}-heartbeat")
    beater.start()
    return beater
