"""Rows read through the database driver's own cursor: tuples as the driver gives them, with no
result object or type processing per row, for the reads of every row of a run."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from sqlalchemy import Connection

BATCH = 5_000


def driver_batches(connection: Connection, sql: str, run_id: int, *, cursor_name: str) -> Iterator[Sequence[Any]]:
    """The rows of ``sql`` (SQL text naming the run as ``:run``) in batches; on PostgreSQL
    through a server-side cursor named ``cursor_name`` (streamed)."""
    driver = connection.connection.dbapi_connection
    assert driver is not None
    if connection.dialect.name == "postgresql":
        cursor = driver.cursor(name=cursor_name)
        sql = sql.replace(":run", "%(run)s")
    else:
        cursor = driver.cursor()
    try:
        cursor.execute(sql, {"run": run_id})
        while batch := cursor.fetchmany(BATCH):
            yield batch
    finally:
        cursor.close()
