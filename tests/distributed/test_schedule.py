"""``scanner schedule --distributed --run-now`` only enqueues: a run with its jobs and no result
until a worker runs them; ``scanner runs show`` then tells where each task ran."""

from __future__ import annotations

import json
import pathlib
import signal

import pytest
from sqlalchemy import create_engine, text

from scanner.cli import main
from tests.distributed.project import SOURCES, scanner, write_config, write_project
from tests.distributed.test_workers import wait_for

pytestmark = pytest.mark.postgres


def _one(url: str, query: str, **params: object) -> tuple:
    engine = create_engine(url)
    try:
        with engine.connect() as connection:
            return tuple(connection.execute(text(query), params).one())
    finally:
        engine.dispose()


def test_distributed_schedule_enqueues_and_a_worker_completes_the_run(
        tmp_path: pathlib.Path, schemas: tuple[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    _, url = schemas
    write_project(tmp_path)
    config = str(write_config(tmp_path, "queue", url))
    scheduler = scanner(tmp_path, "schedule", "--config", config, "--distributed", "--run-now", "--shards", "2")
    try:
        wait_for(lambda: _one(url, "SELECT COUNT(*) FROM runs")[0] == 1
                 and _one(url, "SELECT to_regclass('procrastinate_jobs') IS NOT NULL")[0]
                 and _one(url, "SELECT COUNT(*) FROM procrastinate_jobs")[0] == SOURCES * 2, 120,
                 "the scheduler to enqueue")
    finally:
        scheduler.send_signal(signal.SIGTERM)
        out, _ = scheduler.communicate(timeout=60)
    assert scheduler.returncode == 0, out
    assert "scheduled enqueue finished with exit code 0" in out, out
    run_id, status, trigger, results = _one(url, "SELECT run_id, status, trigger, result_count FROM runs")
    assert (status, trigger, results) == ("running", "schedule", 0)
    assert _one(url, "SELECT COUNT(*) FROM results")[0] == 0  # nothing scanned by the scheduler
    assert _one(url, "SELECT COUNT(*), COUNT(*) FILTER (WHERE status = 'queued') FROM scanner_queue_shards "
                     "WHERE run_id = :run", run=run_id) == (SOURCES * 2, SOURCES * 2)
    assert _one(url, "SELECT COUNT(*) FROM procrastinate_jobs WHERE status = 'todo' "
                     "AND task_name = 'scanner.scan_shard'")[0] == SOURCES * 2

    assert main(["runs", "show", str(run_id), "--database", url, "--output", "json"]) == 0
    queued = json.loads(capsys.readouterr().out)["tasks"]
    assert [(t["source"], t["shard"], t["status"], t["worker"], t["attempts"]) for t in queued] == [
        (f"s{s}", i, "queued", "", 0) for s in range(SOURCES) for i in range(2)]

    worker = scanner(tmp_path, "worker", "--config", config, "--until-idle")
    out, _ = worker.communicate(timeout=240)
    assert worker.returncode == 0, out
    assert _one(url, "SELECT status, result_count FROM runs WHERE run_id = :run", run=run_id) == (
        "succeeded", SOURCES * 12 * 5 * 2)

    assert main(["runs", "show", str(run_id), "--database", url, "--output", "json"]) == 0
    tasks = json.loads(capsys.readouterr().out)["tasks"]
    assert [(t["source"], t["shard"], t["status"], t["attempts"]) for t in tasks] == [
        (f"s{s}", i, "done", 1) for s in range(SOURCES) for i in range(2)]
    assert len({t["worker"] for t in tasks}) == 1 and tasks[0]["worker"].rsplit(":", 1)[1] == str(worker.pid)
    assert all(t["duration_seconds"] is not None and t["duration_seconds"] >= 0 and t["started_at"] for t in tasks)
    assert sum(t["results"] for t in tasks) == SOURCES * 12 * 5 * 2
    assert main(["runs", "show", str(run_id), "--database", url]) == 0
    shown = capsys.readouterr().out
    table = shown.split("tasks (queue):\n", 1)[1].splitlines()
    assert table[0].split() == ["SOURCE", "SHARD", "STATUS", "WORKER", "ATTEMPTS", "STARTED", "(UTC)", "DURATION",
                                "RESOURCES", "RESULTS"]
    assert len(table) == 1 + SOURCES * 2
    assert table[1].split()[:5] == ["s0", "1/2", "done", tasks[0]["worker"], "1"]
