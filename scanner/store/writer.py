"""Writing one run: sources, policies, resources, results streamed in batches, errors.

Rows are committed batch by batch (short transactions, so concurrent writers interleave),
but readers only see runs whose status is completed; ``finish`` tallies the run, updates
the finding lifecycles and flips the status in one transaction.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from functools import partial
from itertools import islice
from operator import itemgetter
from types import TracebackType
from typing import Any

import orjson
from sqlalchemy import Connection, Engine, select, update
from sqlalchemy.engine import URL

from scanner.errors import StoreError
from scanner.store import bulk
from scanner.store import tables as t
from scanner.store.chain import WrittenResults, results_part
from scanner.store.connect import translate_errors, write_connection
from scanner.store.finish import finish_run
from scanner.store.liveness import reclaim, run_heartbeat, utc_now
from scanner.store.observations import RunObservations
from scanner.store.records import (
    ErrorRecord,
    FailureAction,
    PolicyRecord,
    ResourceRecord,
    ResultRecord,
    ResultRow,
    RunStatus,
    SourceRecord,
    StoredFootprint,
    result_rows,
)
from scanner.store.result_cache import write_entries, write_shard_outputs

DEFAULT_BATCH = 10_000
# where the tallies read a written result row
_CHECK_ID, _RESOURCE_ID, _POLICY_ID, _STATUS = (
    bulk.RESULT_COLUMNS.index(name) for name in ("check_id", "resource_id", "policy_id", "status"))
_RESOURCE, _CHECK, _STATUS_OF = itemgetter(_RESOURCE_ID), itemgetter(_CHECK_ID), itemgetter(_STATUS)
_CHECK_POLICY = itemgetter(_CHECK_ID, _POLICY_ID)


class RunWriter:
    """Writes one run; use as a context manager and end it with ``finish``.

    Leaving the ``with`` block by an exception ends the run ``failed`` (``interrupted`` for
    KeyboardInterrupt/SystemExit); leaving it normally without ``finish`` finishes it with
    the status its sources imply. A ``sole`` writer (the one ``Store.begin_run`` gives) writes
    every result of its run: it hashes them for the run's chain link as it writes them.
    """

    def __init__(self, engine: Engine, url: URL, run_id: int, *, batch_size: int,
                 heartbeat_interval: float, sole: bool = False) -> None:
        self.run_id = run_id
        self._engine = engine
        self._url = url
        self._batch_size = batch_size
        self._sources: dict[str, int] = {}
        self._source_errors: dict[str, bool] = {}
        self._policies: dict[str, tuple[int, PolicyRecord]] = {}
        self._checks: dict[tuple[str, str], int] = {}
        self._commits: dict[str, str] = {}  # source name -> the commit the run saw of it
        self._seen = RunObservations(run_id, self._sources, self._commits, self._source_id)
        # the run's tallies as its results are written, (source_id, namespace, check_id,
        # status) -> count, and the policy of each check (one version per run); for ``finish``
        self._tallies: Counter[tuple[int, str, int, str]] = Counter()
        self._check_policies: dict[int, int] = {}
        self._status: RunStatus | None = None
        self._pinned: Connection | None = None
        self._written: WrittenResults | None = WrittenResults() if sole else None
        self._beater = run_heartbeat(engine, run_id, heartbeat_interval)

    @classmethod
    def attach(cls, engine: Engine, url: URL, run_id: int, *, batch_size: int = DEFAULT_BATCH) -> RunWriter:
        """A writer adding to a run begun elsewhere (by another process or machine), with the
        sources and policies stored for it; it beats no heartbeat and does not finish the run."""
        writer = cls(engine, url, run_id, batch_size=batch_size, heartbeat_interval=3600.0)
        writer._beater.stop()
        with translate_errors(url, f"run {run_id}: attach"), engine.connect() as connection:
            for name, source_id, error, commit in connection.execute(
                    select(t.sources.c.name, t.sources.c.source_id, t.run_sources.c.error, t.run_sources.c.commit_sha)
                    .join(t.run_sources, t.run_sources.c.source_id == t.sources.c.source_id)
                    .where(t.run_sources.c.run_id == run_id)):
                writer._sources[name] = source_id
                writer._source_errors[name] = bool(error)
                writer._commits[name] = commit
            p = t.policies.c
            for row in connection.execute(
                    select(p.policy_id, p.kind, p.name, p.digest, p.namespace, p.title, p.category, p.severity,
                           p.description, p.failure_action, p.scored)
                    .join(t.run_policies, t.run_policies.c.policy_id == p.policy_id)
                    .where(t.run_policies.c.run_id == run_id)):
                record = PolicyRecord(row.kind, row.name, row.digest, row.namespace, row.title, row.category,
                                      row.severity, row.description, FailureAction(row.failure_action), row.scored)
                writer._policies[record.ref] = (row.policy_id, record)
        return writer

    @contextmanager
    def transaction(self, doing: str) -> Iterator[Connection]:
        """One transaction for every write made inside the block: all of them commit, or none
        (the results hashed as written give up: they may roll back)."""
        self._check_open()
        if self._written is not None:
            self._written.usable = False
        with translate_errors(self._url, f"run {self.run_id}: {doing}"), \
                write_connection(self._engine) as connection:
            self._pinned = connection
            try:
                yield connection
            finally:
                self._pinned = None

    @property
    def status(self) -> RunStatus:
        return self._status or RunStatus.RUNNING

    @contextmanager
    def _write(self, doing: str) -> Iterator[Connection]:
        self._check_open()
        if self._pinned is not None:  # inside ``transaction``
            yield self._pinned
            return
        with translate_errors(self._url, f"run {self.run_id}: {doing}"), \
                write_connection(self._engine) as connection:
            yield connection

    def _check_open(self) -> None:
        if self._status is not None:
            raise StoreError(f"run {self.run_id} already ended ({self._status})")

    def add_source(self, record: SourceRecord) -> None:
        """Record what the run saw of a source; calling again updates it (commit, error)."""
        values = {"url": record.url, "ref": record.ref, "commit_sha": record.commit_sha,
                  "commit_at": record.commit_at, "error": record.error}
        with self._write(f"add source {record.name!r}") as connection:
            ids = bulk.ensure_ids(connection, t.sources, t.sources.c.source_id, [t.sources.c.name],
                                  {(record.name,): {"name": record.name, "type": record.type}})
            source_id = ids[(record.name,)]
            connection.execute(update(t.sources).where(t.sources.c.source_id == source_id)
                               .values(type=record.type))
            if record.name in self._sources:
                connection.execute(update(t.run_sources).where(
                    t.run_sources.c.run_id == self.run_id, t.run_sources.c.source_id == source_id)
                    .values(**values))
            else:
                bulk.insert_ignore(connection, t.run_sources, [
                    {"run_id": self.run_id, "source_id": source_id, **values}])
        self._sources[record.name] = source_id
        self._source_errors[record.name] = bool(record.error)
        self._commits[record.name] = record.commit_sha

    def add_policies(self, records: Iterable[PolicyRecord]) -> None:
        """Record the policies evaluated by the run (one version per ``ref``)."""
        wanted: dict[tuple[Any, ...], dict[str, Any]] = {}
        refs: dict[str, PolicyRecord] = {}
        for record in records:
            known = self._policies.get(record.ref) or (None, refs.get(record.ref))
            if known[1] is not None and known[1] != record:
                raise StoreError(f"run {self.run_id}: two different policies named "
                                 f"{record.ref!r} ({known[1].kind}, {record.kind})")
            refs[record.ref] = record
            wanted[(record.kind, record.namespace, record.name, record.digest)] = {
                "kind": record.kind, "namespace": record.namespace, "name": record.name,
                "digest": record.digest, "title": record.title, "category": record.category,
                "severity": record.severity, "description": record.description,
                "failure_action": record.failure_action, "scored": record.scored}
        new = {ref: r for ref, r in refs.items() if ref not in self._policies}
        if not new:
            return
        with self._write("add policies") as connection:
            ids = bulk.ensure_ids(
                connection, t.policies, t.policies.c.policy_id,
                [t.policies.c.kind, t.policies.c.namespace, t.policies.c.name, t.policies.c.digest], wanted)
            for ref, record in new.items():
                key = (record.kind, record.namespace, record.name, record.digest)
                self._policies[ref] = (ids[key], record)
            bulk.insert_ignore(connection, t.run_policies, [
                {"run_id": self.run_id, "policy_id": self._policies[ref][0]} for ref in new])

    def add_resources(self, records: Iterable[ResourceRecord]) -> None:
        """Record resources seen by the run, including those no rule matched."""
        iterator = iter(records)
        while batch := list(islice(iterator, self._batch_size)):
            with self._write("add resources") as connection:
                self._seen.observe(connection, batch)

    def add_result_rows(self, chunks: Iterable[tuple[list[ResourceRecord], list[ResultRow]]], *,
                        whole: bool = False) -> int:
        """Write results in one transaction; returns how many the run has of them.

        Each chunk is a list of resources and the ``ResultRow``s of them (``resource_index``
        an index in that list). ``whole``: each resource comes with all its results, once in the
        run, so that one its source's last completed run found with the same results is not
        stored again: the run shares that run's rows (``scanner.store.shared_rows``).
        """
        chunks = list(chunks)
        rows: list[tuple[Any, ...]] = []  # in bulk.RESULT_COLUMNS order
        with self._write("add results") as connection:
            # the resources and checks of every chunk first: a few statements per call, not per chunk
            self._ensure_checks(connection, {(r.policy, r.rule): r.declared_rule
                                             for _, results in chunks for r in results})
            checks, policies = self._checks, self._policies
            for _, results in chunks:
                for r in results:
                    rows.append((r.resource_index, checks[(r.policy, r.rule)], policies[r.policy][0],
                                 r.status, r.action, r.message, r.path))
            if whole:
                self._seen.observe_whole(connection, chunks, rows)
            else:
                self._seen.observe(connection, [r for resources, _ in chunks for r in resources])
            start = 0
            for resources, results in chunks:
                observations = [self._seen.by_record[r] for r in resources]
                for i in range(start, start + len(results)):
                    index, *outcome = rows[i]
                    observation_id, resource_id = observations[index]
                    rows[i] = (observation_id, outcome[0], resource_id, *outcome[1:])
                start += len(results)
            shared, whole_ids = self._seen.shared, self._seen.whole
            if not whole and whole_ids and any(row[0] in whole_ids for row in rows):
                raise StoreError(f"run {self.run_id}: more results for a resource written with all its results")
            stored = bulk.stored_rows("result_rows", bulk.RESULT_COLUMNS, rows)
            fresh = [row for row in stored if row[0] not in shared] if shared else stored
            bulk.copy_rows(connection, "result_rows", bulk.RESULT_COLUMNS, fresh, escaped=True)
        if self._written is not None:  # (committed: inside ``transaction`` it gave up)
            self._written.add(stored)
        self._count(rows)
        return len(rows)

    def footprint(self, records: list[ResourceRecord]) -> StoredFootprint | None:
        """What the run stored for ``records`` (written whole: ``add_result_rows``), for a later
        run to share (``share_footprint``); None when it cannot: a record not written whole at
        the run's commit of its source, or results not kept as hashed."""
        written = self._written
        observations = self._seen.written_whole(records)
        if written is None or not written.usable or observations is None:
            return None
        blocks = written.blocks
        texts = {observation_id: blocks[observation_id] for observation_id in observations.values()
                 if observation_id in blocks}
        rows = orjson.loads(b"[" + b",".join(texts.values()) + b"]")
        places = map(self._seen.placements.__getitem__, map(_RESOURCE, rows))  # (counted in C)
        tallied = Counter(zip(places, map(_CHECK, rows), map(_STATUS_OF, rows), strict=True))
        tallies = {(*place, check_id, status): count for (place, check_id, status), count in tallied.items()}
        check_policies = dict(map(_CHECK_POLICY, rows))
        return StoredFootprint(observations=observations, texts=texts, checks=set(check_policies),
                               tallies=tallies, check_policies=check_policies)

    def share_footprint(self, source: str, footprint: StoredFootprint) -> bool:
        """Make what an earlier run stored for resources of ``source`` (``footprint``) this run's,
        when they are what its source's last completed run has; False (nothing done) otherwise."""
        with self._write("share observations") as connection:
            if not self._seen.share(connection, self._source_id(source, "a footprint"), footprint.observations):
                return False
        if self._written is not None:
            self._written.add_texts(footprint.texts, footprint.checks)
        self._tallies.update(footprint.tallies)
        self._check_policies.update(footprint.check_policies)
        return True

    def add_results(self, records: Iterable[ResultRecord]) -> int:
        """``add_result_rows`` of result records, a transaction per batch (constant memory);
        returns how many were written."""
        written = 0
        iterator = iter(records)
        while batch := list(islice(iterator, self._batch_size)):
            written += self.add_result_rows([result_rows(batch)])
        return written

    def add_cache_entries(self, entries: Mapping[str, bytes], reused: Iterable[str]) -> None:
        """Store result cache entries (document digest -> entries) made by this run, and mark the
        digests it ``reused`` (``scanner.store.result_cache``)."""
        with self._write("add result cache entries") as connection:
            write_entries(connection, self.run_id, entries, reused)

    def add_shard_outputs(self, outputs: Mapping[str, tuple[str, bytes]], replayed: Iterable[str]) -> None:
        """Store shard outputs (shard key -> (slot, output)) made by this run, and mark the keys it ``replayed``."""
        with self._write("add shard outputs") as connection:
            write_shard_outputs(connection, self.run_id, outputs, replayed)

    def _count(self, rows: list[tuple[Any, ...]]) -> None:
        """Add committed result rows (``bulk.RESULT_COLUMNS``) to the run's tallies."""
        placements = self._seen.placements
        self._tallies.update([(*placements[row[_RESOURCE_ID]], row[_CHECK_ID], row[_STATUS]) for row in rows])
        self._check_policies.update([(row[_CHECK_ID], row[_POLICY_ID]) for row in rows])

    def add_errors(self, records: Iterable[ErrorRecord]) -> None:
        rows = []
        for record in records:
            source_id = None
            if record.source is not None:
                source_id = self._source_id(record.source, "an error")
            rows.append({"run_id": self.run_id, "source_id": source_id, "kind": record.kind,
                         "path": record.path, "line": record.line, "message": record.message})
        if rows:
            with self._write("add errors") as connection:
                for part in bulk.chunks(rows):
                    connection.execute(t.scan_errors.insert(), list(part))

    def finish(self, status: RunStatus | None = None, results: Callable[[], str] | None = None) -> RunStatus:
        """Tally the run, update findings and make it visible; returns the final status.
        ``results`` gives the digest of the run's results for its chain link (``results_digest``,
        computed elsewhere meanwhile), when not read here."""
        self._check_open()
        if status is None:
            errors = list(self._source_errors.values())
            status = RunStatus.SUCCEEDED
            if errors and all(errors):
                status = RunStatus.FAILED
            elif any(errors):
                status = RunStatus.PARTIAL
        if status == RunStatus.RUNNING:
            raise StoreError(f"run {self.run_id}: cannot finish with status running")
        self._beater.stop()
        policies = self._check_policies
        # in the order of their key: each B-tree of the table is then filled from one end
        tallies = sorted((self.run_id, source_id, check_id, namespace, status_value, policies[check_id], count)
                         for (source_id, namespace, check_id, status_value), count in self._tallies.items())
        with self._write(f"finish ({status})") as connection:
            if results is None and self._written is not None and self._written.usable:
                results = partial(results_part, connection, self.run_id, self._written)
            finish_run(connection, self.run_id, RunStatus(status), tallies, results)
        self._status = RunStatus(status)
        return self._status

    def results_digest(self) -> str:
        """The digest of the run's stored results for its chain link, from a connection of its
        own (they are committed before the run finishes)."""
        with translate_errors(self._url, f"run {self.run_id}: read results"), self._engine.connect() as connection:
            return results_part(connection, self.run_id, self._written)

    def can_finish_in_child(self) -> bool:
        """Whether a forked child may finish the run: not a database named by a URI (which may
        be one in memory)."""
        return not self._url.query.get("uri")

    def stop_heartbeat(self) -> None:
        """End the heartbeat's thread (before a fork: no other thread may run at one)."""
        self._check_open()
        self._beater.stop()

    def release_connections(self) -> None:
        """Drop the pooled connections (before a fork: none may cross it; the child opens its
        own, this process its next)."""
        self._engine.dispose()

    def finished_elsewhere(self, status: RunStatus) -> None:
        """The run was finished by a child with ``status``."""
        self._status = status

    def lost(self, how: str) -> StoreError:
        """The error of a child finishing the run that ended as ``how`` says, without a result."""
        return StoreError(f"run {self.run_id}: the process finishing it {how}")

    def _source_id(self, name: str, what: str) -> int:
        try:
            return self._sources[name]
        except KeyError:
            raise StoreError(f"run {self.run_id}: {what} names source {name!r}, which was not "
                             "added with add_source") from None

    def _ensure_checks(self, connection: Connection, rules: dict[tuple[str, str], str]) -> None:
        """Check ids for ``{(policy ref, rule): declared rule}``."""
        wanted: dict[tuple[Any, ...], dict[str, Any]] = {}
        for policy_ref, rule in rules:
            if (policy_ref, rule) in self._checks:
                continue
            policy = self._policy(policy_ref)
            wanted[(policy.kind, policy.namespace, policy.name, rule)] = {
                "policy_kind": policy.kind, "policy_namespace": policy.namespace,
                "policy_name": policy.name, "rule": rule,
                "declared_rule": rules[(policy_ref, rule)] or rule}
        if not wanted:
            return
        ids = bulk.ensure_ids(connection, t.checks, t.checks.c.check_id,
                              [t.checks.c.policy_kind, t.checks.c.policy_namespace, t.checks.c.policy_name,
                               t.checks.c.rule], wanted)
        for policy_ref, rule in rules:
            policy = self._policy(policy_ref)
            key = (policy.kind, policy.namespace, policy.name, rule)
            if key in ids:
                self._checks[(policy_ref, rule)] = ids[key]

    def _policy(self, ref: str) -> PolicyRecord:
        try:
            return self._policies[ref][1]
        except KeyError:
            raise StoreError(f"run {self.run_id}: a result names policy {ref!r}, which was "
                             "not added with add_policies") from None

    def abort(self, status: RunStatus = RunStatus.FAILED) -> None:
        """End the run without making its results count (``failed`` or ``interrupted``)."""
        if self._status is not None:
            return
        self._beater.stop()
        with self._write(f"mark {status}") as connection:
            # not a run that did finish (in a finishing process that was lost before it told)
            marked = connection.execute(update(t.runs)
                                        .where(t.runs.c.run_id == self.run_id, t.runs.c.status == RunStatus.RUNNING)
                                        .values(status=status, finished_at=utc_now())).rowcount
        self._status = status
        if marked:  # what it wrote so far counts for nothing: retries must not grow the database
            reclaim(self._engine, [self.run_id])

    def __enter__(self) -> RunWriter:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._status is not None:
            return
        if exc_type is None:
            self.finish()
            return
        status = (RunStatus.INTERRUPTED
                  if issubclass(exc_type, KeyboardInterrupt | SystemExit | GeneratorExit)
                  else RunStatus.FAILED)
        try:
            self.abort(status)
        except StoreError as failure:
            # The error that ended the run is the one to report; the store's is a note on it
            # (the run stays running until the next scan finds its heartbeat stale).
            if exc is not None:
                exc.add_note(f"run {self.run_id} could not be marked {status}: {failure}")


