"""A call run in a forked child: what it returns or raises comes back; a lost child is told."""

from __future__ import annotations

import os
import signal
import threading

import pytest

from scanner.scan import forked


class Lost(Exception):
    pass


class Unpicklable(Exception):
    def __reduce__(self):  # type: ignore[no-untyped-def]
        raise TypeError("not today")


def _raise(exc: BaseException) -> None:
    raise exc


def test_start_returns_what_the_call_returns_in_the_child() -> None:
    child = forked.start(lambda: (os.getpid(), {"a": [1, 2]}), Lost)
    pid, value = child.result()
    assert pid != os.getpid()
    assert value == {"a": [1, 2]}


@pytest.mark.parametrize("raised", [ValueError("bad value"), KeyboardInterrupt()], ids=["error", "interrupt"])
def test_start_raises_what_the_call_raised(raised: BaseException) -> None:
    child = forked.start(lambda: _raise(raised), Lost)
    with pytest.raises(type(raised)) as caught:
        child.result()
    assert str(caught.value) == str(raised)


def test_an_error_that_does_not_pickle_is_described() -> None:
    child = forked.start(lambda: _raise(Unpicklable("boom")), Lost)
    with pytest.raises(Lost, match=r"^failed: Unpicklable: boom$"):
        child.result()


def test_a_child_killed_before_it_told_is_lost() -> None:
    child = forked.start(lambda: os.kill(os.getpid(), signal.SIGKILL), Lost)
    with pytest.raises(Lost, match=r"^was killed by signal 9$"):
        child.result()


def test_a_child_that_exits_without_telling_is_lost() -> None:
    child = forked.start(lambda: os._exit(4), Lost)
    with pytest.raises(Lost, match=r"^ended without a result \(exit status 4\)$"):
        child.result()


def test_can_fork_only_without_other_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(threading, "active_count", lambda: 2)
    assert not forked.can_fork()
    monkeypatch.setattr(threading, "active_count", lambda: 1)
    assert forked.can_fork()
