"""The stored results a worker reads: result cache entries by document digest and shard outputs
by shard key (``scanner.store.result_cache``), through a read-only connection of its own.

The connection opens when first needed (a shard sent again from the store reads one row; a
scan whose shards are all sent again never reads the result cache) and closes after each task,
so no connection crosses a fork. A store that cannot be read (none yet: the scan creates it
after its workers start; a schema older than the caches; a database down) reads as empty for
the rest of the scan: its shards are read and evaluated.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import TypeVar

from sqlalchemy import Connection, Engine
from sqlalchemy.exc import SQLAlchemyError

from scanner.errors import StoreError
from scanner.store.connect import create_store_engine, parse_url
from scanner.store.result_cache import read_entries, read_shard_outputs

T = TypeVar("T")


class StoredCache:
    """Read access to the store's caches for one worker process."""

    def __init__(self, database_url: str) -> None:
        self.database_url = database_url
        self._engine: Engine | None = None
        self._unreadable = False

    def entries(self, digests: list[str]) -> dict[str, bytes]:
        """The stored entries of the document ``digests`` that have one."""
        if not digests:
            return {}
        return self._read(lambda connection: read_entries(connection, digests), {})

    def shard_output(self, key: str) -> bytes | None:
        """The output stored under the shard ``key``, if any."""
        found: dict[str, bytes] = self._read(lambda connection: read_shard_outputs(connection, [key]), {})
        return found.get(key)

    def close(self) -> None:
        if self._engine is not None:
            self._engine.dispose()
            self._engine = None

    def _read(self, query: Callable[[Connection], T], empty: T) -> T:
        if self._unreadable:
            return empty
        try:
            if self._engine is None:
                self._engine = create_store_engine(parse_url(self.database_url), read_only=True)
            with self._engine.connect() as connection:
                return query(connection)
        except (SQLAlchemyError, StoreError, OSError, sqlite3.Error):
            self._unreadable = True
            self.close()
            return empty
