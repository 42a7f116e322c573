"""Schema revisions: locating the Alembic migrations, checking, upgrading, downgrading.

No alembic.ini: the configuration is built here, so ``scanner db upgrade`` works from any
installation. The migrations live in the top-level ``migrations/`` folder, reachable as
``scanner/store/migrations`` (a link in the source tree, a copy in built wheels).

A new SQLite database is created from ``sqlite_head.sql``, the schema as the migrations
leave it at ``HEAD_REVISION`` (a test compares the two), without loading Alembic and running
every migration: 0.2 to 0.3 s less for the first scan into a new database file (measured:
about 5% of a first scan of 10,000 resources). The migrations stay the schema's one
declaration: this file is written from them (``scripts/write_sqlite_schema.py``).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, Engine, inspect, text
from sqlalchemy.engine import URL

from scanner.errors import StoreError
from scanner.store.connect import describe
from scanner.store.tables import VERSION_TABLE

if TYPE_CHECKING:
    from alembic.config import Config

HEAD_REVISION = "0011"
"""The newest revision in ``migrations/`` (a test keeps them equal): a database at it is
opened without loading Alembic."""

_HERE = Path(__file__).resolve().parent
SQLITE_HEAD = _HERE / "sqlite_head.sql"


def migrations_dir() -> Path:
    """The Alembic script folder shipped with this installation."""
    for candidate in (Path(__file__).parent / "migrations", _HERE.parents[1] / "migrations"):
        if (candidate / "env.py").is_file():
            return candidate
    raise StoreError("not supported: this installation has no migrations folder "
                     "(scanner/store/migrations); reinstall scanner")


def alembic_config(connection: Connection | None = None) -> Config:
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(migrations_dir()))
    if connection is not None:
        config.attributes["connection"] = connection
    return config


def head_revision() -> str:
    from alembic.script import ScriptDirectory

    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    if head is None:
        raise StoreError("not supported: the migrations folder has no revisions")
    return head


@dataclass(frozen=True, slots=True)
class SchemaState:
    """Where a database stands: its revision (None when unversioned) and other tables."""

    revision: str | None
    head: str
    tables: tuple[str, ...]

    @property
    def is_foreign(self) -> bool:
        return self.revision is None and bool(self.tables)


def read_state(connection: Connection) -> SchemaState:
    names = _table_names(connection)
    revision = None
    if VERSION_TABLE in names:
        from alembic.runtime.migration import MigrationContext

        context = MigrationContext.configure(connection, opts={"version_table": VERSION_TABLE})
        revision = context.get_current_revision()
    others = tuple(sorted(n for n in names if n != VERSION_TABLE))
    return SchemaState(revision=revision, head=head_revision(), tables=others)


def _known(revision: str) -> bool:
    from alembic.script import ScriptDirectory
    from alembic.util import CommandError

    script = ScriptDirectory.from_config(alembic_config())
    try:
        return script.get_revision(revision) is not None
    except CommandError:
        return False


def refuse_foreign(url: URL, state: SchemaState) -> None:
    if state.is_foreign:
        shown = ", ".join(state.tables[:5]) + (", ..." if len(state.tables) > 5 else "")
        raise StoreError(f"database {describe(url)} is not a scanner database (it has tables "
                         f"{shown} and no {VERSION_TABLE} table); refusing to change it: point "
                         "database.url at a new database or a scanner database")


def ensure_schema(engine: Engine, url: URL, *, auto_upgrade: bool) -> None:
    """Refuse unless the database is at head; create the schema in an empty one when ``auto_upgrade``."""
    if _at_head(engine):
        return
    with engine.connect() as connection:
        if not _is_empty(connection, _table_names(connection)):
            _check_state(url, read_state(connection))
            return
    if not auto_upgrade:
        raise StoreError(f"database {describe(url)} has no scanner schema yet: run "
                         f"`scanner db upgrade --database {describe(url)}`")
    with migration_connection(engine) as connection:
        names = _table_names(connection)
        if not _is_empty(connection, names):  # another process created the schema meanwhile
            _check_state(url, read_state(connection))
        elif engine.dialect.name == "sqlite" and not names:
            for statement in sqlite_head_statements():
                connection.exec_driver_sql(statement)
            connection.execute(text(f"INSERT INTO {VERSION_TABLE} (version_num) VALUES (:v)"), {"v": HEAD_REVISION})
        else:  # also a database downgraded to base: the migrations' own version table is left
            _migrate(connection, "upgrade", "head")


def _is_empty(connection: Connection, names: list[str]) -> bool:
    """No tables (``names``), or only an empty version table (what ``scanner db downgrade base`` leaves)."""
    if names != [VERSION_TABLE]:
        return not names
    return connection.execute(text(f"SELECT count(*) FROM {VERSION_TABLE}")).scalar_one() == 0


def _table_names(connection: Connection) -> list[str]:
    """Tables, views and (PostgreSQL) foreign tables: anything a database is not empty with."""
    inspector = inspect(connection)
    names = inspector.get_table_names() + inspector.get_view_names()
    if hasattr(inspector, "get_foreign_table_names"):
        names += inspector.get_foreign_table_names()
    return sorted(t for t in names if not t.startswith("sqlite_"))


def _check_state(url: URL, state: SchemaState) -> None:
    refuse_foreign(url, state)
    if state.revision != state.head:
        raise StoreError(_revision_problem(url, state))


def sqlite_head_statements() -> list[str]:
    """The statements of ``sqlite_head.sql`` (its comments dropped), in order."""
    script = "\n".join(line for line in SQLITE_HEAD.read_text().splitlines() if not line.startswith("--"))
    return [statement.strip() for statement in script.split(";\n") if statement.strip()]


def sqlite_schema_script(connection: Connection) -> str:
    """A SQLite database's schema as ``sqlite_head.sql`` holds it: each statement that
    created a table or an index, in the order the database keeps them."""
    rows = connection.exec_driver_sql(
        "SELECT sql FROM sqlite_master WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' "
        "ORDER BY rowid").scalars()
    return "\n\n".join(f"{sql};" for sql in rows) + "\n"


def _revision_problem(url: URL, state: SchemaState) -> str:
    assert state.revision is not None
    if _known(state.revision):
        return (f"database {describe(url)} is at schema revision {state.revision}, this scanner "
                f"needs {state.head}: run `scanner db upgrade --database {describe(url)}`")
    return (f"database {describe(url)} is at schema revision {state.revision}, which this "
            f"scanner does not know (it needs {state.head}); it was upgraded by a newer "
            "scanner: upgrade scanner to use it")


def _at_head(engine: Engine) -> bool:
    """Whether the database is a scanner database at ``HEAD_REVISION`` (no Alembic needed)."""
    with engine.connect() as connection:
        if not inspect(connection).has_table(VERSION_TABLE):
            return False
        versions = connection.execute(text(f"SELECT version_num FROM {VERSION_TABLE}")).scalars()
        return list(versions) == [HEAD_REVISION]


def current_state(engine: Engine) -> SchemaState:
    with engine.connect() as connection:
        return read_state(connection)


def upgrade(engine: Engine, url: URL, revision: str = "head") -> SchemaState:
    with migration_connection(engine) as connection:
        state = read_state(connection)
        refuse_foreign(url, state)
        if state.revision is not None and not _known(state.revision):
            raise StoreError(_revision_problem(url, state))
        _migrate(connection, "upgrade", revision)
    return current_state(engine)


def downgrade(engine: Engine, url: URL, revision: str) -> SchemaState:
    with migration_connection(engine) as connection:
        state = read_state(connection)
        refuse_foreign(url, state)
        if state.revision is None:
            raise StoreError(f"database {describe(url)} has no scanner schema to downgrade")
        if not _known(state.revision):
            raise StoreError(_revision_problem(url, state))
        _migrate(connection, "downgrade", revision)
    return current_state(engine)


def _migrate(connection: Connection, direction: str, revision: str) -> None:
    from alembic import command
    from alembic.util import CommandError

    try:
        getattr(command, direction)(alembic_config(connection), revision)
    except CommandError as e:
        raise StoreError(f"cannot {direction} to {revision!r}: {e}") from e


@contextmanager
def migration_connection(engine: Engine) -> Iterator[Connection]:
    """A write transaction for migrations; on SQLite with foreign keys off.

    SQLite batch migrations copy and drop tables; with foreign keys on, dropping a parent
    table would cascade into its children. The pragma is honoured only outside a
    transaction, so it goes straight to the driver before the transaction begins.
    """
    sqlite = engine.dialect.name == "sqlite"
    with engine.connect() as connection:
        if sqlite:
            _driver(connection).execute("PRAGMA foreign_keys = OFF")
            connection.execution_options(sqlite_begin="IMMEDIATE")
        try:
            with connection.begin():
                yield connection
        finally:
            if sqlite:
                _driver(connection).execute("PRAGMA foreign_keys = ON")


def _driver(connection: Connection) -> Any:
    """The driver's own connection under ``connection`` (a checked-out connection has one)."""
    driver = connection.connection.driver_connection
    assert driver is not None
    return driver
