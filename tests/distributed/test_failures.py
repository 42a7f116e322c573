"""A shard job that fails every attempt fails its source in the run, which is still assembled."""

from __future__ import annotations

import pathlib

import pytest
from sqlalchemy import create_engine, text

from tests.distributed.project import scanner, write_config, write_project

pytestmark = pytest.mark.postgres


def test_a_shard_failing_every_attempt_fails_its_source(tmp_path: pathlib.Path, schemas: tuple[str, str]) -> None:
    _, url = schemas
    write_project(tmp_path)
    config = write_config(tmp_path, "queue", url)
    enqueue = scanner(tmp_path, "enqueue", "--config", str(config), "--source", "s0", "--source", "s1")
    out, _ = enqueue.communicate(timeout=120)
    assert enqueue.returncode == 0 and "2 jobs enqueued" in out, out
    run_id = int(out.split()[1].rstrip(":"))
    config.write_text(config.read_text() + "# edited after the run was enqueued\n")  # every attempt refuses it
    worker = scanner(tmp_path, "worker", "--config", str(config), "--until-idle")
    out, _ = worker.communicate(timeout=180)
    assert worker.returncode == 0, out
    engine = create_engine(url)
    try:
        with engine.connect() as connection:
            status = connection.execute(text("SELECT status FROM runs WHERE run_id = :run"), {"run": run_id}).scalar()
            errors = connection.execute(text(
                "SELECT s.name, rs.error FROM run_sources rs JOIN sources s ON s.source_id = rs.source_id "
                "WHERE rs.run_id = :run ORDER BY 1"), {"run": run_id}).all()
            attempts = connection.execute(text(
                "SELECT attempts FROM procrastinate_jobs WHERE task_name = 'scanner.scan_shard'")).scalars().all()
            recorded = connection.execute(text(
                "SELECT COUNT(*) FROM scan_errors WHERE run_id = :run AND kind = 'source'"), {"run": run_id}).scalar()
    finally:
        engine.dispose()
    assert status == "failed"  # every source failed: as `scanner scan` ends such a run
    assert [name for name, _ in errors] == ["s0", "s1"]
    for _, error in errors:
        assert error.startswith("source failed: shard 1/1 failed 4 times: StoreError: ")
        assert "is not the config the run was enqueued with" in error
    assert attempts == [4, 4]
    assert recorded == 2
    assert "its reports were not rendered" in out
