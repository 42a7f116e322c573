"""Writing runs: lifecycle transitions, atomic visibility, interruption, concurrent writers."""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
import time
from datetime import timedelta

import pytest
from sqlalchemy import update

from scanner.engine.types import RuleStatus
from scanner.errors import StoreError
from scanner.scan.finish import finish_while
from scanner.store import (
    ErrorRecord,
    ResultRecord,
    RunStart,
    RunStatus,
    SourceRecord,
    SourceType,
    Store,
)
from scanner.store.chain import find_link, results_part
from scanner.store.models import Run
from tests.store.conftest import day
from tests.store.scan_helpers import pod, policy, scan

P, F = RuleStatus.PASS, RuleStatus.FAIL
GIT = SourceType.GIT


def _start(store: Store, n: int = 0):  # type: ignore[no-untyped-def]
    run = store.begin_run(RunStart(started_at=day(n), scanner_version="0.1.0"))
    run.add_source(SourceRecord(name="repo", type=GIT, url="https://git.example/repo.git"))
    run.add_policies([policy("require-labels")])
    return run


def _results(count: int, status: RuleStatus = F) -> list[ResultRecord]:
    return [ResultRecord(policy="require-labels", rule="check-labels", resource=pod(f"p{i}"),
                         status=status, message="labels missing") for i in range(count)]


def test_writer_results_are_visible_only_when_the_run_finishes(store: Store) -> None:
    run = _start(store)
    assert run.add_results(_results(20)) == 20  # 3 batches of 7 are committed meanwhile
    listed = store.list_runs()
    assert [(r.run_id, r.status) for r in listed] == [(run.run_id, RunStatus.RUNNING)]
    assert store.latest_run_id() is None
    assert store.trend(since=day(-1)) == []
    assert store.latest_per_source() == []
    assert store.list_findings() == []
    assert run.finish() == RunStatus.SUCCEEDED
    assert store.latest_run_id() == run.run_id
    info = store.get_run(run.run_id).run
    assert (info.status, info.counts.failed, info.resources) == (RunStatus.SUCCEEDED, 20, 20)
    assert len(store.list_findings(state="open")) == 20


@pytest.mark.parametrize(("errors", "expected"), [
    pytest.param(("", ""), RunStatus.SUCCEEDED, id="all-sources-ok-succeeds"),
    pytest.param(("", "clone failed"), RunStatus.PARTIAL, id="one-source-failed-is-partial"),
    pytest.param(("clone failed", "clone failed"), RunStatus.FAILED,
                 id="all-sources-failed-fails"),
])
def test_writer_finish_status_follows_the_sources(store: Store, errors: tuple[str, str],
                                                  expected: RunStatus) -> None:
    with store.begin_run(RunStart(started_at=day(0))) as run:
        for name, error in zip(("a", "b"), errors, strict=True):
            run.add_source(SourceRecord(name=name, type=GIT))
            run.add_source(SourceRecord(name=name, type=GIT, error=error))  # updated later
    assert run.status == expected
    assert store.get_run(run.run_id).sources[1].error == errors[1]


@pytest.mark.parametrize(("raised", "expected"), [
    pytest.param(RuntimeError("boom"), RunStatus.FAILED, id="exception-marks-failed"),
    pytest.param(KeyboardInterrupt(), RunStatus.INTERRUPTED, id="ctrl-c-marks-interrupted"),
])
def test_writer_leaving_with_an_exception_ends_the_run(store: Store, raised: BaseException,
                                                       expected: RunStatus) -> None:
    with pytest.raises(type(raised)), _start(store) as run:
        run.add_results(_results(10))
        raise raised
    assert store.find_run(run.run_id).status == expected  # type: ignore[union-attr]
    assert store.latest_run_id() is None
    assert store.list_findings() == []


def test_writer_rejects_results_naming_unknown_policies_and_sources(store: Store) -> None:
    run = _start(store)
    with pytest.raises(StoreError, match="names policy 'nope', which was not added"):
        run.add_results([ResultRecord(policy="nope", rule="r", resource=pod("a"), status=P)])
    with pytest.raises(StoreError, match="names source 'elsewhere', which was not added"):
        run.add_resources([pod("a", source="elsewhere")])
    with pytest.raises(StoreError, match="two different policies named 'require-labels'"):
        run.add_policies([policy("require-labels", digest="v2")])
    run.finish()
    with pytest.raises(StoreError, match="already ended"):
        run.add_results(_results(1))


