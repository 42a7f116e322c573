"""Schema: migrations build and remove it, agree with the models, and guard the database."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import create_engine, insert, inspect, text
from sqlalchemy.exc import IntegrityError

from scanner.errors import StoreError
from scanner.store import Store
from scanner.store.models import VERSION_TABLE, Base, Check, Policy, Run, RunSource, RunTally, Source
from scanner.store.schema import HEAD_REVISION, SQLITE_HEAD, head_revision, sqlite_schema_script
from scanner.store.tables import view_metadata
from tests.store.conftest import day


def test_schema_upgrade_base_to_head_and_back(database_url: str) -> None:
    store = Store(database_url, check_schema=False)
    with store:
        assert store.schema_state().revision is None
        assert store.upgrade("0001").revision == "0001"
        assert store.upgrade().revision == head_revision()
        assert set(store.schema_state().tables) == set(Base.metadata.tables) | set(view_metadata.tables)
        state = store.downgrade("base")
        assert (state.revision, state.tables) == (None, ())
        assert store.upgrade().revision == head_revision()


def test_schema_models_match_migrations(database_url: str) -> None:
    store = Store(database_url, check_schema=False)
    with store:
        store.upgrade()
        with store.engine.connect() as connection:
            context = MigrationContext.configure(connection, opts={
                "version_table": VERSION_TABLE, "compare_type": True,
                "compare_server_default": True})
            assert compare_metadata(context, Base.metadata) == []


def test_schema_head_constant_is_the_migrations_head() -> None:
    assert head_revision() == HEAD_REVISION


def test_schema_database_at_head_opens_without_alembic(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/at-head.db"
    Store(url).close()  # created and upgraded
    probe = ("import sys; from scanner.store import Store; Store(sys.argv[1]).close(); "
             "print('alembic' in sys.modules)")
    shown = subprocess.run([sys.executable, "-c", probe, url], capture_output=True, text=True,
                           check=True).stdout
    assert shown.strip() == "False"


def test_schema_empty_sqlite_file_is_upgraded_on_open(tmp_path: object) -> None:
    with Store(f"sqlite:///{tmp_path}/new.db") as store:
        assert store.schema_state().revision == head_revision()


def _schema_script(store: Store) -> list[list[str]]:
    """The database's schema statements, line by line, in order with the table constraints of
    each sorted, and its indexes after them sorted: the migrations' batch steps recreate a table
    with its constraints and indexes in no fixed order."""
    with store.engine.connect() as connection:
        script = sqlite_schema_script(connection)
    statements = []
    for statement in script.split(";\n"):
        lines = statement.strip().splitlines()
        constraints = sorted(line.rstrip(", ") for line in lines if line.startswith("\tCONSTRAINT "))
        statements.append([line for line in lines if not line.startswith("\tCONSTRAINT ")] + constraints)
    indexes = sorted(s for s in statements if s and s[0].startswith("CREATE INDEX"))
    return [s for s in statements if not (s and s[0].startswith("CREATE INDEX"))] + indexes


def test_schema_new_sqlite_database_is_the_one_the_migrations_make(tmp_path: Path) -> None:
    """``sqlite_head.sql`` gives a new SQLite database the statements the migrations leave in
    one (as SQLite keeps them, up to the order of table constraints), and Alembic takes it
    for a migrated one."""
    with Store(f"sqlite:///{tmp_path}/migrated.db", check_schema=False) as migrated:
        migrated.upgrade()
        expected = _schema_script(migrated)
    with Store(f"sqlite:///{tmp_path}/new.db") as created:
        assert _schema_script(created) == expected, (
            f"{SQLITE_HEAD.name} is not what the migrations create: run python scripts/write_sqlite_schema.py")
        assert f"revision {HEAD_REVISION}," in SQLITE_HEAD.read_text().splitlines()[0]
        assert created.schema_state().revision == HEAD_REVISION
        assert created.downgrade("base").tables == ()
        assert created.upgrade().revision == HEAD_REVISION
        assert _schema_script(created) == expected


def test_schema_new_sqlite_database_is_made_without_alembic(tmp_path: Path) -> None:
    probe = ("import sys; from scanner.store import Store; Store(sys.argv[1]).close(); "
             "print('alembic' in sys.modules)")
    shown = subprocess.run([sys.executable, "-c", probe, f"sqlite:///{tmp_path}/new.db"], capture_output=True,
                           text=True, check=True).stdout
    assert shown.strip() == "False"


@pytest.mark.parametrize("database_url", ["postgres"], indirect=True)
@pytest.mark.postgres
def test_schema_empty_postgres_asks_for_upgrade(database_url: str) -> None:
    with pytest.raises(StoreError, match=r"no scanner schema yet: run `scanner db upgrade"):
        Store(database_url)


def _contents(url: str) -> dict[str, list[tuple[object, ...]]]:
    engine = create_engine(url)
    with engine.connect() as connection:
        contents = {table: sorted(tuple(row) for row in connection.execute(
            text(f"SELECT * FROM {table}"))) for table in inspect(connection).get_table_names()}
    engine.dispose()
    return contents


@pytest.mark.parametrize(("statements", "shown"), [
    pytest.param(["CREATE TABLE customers (id INTEGER PRIMARY KEY)",
                  "INSERT INTO customers VALUES (7)"], "customers", id="other-tables"),
    pytest.param(["CREATE TABLE alembic_version (version_num VARCHAR(32) PRIMARY KEY)",
                  f"INSERT INTO alembic_version VALUES ('{head_revision()}')",
                  "CREATE TABLE runs (id INTEGER PRIMARY KEY)"], "alembic_version, runs",
                 id="another-applications-alembic-at-our-revision"),
    pytest.param(["CREATE VIEW numbers AS SELECT 1 AS n"], "numbers", id="only-a-view"),
])
def test_schema_foreign_database_is_refused(database_url: str, statements: list[str],
                                            shown: str) -> None:
    engine = create_engine(database_url)
    with engine.begin() as connection:
        for statement in statements:
            connection.execute(text(statement))
    engine.dispose()
    before = _contents(database_url)
    with pytest.raises(StoreError, match=rf"is not a scanner database \(it has tables "
                                         rf"{shown} and no scanner_schema_version"):
        Store(database_url)
    for change, revision in (("upgrade", "head"), ("downgrade", "base")):
        with pytest.raises(StoreError, match="refusing to change it"):
            getattr(Store(database_url, check_schema=False), change)(revision)
    assert _contents(database_url) == before


def test_schema_older_revision_is_refused(database_url: str) -> None:
    Store(database_url, check_schema=False).upgrade("0001")
    with pytest.raises(StoreError, match=rf"at schema revision 0001, this scanner needs "
                                         rf"{head_revision()}: run `scanner db upgrade"):
        Store(database_url)


def test_schema_newer_revision_is_refused(database_url: str) -> None:
    store = Store(database_url, check_schema=False)
    store.upgrade()
    with store.engine.begin() as connection:
        connection.execute(text(f"UPDATE {VERSION_TABLE} SET version_num = '0099'"))
    with pytest.raises(StoreError, match=r"revision 0099, which this scanner does not know.*"
                                         r"upgrade scanner"):
        Store(database_url)
    with pytest.raises(StoreError, match="does not know"):
        store.upgrade()


@pytest.mark.parametrize(("url", "expected"), [
    pytest.param("postgresql+psycopg://bob:s3cret@127.0.0.1:1/scanner?password=s3cret&reconnect_for=0",
                 r"database postgresql\+psycopg://bob:\*\*\*@127\.0\.0\.1:1/scanner\?password=\*\*\*&"
                 r"reconnect_for=0: open "
                 r"failed: .*check that the server is running", id="unreachable-server-redacted"),
    pytest.param("sqlite:////nonexistent-folder/sub/scanner.db",
                 r"database sqlite:////nonexistent-folder/sub/scanner\.db: open failed: "
                 r"unable to open database file; check that the folder exists",
                 id="missing-sqlite-folder"),
    pytest.param("mysql://root@localhost/db", r"not supported: backend 'mysql'",
                 id="unsupported-backend"),
    pytest.param("sqlite://", r"not supported: in-memory SQLite", id="in-memory-sqlite"),
    pytest.param("::not a url::", r"invalid database URL", id="not-a-url"),
    pytest.param("postgresql+psycopg2://bob@127.0.0.1/db", r"not supported: driver 'psycopg2' \(use sqlite",
                 id="other-postgres-driver"),
])
def test_schema_open_errors_name_the_database_and_the_remedy(url: str, expected: str) -> None:
    with pytest.raises(StoreError, match=expected) as caught:
        Store(url)
    assert "s3cret" not in str(caught.value)


@pytest.mark.postgres
def test_schema_wrong_credentials_are_named(postgres_url_with_bad_password: str) -> None:
    with pytest.raises(StoreError, match=r"\*\*\*") as caught:
        Store(postgres_url_with_bad_password)
    assert "wrong-password" not in str(caught.value)
    assert "check the user name and password in database.url" in str(caught.value)


@pytest.mark.postgres
def test_schema_missing_postgres_database_is_named() -> None:
    from sqlalchemy.engine import make_url

    from tests.store.conftest import POSTGRES_URL

    url = make_url(POSTGRES_URL).set(database="scanner_no_such_database").render_as_string(hide_password=False)
    with pytest.raises(StoreError, match=r'database "scanner_no_such_database" does not exist; create the database '
                                         r"first \(createdb\)"):
        Store(url)


@pytest.fixture
def postgres_url_with_bad_password() -> str:
    from sqlalchemy.engine import make_url

    from tests.store.conftest import POSTGRES_URL

    base = make_url(POSTGRES_URL)
    return base.set(username="scanner_no_such_user", password="wrong-password").render_as_string(
        hide_password=False)


def test_schema_upgrade_points_sources_at_their_latest_completed_scan(database_url: str) -> None:
    store = Store(database_url, check_schema=False)
    store.upgrade("0002")
    runs = [  # run_id, status, finished day, {source: error}
        (1, "succeeded", 1, {1: "", 2: ""}),
        (2, "partial", 3, {1: "clone failed", 2: ""}),
        (3, "failed", 4, {1: "", 2: ""}),
        (4, "succeeded", 2, {1: ""}),
    ]
    with store.engine.begin() as connection:
        connection.execute(insert(Source.__table__), [
            {"source_id": 1, "name": "repo", "type": "git"},
            {"source_id": 2, "name": "export", "type": "export"}])
        for run_id, status, finished, sources in runs:
            connection.execute(insert(Run.__table__).values(
                run_id=run_id, status=status, trigger="cli", started_at=day(finished - 1),
                finished_at=day(finished), heartbeat_at=day(finished), scanner_version="0.1",
                config_digest="", owner_host="host", owner_pid=1))
            connection.execute(insert(RunSource.__table__), [
                {"run_id": run_id, "source_id": source_id, "url": "", "ref": "",
                 "commit_sha": "", "error": error} for source_id, error in sources.items()])
    store.upgrade()
    with store.engine.connect() as connection:
        assert dict(connection.execute(text(
            "SELECT source_id, findings_run_id FROM sources")).all()) == {1: 4, 2: 2}
        assert connection.execute(text(
            "SELECT COUNT(*) FROM run_sources WHERE previous_run_id IS NOT NULL")
        ).scalar_one() == 0
    store.close()


def test_schema_upgrade_sums_existing_tallies_per_policy(database_url: str) -> None:
    store = Store(database_url, check_schema=False)
    store.upgrade("0003")
    tallies = [  # run, source, check, namespace, status, count; checks 1 and 2 are policy 1's
        (1, 1, 1, "default", "pass", 3), (1, 1, 2, "default", "pass", 4), (1, 1, 1, "data", "pass", 5),
        (1, 1, 1, "default", "fail", 1), (1, 2, 1, "default", "pass", 2), (1, 1, 3, "", "fail", 6),
        (2, 1, 2, "default", "pass", 7),
    ]
    with store.engine.begin() as connection:
        connection.execute(insert(Source.__table__), [
            {"source_id": 1, "name": "repo", "type": "git"},
            {"source_id": 2, "name": "export", "type": "export"}])
        connection.execute(insert(Policy.__table__), [
            {"policy_id": p, "kind": "ClusterPolicy", "namespace": "", "name": f"p{p}", "digest": "d",
             "title": "", "category": "", "severity": "", "description": "", "failure_action": "Audit",
             "scored": True} for p in (1, 2)])
        connection.execute(insert(Check.__table__), [
            {"check_id": c, "policy_kind": "ClusterPolicy", "policy_namespace": "", "policy_name": f"p{p}",
             "rule": f"r{c}", "declared_rule": f"r{c}"} for c, p in ((1, 1), (2, 1), (3, 2))])
        for run_id in (1, 2):
            connection.execute(insert(Run.__table__).values(
                run_id=run_id, status="succeeded", trigger="cli", started_at=day(run_id), finished_at=day(run_id),
                heartbeat_at=day(run_id), scanner_version="0.1", config_digest="", owner_host="host", owner_pid=1))
        connection.execute(insert(RunTally.__table__), [
            {"run_id": r, "source_id": s, "check_id": c, "namespace": ns, "status": st,
             "policy_id": 1 if c < 3 else 2, "count": n} for r, s, c, ns, st, n in tallies])
    store.upgrade()
    with store.engine.connect() as connection:
        assert sorted(tuple(row) for row in connection.execute(text(
            "SELECT run_id, source_id, policy_id, status, count FROM run_policy_tallies"))) == [
            (1, 1, 1, "fail", 1), (1, 1, 1, "pass", 12), (1, 1, 2, "fail", 6), (1, 2, 1, "pass", 2),
            (2, 1, 1, "pass", 7)]
    store.downgrade("0003")
    with store.engine.connect() as connection:
        assert "run_policy_tallies" not in inspect(connection).get_table_names()
        assert connection.execute(text("SELECT SUM(count) FROM run_tallies")).scalar_one() == 28
    store.close()


def test_schema_database_downgraded_to_base_counts_as_empty(database_url: str) -> None:
    with Store(database_url, check_schema=False) as store:
        store.upgrade()
        store.downgrade("base")
    if database_url.startswith("sqlite"):
        with Store(database_url) as store:  # created again, as a new file would be
            assert store.schema_state().revision == HEAD_REVISION
    else:
        with pytest.raises(StoreError, match=r"no scanner schema yet: run `scanner db upgrade"):
            Store(database_url)


def test_schema_upgrade_keeps_rows_and_still_checks_statuses(database_url: str) -> None:
    store = Store(database_url, check_schema=False)
    store.upgrade("0005")
    with store.engine.begin() as connection:
        connection.execute(insert(Source.__table__), [{"source_id": 1, "name": "repo", "type": "git"}])
        connection.execute(insert(Run.__table__).values(
            run_id=1, status="succeeded", trigger="cli", started_at=day(1), finished_at=day(1),
            heartbeat_at=day(1), scanner_version="0.1", config_digest="", owner_host="host", owner_pid=1))
        connection.execute(insert(RunSource.__table__), [
            {"run_id": 1, "source_id": 1, "url": "", "ref": "", "commit_sha": "", "error": ""}])
        connection.execute(text(
            "INSERT INTO results (observation_id, check_id, run_id, resource_id, policy_id, status, action, "
            "message, path) VALUES (1, 1, 1, 1, 1, 'pass', 'Audit', 'ok', ''), (1, 2, 1, 1, 1, 'fail', 'Audit', "
            "'bad', '/spec')"))
    store.upgrade()
    rows = "SELECT observation_id, check_id, status, message FROM results ORDER BY check_id"
    with store.engine.connect() as connection:
        assert [tuple(r) for r in connection.execute(text(rows))] == [(1, 1, "pass", "ok"), (1, 2, "fail", "bad")]
        assert connection.execute(text("SELECT COUNT(*) FROM run_sources")).scalar_one() == 1  # children of runs kept
        if database_url.startswith("sqlite"):
            assert "WITHOUT ROWID" in connection.execute(text(
                "SELECT sql FROM sqlite_master WHERE name = 'result_rows'")).scalar_one()
    for statement in ("INSERT INTO result_rows (observation_id, check_id, resource_id, policy_id, status, "
                      "action, message, path) VALUES (2, 1, 1, 1, 'passed', 'Audit', '', '')",
                      "UPDATE runs SET status = 'done'"):
        with pytest.raises(IntegrityError, match=r"ck_(result_rows|runs)_status"), store.engine.begin() as connection:
            connection.execute(text(statement))
    store.downgrade("0005")
    with store.engine.connect() as connection:
        assert [tuple(r) for r in connection.execute(text(rows))] == [(1, 1, "pass", "ok"), (1, 2, "fail", "bad")]
    store.close()
