"""Process settings for batch work (the command line and the scan's workers): the garbage
collector, and how a command and its child processes end together."""

from __future__ import annotations

import contextlib
import gc
import os
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

# Parsing and evaluating allocate millions of short-lived, acyclic containers (documents,
# results); CPython's default threshold of 700 runs a collection every few hundred of them,
# about a tenth of a scan's time. The threshold counts the containers that are still alive,
# which in a scan are mostly parsed documents waiting to be evaluated and results waiting to
# be written: each collection walks them again, and at 10,000 a 2,000-resource scan still
# spent about 0.1 s of its 3 to 4 s of CPU time in collections. Cyclic garbage, the only
# kind left for the collector, is rare in this work.
GC_THRESHOLD = 100_000


def collect_less_often() -> None:
    """Run the cyclic garbage collector once per ``GC_THRESHOLD`` new containers."""
    gen0, *older = gc.get_threshold()
    if gen0 < GC_THRESHOLD:
        gc.set_threshold(GC_THRESHOLD, *older)


@contextmanager
def uncollected() -> Iterator[None]:
    """Build many long-lived, acyclic objects (a run's report data) without collections: each
    would walk again every object built so far, none of them garbage."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


@contextmanager
def importing() -> Iterator[None]:
    """Import large modules without collections (``uncollected``: an import builds long-lived
    objects and little garbage). If modules were loaded, every object is frozen afterwards, so
    later collections skip them; only then: in a long-lived process (the scheduler) the objects
    of a later scan must stay collectable."""
    loaded = len(sys.modules)
    try:
        with uncollected():
            yield
    finally:
        if len(sys.modules) > loaded:
            gc.freeze()


PR_SET_PDEATHSIG = 1  # prctl(2)


def end_with_parent(parent: int, sig: int = signal.SIGKILL) -> None:
    """Have the kernel send ``sig`` to this (child) process when ``parent`` ends, whatever this
    process is doing: a worker deep in one evaluation holds the interpreter and runs no thread
    or handler that could notice (Linux; elsewhere the workers' own watch thread does it).
    A parent that ended before this took effect is caught by looking once more."""
    if sys.platform.startswith("linux"):
        import ctypes

        with contextlib.suppress(OSError, AttributeError):
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(PR_SET_PDEATHSIG, int(sig), 0, 0, 0)
    if os.getppid() != parent:
        os.kill(os.getpid(), sig)


TERMINATED = 128 + signal.SIGTERM
"""The exit status of a command ended by SIGTERM (as the shell reports one killed by it)."""


def exit_on_terminate() -> None:
    """In the main thread: SIGTERM (``timeout``, ``kill``, systemd) ends the command as Ctrl-C
    does, by an exception that unwinds it (a run is marked interrupted, its workers are
    stopped and killed) and exit status ``TERMINATED``. A second SIGTERM kills at once."""
    def terminate(signum: int, _frame: object) -> None:
        signal.signal(signum, signal.SIG_DFL)
        raise SystemExit(TERMINATED)

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, terminate)


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity, else the machine's)."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):
        return os.cpu_count() or 1
