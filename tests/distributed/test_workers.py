"""Three worker processes share a queued run of six sources; one is killed with SIGKILL while it
holds a job (its shard evaluated, its transaction open). The run still ends succeeded with
exactly the rows ``scanner scan`` stores for the same config, and no row twice."""

from __future__ import annotations

import pathlib
import signal
import time

import psycopg
import pytest
from sqlalchemy import create_engine, text

from tests.distributed.project import SHARDS, SOURCES, libpq, scan_and_enqueue, scanner

pytestmark = pytest.mark.postgres

# what identifies a stored row across two databases (ids differ)
RESULTS = """
SELECT s.name, x.api_version, x.kind, x.namespace, x.name, o.path, o.document_index, o.line, p.name, c.rule, r.status,
       r.action, r.message, r.path
FROM results r JOIN resource_observations o ON o.observation_id = r.observation_id
JOIN resources x ON x.resource_id = r.resource_id JOIN sources s ON s.source_id = x.source_id
JOIN checks c ON c.check_id = r.check_id JOIN policies p ON p.policy_id = r.policy_id
WHERE r.run_id = :run ORDER BY 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14
"""
OBSERVATIONS = """
SELECT s.name, x.kind, x.namespace, x.name, o.path, o.document_index, o.item_index, o.line
FROM resource_observations o JOIN resources x ON x.resource_id = o.resource_id
JOIN sources s ON s.source_id = x.source_id WHERE o.run_id = :run ORDER BY 1, 2, 3, 4, 5, 6, 7, 8
"""
ERRORS = """
SELECT COALESCE(s.name, ''), e.kind, e.path, e.line, e.message FROM scan_errors e
LEFT JOIN sources s ON s.source_id = e.source_id WHERE e.run_id = :run ORDER BY 1, 2, 3, 4, 5
"""
FINDINGS = """
SELECT s.name, x.kind, x.namespace, x.name, c.rule, f.first_run_id = :run, f.resolved_run_id IS NULL
FROM findings f JOIN resources x ON x.resource_id = f.resource_id JOIN sources s ON s.source_id = f.source_id
JOIN checks c ON c.check_id = f.check_id ORDER BY 1, 2, 3, 4, 5
"""
RUN = ("SELECT status, resource_count, result_count, pass_count, fail_count, warn_count, error_count, skip_count, "
       "error_record_count FROM runs WHERE run_id = :run")
TALLIES = ("SELECT s.name, t.namespace, c.rule, t.status, t.count FROM run_tallies t "
           "JOIN sources s ON s.source_id = t.source_id JOIN checks c ON c.check_id = t.check_id "
           "WHERE t.run_id = :run ORDER BY 1, 2, 3, 4")


def rows(url: str, query: str, run_id: int) -> list[tuple]:
    engine = create_engine(url)
    try:
        with engine.connect() as connection:
            return [tuple(row) for row in connection.execute(text(query), {"run": run_id})]
    finally:
        engine.dispose()


def wait_for(condition, timeout: float, what: str):  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = condition()
        if found:
            return found
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def test_a_killed_worker_leaves_the_run_as_a_single_scan_writes_it(tmp_path: pathlib.Path,
                                                                   schemas: tuple[str, str]) -> None:
    scan_url, queue_url = schemas
    queue_config, run_id = scan_and_enqueue(tmp_path, scan_url, queue_url)

    held = psycopg.connect(libpq(queue_url))  # holds one shard's row: its worker blocks in its transaction
    held.execute("SELECT 1 FROM scanner_queue_shards WHERE run_id = %s AND source = 's3' AND shard = 1 FOR UPDATE",
                 (run_id,))
    watch = psycopg.connect(libpq(queue_url), autocommit=True)  # sees each poll afresh
    victim = -1
    workers = [scanner(tmp_path, "worker", "--config", queue_config, "--heartbeat", "0.3", "--stalled-after", "2",
                       env={"PGAPPNAME": f"worker-{i}"}) for i in range(3)]
    try:
        def blocked() -> str | None:  # the worker waiting for the held row: the one whose job claims that shard
            # (not any worker waiting for a lock: another may wait a moment for the blocked one's rows)
            found = watch.execute("SELECT application_name FROM pg_stat_activity WHERE application_name LIKE "
                                 "'worker-%%' AND %s = ANY(pg_blocking_pids(pid))",
                                 (held.info.backend_pid,)).fetchone()
            return found[0] if found else None

        victim = int(wait_for(blocked, 120, "a worker to hold the shard's job").split("-")[1])
        workers[victim].send_signal(signal.SIGKILL)
        workers[victim].wait(timeout=30)
        held.rollback()

        def finished() -> bool:
            status = watch.execute("SELECT status FROM runs WHERE run_id = %s", (run_id,)).fetchone()
            return status is not None and status[0] != "running"

        wait_for(finished, 180, "the run to be assembled")
        retried = watch.execute("SELECT attempts FROM procrastinate_jobs WHERE task_name = 'scanner.scan_shard' "
                               "AND args->>'source' = 's3' AND (args->>'shard')::int = 1").fetchone()
        states = watch.execute("SELECT status, worker, source, shard FROM scanner_queue_shards WHERE run_id = %s",
                               (run_id,)).fetchall()
        assemblies = watch.execute("SELECT COUNT(*) FROM procrastinate_jobs WHERE task_name = 'scanner.assemble_run'"
                                  ).fetchone()
    finally:
        held.close()
        watch.close()
        for i, worker in enumerate(workers):
            if i != victim:
                worker.terminate()
        for worker in workers:
            worker.wait(timeout=60)
    assert retried is not None and retried[0] == 2  # the killed attempt, put back in the queue, and the retry
    assert len(states) == SOURCES * SHARDS and all(state[0] == "done" for state in states)
    written_by = {(source, shard): worker for _, worker, source, shard in states}
    assert not written_by["s3", 1].endswith(f":{workers[victim].pid}")  # by a worker alive
    assert assemblies[0] >= 1
    scanned = rows(scan_url, "SELECT run_id FROM runs", 0)
    assert len(scanned) == 1
    scan_run = scanned[0][0]
    for query in (RUN, RESULTS, OBSERVATIONS, ERRORS, TALLIES, FINDINGS):
        expected, got = rows(scan_url, query, scan_run), rows(queue_url, query, run_id)
        assert got == expected, query
    assert rows(queue_url, RUN, run_id)[0][0] == "succeeded"
    results = rows(queue_url, RESULTS, run_id)
    assert len(results) == len(set(results))  # no row written twice
    assert len(results) == SOURCES * 12 * 5 * 2  # every pod: a result of each policy
    assert (tmp_path / "reports-queue" / f"scanner-run-{run_id}.json").exists()
