"""Opening a database: engines with the right SQLite settings, and errors users can act on.

Every foreign database exception leaves the store through ``translate_errors``, which names
the database (password redacted) and says what to do.
"""

from __future__ import annotations

import os
import re
import sqlite3
import sys
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import Any

from sqlalchemy import Connection, Engine, create_engine, event, exc
from sqlalchemy.engine import URL, make_url

from scanner.errors import StoreError

BUSY_TIMEOUT_MS = 30_000

_SQLITE_HINTS = {
    "SQLITE_CANTOPEN": "check that the folder exists and is writable",
    "SQLITE_READONLY": "the file or its folder is read-only: make it writable or use another "
                       "database.url",
    "SQLITE_READONLY_DIRECTORY": "the folder is read-only: make it writable",
    "SQLITE_FULL": "the disk is full: free space or prune old runs (`scanner db prune`)",
    "SQLITE_IOERR": "the disk reported an I/O error: check free space and the file system",
    "SQLITE_BUSY": "another process holds the database for too long: retry later",
    "SQLITE_NOTADB": "the file is not an SQLite database: point database.url at another file",
    "SQLITE_CORRUPT": "the file is damaged: restore it from a backup",
}
_PG_HINTS = {
    "25006": "the database only accepts reads (a standby, or default_transaction_read_only is "
             "on): point database.url at a writable primary or turn read-only off",
    "28P01": "check the user name and password in database.url",
    "28000": "check the user name and password in database.url",
    "3D000": "create the database first (createdb) or fix its name in database.url",
    "42501": "grant the user the privileges it needs on this database",
    "53100": "the server's disk is full: free space or prune old runs (`scanner db prune`)",
}


def parse_url(url: str | URL) -> URL:
    try:
        parsed = make_url(url)
    except (exc.ArgumentError, ValueError) as e:
        raise StoreError(f"invalid database URL {redact_text(str(url))!r}: {e}; expected e.g. "
                         "sqlite:///scanner.db or postgresql+psycopg://user@host/db") from e
    if parsed.get_backend_name() not in ("sqlite", "postgresql"):
        raise StoreError(f"database {describe(parsed)}: not supported: backend "
                         f"{parsed.get_backend_name()!r} (use sqlite or postgresql)")
    if parsed.get_backend_name() == "postgresql" and parsed.drivername == "postgresql":
        parsed = parsed.set(drivername="postgresql+psycopg")
    if parsed.drivername not in ("sqlite", "sqlite+pysqlite", "postgresql+psycopg"):
        raise StoreError(f"database {describe(parsed)}: not supported: driver {parsed.get_driver_name()!r} "
                         "(use sqlite:///FILE or postgresql+psycopg://...)")
    return parsed


def missing_sqlite_file(url: URL) -> str | None:
    """The path of an SQLite database file that does not exist yet (opening it would create
    it), else None. URI file names (``?uri=true``) are left to SQLite."""
    if url.get_backend_name() != "sqlite" or url.database in (None, "", ":memory:") or url.query.get("uri"):
        return None
    return None if os.path.exists(url.database) else url.database


def describe(url: URL) -> str:
    """The database's URL with its password redacted."""
    return url.render_as_string(hide_password=True)


def redact_text(text: str) -> str:
    """Best-effort redaction for text that did not parse as a URL."""
    scheme, sep, rest = text.partition("://")
    if not sep or "@" not in rest:
        return text
    credentials, _, host = rest.rpartition("@")
    user = credentials.split(":", 1)[0]
    return f"{scheme}://{user}:***@{host}" if ":" in credentials else text


def create_store_engine(url: URL) -> Engine:
    """An engine for the store: SQLite in WAL mode with foreign keys and a busy timeout."""
    if url.get_backend_name() == "sqlite":
        if url.database in (None, "", ":memory:"):
            raise StoreError(f"database {describe(url)}: not supported: in-memory SQLite "
                             "(give a file path, e.g. sqlite:///scanner.db)")
        engine = create_engine(url, connect_args={"timeout": BUSY_TIMEOUT_MS / 1000,
                                                  "check_same_thread": False})
        event.listen(engine, "connect", _sqlite_connect)
        event.listen(engine, "begin", _sqlite_begin)
        return engine
    engine = create_engine(url, pool_pre_ping=True, connect_args={"connect_timeout": 10})
    event.listen(engine, "connect", _postgres_connect)
    return engine


