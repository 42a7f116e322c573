"""Checking the hash chain of runs against the stored rows (``scanner runs verify``).

The chain is walked from its start (the anchor left by retention, or the beginning), or from
a given run, taking that run's predecessor's link as given. Each run's content is digested
again from its rows and compared with its record part by part, and each link is checked
against the one before: the first run whose content or link no longer matches is named, with
what changed (a run whose rows retention deleted is checked by its link only). A run deleted
from the middle is named by the link of the run after it (or by its own record, when only its
rows are gone). Completed runs that are not in the chain at all (added to the database
afterwards) are named too.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Connection, select

from scanner.errors import StoreError
from scanner.store import tables as t
from scanner.store.chain import (
    PARTS,
    ChainAnchor,
    ChainLink,
    chain_digest,
    content_digest,
    content_parts,
    read_anchor,
    read_links,
)
from scanner.store.records import COMPLETED_STATUSES


@dataclass(frozen=True, slots=True)
class ChainBreak:
    """The first run whose stored content or link no longer matches its chain record.

    ``problem`` is ``changed`` (its content: ``parts`` names what), ``deleted`` (its rows or its
    record are gone), ``link`` (its record does not follow the one before) or ``unchained``
    (a finished run with no record)."""

    run_id: int
    problem: str
    parts: tuple[str, ...]
    detail: str


@dataclass(frozen=True, slots=True)
class ChainVerdict:
    """What verifying the chain found: the runs checked, the head digest, the first break."""

    checked: int
    first_run_id: int | None
    last_run_id: int | None
    head_digest: str
    anchor: ChainAnchor
    broken: ChainBreak | None

    @property
    def ok(self) -> bool:
        return self.broken is None


def verify_chain(connection: Connection, from_run: int | None = None) -> ChainVerdict:
    """Recompute the chain from the stored rows (from ``from_run`` on, when given)."""
    links = read_links(connection)
    anchor = read_anchor(connection)
    previous = anchor
    start = 0
    if from_run is not None:
        start = max((i for i, link in enumerate(links) if link.run_id == from_run), default=-1)
        if start < 0:
            raise StoreError(f"run {from_run} is not in the chain of runs (only finished runs are; "
                             "`scanner runs list` shows them)")
        if start > 0:
            before = links[start - 1]
            previous = ChainAnchor(before.run_id, before.position, before.chain_digest)
    checked = 0
    broken = None
    for link in links[start:]:
        broken = _check(connection, previous, link)
        if broken is not None:
            break
        checked += 1
        previous = ChainAnchor(link.run_id, link.position, link.chain_digest)
    if broken is None and from_run is None:
        broken = _unchained(connection, {link.run_id for link in links})
    walked = links[start:start + checked]
    return ChainVerdict(checked=checked, first_run_id=walked[0].run_id if walked else None,
                        last_run_id=walked[-1].run_id if walked else None,
                        head_digest=previous.chain_digest, anchor=anchor, broken=broken)


def _check(connection: Connection, previous: ChainAnchor, link: ChainLink) -> ChainBreak | None:
    if link.previous_run_id != previous.run_id:
        after = "the start of the chain" if previous.run_id is None else f"run {previous.run_id}"
        if link.previous_run_id is not None:
            return ChainBreak(link.previous_run_id, "deleted", (),
                              f"run {link.previous_run_id} is gone from the chain: run {link.run_id} "
                              f"follows it, but the chain goes from {after} to run {link.run_id}")
        return ChainBreak(link.run_id, "link", (), f"run {link.run_id} claims to start the chain, "
                          f"but follows {after}")
    if link.position != previous.position + 1:
        return ChainBreak(link.run_id, "link", (), f"run {link.run_id} is at position {link.position}, "
                          f"but the run before it at {previous.position}")
    parts = None if link.pruned else content_parts(connection, link.run_id)
    if parts is None and not link.pruned:
        return ChainBreak(link.run_id, "deleted", (), f"run {link.run_id} is in the chain but its rows "
                          "are gone from the database")
    changed = () if parts is None else tuple(name for name in PARTS if parts[name] != link.parts.get(name))
    if changed:
        return ChainBreak(link.run_id, "changed", changed,
                          f"run {link.run_id}: its stored {_names(changed)} no longer match what was recorded "
                          "when it finished")
    if content_digest(link.parts, link.version) != link.content_digest:
        return ChainBreak(link.run_id, "changed", (), f"run {link.run_id}: its recorded content digest does not "
                          "match its recorded parts")
    expected = chain_digest(previous.chain_digest, link.run_id, link.position, link.content_digest, link.version)
    if expected != link.chain_digest:
        return ChainBreak(link.run_id, "link", (), f"run {link.run_id}: its chain digest does not follow from "
                          "the run before it")
    return None


def _unchained(connection: Connection, chained: set[int]) -> ChainBreak | None:
    """The first completed run with no link (every one is linked when it finishes)."""
    query = select(t.runs.c.run_id).where(t.runs.c.status.in_([s.value for s in COMPLETED_STATUSES]))
    for run_id in connection.execute(query.order_by(t.runs.c.run_id)).scalars():
        if run_id not in chained:
            return ChainBreak(run_id, "unchained", (), f"run {run_id} is a completed run that is not in the "
                              "chain: it was not recorded when it finished")
    return None


def _names(parts: tuple[str, ...]) -> str:
    words = {"run": "run header (status, times, counts)"}
    named = [words.get(part, part) for part in parts]
    return named[0] if len(named) == 1 else ", ".join(named[:-1]) + " and " + named[-1]
