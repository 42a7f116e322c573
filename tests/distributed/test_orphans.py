"""Runs an ``enqueue`` left unfinished: one ended before queuing any job is marked interrupted
by the workers; one ended while deferring its jobs gets the missing jobs from the workers and
completes as ``scanner scan`` would have written it."""

from __future__ import annotations

import pathlib

import psycopg
import pytest

from tests.distributed.project import SOURCES, libpq, scan_and_enqueue, scanner
from tests.distributed.test_workers import RESULTS, RUN, rows, wait_for

pytestmark = pytest.mark.postgres


def _status(watch: psycopg.Connection, run_id: int) -> str | None:
    found = watch.execute("SELECT status FROM runs WHERE run_id = %s", (run_id,)).fetchone()
    return None if found is None or found[0] == "running" else str(found[0])


def test_a_run_whose_enqueue_ended_early_is_recovered_by_the_workers(tmp_path: pathlib.Path,
                                                                     schemas: tuple[str, str]) -> None:
    scan_url, queue_url = schemas
    config, partly = scan_and_enqueue(tmp_path, scan_url, queue_url, shards=2)
    watch = psycopg.connect(libpq(queue_url), autocommit=True)
    worker = None
    try:
        # as an enqueue that ended while deferring: the jobs of two sources were never deferred
        deleted = watch.execute("DELETE FROM procrastinate_jobs WHERE task_name = 'scanner.scan_shard' "
                                "AND args->>'source' IN ('s1', 's4')").rowcount
        assert deleted == 4
        # as an enqueue that ended before writing anything but the run's row
        unqueued = watch.execute(
            "INSERT INTO runs (status, trigger, started_at, heartbeat_at, scanner_version, config_digest, "
            "owner_host, owner_pid) SELECT 'running', trigger, started_at, heartbeat_at, scanner_version, "
            "config_digest, owner_host, owner_pid FROM runs WHERE run_id = %s RETURNING run_id", (partly,)).fetchone()[0]
        watch.execute("UPDATE runs SET heartbeat_at = heartbeat_at - interval '1 hour' WHERE run_id IN (%s, %s)",
                      (partly, unqueued))
        worker = scanner(tmp_path, "worker", "--config", config, "--heartbeat", "0.3", "--stalled-after", "5")
        wait_for(lambda: _status(watch, unqueued) and _status(watch, partly), 180, "both runs to end")
        statuses = _status(watch, unqueued), _status(watch, partly)
        redeferred = watch.execute("SELECT COUNT(*) FROM procrastinate_jobs WHERE task_name = 'scanner.scan_shard' "
                                   "AND args->>'source' IN ('s1', 's4')").fetchone()[0]
    finally:
        watch.close()
        if worker is not None:
            worker.terminate()
            out, _ = worker.communicate(timeout=60)
    assert statuses == ("interrupted", "succeeded"), out
    assert redeferred == 4
    assert "its enqueue ended before queuing its jobs" in out and "had no job" in out
    scan_run = rows(scan_url, "SELECT run_id FROM runs", 0)[0][0]
    for query in (RUN, RESULTS):
        assert rows(queue_url, query, partly) == rows(scan_url, query, scan_run), query
    assert len(rows(queue_url, RESULTS, partly)) == SOURCES * 12 * 5 * 2
