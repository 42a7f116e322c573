"""Database failures users meet: a read-only database, a full disk. Each is a ``StoreError``
naming the database (password redacted) and saying what to do, and no failed run counts.

Tests run as root, where file permissions stop nothing, so the failures are made the way
the databases themselves make them: SQLite opened read-only (``mode=ro``, what it does with
a file it cannot write) or switched to ``query_only``, and a ``max_page_count`` it cannot
grow past ("database or disk is full"); PostgreSQL sessions with
``default_transaction_read_only`` (what a standby or ``ALTER DATABASE ... SET`` gives).
PostgreSQL has no setting that fills its disk, so its disk-full message is checked on the
error it raises (SQLSTATE 53100).
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Any

import psycopg
import pytest
from sqlalchemy import Engine, event, exc
from sqlalchemy.engine import make_url

from scanner.engine.types import RuleStatus
from scanner.errors import StoreError
from scanner.store import (
    ResultRecord,
    RunStart,
    RunStatus,
    RunWriter,
    SourceRecord,
    SourceType,
    Store,
)
from scanner.store.connect import translate_errors
from tests.store.conftest import day
from tests.store.scan_helpers import pod, policy, scan

PASSWORD = "s3cret-password"
READ_ONLY_REMEDY = {
    "sqlite": r"attempt to write a readonly database; the file or its folder is read-only: "
              r"make it writable or use another database\.url",
    "postgresql": r"cannot execute [A-Z ]+ in a read-only transaction; the database only accepts "
                  r"reads \(a standby, or default_transaction_read_only is on\): point "
                  r"database\.url at a writable primary or turn read-only off",
}
STEP = {"add results": "add results", "finish": r"finish \(succeeded\)"}
FULL_REMEDY = (r"database or disk is full; the disk is full: free space or prune old runs "
               r"\(`scanner db prune`\)")


@pytest.fixture
def url(database_url: str) -> str:
    """The test database at the schema head; on PostgreSQL with a password (trust auth
    ignores it), so that redaction is checked."""
    parsed = make_url(database_url)
    if parsed.get_backend_name() == "postgresql":
        database_url = parsed.set(password=PASSWORD).render_as_string(hide_password=False)
    with Store(database_url, check_schema=False) as store:
        store.upgrade()
    return database_url


def _backend(url: str) -> str:
    return make_url(url).get_backend_name()


def _read_only_url(url: str) -> str:
    """The same database opened so that it accepts reads only."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        return f"sqlite:///file:{parsed.database}?mode=ro&uri=true"
    options = parsed.query.get("options", "")
    return parsed.update_query_dict(
        {"options": f"{options} -cdefault_transaction_read_only=on".strip()}
    ).render_as_string(hide_password=False)


def _read_only_session(dbapi_connection: Any, _record: Any) -> None:
    if isinstance(dbapi_connection, sqlite3.Connection):
        dbapi_connection.execute("PRAGMA query_only = ON")
        return
    dbapi_connection.execute("SET default_transaction_read_only = on")
    dbapi_connection.commit()


@contextmanager
def _new_connections(engine: Engine, setup: Callable[[Any, Any], None]) -> Iterator[None]:
    """Connections opened from now on run ``setup`` first; the pooled ones are dropped."""
    event.listen(engine, "connect", setup)
    engine.dispose()
    try:
        yield
    finally:
        event.remove(engine, "connect", setup)
        engine.dispose()


def _assert_names_database(error: StoreError, store: Store) -> None:
    message = str(error)
    assert message.startswith(f"database {store.describe()}: ")
    assert PASSWORD not in message
    if _backend(str(store.url)) == "postgresql":
        assert ":***@" in message


def _results(count: int, status: RuleStatus = RuleStatus.FAIL) -> Iterator[ResultRecord]:
    return (ResultRecord(policy="require-labels", rule="check-labels", resource=pod(f"p{i}"),
                         status=status, message=f"labels missing on p{i} " + "x" * 100)
            for i in range(count))


def _second_run(store: Store) -> RunWriter:
    """A run begun the day after the first, with its source and policy, no results yet."""
    run = store.begin_run(RunStart(started_at=day(1)))
    run.add_source(SourceRecord(name="repo", type=SourceType.GIT))
    run.add_policies([policy("require-labels")])
    return run


def _assert_only_counted(store: Store, run_id: int) -> None:
    """``run_id`` is the one finished scan: the latest run, the trend, the findings."""
    assert store.latest_run_id() == run_id
    assert [p.runs for p in store.trend(since=day(-1))] == [(run_id,)]
    assert {f.first_run_id for f in store.list_findings()} == {run_id}
    assert all(f.is_open for f in store.list_findings())


def test_errors_read_only_database_refuses_writes_and_serves_reads(url: str) -> None:
    with Store(url) as writable:
        first = scan(writable, day(0), {pod("web"): {("require-labels", "check-labels"):
                                                     RuleStatus.FAIL}})
    with Store(_read_only_url(url)) as read_only:
        assert [r.run_id for r in read_only.list_runs()] == [first]
        assert read_only.summarize_run(first).by_status.failed == 1
        with pytest.raises(StoreError, match=rf"begin run failed: "
                                             rf"{READ_ONLY_REMEDY[_backend(url)]}") as caught:
            read_only.begin_run(RunStart(started_at=day(1)))
        _assert_names_database(caught.value, read_only)
    with Store(url) as writable:
        assert [r.run_id for r in writable.list_runs()] == [first]


