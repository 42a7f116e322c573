"""``scanner schedule``: a per-second cron runs scans; SIGTERM stops it cleanly."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from scanner.config import load_config
from scanner.errors import ConfigError
from scanner.schedule import build_scheduler
from scanner.store.store import Store

from .conftest import Project, pod


def _runs(project: Project) -> list[str]:
    if not project.db.exists():
        return []
    try:
        store = Store(f"sqlite:///{project.db}", check_schema=False)
        try:
            return [str(r.status) for r in store.list_runs(limit=20)]
        finally:
            store.close()
    except Exception:
        return []


def test_schedule_runs_scans_and_stops_on_sigterm(project: Project) -> None:
    project.commit({"apps/a.yaml": pod("a", None)})
    config = project.config(extra="schedule:\n  - cron: '* * * * * *'\n    timezone: UTC")
    proc = subprocess.Popen([sys.executable, "-m", "scanner.cli", "schedule", "--config", str(config), "-j", "1"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and _runs(project).count("succeeded") < 2:
            time.sleep(0.2)
        assert _runs(project).count("succeeded") >= 2
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, out
    assert "stopping after the running scan" in out and "scheduler stopped" in out
    statuses = _runs(project)
    assert "running" not in statuses and set(statuses) <= {"succeeded", "interrupted"}


def test_schedule_jobs_are_textual_references_with_plain_arguments(project: Project) -> None:
    config = load_config(project.config(extra="schedule:\n  - cron: '0 2 * * *'\n    timezone: Europe/Berlin"))
    scheduler = build_scheduler(config, run_now=True, jobs=2)
    jobs = {job.id: job for job in scheduler.get_jobs()}
    assert set(jobs) == {"scan-0", "scan-now"}
    job = jobs["scan-0"]
    assert job.func_ref == "scanner.schedule:scheduled_scan"
    assert job.args == (str(project.base / "scanner.yaml"), 2)
    assert (job.max_instances, job.coalesce) == (1, True)
    assert str(job.trigger.timezone) == "Europe/Berlin"


def test_schedule_config_errors_name_the_entry(project: Project) -> None:
    config = load_config(project.config(extra="schedule:\n  - cron: '0 2 * * *'\n  - cron: '61 * * * *'"))
    with pytest.raises(ConfigError) as info:
        build_scheduler(config)
    assert str(info.value).startswith(f"{project.base / 'scanner.yaml'}:11:11: schedule[1].cron: ")
    assert "61" in str(info.value)
    with pytest.raises(ConfigError, match=r"scanner.yaml: schedule: no entries, so nothing would ever run"):
        build_scheduler(load_config(project.config()))
    never = load_config(project.config(extra="schedule: [{cron: '0 0 30 2 *'}]"))
    with pytest.raises(ConfigError, match=r"schedule\[0\].cron: '0 0 30 2 \*' never fires"):
        build_scheduler(never)


def test_schedule_lock_is_the_scan_not_the_file(project: Project) -> None:
    """Two schedulers whose configs differ only in comments run one scan at a time."""
    other = load_config(project.config(extra_sources="- name: more\n  directory: {path: elsewhere}"))
    plain = load_config(project.config())
    assert other.scan_key != plain.scan_key
    text = (project.base / "scanner.yaml").read_text()
    (project.base / "scanner.yaml").write_text("# replica b\n" + text.replace("sources:", "sources:  # the same"))
    commented = load_config(project.base / "scanner.yaml")
    assert commented.digest != plain.digest and commented.scan_key == plain.scan_key
    with Store(plain.database_url) as store:
        lock = store.try_lock("scan:" + plain.scan_key)
        try:
            from scanner.scan.runner import run_scheduled

            assert run_scheduled(str(project.base / "scanner.yaml")) == 0  # skipped, not run
            assert store.list_runs() == []
        finally:
            lock.release()


def test_scheduled_scan_logs_why_a_source_failed(project: Project, caplog: pytest.LogCaptureFixture) -> None:
    """No terminal to print on: the scheduler's log says why a source failed."""
    from scanner.scan.runner import run_scheduled

    project.commit({"apps/a.yaml": pod("a", "x")})
    project.config(extra_sources="- name: mounted\n  directory: {path: no-such-folder}")
    with caplog.at_level("ERROR", logger="scanner.scan"):
        assert run_scheduled(str(project.base / "scanner.yaml"), jobs=1) == 3
    assert caplog.messages == [f"run 1: source mounted: source path not found: {project.base / 'no-such-folder'}"]


def test_schedule_group_interrupt_lets_the_running_scan_finish(project: Project) -> None:
    """Ctrl-C in a terminal (or systemd's stop) signals every process of the group, the scan's
    workers too: the scan still finishes whole."""
    project.commit({"apps/many.yaml": "---\n".join(pod(f"p{i}", "t") for i in range(6000))})
    config = project.config(extra="schedule:\n  - cron: '0 0 1 1 *'\n    timezone: UTC")
    proc = subprocess.Popen([sys.executable, "-m", "scanner.cli", "schedule", "--config", str(config), "--run-now",
                             "-j", "2"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and "running" not in _runs(project):
            time.sleep(0.05)
        assert _runs(project) == ["running"]
        os.killpg(proc.pid, signal.SIGINT)
        out, _ = proc.communicate(timeout=90)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, out
    store = Store(f"sqlite:///{project.db}")
    try:
        [run] = store.list_runs()
        assert (str(run.status), run.resources) == ("succeeded", 6000), out
    finally:
        store.close()