def test_writer_keeps_every_copy_of_a_duplicated_resource(store: Store) -> None:
    first, second = pod("web", path="overlays/a/web.yaml"), pod("web", path="overlays/b/web.yaml")
    run_id = scan(store, day(0), {first: {("require-labels", "check"): F},
                                  second: {("require-labels", "check"): P}})
    rows = {(r.file, r.status) for r in store.iter_run_results(run_id)}
    assert rows == {("overlays/a/web.yaml", F), ("overlays/b/web.yaml", P)}
    assert store.get_run(run_id).run.resources == 1


def test_writer_records_errors(store: Store) -> None:
    run_id = scan(store, day(0), {}, errors=[
        ErrorRecord(message="mapping values are not allowed here", kind="manifest",
                    source="repo", path="apps/bad.yaml", line=3),
        ErrorRecord(message="kustomize build failed", kind="kustomize")])
    errors = store.run_errors(run_id)
    assert [(e.source, e.kind, e.path, e.line) for e in errors] == [
        ("repo", "manifest", "apps/bad.yaml", 3), (None, "kustomize", "", None)]
    assert store.get_run(run_id).run.error_records == 2


def _write_and_die(url: str) -> None:
    store = Store(url, heartbeat_interval=60)
    run = _start(store)
    run.add_results(_results(15))
    os._exit(3)  # no finish, no clean-up: like SIGKILL


def test_writer_dead_process_run_is_marked_interrupted(store: Store, database_url: str) -> None:
    child = multiprocessing.get_context("spawn").Process(target=_write_and_die,
                                                         args=(database_url,))
    child.start()
    child.join(60)
    assert child.exitcode == 3
    [dead] = store.list_runs()
    assert dead.status == RunStatus.RUNNING
    with Store(database_url) as reopened:  # opening the store notices the dead owner
        assert reopened.find_run(dead.run_id).status == RunStatus.INTERRUPTED  # type: ignore[union-attr]
        assert reopened.latest_run_id() is None
        assert reopened.list_findings() == []


def test_writer_stale_heartbeat_marks_interrupted_and_refuses_finish(store: Store) -> None:
    run = _start(store)
    run.add_results(_results(3))
    run._beater.stop()  # a hung writer stops beating
    with store.engine.begin() as connection:
        connection.execute(update(Run).where(Run.run_id == run.run_id)
                           .values(heartbeat_at=day(-3000)))
    assert store.mark_interrupted() == [run.run_id]
    with pytest.raises(StoreError, match="cannot finish: it is already interrupted"):
        run.finish()
    assert store.find_run(run.run_id).status == RunStatus.INTERRUPTED  # type: ignore[union-attr]


def test_writer_heartbeat_keeps_a_live_run_running(store: Store) -> None:
    run = _start(store)
    before = store.find_run(run.run_id).heartbeat_at  # type: ignore[union-attr]
    time.sleep(0.6)
    after = store.find_run(run.run_id).heartbeat_at  # type: ignore[union-attr]
    assert after > before
    assert Store(store.url, stale_after=timedelta(seconds=5)).mark_interrupted() == []
    run.finish()


def _write_concurrently(url: str, index: int, barrier: object) -> None:
    store = Store(url, batch_size=50)
    barrier.wait()  # type: ignore[attr-defined]
    with store.begin_run(RunStart(started_at=day(index))) as run:
        run.add_source(SourceRecord(name="repo", type=GIT))
        run.add_policies([policy("require-labels"), policy("disallow-latest")])
        run.add_results(ResultRecord(policy=("require-labels", "disallow-latest")[i % 2],
                                     rule="check", resource=pod(f"p{i // 2}"),
                                     status=F if (i + index) % 3 == 0 else P)
                        for i in range(2000))
        run.finish()


def test_writer_two_concurrent_writer_processes_both_succeed(store: Store,
                                                             database_url: str) -> None:
    context = multiprocessing.get_context("spawn")
    barrier = context.Barrier(2)
    children = [context.Process(target=_write_concurrently, args=(database_url, i, barrier))
                for i in (1, 2)]
    for child in children:
        child.start()
    for child in children:
        child.join(120)
    assert [child.exitcode for child in children] == [0, 0]
    runs = store.list_runs()
    assert sorted((r.status, r.results, r.resources) for r in runs) == [
        (RunStatus.SUCCEEDED, 2000, 1000), (RunStatus.SUCCEEDED, 2000, 1000)]
    expected = {run.started_at: sum(1 for i in range(2000) if (i + (1 if run.started_at == day(1)
                                                                    else 2)) % 3 == 0)
                for run in runs}
    assert {run.started_at: run.counts.failed for run in runs} == expected


