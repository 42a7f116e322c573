"""The hash chain of finished runs: each run's canonical content digest, linked to the run before.

When a run finishes, its stored rows are read in a fixed order and streamed into SHA-256 in a
versioned canonical form (``CANONICAL_VERSION``), one digest per part:

- ``run``: its id, trigger, status, start and finish times, scanner version, config digest
  and counts;
- ``sources``: each source it saw (id, name, type, URL, ref, commit, commit time, error);
- ``policies``: each policy it evaluated (id, kind, namespace, name, digest, title, category,
  severity, description, failure action, scored);
- ``results``: each result (observation, check, resource, policy, status, action, message,
  path; the policy exceptions that applied are in the skip results' messages), each
  observation of a resource (where: file, document, item, line, commit), the identity of
  each resource (source, apiVersion, kind, namespace, name) and each check (policy kind,
  namespace, name, rule) the results name;
- ``errors``: each error record (source, kind, path, line, message), notices included.

The rows of each statement are one JSON array without its brackets (ASCII, no whitespace),
each row an array, times in ISO 8601 and booleans as 0/1, in the order of their ids; the
rows refer to each other by the ids the database gave them, and each row they refer to is in
the content too. The content digest is the SHA-256 of the version and the part digests; the
chain digest is the SHA-256 of the version, the previous link's chain digest, the run's id,
its position and its content digest. Runs are chained in the order they finish (the chain's
head is locked while a finish links to it). Derived rows (tallies, findings) are not in it.

The form is defined over the stored rows, not a rendered report, so a run recorded under this
version keeps verifying when report formats change; a new form gets a new version number, and
each record says which version digests it.

Retention deletes the links of the runs it deletes from the start of the chain, and keeps the
last of them as the chain's anchor (``chain_anchors``): the first remaining run links to it.
An old run chained after a run that is kept (it finished later) loses its rows but keeps its
link, marked pruned, until the runs before it go too: the chain links through it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial
from typing import Any

import orjson
from sqlalchemy import Connection, Executable, delete, func, insert, select, update

from scanner.store import tables as t
from scanner.store.driver_rows import driver_batches

CANONICAL_VERSION = 1
PARTS = ("run", "sources", "policies", "results", "errors")
"""The parts of a run's canonical content, in the order the content digest takes them."""

GENESIS = ""
"""The chain digest before the first run (and before an anchor exists)."""

STREAM_BATCH = 5_000


@dataclass(frozen=True, slots=True)
class ChainLink:
    """A run's record in the chain: its position, the run it follows, its digests."""

    run_id: int
    position: int
    previous_run_id: int | None
    version: int
    parts: dict[str, str]
    content_digest: str
    chain_digest: str
    pruned: bool = False  # its rows deleted by retention: its content is no longer checked


@dataclass(frozen=True, slots=True)
class ChainAnchor:
    """The last pruned run's link: where the chain starts after retention."""

    run_id: int | None
    position: int
    chain_digest: str


START = ChainAnchor(run_id=None, position=0, chain_digest=GENESIS)


def _plain(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, bool):
        return int(value)
    return value


def _digest_rows(connection: Connection, queries: list[Executable | str], run_id: int) -> str:
    """``sha256:<hex>`` of the rows of ``queries``, streamed: per query, its rows as one JSON
    array without its brackets (ASCII, no whitespace), then a newline. A query given as SQL
    text (with ``:run``) is read through the driver's cursor and holds only strings, integers
    and nulls; a statement's rows may hold times and booleans (written as ISO 8601 and 0/1)."""
    digest = hashlib.sha256()
    for query in queries:
        separator = b""
        for batch in _batches(connection, query, run_id):
            digest.update(separator + ascii_json(batch)[1:-1])
            separator = b","
        digest.update(b"\n")
    return "sha256:" + digest.hexdigest()


def _batches(connection: Connection, query: Executable | str, run_id: int) -> Iterator[Sequence[Any]]:
    if not isinstance(query, str):
        stream = connection.execute(query.execution_options(yield_per=STREAM_BATCH))  # (not the connection's)
        for batch in stream.partitions(STREAM_BATCH):
            yield [[_plain(value) for value in row] for row in batch]
        return
    # the driver's rows as they come (tuples), without a result object per row: a run's results
    # are most of what finishing reads; on PostgreSQL through a server-side cursor (streamed)
    yield from driver_batches(connection, query, run_id, cursor_name="scanner_run_chain")