def _postgres_connect(dbapi_connection: Any, _record: Any) -> None:
    # The store's queries are short index probes; JIT compilation only adds latency to them.
    with dbapi_connection.cursor() as cursor:
        cursor.execute("SET jit = off")
    dbapi_connection.commit()


def _sqlite_connect(dbapi_connection: sqlite3.Connection, _record: Any) -> None:
    # The driver's own transaction handling is turned off; `_sqlite_begin` emits BEGIN.
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    try:
        cursor.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        cursor.execute("PRAGMA foreign_keys = ON")
        cursor.execute("PRAGMA synchronous = NORMAL")
        # A read-only file stays in its journal mode; reads still work.
        with suppress(sqlite3.OperationalError):
            cursor.execute("PRAGMA journal_mode = WAL")
    finally:
        cursor.close()


def _sqlite_begin(connection: Connection) -> None:
    mode = connection.get_execution_options().get("sqlite_begin", "DEFERRED")
    connection.exec_driver_sql(f"BEGIN {mode}")


@contextmanager
def write_connection(engine: Engine) -> Iterator[Connection]:
    """A connection in a write transaction (SQLite: ``BEGIN IMMEDIATE``, no lock upgrades)."""
    with engine.connect() as connection:
        if engine.dialect.name == "sqlite":
            connection.execution_options(sqlite_begin="IMMEDIATE")
        with connection.begin():
            yield connection


@contextmanager
def translate_errors(url: URL, doing: str) -> Iterator[None]:
    """Turn database exceptions into a ``StoreError`` naming the database and the remedy.

    An error raised while an interrupt (Ctrl-C) was unwinding, such as a failed rollback of
    the command it cut short, gives way to the interrupt: the run is interrupted, not failed.
    """
    try:
        yield
    except StoreError:
        raise
    except Exception as e:
        interrupt = _interrupt_behind(e)
        if interrupt is not None:
            raise interrupt from None
        if isinstance(e, exc.DBAPIError):
            raise StoreError(_message(url, doing, e.orig)) from e
        if isinstance(e, exc.SQLAlchemyError):
            raise StoreError(f"database {describe(url)}: {doing} failed: {e}") from e
        if not _is_driver_error(e):
            raise
        raise StoreError(_message(url, doing, e)) from e  # from the driver itself (COPY)


def _interrupt_behind(error: BaseException) -> KeyboardInterrupt | None:
    seen: BaseException | None = error.__context__
    while seen is not None:
        if isinstance(seen, KeyboardInterrupt):
            return seen
        seen = seen.__context__
    return None


def _is_driver_error(error: Exception) -> bool:
    psycopg = sys.modules.get("psycopg")
    return isinstance(error, sqlite3.Error) or (psycopg is not None
                                                and isinstance(error, psycopg.Error))


def _message(url: URL, doing: str, error: BaseException | None) -> str:
    detail = str(error).strip().splitlines()[0] if error is not None and str(error).strip() \
        else type(error).__name__
    hint = _hint(url, error)
    text = f"database {describe(url)}: {doing} failed: {detail}"
    return f"{text}; {hint}" if hint else text


# the server's refusals while connecting, which psycopg reports without a SQLSTATE
_CONNECT_REFUSALS = (
    (re.compile(r'database "[^"]*" does not exist'), "3D000"),
    (re.compile(r'role "[^"]*" does not exist'), "28000"),
    (re.compile(r"password authentication failed|no password supplied"), "28P01"),
)


def _connect_sqlstate(message: str) -> str | None:
    return next((state for pattern, state in _CONNECT_REFUSALS if pattern.search(message)), None)


def _hint(url: URL, error: BaseException | None) -> str:
    if isinstance(error, sqlite3.Error):
        name = getattr(error, "sqlite_errorname", "")
        for prefix, hint in _SQLITE_HINTS.items():
            if name == prefix or name.startswith(prefix + "_"):
                return _SQLITE_HINTS.get(name, hint)
        return ""
    sqlstate = getattr(error, "sqlstate", None) or _connect_sqlstate(str(error))
    if sqlstate in _PG_HINTS:
        return _PG_HINTS[sqlstate]
    if sqlstate is None and url.get_backend_name() == "postgresql":
        return "check that the server is running and reachable at the host and port in " \
               "database.url"
    return ""
