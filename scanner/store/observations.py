"""The observations one run's writer stores or shares, and the resource ids behind them."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from sqlalchemy import Connection, select

from scanner.errors import StoreError
from scanner.store import bulk
from scanner.store import tables as t
from scanner.store.records import ResourceRecord, ResultRow
from scanner.store.shared_rows import add_ids, observation_digest, previous_observations


class RunObservations:
    """A run's observations as its writer makes them: each resource record's observation and
    resource ids (``by_record``); where each resource is (``placements``: for the tallies); the
    observations shared with the sources' last completed runs (``shared``) and those written
    with all their results (``whole``)."""

    def __init__(self, run_id: int, sources: dict[str, int], commits: dict[str, str],
                 source_id: Callable[[str, str], int]) -> None:
        self.run_id = run_id
        self.sources = sources  # source name -> id (the writer's, filled as it adds sources)
        self.commits = commits  # source name -> the commit the run saw of it (likewise)
        self.source_id = source_id
        self.resources: dict[tuple[str, str, str, str, str], int] = {}
        self.by_record: dict[ResourceRecord, tuple[int, int]] = {}
        self.placements: dict[int, tuple[int, str]] = {}  # resource_id -> (source_id, namespace)
        # the observations of each source's last completed run this run may reuse, digest -> id,
        # and the ids it reused (rows other runs share: never written to)
        self.reusable: dict[int, dict[str, int]] = {}
        self.shared: set[int] = set()
        self.whole: set[int] = set()
        self.digests: dict[int, str] = {}  # observation id -> content digest, of those written whole
        self._loaded: set[str] = set()
        self._marks: dict[str, int] = {}

    def observe(self, connection: Connection, resources: list[ResourceRecord]) -> None:
        """Observations of the run's own (never shared) for the resources not observed yet."""
        candidates = []
        previous = None
        for record in resources:  # results of one resource arrive together: hash it once
            if record is not previous:
                previous = record
                if record not in self.by_record:
                    candidates.append(record)
        new = list(dict.fromkeys(candidates))
        if new:
            self._resolve_resources(connection, new)
            self._add(connection, [(record, None) for record in new])

    def observe_whole(self, connection: Connection, chunks: list[tuple[list[ResourceRecord], list[ResultRow]]],
                       rows: list[tuple[Any, ...]]) -> None:
        """Observations for the resources of ``chunks``, each with all its results (``rows``:
        the chunks' results in order, as (resource index, check, policy, status, action,
        message, path)): one its source's last completed run stored the same is shared."""
        self._resolve_resources(connection, [r for resources, _ in chunks for r in resources
                                             if r not in self.by_record])
        reused: list[int] = []
        new: list[tuple[ResourceRecord, str | None]] = []
        start = 0
        for resources, results in chunks:
            contents: list[list[tuple[Any, ...]]] = [[] for _ in resources]
            for row in rows[start:start + len(results)]:
                contents[row[0]].append(row[1:])
            start += len(results)
            for record, content in zip(resources, contents, strict=True):
                if record in self.by_record:
                    if content:
                        raise StoreError(f"run {self.run_id}: results for {record.path!r} "
                                         f"({'/'.join(record.identity[1:])}) written twice")
                    continue
                resource_id = self.resources[record.identity]
                content.sort()
                digest = observation_digest((resource_id, record.path, record.document, record.item, record.line,
                                             self._commit(record), record.overlay, record.patches, content))
                source_id = self.sources[record.source]
                observation_id = self._reusable(connection, source_id).pop(digest, None)
                if observation_id is None:
                    new.append((record, digest))
                    continue
                reused.append(observation_id)
                self.shared.add(observation_id)
                self.whole.add(observation_id)
                self.digests[observation_id] = digest
                self.by_record[record] = (observation_id, resource_id)
                self.placements[resource_id] = (source_id, record.namespace)
        add_ids(connection, "run_observation_blocks", self.run_id, reused)
        self._add(connection, list(dict(new).items()))
        for record, new_digest in new:
            observation_id = self.by_record[record][0]
            self.whole.add(observation_id)
            if new_digest is not None:
                self.digests[observation_id] = new_digest

    def share(self, connection: Connection, source_id: int, observations: dict[str, int]) -> bool:
        """Make ``observations`` (content digest -> id, of the source's resources, written whole
        before) the run's when its source's last completed run has each of them under its
        digest, as ``observe_whole`` would find them; False (nothing done) otherwise."""
        reusable = self._reusable(connection, source_id)
        if any(reusable.get(digest) != observation_id for digest, observation_id in observations.items()):
            return False
        for digest, observation_id in observations.items():
            del reusable[digest]
            self.digests[observation_id] = digest
        ids = list(observations.values())
        self.shared.update(ids)
        self.whole.update(ids)
        add_ids(connection, "run_observation_blocks", self.run_id, ids)
        return True

    def written_whole(self, records: list[ResourceRecord]) -> dict[str, int] | None:
        """The observations of ``records`` (content digest -> id) when each was written whole
        at the run's commit of its source (as a later run at another commit stores it too);
        None otherwise."""
        found: dict[str, int] = {}
        for record in records:
            observation_id = self.by_record.get(record, (-1, -1))[0]
            digest = self.digests.get(observation_id)
            if digest is None or self._commit(record) is not None:
                return None
            found[digest] = observation_id
        return found

    def _reusable(self, connection: Connection, source_id: int) -> dict[str, int]:
        """The observations of the source's last completed run not reused yet, digest -> id."""
        reusable = self.reusable.get(source_id)
        if reusable is None:
            reusable = self.reusable[source_id] = previous_observations(connection, source_id)
        return reusable

    def _commit(self, record: ResourceRecord) -> str | None:
        """What an observation stores of its commit: None for the run's commit of its source."""
        return None if record.commit_sha == self.commits.get(record.source, "") else record.commit_sha

    def _add(self, connection: Connection, new: list[tuple[ResourceRecord, str | None]]) -> None:
        """Write observations of the run's own, each with its content digest (None: not to be
        reused), and make them the run's."""
        if not new:
            return
        ids = bulk.allocate_ids(connection, "observation_rows", "observation_id", len(new))
        rows = []
        for (record, digest), observation_id in zip(new, ids, strict=True):
            resource_id = self.resources[record.identity]
            rows.append((observation_id, resource_id, record.path, record.document, record.item, record.line,
                         self._commit(record), record.overlay, record.patches, digest))
            self.by_record[record] = (observation_id, resource_id)
            self.placements[resource_id] = (self.sources[record.source], record.namespace)
        bulk.copy_rows(connection, "observation_rows", bulk.OBSERVATION_COLUMNS, rows)
        add_ids(connection, "run_observation_blocks", self.run_id, ids)

    def _resolve_resources(self, connection: Connection, records: list[ResourceRecord]) -> None:
        """Fill the identity -> resource_id cache: known rows per source, then inserts."""
        for name in {r.source for r in records} - self._loaded:
            source_id = self.source_id(name, "a resource")
            query = (select(t.resources.c.resource_id, t.resources.c.api_version, t.resources.c.kind,
                            t.resources.c.namespace, t.resources.c.name)
                     .where(t.resources.c.source_id == source_id))
            self._load(name, connection.execute(query))
            self._loaded.add(name)
        missing = {}
        for record in records:
            if record.identity not in self.resources:
                source_id = self.sources[record.source]
                missing[(source_id, *record.identity[1:])] = {
                    "source_id": source_id, "api_version": record.api_version,
                    "kind": record.kind, "namespace": record.namespace, "name": record.name}
        if not missing:
            return
        bulk.insert_ignore(connection, t.resources, list(missing.values()))
        names = {source_id: name for name, source_id in self.sources.items()}
        for source_id in {key[0] for key in missing}:
            name = names[source_id]
            query = (select(t.resources.c.resource_id, t.resources.c.api_version, t.resources.c.kind,
                            t.resources.c.namespace, t.resources.c.name)
                     .where(t.resources.c.source_id == source_id,
                            t.resources.c.resource_id > self._marks.get(name, 0)))
            self._load(name, connection.execute(query))
        raced = [key for key in missing if (names[key[0]], *key[1:]) not in self.resources]
        if raced:  # inserted by a concurrent writer that committed out of id order
            columns = [t.resources.c.source_id, t.resources.c.api_version, t.resources.c.kind,
                       t.resources.c.namespace, t.resources.c.name]
            ids = bulk.select_ids(connection, t.resources.c.resource_id, columns, raced)
            for (source_id, *rest), resource_id in ids.items():
                self.resources[(names[source_id], *rest)] = resource_id  # type: ignore[index]

    def _load(self, source: str, rows: Iterable[Any]) -> None:
        mark = self._marks.get(source, 0)
        for resource_id, *identity in rows:
            self.resources[(source, *identity)] = resource_id  # type: ignore[index]
            mark = max(mark, resource_id)
        self._marks[source] = mark
