"""The scan's one way to fork: a child running one call while this process goes on (``start``),
or a child writing into a pipe for as long as it has something to say (``spawn``).

A scan ends with pieces of work that need nothing of each other (rendering several reports;
finishing the run in the database while reading what its reports show) and with the
workers' cores free: a child takes one of them. It runs the call, sends back what it
returned or raised (pickled) and leaves at once, without this process's clean-ups.

Fork only where no other thread runs (``can_fork``): a fork copies every thread's memory in
the middle of what it does, and a lock another thread held stays held in the child.
"""

from __future__ import annotations

import gc
import os
import pickle
import threading
from collections.abc import Callable
from typing import Generic, TypeVar

from scanner.scan.processes import end_with_parent

T = TypeVar("T")


def can_fork() -> bool:
    """Whether a child can be forked safely here: the system forks, and no other thread runs."""
    return hasattr(os, "fork") and threading.active_count() == 1


class Forked(Generic[T]):
    """A child running one call; ``result`` waits for it."""

    def __init__(self, pid: int, read_end: int, lost: Callable[[str], BaseException]) -> None:
        self._pid, self._read_end, self._lost = pid, read_end, lost

    def result(self) -> T:
        """What the call returned; what it raised is raised here (``lost`` when the child
        ended without telling, e.g. killed)."""
        with os.fdopen(self._read_end, "rb") as pipe:
            payload = pipe.read()
        _, status = os.waitpid(self._pid, 0)
        if not payload:
            code = os.waitstatus_to_exitcode(status)
            raise self._lost(f"ended without a result (exit status {code})" if code >= 0
                             else f"was killed by signal {-code}")
        returned, value = pickle.loads(payload)
        if returned:
            return value
        if isinstance(value, BaseException):
            raise value
        raise self._lost(f"failed: {value}")


def spawn(body: Callable[[int], int]) -> tuple[int, int]:
    """Fork a child that runs ``body`` with the write end of a pipe and leaves with the exit code
    it returns (1 when it raises), without this process's clean-ups; a parent killed or
    terminated takes it along. Returns the child's pid and the pipe's read end."""
    read_end, write_end = os.pipe()
    parent = os.getpid()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        gc.freeze()  # what it shares with this process stays out of its collections (no page copied for them)
        code = 1
        try:
            os.close(read_end)
            end_with_parent(parent)
            code = body(write_end)
        finally:
            os._exit(code)
    os.close(write_end)
    return pid, read_end


def start(call: Callable[[], T], lost: Callable[[str], BaseException]) -> Forked[T]:
    """Fork a child running ``call``. ``lost`` makes the error raised when the child gives no
    result, from how it ended ("was killed by signal 9", "failed: <an error that does not pickle>")."""
    def body(write_end: int) -> int:
        code = 0
        try:
            outcome: tuple[bool, object] = (True, call())
        except BaseException as exc:  # an interrupt too: the parent decides what it means
            code, outcome = 1, (False, exc)
        try:
            payload = pickle.dumps(outcome)
        except Exception:  # a value or an error that does not pickle: described instead
            code, payload = 1, pickle.dumps((False, f"{type(outcome[1]).__name__}: {outcome[1]}"))
        with os.fdopen(write_end, "wb") as pipe:
            pipe.write(payload)
        return code

    pid, read_end = spawn(body)
    return Forked(pid, read_end, lost)
