"""Database locks: one holder at a time; released, expired or dead leases can be taken."""

from __future__ import annotations

import time
from datetime import timedelta

from sqlalchemy import update

from scanner.store import Store
from scanner.store.liveness import HOST
from scanner.store.models import Lock
from tests.store.conftest import day


def test_locks_one_holder_until_released(store: Store) -> None:
    lock = store.try_lock("scan:nightly")
    assert lock is not None and lock.held
    assert store.try_lock("scan:nightly") is None
    assert store.try_lock("scan:other") is not None
    lock.release()
    assert not lock.held
    with store.try_lock("scan:nightly") as again:  # type: ignore[union-attr]
        assert again.held


def test_locks_lease_is_renewed_while_held(store: Store) -> None:
    lock = store.try_lock("scan:nightly", ttl=timedelta(seconds=0.6))
    assert lock is not None
    time.sleep(1.2)  # two lease lengths: renewal kept it
    assert store.try_lock("scan:nightly") is None
    assert lock.held
    lock.release()


def _age_lock(store: Store, **values: object) -> None:
    with store.engine.begin() as connection:
        connection.execute(update(Lock).where(Lock.name == "scan:nightly").values(**values))


def test_locks_expired_lease_is_taken_over(store: Store) -> None:
    stale = store.try_lock("scan:nightly", ttl=timedelta(hours=1))
    assert stale is not None
    stale._beater.stop()  # its holder hangs
    _age_lock(store, expires_at=day(-1), owner_host="elsewhere")
    taken = store.try_lock("scan:nightly")
    assert taken is not None
    assert stale._renew() is False and not stale.held
    taken.release()


def test_locks_dead_holder_on_this_host_is_taken_over(store: Store) -> None:
    held = store.try_lock("scan:nightly", ttl=timedelta(hours=1))
    assert held is not None
    held._beater.stop()
    _age_lock(store, owner_host=HOST, owner_pid=2**22 + 12345)  # no such process
    assert store.try_lock("scan:nightly") is not None