@pytest.fixture(params=[1, 2], ids=["forked", "in-process"])
def threads(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> int:
    """How many threads ``finish_while`` sees: alone it finishes in a forked process."""
    monkeypatch.setattr(threading, "active_count", lambda: request.param)
    return request.param


def test_writer_finish_while_reads_meanwhile_and_after(store: Store, threads: int) -> None:
    run = _start(store)
    run.add_results(_results(12))
    main = os.getpid()

    def meanwhile() -> tuple[int, int]:  # what finishing does not change
        return os.getpid(), sum(1 for _ in store.iter_run_results(run.run_id))

    def after() -> tuple[int, RunStatus, int]:  # what finishing gave
        info = store.get_run(run.run_id).run
        return os.getpid(), info.status, info.counts.failed

    status, (work_pid, results), (then_pid, stored, failed) = finish_while(run, meanwhile, after)
    assert (status, results, stored, failed) == (RunStatus.SUCCEEDED, 12, RunStatus.SUCCEEDED, 12)
    assert work_pid == main
    assert (then_pid != main) == (threads == 1)
    assert run.status == RunStatus.SUCCEEDED
    with pytest.raises(StoreError, match="already ended"):
        run.add_results(_results(1))
    assert len(store.list_findings(state="open")) == 12  # the store works on after the fork


def test_writer_finish_while_forks_with_the_run_heartbeat_beating(store: Store,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The run's heartbeat thread is stopped before the fork is decided on: a scan with no other
    thread finishes in a child."""
    run = _start(store)
    run.add_results(_results(2))
    beater = run._beater
    assert beater.is_alive()
    monkeypatch.setattr(threading, "active_count", lambda: 1 + beater.is_alive())  # this one and the heartbeat's
    status, work_pid, then_pid = finish_while(run, os.getpid, os.getpid)
    assert status == RunStatus.SUCCEEDED and work_pid == os.getpid() != then_pid


def test_writer_finish_while_links_the_run_with_its_results_read_meanwhile(store: Store, threads: int) -> None:
    """Forked, the results' digest of the chain link is read by a child of the finishing child:
    the link is the one a finish in one process gives, and the chain verifies."""
    run = _start(store)
    run.add_results(_results(40))
    status, _, _ = finish_while(run, lambda: None, lambda: None)
    assert status == RunStatus.SUCCEEDED
    assert store.verify_chain().ok
    with store.engine.connect() as connection:
        link = find_link(connection, run.run_id)
        assert link is not None and link.parts["results"] == results_part(connection, run.run_id)


def test_writer_finish_while_raises_the_finish_error_and_the_run_keeps_its_status(store: Store,
                                                                                  threads: int) -> None:
    run = _start(store)
    run._beater.stop()
    with store.engine.begin() as connection:
        connection.execute(update(Run).where(Run.run_id == run.run_id).values(status=RunStatus.INTERRUPTED))
    with pytest.raises(StoreError, match="cannot finish: it is already interrupted"), run:
        finish_while(run, lambda: None, lambda: None)
    assert store.find_run(run.run_id).status == RunStatus.INTERRUPTED  # type: ignore[union-attr]


def test_writer_finish_while_lost_finishing_process_fails_the_run(store: Store,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(threading, "active_count", lambda: 1)
    run = _start(store)
    run.add_results(_results(3))
    monkeypatch.setattr(run, "finish", lambda *args: os.kill(os.getpid(), signal.SIGKILL))
    with pytest.raises(StoreError, match=f"run {run.run_id}: the process finishing it was killed by signal 9"), run:
        finish_while(run, lambda: None, lambda: None)
    assert store.find_run(run.run_id).status == RunStatus.FAILED  # type: ignore[union-attr]


def test_writer_abort_leaves_a_run_that_finished(store: Store) -> None:
    run = _start(store)
    run.add_results(_results(2))
    other = Store(store.url)  # the run finished elsewhere (a finishing process that could not tell)
    try:
        with other.engine.begin() as connection:
            connection.execute(update(Run).where(Run.run_id == run.run_id).values(status=RunStatus.SUCCEEDED))
    finally:
        other.close()
    run.abort()
    assert store.find_run(run.run_id).status == RunStatus.SUCCEEDED  # type: ignore[union-attr]