# What the results part reads besides the results: the run's resource observations, the
# resources they are of (with their source's name) and the checks its results are of (its
# tallies name them, written before the link). The results themselves are read in the order
# of their key (from the view of the rows the run shares with others: revision 0009 reads the
# table it was before revision 0011 with this statement too).
_RESULTS = """
SELECT r.observation_id, r.check_id, r.resource_id, r.policy_id, r.status, r.action, r.message, r.path
FROM results r WHERE r.run_id = :run
ORDER BY r.observation_id, r.check_id
"""
_OBSERVATIONS = """
SELECT observation_id, resource_id, path, document_index, item_index, line, commit_sha
FROM resource_observations WHERE run_id = :run ORDER BY observation_id
"""
_RESOURCES = """
SELECT r.resource_id, s.source_id, s.name, r.api_version, r.kind, r.namespace, r.name
FROM resources r JOIN sources s ON s.source_id = r.source_id
WHERE r.resource_id IN (SELECT resource_id FROM resource_observations WHERE run_id = :run)
ORDER BY r.resource_id
"""
_CHECKS = """
SELECT check_id, policy_kind, policy_namespace, policy_name, rule, declared_rule FROM checks
WHERE check_id IN ({ids}) ORDER BY check_id
"""


class WrittenResults:
    """The results section of a run's ``results`` part as the run's one writer stores them, so
    that finishing need not read them back: the stored rows of each observation
    (``bulk.RESULT_COLUMNS``, text escaped as stored), kept as their canonical text and hashed in
    key order at the end as ``results_part`` hashes the rows it reads. An observation whose rows
    come in two parts gives it up (``usable``)."""

    __slots__ = ("blocks", "checks", "usable")

    def __init__(self) -> None:
        self.blocks: dict[int, bytes] = {}  # observation id -> its rows' text
        self.checks: set[int] = set()
        self.usable = True

    def add(self, rows: Sequence[Sequence[Any]]) -> None:
        """Stored result rows of the run, committed, each observation's together."""
        if not self.usable or not rows:
            return
        batch = sorted(map(tuple, rows))  # by (observation, check): the results' key, unique
        self.checks.update(row[1] for row in batch)
        blocks, start = self.blocks, 0
        for end in range(1, len(batch) + 1):
            if end == len(batch) or batch[end][0] != batch[start][0]:
                observation = batch[start][0]
                if observation in blocks:
                    self.usable = False
                    return
                blocks[observation] = ascii_json(batch[start:end])[1:-1]
                start = end

    def add_texts(self, texts: dict[int, bytes], checks: set[int]) -> None:
        """Stored result rows of the run, as ``add`` keeps them (observation id -> text)."""
        if not self.usable or not texts:
            return
        if not self.blocks.keys().isdisjoint(texts):
            self.usable = False
            return
        self.blocks.update(texts)
        self.checks.update(checks)

    def digest(self) -> hashlib._Hash:
        """SHA-256 fed with the rows' text, in key order."""
        digest = hashlib.sha256()
        blocks = self.blocks
        digest.update(b",".join([blocks[observation] for observation in sorted(blocks)]))
        return digest


_DUMPS = json.JSONEncoder(separators=(",", ":")).encode


def ascii_json(rows: Sequence[Any]) -> bytes:
    """``rows`` as ``json`` writes them without whitespace, in ASCII (``\\uXXXX`` escapes):
    orjson's bytes where they are that text (ASCII below DEL, which json escapes and orjson
    does not), else json's."""
    try:
        text = orjson.dumps(rows)
    except TypeError:  # (an integer beyond 64 bits, a lone surrogate)
        text = b"\x80"
    if text.isascii() and b"\x7f" not in text:
        return text
    return _DUMPS(rows).encode("ascii")


