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
from functools import partial
from typing import Any
from urllib.parse import quote

from sqlalchemy import Connection, Engine, create_engine, event, exc
from sqlalchemy.engine import URL, make_url

from scanner.errors import DatabaseLostError, StoreError
from scanner.store.pgsession import SessionLimits, split_limits
from scanner.store.pgsession import connect as pg_connect

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
LOST_HINT = ("check that the server is running and reachable at the host and port in database.url, "
             "then run again (connecting is tried again for the URL's reconnect_for seconds, 60 by default)")
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


SECRET_PARAMETERS = frozenset({"password", "sslpassword", "passfile"})
"""Query parameters (libpq's names) whose values are never shown."""

_USERINFO = re.compile(r"(?P<head>\b[a-z][a-z0-9+.-]*://[^:/?#@\s]*):[^/?#\s]*@", re.IGNORECASE)
_SECRET_NAMES = "|".join(sorted(SECRET_PARAMETERS))
_KEYVALUE = re.compile(rf"(?P<head>\b(?:{_SECRET_NAMES})\s*=\s*)(?:'(?:[^'\\]|\\.)*'|[^\s&;,]*)", re.IGNORECASE)


def describe(url: URL) -> str:
    """The database's URL with its password redacted (``user:***@`` and ``?password=***``)."""
    secret = {key: "REDACTED" for key in url.query if key.lower() in SECRET_PARAMETERS}
    shown = url.update_query_dict(secret) if secret else url
    text = shown.render_as_string(hide_password=True)
    return redact_text(text) if secret else text


def redact_text(text: str) -> str:
    """``text`` with every password it holds redacted: a URL's ``user:password@`` and a
    ``password=...`` parameter (of a URL's query or a libpq connection string)."""
    text = _USERINFO.sub(lambda m: f"{m['head']}:***@", text)
    return _KEYVALUE.sub(lambda m: f"{m['head']}***", text)


def create_store_engine(url: URL, *, read_only: bool = False) -> Engine:
    """An engine for the store: SQLite in WAL mode with foreign keys and a busy timeout;
    PostgreSQL with bounded connects and statements (``pgsession``). ``read_only`` opens a
    database that is only read: SQLite's file (in a read-only folder too) without creating
    or changing anything, PostgreSQL sessions in read-only transactions."""
    if url.get_backend_name() == "sqlite":
        if url.database in (None, "", ":memory:"):
            raise StoreError(f"database {describe(url)}: not supported: in-memory SQLite "
                             "(give a file path, e.g. sqlite:///scanner.db)")
        connect_args: dict[str, Any] = {"timeout": BUSY_TIMEOUT_MS / 1000, "check_same_thread": False}
        options: dict[str, Any] = {}
        if read_only and not url.query.get("uri"):
            options["creator"] = partial(_sqlite_read_only, os.path.abspath(url.database), connect_args)
        engine = create_engine(url, connect_args=connect_args, **options)
        event.listen(engine, "connect", _sqlite_connect)
        event.listen(engine, "begin", _sqlite_begin)
        return engine
    driver_url, limits = split_limits(url, describe(url))
    engine = create_engine(driver_url, pool_pre_ping=True)
    event.listen(engine, "do_connect", partial(_postgres_do_connect, limits))
    event.listen(engine, "connect", partial(_postgres_connect, limits, read_only))
    return engine


def _postgres_do_connect(limits: SessionLimits, _dialect: Any, _record: Any, cargs: Any,
                         cparams: dict[str, Any]) -> Any:
    return pg_connect(cargs, cparams, limits)


def _postgres_connect(limits: SessionLimits, read_only: bool, dbapi_connection: Any, _record: Any) -> None:
    with dbapi_connection.cursor() as cursor:
        # The store's queries are short index probes; JIT compilation only adds latency to them.
        cursor.execute("SET jit = off")
        # Its cursors are read to the end (streamed reports, the chain): plan them for all rows.
        cursor.execute("SET cursor_tuple_fraction = 1.0")
        cursor.execute(f"SET statement_timeout = {int(limits.statement_timeout * 1000)}")
        if read_only:
            cursor.execute("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY")
    dbapi_connection.commit()


def _sqlite_read_only(path: str, connect_args: dict[str, Any]) -> sqlite3.Connection:
    """A connection that cannot change the database. Where the file and its folder are
    writable, an ordinary one made ``query_only`` (closing it still tidies the write-ahead
    log away, as a read-only connection cannot); elsewhere the file opened read-only, and where
    even that needs a write (a WAL database in a read-only folder, where its shared-memory file
    cannot be made) opened as immutable: nothing can be writing to a database whose folder
    nobody can write."""
    if os.access(path, os.W_OK) and os.access(os.path.dirname(path) or ".", os.W_OK):
        connection = sqlite3.connect(path, **connect_args)
        connection.execute("PRAGMA query_only = ON")
        return connection
    target = "file:" + quote(path)
    connection = sqlite3.connect(f"{target}?mode=ro", uri=True, **connect_args)
    try:
        connection.execute("SELECT count(*) FROM sqlite_master").fetchone()
        return connection
    except sqlite3.OperationalError:
        connection.close()
    return sqlite3.connect(f"{target}?immutable=1", uri=True, **connect_args)


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
            lost = e.connection_invalidated or _unreachable(url, e.orig)
            raise (DatabaseLostError if lost else StoreError)(_message(url, doing, e.orig, lost)) from e
        if isinstance(e, exc.SQLAlchemyError):
            raise StoreError(f"database {describe(url)}: {doing} failed: {redact_text(str(e))}") from e
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


def _unreachable(url: URL, error: BaseException | None) -> bool:
    """Whether PostgreSQL was not reached at all (no answer, no refusal of its own)."""
    psycopg = sys.modules.get("psycopg")
    if url.get_backend_name() != "postgresql" or psycopg is None or not isinstance(error, psycopg.Error):
        return False
    sqlstate = getattr(error, "sqlstate", None)
    if sqlstate is not None:  # a connection exception, or the server shutting down
        return sqlstate.startswith("08") or sqlstate in ("57P01", "57P02", "57P03")
    return isinstance(error, psycopg.OperationalError) and _connect_sqlstate(str(error)) is None


def _message(url: URL, doing: str, error: BaseException | None, lost: bool = False) -> str:
    detail = str(error).strip().splitlines()[0] if error is not None and str(error).strip() \
        else type(error).__name__
    hint = LOST_HINT if lost else _hint(url, error)
    text = f"database {describe(url)}: {doing} failed: {redact_text(detail)}"
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
