"""What the workers send, written to the store in batches while the scan's tallies are kept."""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from operator import itemgetter
from typing import Any

from scanner.engine.types import FailureAction, RuleStatus
from scanner.errors import Location, PolicyError
from scanner.policies import NotEvaluated, UnsupportedPolicy
from scanner.scan.plan import SourceRun, source_fatal_errors, source_location
from scanner.scan.progress import ScanProgress
from scanner.scan.replay import ShardFootprint, footprint_key
from scanner.scan.result_reuse import CacheUpdate
from scanner.scan.workers import ShardTask
from scanner.sources.documents import WARNING
from scanner.sources.provenance import ErrorRecord as SourceErrorRecord
from scanner.sources.provenance import SourceStats
from scanner.store import records


@dataclass(slots=True)
class Tally:
    """The scan's counts as its results are written."""

    resources: int = 0
    with_results: int = 0  # resources some rule gave a result for (what the reports count)
    counts: Counter[str] = field(default_factory=Counter)
    errors: int = 0
    failed_sources: list[str] = field(default_factory=list)
    enforce_failures: int = 0
    not_scanned: int = 0  # of the errors: what GitOps objects deploy from outside the scanned sources
    evaluated: int = 0  # (document, policy) pairs evaluated, when results are reused
    reused: int = 0  # (document, policy) pairs whose stored results were reused
    replayed: int = 0  # shard tasks whose stored output was sent again, unread


def error_row(e: SourceErrorRecord) -> records.ErrorRecord:
    return records.ErrorRecord(message=e.message, kind=e.kind, source=e.source,
                               path=e.location.path or "", line=e.location.line)


def unsupported_row(policy: UnsupportedPolicy) -> records.ErrorRecord:
    return records.ErrorRecord(message=policy.message, kind=records.UNSUPPORTED, path=policy.location.path or "",
                               line=policy.location.line)


def policy_error_row(error: PolicyError) -> records.ErrorRecord:
    where = error.location or Location(None)
    return records.ErrorRecord(message=error.message, kind="policy", path=where.path or "", line=where.line)


def not_evaluated_row(policy: NotEvaluated) -> records.ErrorRecord:
    return records.ErrorRecord(message=policy.message, kind=records.NOT_EVALUATED, path=policy.location.path or "",
                               line=policy.location.line)


@dataclass(slots=True)
class _Kept:
    """What a keyed shard task sent, for its footprint (``scanner.scan.replay``)."""

    records: list[records.ResourceRecord] = field(default_factory=list)
    counts: Counter[str] = field(default_factory=Counter)
    enforce_failures: int = 0
    with_results: int = 0
    errors: list[SourceErrorRecord] = field(default_factory=list)
    digests: list[str] = field(default_factory=list)
    stats: SourceStats | None = None  # (once done without failing)


def _slot(task: ShardTask) -> str:
    """What a shard's stored output replaces: the output stored for the same shard of its source."""
    return hashlib.sha256(f"{task.source}\0{task.shard.index}/{task.shard.count}".encode()).hexdigest()


_FAIL, _ENFORCE = RuleStatus.FAIL.value, FailureAction.ENFORCE.value
_FIELDS = records.ResultRow._fields
_RESOURCE_INDEX = itemgetter(_FIELDS.index("resource_index"))
_OUTCOME = itemgetter(_FIELDS.index("status"), _FIELDS.index("action"))