def results_part(connection: Connection, run_id: int, written: WrittenResults | None = None) -> str:
    """The digest of the run's ``results`` part: its results, and the observations, resources and
    checks they name. It reads committed rows only (the checks are those its results name, not
    its tallies'), so it can be computed beside the transaction that finishes the run. With
    ``written`` (usable), the results are not read: they are hashed as they were written."""
    digest = hashlib.sha256()
    checks: set[int] = set()
    queries: tuple[str | None, ...] = (_RESULTS, _OBSERVATIONS, _RESOURCES, None)
    if written is not None and written.usable:
        digest, checks, queries = written.digest(), set(written.checks), queries[1:]
        digest.update(b"\n")
    for query in queries:
        if query is None:  # the checks named: integers the results gave, written into the statement
            query = _CHECKS.format(ids=",".join(map(str, sorted(checks))) or "NULL")
        separator = b""
        for batch in _batches(connection, query, run_id):
            if query is _RESULTS:
                checks.update(row[1] for row in batch)
            digest.update(separator + ascii_json(batch)[1:-1])
            separator = b","
        digest.update(b"\n")
    return "sha256:" + digest.hexdigest()


def _queries(connection: Connection, run_id: int) -> dict[str, list[Executable | str]]:
    """The statements that read each part of the run's canonical content (version 1)."""
    r, rs, s, p, rp, e = t.runs, t.run_sources, t.sources, t.policies, t.run_policies, t.scan_errors
    return {
        "run": [select(r.c.run_id, r.c.trigger, r.c.status, r.c.started_at, r.c.finished_at,
                       r.c.scanner_version, r.c.config_digest, r.c.resource_count, r.c.result_count,
                       r.c.pass_count, r.c.fail_count, r.c.warn_count, r.c.error_count, r.c.skip_count,
                       r.c.error_record_count).where(r.c.run_id == run_id)],
        "sources": [select(s.c.source_id, s.c.name, s.c.type, rs.c.url, rs.c.ref, rs.c.commit_sha, rs.c.commit_at,
                           rs.c.error)
                    .join(s, s.c.source_id == rs.c.source_id).where(rs.c.run_id == run_id)
                    .order_by(s.c.source_id)],
        "policies": [select(p.c.policy_id, p.c.kind, p.c.namespace, p.c.name, p.c.digest, p.c.title, p.c.category,
                            p.c.severity, p.c.description, p.c.failure_action, p.c.scored)
                     .join(p, p.c.policy_id == rp.c.policy_id).where(rp.c.run_id == run_id)
                     .order_by(p.c.policy_id)],
        "results": [],  # (``results_part``)
        "errors": [select(e.c.error_id, e.c.source_id, e.c.kind, e.c.path, e.c.line, e.c.message)
                   .where(e.c.run_id == run_id).order_by(e.c.error_id)],
    }


def content_parts(connection: Connection, run_id: int) -> dict[str, str] | None:
    """The digest of each part of the run's stored content; None when the run has no row."""
    if connection.execute(select(t.runs.c.run_id).where(t.runs.c.run_id == run_id)).first() is None:
        return None
    return {name: results_part(connection, run_id) if name == "results" else _digest_rows(connection, queries, run_id)
            for name, queries in _queries(connection, run_id).items()}


def _sha(*fields: object) -> str:
    return "sha256:" + hashlib.sha256("\n".join(str(f) for f in fields).encode("utf-8")).hexdigest()


def content_digest(parts: dict[str, str], version: int = CANONICAL_VERSION) -> str:
    """The run's content digest: the version and its part digests, in ``PARTS`` order."""
    return _sha(f"scanner-run-content/v{version}", *(f"{name}:{parts[name]}" for name in PARTS))


def chain_digest(previous: str, run_id: int, position: int, content: str,
                 version: int = CANONICAL_VERSION) -> str:
    """The link's digest: the previous link's, the run's id and position, its content digest."""
    return _sha(f"scanner-run-chain/v{version}", previous, run_id, position, content)


def _link(row: Any) -> ChainLink:
    return ChainLink(run_id=row.run_id, position=row.position, previous_run_id=row.previous_run_id,
                     version=row.version, parts={name: getattr(row, f"{name}_digest") for name in PARTS},
                     content_digest=row.content_digest, chain_digest=row.chain_digest,
                     pruned=row.pruned_at is not None)


def read_links(connection: Connection) -> list[ChainLink]:
    """Every link of the chain, in chain order."""
    return [_link(row) for row in connection.execute(select(t.run_chain).order_by(t.run_chain.c.position))]


