"""Dialect-aware bulk writes: upserts that return ids, and the fast path for result rows.

Result rows go to PostgreSQL with ``COPY`` (one round trip per batch) and to SQLite with
multi-row ``INSERT`` statements.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Sequence
from functools import cache
from itertools import chain
from types import ModuleType
from typing import Any

from sqlalchemy import Column, Connection, Engine, Table, insert, select, text, tuple_

from scanner.store.storedtext import StoredText, escape_rows
from scanner.store.tables import metadata

OBSERVATION_COLUMNS = ("observation_id", "resource_id", "path", "document_index", "item_index", "line",
                       "commit_sha", "overlay", "patches", "content_digest")
"""The columns of ``observation_rows`` the writer fills, in its rows' order."""
RESULT_COLUMNS = ("observation_id", "check_id", "resource_id", "policy_id", "status", "action", "message", "path")
"""The columns of ``result_rows``, in the writer's rows' order."""
CHUNK = 400  # keys per IN (...) and rows per multi-row statement: well under SQLite's limits


def dialect_module(connection: Connection | Engine) -> ModuleType:
    """``sqlalchemy.dialects.postgresql`` or ``.sqlite`` (for their upserts), by the connection's
    (or engine's) dialect; the PostgreSQL one loads only where it is used."""
    name = "postgresql" if connection.dialect.name == "postgresql" else "sqlite"
    return importlib.import_module(f"sqlalchemy.dialects.{name}")


def chunks(items: Sequence[Any], size: int = CHUNK) -> Iterable[Sequence[Any]]:
    for start in range(0, len(items), size):
        yield items[start:start + size]


def insert_ignore(connection: Connection, table: Table, rows: list[dict[str, Any]]) -> None:
    """Insert rows, skipping those that hit a unique constraint (another writer's rows)."""
    if not rows:
        return
    dialect = dialect_module(connection)
    for part in chunks(rows):
        connection.execute(dialect.insert(table).on_conflict_do_nothing(), list(part))


def ensure_ids(connection: Connection, table: Table, id_column: Column[int],
               key_columns: Sequence[Column[Any]],
               rows: dict[tuple[Any, ...], dict[str, Any]]) -> dict[tuple[Any, ...], int]:
    """Ids of rows identified by ``key_columns``, inserting those that do not exist yet."""
    found = select_ids(connection, id_column, key_columns, list(rows))
    missing = [row for key, row in rows.items() if key not in found]
    if missing:
        insert_ignore(connection, table, missing)
        found.update(select_ids(connection, id_column, key_columns,
                                [key for key in rows if key not in found]))
    return found


def select_ids(connection: Connection, id_column: Column[int],
               key_columns: Sequence[Column[Any]],
               keys: list[tuple[Any, ...]]) -> dict[tuple[Any, ...], int]:
    found: dict[tuple[Any, ...], int] = {}
    for part in chunks(keys, CHUNK // max(len(key_columns), 1)):
        query = select(id_column, *key_columns).where(tuple_(*key_columns).in_(list(part)))
        for row in connection.execute(query):
            found[tuple(row[1:])] = row[0]
    return found


def insert_returning_ids(connection: Connection, table: Table,
                         id_column: Column[int],
                         rows: list[dict[str, Any]]) -> list[int]:
    """Insert rows and return their new ids in the order of ``rows``."""
    ids: list[int] = []
    for part in chunks(rows):
        statement = insert(table).returning(id_column, sort_by_parameter_order=True)
        ids.extend(connection.execute(statement, list(part)).scalars())
    return ids


def allocate_ids(connection: Connection, table: str, column: str, count: int) -> list[int]:
    """Reserve ``count`` new ids of ``table.column`` inside the current write transaction.

    PostgreSQL draws them from the column's sequence; SQLite continues after the largest
    id, which is safe because SQLite write transactions (BEGIN IMMEDIATE) are exclusive.
    """
    if count <= 0:
        return []
    if connection.dialect.name == "postgresql":
        return list(connection.execute(text(
            f"SELECT nextval(pg_get_serial_sequence('{table}', '{column}')) "
            "FROM generate_series(1, :n)"), {"n": count}).scalars())
    top = connection.execute(text(f"SELECT COALESCE(MAX({column}), 0) FROM {table}")
                             ).scalar_one()
    return list(range(top + 1, top + 1 + count))


def insert_returning_keys(connection: Connection, table: Table,
                          id_column: Column[int],
                          key_columns: Sequence[Column[Any]],
                          rows: list[dict[str, Any]]) -> dict[tuple[Any, ...], int]:
    """Insert rows (skipping conflicts) and return the ids of those inserted, by key."""
    dialect = dialect_module(connection)
    found: dict[tuple[Any, ...], int] = {}
    for part in chunks(rows, CHUNK // 2):
        statement = (dialect.insert(table).values(list(part)).on_conflict_do_nothing()
                     .returning(id_column, *key_columns))
        for row in connection.execute(statement):
            found[tuple(row[1:])] = row[0]
    return found


def stored_rows(table: str, columns: Sequence[str], rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """``rows`` of ``columns`` of ``table`` as stored: their text escaped (``StoredText``)."""
    return escape_rows(rows, text_positions(table, tuple(columns)))


@cache
def text_positions(table: str, columns: tuple[str, ...]) -> tuple[int, ...]:
    """The positions of ``columns`` that are ``StoredText`` columns of ``table``."""
    known = metadata.tables[table].c
    return tuple(i for i, name in enumerate(columns) if isinstance(known[name].type, StoredText))


def copy_rows(connection: Connection, table: str, columns: Sequence[str],
              rows: list[tuple[Any, ...]], *, escaped: bool = False) -> None:
    """Append rows to ``table``: COPY on PostgreSQL, multi-row INSERTs on SQLite. The rows go
    past SQLAlchemy's types: their text columns are escaped here as ``StoredText`` binds them
    (unless they are ``escaped`` already: ``stored_rows``)."""
    if not rows:
        return
    if not escaped:
        rows = stored_rows(table, columns, rows)
    names = ", ".join(columns)
    if connection.dialect.name == "postgresql":
        driver = connection.connection.driver_connection
        assert driver is not None  # a checked-out connection has its driver's
        cursor = driver.cursor()
        with cursor.copy(f"COPY {table} ({names}) FROM STDIN") as copy:
            for row in rows:
                copy.write_row(row)
        return
    # Many rows per statement, not one execution per row: each execution creates the lookup
    # table of the CHECK's IN list anew. 999 parameters at most (SQLite before 3.32).
    per = 999 // len(columns)
    marks = "(" + ", ".join("?" * len(columns)) + ")"
    statement = f"INSERT INTO {table} ({names}) VALUES "
    full = statement + ", ".join([marks] * per)
    for start in range(0, len(rows), per):
        part = rows[start:start + per]
        sql = full if len(part) == per else statement + ", ".join([marks] * len(part))
        connection.exec_driver_sql(sql, tuple(chain.from_iterable(part)))