class Collector:
    """Writes what the shards emit to the store, in batches, and keeps the tallies."""

    # results per write: short transactions, and a small last one, written after the workers end
    BATCH = 2000

    def __init__(self, writer: Any, tasks: dict[int, ShardTask], runs: dict[str, SourceRun],
                 progress: ScanProgress, send: Callable[[list[ShardTask]], None] | None = None) -> None:
        self.writer, self.tasks, self.runs, self.progress = writer, tasks, runs, progress
        self.send = send  # hands tasks to the workers (a task whose footprint was refused, again)
        self.tally = Tally()
        self.kept: dict[int, _Kept] = {}  # keyed tasks read or replayed from their output
        self.pending: list[tuple[list[records.ResourceRecord], list[records.ResultRow]]] = []
        self.pending_results = 0
        self.cache = CacheUpdate()  # result cache entries to store, and digests reused
        self.outputs: dict[str, tuple[str, bytes]] = {}  # shard key -> (slot, output), to store
        self.replayed: list[str] = []  # shard keys whose stored output was sent again

    def flush(self) -> None:
        if self.pending:
            self.writer.add_result_rows(self.pending, whole=True)
            self.pending, self.pending_results = [], 0
        if self.cache.entries or self.cache.reused:
            self.writer.add_cache_entries(self.cache.entries, self.cache.reused)
            self.cache.entries, self.cache.reused = {}, []
        if self.outputs or self.replayed:
            self.writer.add_shard_outputs(self.outputs, self.replayed)
            self.outputs, self.replayed = {}, []

    def _cached(self, update: CacheUpdate | None) -> None:
        if update is not None:
            self.cache.entries.update(update.entries)
            self.cache.reused += update.reused
            self.tally.evaluated += update.evaluated
            self.tally.reused += update.hits

    def _stored(self, task: ShardTask, failure: str | None, output: bytes | None) -> None:
        """The task's output to store under its key, or its key to mark used (it was sent again)."""
        if task.key is None or failure:
            return
        if output is not None:
            self.outputs[task.key] = (_slot(task), output)
        else:
            self.replayed.append(task.key)
            self.tally.replayed += 1

    def __call__(self, message: tuple) -> None:
        if message[0] == "chunk":
            _, task_id, resource_rows, wired, errors, cache = message
            resources = [records.ResourceRecord(*row) for row in resource_rows]
            result_rows = records.wire_rows(wired)
            self.pending.append((resources, result_rows))
            self._cached(cache)
            self.pending_results += len(result_rows)
            if self.pending_results >= self.BATCH:
                self.flush()
            outcomes = Counter(map(_OUTCOME, result_rows))  # (status, action) pairs, counted in C
            counts: Counter[str] = Counter()
            for (status, _), count in outcomes.items():
                counts[status] += count
            enforce_failures = outcomes.get((_FAIL, _ENFORCE), 0)
            with_results = len(set(map(_RESOURCE_INDEX, result_rows)))
            task = self.tasks[task_id]
            self._count(task, counts, enforce_failures, len(resources), with_results, errors)
            if task.key is not None:
                kept = self.kept.setdefault(task_id, _Kept())
                kept.records += resources
                kept.counts.update(counts)
                kept.enforce_failures += enforce_failures
                kept.with_results += with_results
                kept.errors += errors
                if cache is not None:
                    kept.digests += [*cache.entries, *cache.reused]
        elif message[0] == "footprint":
            _, task_id, blob = message
            self._footprint(self.tasks[task_id], blob)
        else:
            _, task_id, stats, failure, output = message
            task = self.tasks[task_id]
            if task.key is not None:
                self.kept.setdefault(task_id, _Kept()).stats = None if failure else stats
            self._stored(task, failure, output)
            self._done(task, stats, failure)

    def _count(self, task: ShardTask, counts: Counter[str], enforce_failures: int, resources: int,
               with_results: int, errors: list[SourceErrorRecord]) -> None:
        """Tally what a task sent: results by status, resources, errors."""
        tally = self.tally
        tally.counts.update(counts)
        tally.enforce_failures += enforce_failures
        if errors:
            self.writer.add_errors([error_row(e) for e in errors])
            tally.errors += sum(e.kind != WARNING for e in errors)  # a warning fails no gate
            for e in source_fatal_errors(errors):
                fatal = self.runs[e.source].fatal
                if e.message not in fatal:
                    fatal.append(e.message)
        tally.resources += resources
        tally.with_results += with_results
        self.runs[task.source].resources += resources
        self.progress.resources(resources)

    def _done(self, task: ShardTask, stats: SourceStats, failure: str | None) -> None:
        run = self.runs[task.source]
        run.done += 1
        self.progress.task_done()
        run.skipped.update(stats.skipped)
        if failure:
            self.fail(run, f"source failed: {failure}")

    def _footprint(self, task: ShardTask, blob: bytes) -> None:
        """A shard sent as its footprint: its observations made the run's, or, when they cannot
        be (not those of its source's last completed run), the task sent again without it."""
        try:
            footprint: ShardFootprint | None = ShardFootprint.decode(blob)
        except ValueError:
            footprint = None
        if task.key is None or footprint is None or not self.writer.share_footprint(task.source, footprint.stored):
            if self.send is None:
                raise RuntimeError(f"shard {task.task_id}: a refused footprint's task cannot be sent again")
            again = replace(task, task_id=max(self.tasks) + 1, footprint=False)
            self.tasks[again.task_id] = again
            self.send([again])
            return
        self._count(task, Counter(footprint.counts), footprint.enforce_failures, footprint.resources,
                    footprint.with_results, footprint.errors)
        self.cache.reused += footprint.digests
        self.replayed.append(footprint_key(task.key))
        self._stored(task, None, None)
        self._done(task, footprint.stats, None)

    def store_footprints(self) -> None:
        """After the last results are written: the footprint of each keyed task read or replayed
        from its output (``ShardFootprint``), stored beside its output."""
        outputs: dict[str, tuple[str, bytes]] = {}
        for task_id, kept in self.kept.items():
            task = self.tasks[task_id]
            if kept.stats is None or task.key is None or self.runs[task.source].fatal:
                continue
            stored = self.writer.footprint(kept.records)
            if stored is None:
                continue
            footprint = ShardFootprint(stored, dict(kept.counts), kept.enforce_failures, len(kept.records),
                                       kept.with_results, kept.errors, kept.digests, kept.stats)
            outputs[footprint_key(task.key)] = (footprint_key(_slot(task)), footprint.encode())
        if outputs:
            self.writer.add_shard_outputs(outputs, [])

    def worker_failed(self, task: ShardTask, error: BaseException) -> None:
        run = self.runs[task.source]
        run.done += 1
        self.progress.task_done()
        self.fail(run, f"worker failed: {type(error).__name__}: {error}")

    def fail(self, run: SourceRun, message: str) -> None:
        """Record why ``run``'s source failed: once, however many of its shards fail the same way."""
        if message in run.fatal:
            return
        run.fatal.append(message)
        error = SourceErrorRecord(run.cfg.name, "source", message, source_location(run.cfg))
        self.writer.add_errors([error_row(error)])
        self.tally.errors += 1
