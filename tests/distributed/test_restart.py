"""PostgreSQL restarted while workers run a queued run: the workers reconnect and carry on, and
the run ends with exactly the rows ``scanner scan`` stores for the same config, no row twice.

The server is restarted with ``pg_ctlcluster`` (the Debian cluster the suite's database runs
on, as in CI); the test needs to run where it may do that."""

from __future__ import annotations

import pathlib
import shutil
import subprocess
import time

import psycopg
import pytest

from tests.distributed.project import SOURCES, libpq, scan_and_enqueue, scanner
from tests.distributed.test_workers import ERRORS, FINDINGS, OBSERVATIONS, RESULTS, RUN, TALLIES, rows, wait_for

pytestmark = pytest.mark.postgres


def _restart_postgres() -> None:
    """Restart the local PostgreSQL cluster (fast shutdown: every session is cut)."""
    clusters = sorted(pathlib.Path("/etc/postgresql").glob("*/main"))
    assert shutil.which("pg_ctlcluster") and clusters, "a Debian PostgreSQL cluster (pg_ctlcluster) is needed"
    version = clusters[-1].parent.name
    subprocess.run(["pg_ctlcluster", "--skip-systemctl-redirect", version, "main", "restart", "-m", "fast"],
                   check=True, capture_output=True, timeout=120)


def _connect(url: str, timeout: float = 60.0) -> psycopg.Connection:
    """A session, once the server accepts them again."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return psycopg.connect(libpq(url), autocommit=True)
        except psycopg.OperationalError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def test_workers_reconnect_after_a_postgresql_restart_and_finish_the_run(tmp_path: pathlib.Path,
                                                                         schemas: tuple[str, str]) -> None:
    scan_url, queue_url = schemas
    queue_config, run_id = scan_and_enqueue(tmp_path, scan_url, queue_url)

    # one shard's row held: the run cannot end before the restart, and its worker is mid-job
    held = psycopg.connect(libpq(queue_url))
    held.execute("SELECT 1 FROM scanner_queue_shards WHERE run_id = %s AND source = 's2' AND shard = 0 FOR UPDATE",
                 (run_id,))
    watch = _connect(queue_url)
    workers = [scanner(tmp_path, "worker", "--config", queue_config, "--heartbeat", "0.3", "--stalled-after", "3",
                       env={"PGAPPNAME": f"worker-{i}"}) for i in range(2)]
    try:
        wait_for(lambda: watch.execute("SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                                       "AND application_name LIKE 'worker-%%'").fetchone(),
                 120, "a worker to wait on the held shard")
        _restart_postgres()
        with pytest.raises(psycopg.OperationalError):
            held.execute("SELECT 1")  # the restart cut every session
        watch = _connect(queue_url)

        def finished() -> bool:
            status = watch.execute("SELECT status FROM runs WHERE run_id = %s", (run_id,)).fetchone()
            return status is not None and status[0] != "running"

        wait_for(finished, 180, "the run to be assembled after the restart")
        alive = [worker.poll() is None for worker in workers]
    finally:
        held.close()
        watch.close()
        for worker in workers:
            worker.terminate()
        outputs = [worker.communicate(timeout=60)[0] for worker in workers]
    assert all(alive), outputs  # the workers carried on
    scan_run = rows(scan_url, "SELECT run_id FROM runs", 0)[0][0]
    for query in (RUN, RESULTS, OBSERVATIONS, ERRORS, TALLIES, FINDINGS):
        assert rows(queue_url, query, run_id) == rows(scan_url, query, scan_run), query
    results = rows(queue_url, RESULTS, run_id)
    assert len(results) == len(set(results)) == SOURCES * 12 * 5 * 2
