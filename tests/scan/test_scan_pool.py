"""The scan's worker processes: below the scan's priority; when threads already run (under the
scheduler) they start from a fork server, and ignore the interrupts the scan handles from the
moment they exist."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from datetime import UTC, datetime

from scanner.engine.values import Values
from scanner.scan.pool import WorkerPool
from scanner.scan.workers import WORKER_NICENESS, EvaluationSetup

SIGINT, SIGTERM = 2, 15

# starts a pool from a fork server (a thread runs), prints the signal masks of the
# processes it started: "<role> <SigIgn hex>" per process
PROGRAM = textwrap.dedent("""
    import os, threading, time
    from datetime import UTC, datetime
    from scanner.engine.values import Values
    from scanner.scan.pool import WorkerPool
    from scanner.scan.workers import EvaluationSetup

    stop = threading.Event()
    threading.Thread(target=stop.wait, daemon=True).start()
    pool = WorkerPool(EvaluationSetup((), Values(), (), datetime.now(UTC)), 2, ([], []))
    try:
        def children(pid):
            for entry in os.listdir("/proc"):
                try:
                    with open(f"/proc/{entry}/stat") as f:
                        if entry.isdigit() and int(f.read().rsplit(")", 1)[1].split()[1]) == pid:
                            yield int(entry)
                except OSError:
                    continue
        for pid in children(os.getpid()):
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                role = "server" if b"forkserver" in f.read() else "other"
            with open(f"/proc/{pid}/status") as f:
                ignored = next(line.split()[1] for line in f if line.startswith("SigIgn:"))
            print(role, ignored)
    finally:
        stop.set()
        pool.close()
""")


def test_the_fork_server_ignores_interrupts_so_its_workers_do_from_birth() -> None:
    out = subprocess.run([sys.executable, "-c", PROGRAM], capture_output=True, text=True, timeout=120, check=True)
    servers = [int(mask, 16) for role, mask in (line.split() for line in out.stdout.splitlines()) if role == "server"]
    assert servers, out.stdout + out.stderr
    for mask in servers:
        assert mask & (1 << (SIGINT - 1)) and mask & (1 << (SIGTERM - 1)), f"{mask:x}"


def test_workers_run_below_the_scans_priority() -> None:
    """The scan's process writes what the workers send; they yield the CPU to it."""
    pool = WorkerPool(EvaluationSetup((), Values(), (), datetime.now(UTC)), 2, ([], []))
    try:
        assert pool.pool is not None
        seen = {pool.pool.submit(os.getpriority, os.PRIO_PROCESS, 0).result(timeout=60) for _ in range(4)}
    finally:
        pool.close()
    assert seen == {min(os.getpriority(os.PRIO_PROCESS, 0) + WORKER_NICENESS, 19)}


def test_join_after_close_leaves_the_scan_alone_again() -> None:
    """A scan finishes its run in a forked process only where no other thread runs: the pool's
    threads end with its workers, and ``join`` waits for that."""
    program = textwrap.dedent("""
        import threading
        from datetime import UTC, datetime
        from scanner.engine.values import Values
        from scanner.scan.pool import WorkerPool
        from scanner.scan.workers import EvaluationSetup

        pool = WorkerPool(EvaluationSetup((), Values(), (), datetime.now(UTC)), 2, ([], []))
        print(threading.active_count() > 1)
        pool.collect(print, print)
        pool.close()
        pool.join()
        print(threading.active_count())
    """)
    out = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=120, check=False)
    assert (out.returncode, out.stdout.split()) == (0, ["True", "1"]), out.stdout + out.stderr
