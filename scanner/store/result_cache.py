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

_CACHES = {"result_cache": ("document_digest", "entries"), "shard_cache": ("shard_key", "output")}
_UPSERT = {table: text(f"INSERT INTO {table} ({key}, {value}, last_run_id) VALUES (:key, :value, :run) "
                       f"ON CONFLICT ({key}) DO UPDATE SET {value} = excluded.{value}, "
                       "last_run_id = excluded.last_run_id")
           for table, (key, value) in _CACHES.items()}
_TOUCH = {table: text(f"UPDATE {table} SET last_run_id = :run WHERE {key} IN :keys AND last_run_id < :stale")
          .bindparams(bindparam("keys", expanding=True)) for table, (key, _) in _CACHES.items()}

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
    _write(connection, "result_cache", run_id, entries, reused)


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


_SLOT = text("UPDATE shard_cache SET slot = :slot WHERE shard_key = :key")
_REPLACED = text("DELETE FROM shard_cache WHERE slot = :slot AND shard_key <> :key")


def write_shard_outputs(connection: Connection, run_id: int, outputs: Mapping[str, tuple[str, bytes]],
                        replayed: Iterable[str]) -> None:
    """Store shard ``outputs`` (key -> (slot, output)) made by ``run_id``, each in place of the
    output stored for its slot before (a shard whose inputs changed is not read under its old key
    again, but when they change back); mark the ``replayed`` keys used by it."""
    _write(connection, "shard_cache", run_id, {key: blob for key, (_, blob) in outputs.items()}, replayed)
    if outputs:
        slots = [{"key": key, "slot": slot} for key, (slot, _) in outputs.items()]
        connection.execute(_SLOT, slots)
        connection.execute(_REPLACED, slots)


def _write(connection: Connection, table: str, run_id: int, values: Mapping[str, bytes], used: Iterable[str]) -> None:
    """Upsert ``values`` (key -> blob) into cache ``table`` as ``run_id``'s; move the ``used`` keys
    to ``run_id`` where their mark is older than ``TOUCH_AFTER`` runs."""
    if values:
        connection.execute(_UPSERT[table], [{"key": key, "value": blob, "run": run_id} for key, blob in values.items()])
    keys = sorted(set(used))
    for start in range(0, len(keys), CHUNK):
        connection.execute(_TOUCH[table], {"run": run_id, "stale": run_id - TOUCH_AFTER,
                                           "keys": keys[start:start + CHUNK]})


def prune_entries(connection: Connection) -> int:
    """Delete the rows of both caches no remaining run wrote or reused (all of them when no run
    is left); returns how many went."""
    return sum(connection.execute(statement, {"none": 2**31 - 1}).rowcount for statement in _PRUNE)