@pytest.mark.parametrize("failing_step", ["add results", "finish"])
def test_errors_database_turning_read_only_mid_run_counts_nothing(url: str,
                                                                   failing_step: str) -> None:
    store = Store(url, batch_size=50)
    first = scan(store, day(0), {pod("p0"): {("require-labels", "check-labels"):
                                             RuleStatus.FAIL}})
    run = _second_run(store)
    run.add_results(_results(120))  # three batches committed
    with _new_connections(store.engine, _read_only_session):
        with pytest.raises(StoreError, match=READ_ONLY_REMEDY[_backend(url)]) as caught, run:
            if failing_step == "add results":
                run.add_results(_results(120, RuleStatus.PASS))
            run.finish()
        _assert_names_database(caught.value, store)
        # The step's own error is raised; that the run could not be marked failed either is
        # a note on it.
        assert re.search(rf"run {run.run_id}: {STEP[failing_step]} failed", str(caught.value))
        [note] = caught.value.__notes__
        assert re.fullmatch(rf"run {run.run_id} could not be marked failed: .*"
                            rf"run {run.run_id}: mark failed failed: {READ_ONLY_REMEDY[_backend(url)]}",
                            note, re.DOTALL)
    assert store.find_run(run.run_id).status == RunStatus.RUNNING  # type: ignore[union-attr]
    _assert_only_counted(store, first)
    with Store(url, stale_after=timedelta(0)) as reopened:  # its heartbeat has stopped
        assert reopened.find_run(run.run_id).status == RunStatus.INTERRUPTED  # type: ignore[union-attr]
        _assert_only_counted(reopened, first)
    store.close()


def _page_limit(pages: int) -> Callable[[Any, Any], None]:
    def limit(dbapi_connection: sqlite3.Connection, _record: Any) -> None:
        dbapi_connection.execute(f"PRAGMA max_page_count = {pages}")
    return limit


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
@pytest.mark.parametrize("failing_step", ["add results", "finish"])
def test_errors_full_disk_mid_run_counts_nothing_and_recovers(url: str,
                                                              failing_step: str) -> None:
    store = Store(url, batch_size=200)
    first = scan(store, day(0), {pod("p0"): {("require-labels", "check-labels"):
                                             RuleStatus.FAIL}})
    run = _second_run(store)
    if failing_step == "finish":  # the results fit; the findings they open do not
        run.add_results(_results(2_000))
    with store.engine.connect() as connection:
        pages = connection.exec_driver_sql("PRAGMA page_count").scalar_one()
    with _new_connections(store.engine, _page_limit(pages)):
        with pytest.raises(StoreError, match=rf"run {run.run_id}: {STEP[failing_step]} "
                                             rf"failed: {FULL_REMEDY}") as caught, run:
            if failing_step == "add results":
                run.add_results(_results(2_000))
            run.finish()
        _assert_names_database(caught.value, store)
        assert store.find_run(run.run_id).status == RunStatus.FAILED  # type: ignore[union-attr]
        _assert_only_counted(store, first)
    third = scan(store, day(2), {pod("p0"): {("require-labels", "check-labels"):
                                             RuleStatus.FAIL}})
    assert store.latest_run_id() == third
    [finding] = store.list_findings()
    assert (finding.first_run_id, finding.last_run_id) == (first, third)
    store.close()


@pytest.mark.parametrize(("error", "remedy"), [
    pytest.param(psycopg.errors.DiskFull("could not extend file: No space left on device"),
                 r"the server's disk is full: free space or prune old runs", id="pg-disk-full"),
    pytest.param(psycopg.errors.ReadOnlySqlTransaction("cannot execute INSERT in a read-only "
                                                       "transaction"),
                 r"point database\.url at a writable primary", id="pg-read-only"),
    pytest.param(psycopg.errors.InsufficientPrivilege("permission denied for table runs"),
                 r"grant the user the privileges it needs", id="pg-no-privilege"),
    pytest.param(psycopg.errors.InvalidPassword("password authentication failed"),
                 r"check the user name and password", id="pg-bad-password"),
])
def test_errors_postgres_failures_say_what_to_do(error: Exception, remedy: str) -> None:
    url = make_url(f"postgresql+psycopg://scanner:{PASSWORD}@db.example:5432/scans")
    with pytest.raises(StoreError, match=rf"^database postgresql\+psycopg://scanner:\*\*\*@"
                                         rf"db\.example:5432/scans: write failed: [^;]+; .*{remedy}"
                       ) as caught, translate_errors(url, "write"):
        raise exc.OperationalError("INSERT ...", {}, error)
    assert PASSWORD not in str(caught.value)


def test_an_error_while_an_interrupt_unwinds_gives_way_to_it() -> None:
    """Ctrl-C cuts a write short and the rollback then fails (psycopg: "another command is
    already in progress"): the interrupt, not a store error, reaches the run's writer."""
    from sqlalchemy.engine import make_url

    with pytest.raises(KeyboardInterrupt), translate_errors(make_url("sqlite:///x.db"), "add results"):
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt:
            raise sqlite3.OperationalError("cannot rollback - no transaction is active") from None
    with pytest.raises(StoreError, match="add results failed: disk I/O error"), \
            translate_errors(make_url("sqlite:///x.db"), "add results"):
        raise sqlite3.OperationalError("disk I/O error")
