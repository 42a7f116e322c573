"""Rows shared by the runs that found the same: observations with their results, and tallies.

A run's observations (with their results) and its tallies are the rows whose ids its blocks
mark (``run_observation_blocks``, ``run_tally_blocks``): a block is 32 consecutive ids
(``block`` = id >> 5) and a 32-bit mask of those the run has (``bits``). A run that finds what
the run before it found marks that run's rows instead of storing a copy of them, so an
unchanged night adds a row per 32 resources, however little changed. The views
``resource_observations``, ``results`` and ``run_tallies`` give every query the rows of each
run as if each run had its own; a row's block is found by equality from either side (the run's
rows, or the runs of a row), so both ways of reading cost index look-ups.

A row is reused only from the source's last completed run (``sources.findings_run_id``), and
only when nothing stored in it or its results differs (``observation_digest``): a shared row
is never written again. Rows that no run's block marks any more are deleted by retention
(``delete_unreferenced``) and by the discarding of a failed run (``discard_runs``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from typing import Any

import orjson
from sqlalchemy import Connection, bindparam, text

from scanner.store.bulk import allocate_ids, chunks, copy_rows, stored_rows

BLOCK_BITS = 5
"""A block holds ``2 ** BLOCK_BITS`` ids: its mask fits 32 bits on every backend."""

BLOCK_TABLES = {"run_observation_blocks": (("observation_rows", "observation_id"), ("result_rows", "observation_id")),
                "run_tally_blocks": (("tally_rows", "tally_id"),)}
"""Each blocks table, and the tables (with their id column) whose rows its blocks mark."""

TALLY_COLUMNS = ("tally_id", "source_id", "check_id", "namespace", "status", "policy_id", "count")


def id_blocks(ids: Iterable[int]) -> dict[int, int]:
    """The ids as blocks: block -> mask of the ids in it."""
    blocks: dict[int, int] = {}
    for value in ids:
        block = value >> BLOCK_BITS
        blocks[block] = blocks.get(block, 0) | 1 << (value & ((1 << BLOCK_BITS) - 1))
    return blocks


def block_ids(blocks: dict[int, int]) -> list[int]:
    """The ids the blocks mark, in order."""
    size = 1 << BLOCK_BITS
    return [block * size + bit for block in sorted(blocks) if blocks[block]
            for bit in range(size) if blocks[block] >> bit & 1]


def id_ranges(ids: Iterable[int]) -> list[tuple[int, int]]:
    """The ids as the fewest (first, last) ranges that cover exactly them, in order."""
    ranges: list[tuple[int, int]] = []
    for value in sorted(set(ids)):
        if ranges and value == ranges[-1][1] + 1:
            ranges[-1] = (ranges[-1][0], value)
        else:
            ranges.append((value, value))
    return ranges


_MARK = {table: text(f"INSERT INTO {table} (run_id, block, bits) VALUES (:run, :block, :bits) "
                     f"ON CONFLICT (run_id, block) DO UPDATE SET bits = {table}.bits | excluded.bits")
         for table in BLOCK_TABLES}


def add_ids(connection: Connection, table: str, run_id: int, ids: Iterable[int]) -> None:
    """Make the rows ``ids`` the run's, in blocks table ``table`` (added to the blocks it has)."""
    rows = [{"run": run_id, "block": block, "bits": bits} for block, bits in id_blocks(ids).items()]
    for part in chunks(rows):
        connection.execute(_MARK[table], list(part))


def observation_digest(content: Sequence[Any]) -> str:
    """The digest that says two observations (their stored values and results) are the same."""
    return hashlib.blake2b(orjson.dumps(content), digest_size=20).hexdigest()


def marked(block: str, row_id: str) -> str:
    """SQL: ``row_id`` is one of the ids block row ``block`` marks (its block found by equality)."""
    return (f"{block}.block = ({row_id} >> {BLOCK_BITS}) "
            f"AND (({block}.bits >> CAST({row_id} & {(1 << BLOCK_BITS) - 1} AS INTEGER)) & 1) = 1")


# (CROSS JOIN: SQLite joins in this order, block by block, whatever it guesses of the sizes)
_PREVIOUS_OBSERVATIONS = text(f"""
SELECT o.content_digest, o.observation_id
FROM run_observation_blocks m CROSS JOIN observation_rows o CROSS JOIN resources r
WHERE o.observation_id BETWEEN m.block * {1 << BLOCK_BITS} AND m.block * {1 << BLOCK_BITS} + {(1 << BLOCK_BITS) - 1}
  AND {marked("m", "o.observation_id")} AND r.resource_id = o.resource_id
  AND m.run_id = (SELECT findings_run_id FROM sources WHERE source_id = :source)
  AND r.source_id = :source AND o.content_digest IS NOT NULL
""")