def find_link(connection: Connection, run_id: int) -> ChainLink | None:
    row = connection.execute(select(t.run_chain).where(t.run_chain.c.run_id == run_id)
                             .order_by(t.run_chain.c.position.desc()).limit(1)).first()
    return _link(row) if row is not None else None


def read_anchor(connection: Connection) -> ChainAnchor:
    """The chain's anchor, or ``START`` when no chained run was pruned."""
    row = connection.execute(select(t.chain_anchors).where(t.chain_anchors.c.anchor_id == 1)).first()
    if row is None:
        return START
    return ChainAnchor(run_id=row.run_id, position=row.position, chain_digest=row.chain_digest)


def link_run(connection: Connection, run_id: int, results: Callable[[], str] | None = None) -> ChainLink:
    """Record the run's link at the head of the chain (in the transaction that finishes it).

    The content is read first (``results``, when given, gives the results part's digest,
    computed beside this transaction); the head is then locked (PostgreSQL: the chain table,
    which readers may still read; SQLite: the write transaction already excludes other
    writers), so concurrent finishes link one after the other.
    """
    if connection.execute(select(t.runs.c.run_id).where(t.runs.c.run_id == run_id)).first() is None:
        raise ValueError(f"run {run_id} has no row to chain")
    parts = {name: (results or partial(results_part, connection, run_id))() if name == "results"
             else _digest_rows(connection, queries, run_id) for name, queries in _queries(connection, run_id).items()}
    if connection.dialect.name == "postgresql":
        connection.exec_driver_sql("LOCK TABLE run_chain IN EXCLUSIVE MODE")
    head = connection.execute(select(t.run_chain.c.run_id, t.run_chain.c.position, t.run_chain.c.chain_digest)
                              .order_by(t.run_chain.c.position.desc()).limit(1)).first()
    previous = ChainAnchor(*head) if head is not None else read_anchor(connection)
    content = content_digest(parts)
    position = previous.position + 1
    link = ChainLink(run_id=run_id, position=position, previous_run_id=previous.run_id,
                     version=CANONICAL_VERSION, parts=parts, content_digest=content,
                     chain_digest=chain_digest(previous.chain_digest, run_id, position, content))
    connection.execute(insert(t.run_chain).values(
        run_id=run_id, position=position, previous_run_id=previous.run_id, version=CANONICAL_VERSION,
        content_digest=content, chain_digest=link.chain_digest,
        **{f"{name}_digest": digest for name, digest in parts.items()}))
    return link


def retire(connection: Connection, old: Sequence[int]) -> None:
    """Before retention deletes the ``old`` runs: the links of the chain's first runs, as far as
    every one is old (or pruned already), are deleted and the last of them kept as the chain's
    anchor; the links of the other old runs (chained after a run that is kept) stay, marked
    pruned, so the chain still links through them."""
    wanted = set(old)
    links = connection.execute(select(t.run_chain.c.run_id, t.run_chain.c.position, t.run_chain.c.chain_digest,
                                      t.run_chain.c.pruned_at).order_by(t.run_chain.c.position)).all()
    prefix = 0
    while prefix < len(links) and (links[prefix].run_id in wanted or links[prefix].pruned_at is not None):
        prefix += 1
    now = datetime.now(UTC)
    if prefix:
        last = links[prefix - 1]
        connection.execute(delete(t.chain_anchors))
        connection.execute(insert(t.chain_anchors).values(anchor_id=1, run_id=last.run_id, position=last.position,
                                                          chain_digest=last.chain_digest, pruned_at=now))
    gone = [link.position for link in links[:prefix]]
    marked = [link.position for link in links[prefix:] if link.run_id in wanted and link.pruned_at is None]
    for start in range(0, max(len(gone), len(marked)), 500):
        if gone[start:start + 500]:
            connection.execute(delete(t.run_chain).where(t.run_chain.c.position.in_(gone[start:start + 500])))
        if marked[start:start + 500]:
            connection.execute(update(t.run_chain).where(t.run_chain.c.position.in_(marked[start:start + 500]))
                               .values(pruned_at=now))


def chain_length(connection: Connection) -> int:
    return connection.execute(select(func.count()).select_from(t.run_chain)).scalar_one()
