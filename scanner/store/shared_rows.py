"""Rows shared by the runs that found the same: observations with their results, and tallies.

A run's observations (with their results) and its tallies are the rows whose ids its ranges
cover (``run_observation_ranges``, ``run_tally_ranges``): a run that finds what the run before
it found stores ranges over that run's rows instead of a copy of them, so an unchanged night
adds a few rows, however large the estate. The views ``resource_observations``, ``results``
and ``run_tallies`` give every query the rows of each run as if each run had its own.

A row is reused only from the source's last completed run (``sources.findings_run_id``), and
only when nothing stored in it or its results differs (``observation_digest``): a shared row
is never written again. Rows that no run's range covers any more are deleted by retention
(``delete_unreferenced``) and by the discarding of a failed run (``discard_runs``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from typing import Any

import orjson
from sqlalchemy import Connection, bindparam, text

from scanner.store.bulk import allocate_ids, copy_rows, stored_rows

RANGE_TABLES = {"run_observation_ranges": (("observation_rows", "observation_id"), ("result_rows", "observation_id")),
                "run_tally_ranges": (("tally_rows", "tally_id"),)}
"""Each ranges table, and the tables (with their id column) whose rows its ranges cover."""

TALLY_COLUMNS = ("tally_id", "source_id", "check_id", "namespace", "status", "policy_id", "count")


def id_ranges(ids: Iterable[int]) -> list[tuple[int, int]]:
    """The ids as the fewest (first, last) ranges that cover exactly them, in order."""
    ranges: list[tuple[int, int]] = []
    first = last = None
    for value in sorted(set(ids)):
        if last is not None and value == last + 1:
            last = value
            continue
        if first is not None and last is not None:
            ranges.append((first, last))
        first = last = value
    if first is not None and last is not None:
        ranges.append((first, last))
    return ranges


def add_ranges(connection: Connection, table: str, run_id: int, ids: Iterable[int]) -> None:
    """Make the rows ``ids`` (none of them the run's yet) the run's, in ranges table ``table``."""
    rows = [(run_id, first, last) for first, last in id_ranges(ids)]
    copy_rows(connection, table, ("run_id", "first_id", "last_id"), rows)


def merge_ranges(connection: Connection, table: str, run_id: int) -> None:
    """Store the run's ranges as the fewest ranges that cover the same ids (a run's rows are
    written in batches, each with ranges of its own: adjacent ones join)."""
    stored = connection.execute(text(f"SELECT first_id, last_id FROM {table} WHERE run_id = :run "
                                     "ORDER BY first_id"), {"run": run_id}).all()
    merged: list[tuple[int, int]] = []
    for first, last in stored:
        if merged and merged[-1][1] + 1 == first:
            merged[-1] = (merged[-1][0], last)
        else:
            merged.append((first, last))
    if len(merged) < len(stored):
        connection.execute(text(f"DELETE FROM {table} WHERE run_id = :run"), {"run": run_id})
        copy_rows(connection, table, ("run_id", "first_id", "last_id"), [(run_id, *r) for r in merged])


def observation_digest(content: Sequence[Any]) -> str:
    """The digest that says two observations (their stored values and results) are the same."""
    return hashlib.blake2b(orjson.dumps(content), digest_size=20).hexdigest()


# (CROSS JOIN: SQLite joins in this order, range by range, whatever it guesses of the sizes)
_PREVIOUS_OBSERVATIONS = text("""
SELECT o.content_digest, o.observation_id
FROM run_observation_ranges m CROSS JOIN observation_rows o CROSS JOIN resources r
WHERE o.observation_id BETWEEN m.first_id AND m.last_id AND r.resource_id = o.resource_id
  AND m.run_id = (SELECT findings_run_id FROM sources WHERE source_id = :source)
  AND r.source_id = :source AND o.content_digest IS NOT NULL
""")


def previous_observations(connection: Connection, source_id: int) -> dict[str, int]:
    """The observations of the source's last completed run that may be reused, digest -> id."""
    return dict(connection.execute(_PREVIOUS_OBSERVATIONS, {"source": source_id}).all())


_PREVIOUS_TALLIES = text("""
SELECT x.tally_id, x.source_id, x.check_id, x.namespace, x.status, x.policy_id, x.count
FROM run_tally_ranges m CROSS JOIN tally_rows x
WHERE x.tally_id BETWEEN m.first_id AND m.last_id AND m.run_id = :previous AND x.source_id = :source
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
    add_ranges(connection, "run_tally_ranges", run_id, ids + allocated)


def _union(connection: Connection, table: str, *, excluding: Sequence[int] = ()) -> list[tuple[int, int]]:
    """The ids the ranges in ``table`` cover (but those of the runs ``excluding``), as ranges."""
    query = text(f"SELECT first_id, last_id FROM {table} WHERE run_id NOT IN :runs ORDER BY first_id")
    union: list[tuple[int, int]] = []
    for first, last in connection.execute(query.bindparams(bindparam("runs", expanding=True)),
                                          {"runs": list(excluding)}):
        if union and first <= union[-1][1] + 1:
            union[-1] = (union[-1][0], max(union[-1][1], last))
        else:
            union.append((first, last))
    return union


def _gaps(covered: list[tuple[int, int]], within: tuple[int, int]) -> list[tuple[int, int]]:
    """The ranges of ids in ``within`` that ``covered`` (ordered, disjoint) leaves out."""
    low, high = within
    gaps = []
    for first, last in covered:
        if last < low:
            continue
        if first > high:
            break
        if first > low:
            gaps.append((low, first - 1))
        low = max(low, last + 1)
    if low <= high:
        gaps.append((low, high))
    return gaps


def _delete(connection: Connection, table: str, gaps: list[tuple[int, int]]) -> int:
    """Delete the rows of ``table`` whose ids fall in ``gaps``; returns how many went."""
    deleted = 0
    for rows, column in RANGE_TABLES[table]:
        statement = text(f"DELETE FROM {rows} WHERE {column} BETWEEN :first AND :last")
        for first, last in gaps:
            count = connection.execute(statement, {"first": first, "last": last}).rowcount
            deleted += count if rows == "result_rows" else 0
    return deleted


def discard_runs(connection: Connection, run_ids: Sequence[int]) -> int:
    """Delete the ranges of the runs ``run_ids``, and the rows no other run's range covers;
    returns how many result rows went."""
    if not run_ids:
        return 0
    deleted = 0
    params = {"runs": list(run_ids)}
    for table in RANGE_TABLES:
        theirs = connection.execute(text(f"SELECT first_id, last_id FROM {table} WHERE run_id IN :runs "
                                         "ORDER BY first_id").bindparams(bindparam("runs", expanding=True)),
                                    params).all()
        if not theirs:
            continue
        others = _union(connection, table, excluding=run_ids)
        gaps = [gap for first, last in theirs for gap in _gaps(others, (first, last))]
        deleted += _delete(connection, table, gaps)
        connection.execute(text(f"DELETE FROM {table} WHERE run_id IN :runs").bindparams(
            bindparam("runs", expanding=True)), params)
    return deleted


def delete_unreferenced(connection: Connection) -> None:
    """Delete the shared rows no run's range covers (retention, once no scan is running: a
    running scan's rows are covered by the ranges it writes with them)."""
    for table, targets in RANGE_TABLES.items():
        covered = _union(connection, table)
        rows, column = targets[0]
        top = connection.execute(text(f"SELECT MAX({column}) FROM {rows}")).scalar()
        if top is not None:
            _delete(connection, table, _gaps(covered, (0, top)))
