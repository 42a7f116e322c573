"""The result cache's rows: read them by key, write what a run made or reused, prune.

A ``result_cache`` row is one resource document's reusable results: its digest, its entries
(opaque bytes here, encoded by the scan) and the last run that wrote it or, every
``TOUCH_AFTER`` runs, reused it; a ``shard_cache`` row is one shard's output under its shard
key, likewise.

A scan's workers read the rows of the documents and shards they meet, each through a
connection of its own; the scan writes rows with the run's results, each batch in its own
transaction. Two scans writing the same key both succeed (the later write wins: both hold the
same output for it). Retention deletes the rows that no kept run wrote or reused.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from sqlalchemy import Column, Connection, bindparam, select, text

from scanner.store import tables as t

_UPSERT = text("""
INSERT INTO result_cache (document_digest, entries, last_run_id) VALUES (:digest, :entries, :run)
ON CONFLICT (document_digest) DO UPDATE SET entries = excluded.entries, last_run_id = excluded.last_run_id
""")

_TOUCH = text("UPDATE result_cache SET last_run_id = :run WHERE document_digest IN :digests "
              "AND last_run_id < :stale").bindparams(bindparam("digests", expanding=True))

_SHARD_UPSERT = text("""
INSERT INTO shard_cache (shard_key, output, last_run_id) VALUES (:key, :output, :run)
ON CONFLICT (shard_key) DO UPDATE SET output = excluded.output, last_run_id = excluded.last_run_id
""")

_SHARD_TOUCH = text("UPDATE shard_cache SET last_run_id = :run WHERE shard_key IN :keys "
                    "AND last_run_id < :stale").bindparams(bindparam("keys", expanding=True))

_PRUNE = tuple(text(f"DELETE FROM {table} WHERE last_run_id < COALESCE((SELECT MIN(run_id) FROM runs), :none)")
               for table in ("result_cache", "shard_cache"))

CHUNK = 500

TOUCH_AFTER = 16
"""Runs after which a reused row's ``last_run_id`` is moved to the run reusing it: not every
night (each update writes the row again: on PostgreSQL a new row version), at the price of a row
in use being pruned up to that many runs early (it is then evaluated and written again)."""


def read_entries(connection: Connection, digests: Iterable[str]) -> dict[str, bytes]:
    """The stored rows of the document ``digests`` that have one, digest -> entries."""
    return _read_blobs(connection, t.result_cache.c.document_digest, t.result_cache.c.entries, digests)


def write_entries(connection: Connection, run_id: int, entries: Mapping[str, bytes],
                  reused: Iterable[str]) -> None:
    """Store ``entries`` (digest -> entries) as written by ``run_id``, and mark the ``reused``
    digests as used by it."""
    if entries:
        connection.execute(_UPSERT, [{"digest": digest, "entries": blob, "run": run_id}
                                     for digest, blob in entries.items()])
    digests = sorted(set(reused))
    for start in range(0, len(digests), CHUNK):
        connection.execute(_TOUCH, {"run": run_id, "stale": run_id - TOUCH_AFTER,
                                    "digests": digests[start:start + CHUNK]})


def read_shard_outputs(connection: Connection, keys: Iterable[str]) -> dict[str, bytes]:
    """The stored outputs of the shard ``keys`` that have one, key -> output."""
    return _read_blobs(connection, t.shard_cache.c.shard_key, t.shard_cache.c.output, keys)


def _read_blobs(connection: Connection, key: Column[Any], value: Column[Any], keys: Iterable[str]) -> dict[str, bytes]:
    """``value`` of the rows whose ``key`` is one of ``keys``, key -> value, read in chunks."""
    wanted, found = sorted(set(keys)), dict[str, bytes]()
    for start in range(0, len(wanted), CHUNK):
        rows = connection.execute(select(key, value).where(key.in_(wanted[start:start + CHUNK])))
        found.update((name, bytes(blob)) for name, blob in rows)
    return found


def write_shard_outputs(connection: Connection, run_id: int, outputs: Mapping[str, bytes],
                        replayed: Iterable[str]) -> None:
    """Store shard ``outputs`` (key -> output) made by ``run_id``; mark the ``replayed`` keys used by it."""
    if outputs:
        connection.execute(_SHARD_UPSERT, [{"key": key, "output": blob, "run": run_id}
                                           for key, blob in outputs.items()])
    keys = sorted(set(replayed))
    for start in range(0, len(keys), CHUNK):
        connection.execute(_SHARD_TOUCH, {"run": run_id, "stale": run_id - TOUCH_AFTER,
                                          "keys": keys[start:start + CHUNK]})


def prune_entries(connection: Connection) -> int:
    """Delete the rows of both caches no remaining run wrote or reused (all of them when no run
    is left); returns how many went."""
    return sum(connection.execute(statement, {"none": 2**31 - 1}).rowcount for statement in _PRUNE)
