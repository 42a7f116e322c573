"""Workers as on machines of their own: each in its own folder with its own copy of the config
(the same text: one digest) and policies, and its own clone cache; the sources are Git
repositories every worker reaches by URL. No worker reads another's local files: each clones
what its jobs need into its own cache, and the run ends with exactly the rows ``scanner scan``
stores for the same config."""

from __future__ import annotations

import pathlib
import shutil
import subprocess

import psycopg
import pytest

from tests.distributed.project import libpq, scanner, write_project
from tests.distributed.test_workers import ERRORS, FINDINGS, OBSERVATIONS, RESULTS, RUN, TALLIES, rows, wait_for

pytestmark = pytest.mark.postgres

SOURCES = 3


def _remote(base: pathlib.Path) -> pathlib.Path:
    """A Git repository of the project's source folders (the remote every machine reaches)."""
    content = base / "content"
    content.mkdir()
    write_project(content)
    remote = base / "remote"
    remote.mkdir()
    for s in range(SOURCES):
        shutil.copytree(content / f"src{s}", remote / f"src{s}")
    git = ["git", "-C", str(remote), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "init", "-q", "-b", "main"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "sources"], check=True)
    return content / "policies"


def _machine(base: pathlib.Path, name: str, url: str, remote: pathlib.Path, policies: pathlib.Path) -> pathlib.Path:
    """A folder of one machine: the config (relative paths: its own policies, cache and
    reports) and its copy of the policies. The config text is the same on every machine."""
    folder = base / name
    folder.mkdir()
    shutil.copytree(policies, folder / "policies")
    sources = "".join(f"  - name: s{s}\n    git: {{url: '{remote}', ref: main}}\n    include: ['src{s}/**']\n"
                      for s in range(SOURCES))
    (folder / "scanner.yaml").write_text(
        f"database: {{url: '{url}'}}\npolicies: [{{path: policies}}]\nsources:\n{sources}"
        "reports: {out: reports, formats: [json]}\nscan: {jobs: 1, cache_dir: cache}\n")
    return folder


def _clones(folder: pathlib.Path) -> list[str]:
    git = folder / "cache" / "git"
    return sorted(p.name for p in git.iterdir()) if git.is_dir() else []


def test_workers_with_their_own_folders_and_caches_need_no_other_local_files(tmp_path: pathlib.Path,
                                                                           schemas: tuple[str, str]) -> None:
    scan_url, queue_url = schemas
    policies = _remote(tmp_path)
    remote = tmp_path / "remote"
    single = _machine(tmp_path, "single", scan_url, remote, policies)
    scan = scanner(single, "scan", "--config", "scanner.yaml", "-q")
    out, _ = scan.communicate(timeout=120)
    assert scan.returncode == 1, out  # enforce failures: the gate fails

    enqueuer = _machine(tmp_path, "enqueuer", queue_url, remote, policies)
    machines = [_machine(tmp_path, f"machine{i}", queue_url, remote, policies) for i in range(2)]
    assert len({(m / "scanner.yaml").read_text() for m in (enqueuer, *machines)}) == 1
    enqueue = scanner(enqueuer, "enqueue", "--config", "scanner.yaml", "--shards", "2")
    out, _ = enqueue.communicate(timeout=120)
    assert enqueue.returncode == 0 and f"{SOURCES * 2} jobs enqueued" in out, out
    run_id = int(out.split()[1].rstrip(":"))

    workers = [scanner(m, "worker", "--config", "scanner.yaml", "--heartbeat", "0.3") for m in machines]
    watch = psycopg.connect(libpq(queue_url), autocommit=True)
    try:
        def finished() -> bool:
            status = watch.execute("SELECT status FROM runs WHERE run_id = %s", (run_id,)).fetchone()
            return status is not None and status[0] != "running"

        wait_for(finished, 180, "the run to be assembled")
        done_by = watch.execute("SELECT worker, source FROM scanner_queue_shards WHERE run_id = %s",
                                (run_id,)).fetchall()
    finally:
        watch.close()
        for worker in workers:
            worker.terminate()
        for worker in workers:
            worker.wait(timeout=60)

    by_pid = {str(w.pid): m for w, m in zip(workers, machines, strict=True)}
    working = {by_pid[worker.rsplit(":", 1)[1]] for worker, _ in done_by}
    assert working, done_by
    for machine in working:  # each worker that took a job cloned the remote into its own cache
        assert _clones(machine), machine
    for machine in set(machines) - working:
        assert not _clones(machine)
    scan_run = rows(scan_url, "SELECT run_id FROM runs", 0)[0][0]
    for query in (RUN, RESULTS, OBSERVATIONS, ERRORS, TALLIES, FINDINGS):
        assert rows(queue_url, query, run_id) == rows(scan_url, query, scan_run), query
    assert rows(queue_url, RUN, run_id)[0][0] == "succeeded"
    # the reports are rendered once, by the worker that assembled the run, into its own folder
    assert sum((m / "reports" / f"scanner-run-{run_id}.json").exists() for m in machines) == 1