def previous_observations(connection: Connection, source_id: int) -> dict[str, int]:
    """The observations of the source's last completed run that may be reused, digest -> id."""
    return dict(connection.execute(_PREVIOUS_OBSERVATIONS, {"source": source_id}).all())


_PREVIOUS_TALLIES = text(f"""
SELECT x.tally_id, x.source_id, x.check_id, x.namespace, x.status, x.policy_id, x.count
FROM run_tally_blocks m CROSS JOIN tally_rows x
WHERE x.tally_id BETWEEN m.block * {1 << BLOCK_BITS} AND m.block * {1 << BLOCK_BITS} + {(1 << BLOCK_BITS) - 1}
  AND {marked("m", "x.tally_id")} AND m.run_id = :previous AND x.source_id = :source
""")


def store_tallies(connection: Connection, run_id: int, tallies: list[tuple[Any, ...]]) -> None:
    """The run's tallies (rows of ``finish.TALLY_COLUMNS``): those its sources'
    last completed runs counted the same are reused, the others written."""
    by_source: dict[int, list[tuple[Any, ...]]] = {}
    for row in stored_rows("tally_rows", TALLY_COLUMNS[1:], [row[1:] for row in tallies]):
        by_source.setdefault(row[0], []).append(tuple(row))
    ids: list[int] = []
    new: list[tuple[Any, ...]] = []
    for source_id, rows in by_source.items():
        previous = connection.execute(text("SELECT findings_run_id FROM sources WHERE source_id = :source"),
                                      {"source": source_id}).scalar()
        known: dict[tuple[Any, ...], int] = {}
        if previous is not None:
            for tally_id, *content in connection.execute(_PREVIOUS_TALLIES,
                                                         {"previous": previous, "source": source_id}):
                known[tuple(content)] = tally_id
        for row in rows:
            found = known.pop(row, None)
            if found is None:
                new.append(row)
            else:
                ids.append(found)
    allocated = allocate_ids(connection, "tally_rows", "tally_id", len(new))
    copy_rows(connection, "tally_rows", TALLY_COLUMNS, [(i, *row) for i, row in zip(allocated, new, strict=True)],
              escaped=True)
    add_ids(connection, "run_tally_blocks", run_id, ids + allocated)


def _masks(connection: Connection, table: str, runs: Sequence[int], *, of_them: bool) -> dict[int, int]:
    """The blocks of the runs ``runs`` (or, not ``of_them``, of every other run), OR-ed: block ->
    mask of the ids one of them has."""
    masks: dict[int, int] = {}
    query = text(f"SELECT block, bits FROM {table} WHERE run_id {'IN' if of_them else 'NOT IN'} :runs")
    for block, bits in connection.execute(query.bindparams(bindparam("runs", expanding=True)), {"runs": list(runs)}):
        masks[block] = masks.get(block, 0) | bits
    return masks


def _delete(connection: Connection, table: str, ids: list[int]) -> int:
    """Delete the rows of the ids ``ids`` from the tables ``table`` marks; returns how many result
    rows went."""
    deleted = 0
    for rows, column in BLOCK_TABLES[table]:
        statement = text(f"DELETE FROM {rows} WHERE {column} BETWEEN :first AND :last")
        for first, last in id_ranges(ids):
            count = connection.execute(statement, {"first": first, "last": last}).rowcount
            deleted += count if rows == "result_rows" else 0
    return deleted


def discard_runs(connection: Connection, run_ids: Sequence[int]) -> int:
    """Delete the blocks of the runs ``run_ids``, and the rows no other run's block marks;
    returns how many result rows went."""
    if not run_ids:
        return 0
    deleted = 0
    params = {"runs": list(run_ids)}
    for table in BLOCK_TABLES:
        theirs = _masks(connection, table, run_ids, of_them=True)
        if not theirs:
            continue
        others = _masks(connection, table, run_ids, of_them=False)
        alone = {block: bits & ~others.get(block, 0) for block, bits in theirs.items()}
        deleted += _delete(connection, table, block_ids(alone))
        connection.execute(text(f"DELETE FROM {table} WHERE run_id IN :runs").bindparams(
            bindparam("runs", expanding=True)), params)
    return deleted


def delete_unreferenced(connection: Connection) -> None:
    """Delete the shared rows no run's block marks (retention, once no scan is running: a running
    scan's rows are marked by the blocks it writes with them)."""
    size = 1 << BLOCK_BITS
    for table, targets in BLOCK_TABLES.items():
        covered = _masks(connection, table, (), of_them=False)
        rows, column = targets[0]
        top = connection.execute(text(f"SELECT MAX({column}) FROM {rows}")).scalar()
        if top is None:
            continue
        unmarked = {block: ~covered.get(block, 0) & (1 << size) - 1 for block in range((top >> BLOCK_BITS) + 1)}
        _delete(connection, table, block_ids(unmarked))
