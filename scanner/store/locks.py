"""Named database locks (leases) so two schedulers never run the same scan at once.

A lock is a row in ``locks`` held by an owner token until released or until its lease
expires; the holder renews the lease from a background thread. A lease whose holder is a
dead process on this host, or whose lease has expired, can be taken over.
"""

from __future__ import annotations

import os
import threading
from datetime import timedelta
from types import TracebackType

from sqlalchemy import Engine, delete, select, update

from scanner.store import tables as t
from scanner.store.bulk import dialect_module
from scanner.store.connect import write_connection
from scanner.store.liveness import HOST, Beater, owner_dead, owner_token, utc_now


class DatabaseLock:
    """A held lock; release it with ``release()`` or by leaving its ``with`` block."""

    def __init__(self, engine: Engine, name: str, owner: str, ttl: timedelta) -> None:
        self.name = name
        self.owner = owner
        self._engine = engine
        self._ttl = ttl
        self._lost = threading.Event()
        self._beater = Beater(self._renew, max(ttl.total_seconds() / 3, 0.05),
                              name=f"scanner-lock-{name}")
        self._beater.start()

    @property
    def held(self) -> bool:
        """False once released, or when another owner took the lease over."""
        return not self._lost.is_set()

    def _renew(self) -> bool:
        with write_connection(self._engine) as connection:
            renewed = connection.execute(
                update(t.locks).where(t.locks.c.name == self.name, t.locks.c.owner == self.owner)
                .values(expires_at=utc_now() + self._ttl)).rowcount
        if not renewed:
            self._lost.set()
        return bool(renewed)

    def release(self) -> None:
        if self._lost.is_set():
            return
        self._lost.set()
        self._beater.stop()
        with write_connection(self._engine) as connection:
            connection.execute(delete(t.locks).where(t.locks.c.name == self.name,
                                                     t.locks.c.owner == self.owner))

    def __enter__(self) -> DatabaseLock:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.release()


def try_lock(engine: Engine, name: str, ttl: timedelta) -> DatabaseLock | None:
    """Take the lock ``name`` if it is free or its holder is gone; None when it is held."""
    owner = owner_token()
    now = utc_now()
    values = {"name": name, "owner": owner, "owner_host": HOST, "owner_pid": os.getpid(),
              "acquired_at": now, "expires_at": now + ttl}
    dialect = dialect_module(engine)
    insert = dialect.insert(t.locks).values(**values).on_conflict_do_nothing().returning(t.locks.c.name)
    with write_connection(engine) as connection:
        if connection.execute(insert).first() is None:
            held = connection.execute(select(t.locks).where(t.locks.c.name == name)).one_or_none()
            if held is not None:
                lease_end = held.expires_at
                if not owner_dead(held.owner_host, held.owner_pid, lease_end, now,
                                  timedelta(0)):
                    return None
                taken = connection.execute(
                    update(t.locks).where(t.locks.c.name == name, t.locks.c.owner == held.owner)
                    .values(**values)).rowcount
                if not taken:
                    return None
            elif connection.execute(insert).first() is None:  # released and taken meanwhile
                return None
    return DatabaseLock(engine, name, owner, ttl)
