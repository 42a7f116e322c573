"""The one orchestration path: config -> policies -> sources -> engine -> store -> reports.

``run`` is called by ``scanner scan`` and by the scheduler (``run_scheduled``). Policies are
compiled once; worker processes inherit them and evaluate resources in chunks while the
main process reads the sources and streams results to the store in batches. The run then
finishes (tallies, findings) in a forked process while this one reads what the reports show
of its results.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from scanner import __version__
from scanner.config import Config, SourceConfig, load_config
from scanner.errors import ConfigError, ReportError
from scanner.lookup import ResourceLookup, policies_need_lookup
from scanner.policies import NotEvaluated, PolicySet, load_exceptions
from scanner.scan.collect import (
    Collector,
    Tally,
    error_row,
    not_evaluated_row,
    policy_error_row,
    unsupported_row,
)
from scanner.scan.git_prefetch import GitPrefetch, start_git_prefetch
from scanner.scan.gitops import with_entry_points
from scanner.scan.plan import (
    PolicySetError,
    SourceRun,
    cluster_lookups,
    load_config_policies,
    load_config_values,
    policy_record,
    prepare_source,
    source_record,
    split_not_evaluated,
    start_tool_probes,
    values_text,
)
from scanner.scan.pool import WorkerPool, worker_count
from scanner.scan.processes import importing
from scanner.scan.progress import ScanProgress, Silent
from scanner.scan.replay import shard_keys
from scanner.scan.result_reuse import ReuseSetup, evaluation_keys
from scanner.scan.workers import EvaluationSetup, ShardTask
from scanner.sources.provenance import ErrorRecord as SourceErrorRecord
from scanner.sources.tool_versions import known
from scanner.store import records

if TYPE_CHECKING:  # loaded while the workers are busy
    from scanner.store.store import Store

EXIT_CLEAN, EXIT_FINDINGS, EXIT_USAGE, EXIT_SOURCES = 0, 1, 2, 3
log = logging.getLogger("scanner.scan")


@dataclass(frozen=True, slots=True)
class ScanOutcome:
    """What one scan did, as ``scanner scan`` prints it and maps it to an exit code."""

    run_id: int
    status: str
    resources: int  # distinct resources, as ``scanner runs`` counts them
    resources_with_results: int  # resource documents some rule gave a result for (as the reports count)
    counts: dict[str, int]
    new_findings: int
    resolved_findings: int
    errors: int
    failed_sources: tuple[str, ...]
    duration: float  # the stored run's, from its start to its end (reports are written after)
    reports: tuple[str, ...]
    exit_code: int
    total_seconds: float = 0.0  # the whole command's time, reports included
    documents: int = 0  # resource documents read (one object in two files: two documents)
    previous_run_id: int | None = None  # None: the first run of its sources (new_findings: every finding)
    policies: int = 0  # policies evaluated
    skipped: dict[str, dict[str, int]] = field(default_factory=dict)  # source -> reason -> documents
    empty_sources: tuple[str, ...] = ()  # read without failing, but no Kubernetes resource found
    unsupported_policies: tuple[str, ...] = ()  # "path:line: not supported: ..." of policies not evaluated
    policy_errors: tuple[str, ...] = ()  # "path:line: why" of each policy that could not be loaded
    not_evaluated: tuple[str, ...] = ()  # "path:line: not evaluated: ..." of valid policies with no validate rule
    source_failures: tuple[str, ...] = ()  # "source NAME: why it failed" of each failed source
    evaluated: int = 0  # (document, policy) pairs evaluated
    reused: int = 0  # (document, policy) pairs whose results an earlier scan stored (``scan.result_reuse``)
    replayed: int = 0  # shard tasks whose stored output was sent again, unread (``scan.replay``)


def exit_code_for(config: Config, tally: Tally) -> int:
    """3 when a source failed; else 1 when the ``fail_on`` threshold is met. Every threshold but
    ``never`` counts errors: error results and inputs that could not be read or rendered (a
    broken manifest must not pass a CI gate unnoticed)."""
    if tally.failed_sources:
        return EXIT_SOURCES
    fail_on = config.scan.fail_on
    if fail_on == "never":
        return EXIT_CLEAN
    if tally.counts["error"] or tally.errors > tally.not_scanned:  # a coverage gap is shown, not failed on
        return EXIT_FINDINGS
    if (fail_on == "enforce" and tally.enforce_failures) or (fail_on == "fail" and tally.counts["fail"]):
        return EXIT_FINDINGS
    return EXIT_CLEAN


def run(config: Config, *, only_sources: Iterable[str] = (), jobs: int | None = None,
        trigger: records.Trigger = records.Trigger.CLI, progress: ScanProgress | None = None,
        now: datetime | None = None) -> ScanOutcome:
    """Run one scan and store it; render the configured reports. Raises on config/policy errors.
    The Git sources are fetched in a child (``start_git_prefetch``) while the policies load."""
    prefetch = start_git_prefetch(config, only_sources)
    try:
        return _run(config, list(only_sources), jobs, trigger, progress or Silent(), now, prefetch)
    finally:
        if prefetch is not None:
            prefetch.close()


@dataclass(slots=True)
class _Inputs:
    """What a run evaluates with: the policies (those not evaluated apart), values, exceptions."""

    policy_set: PolicySet
    not_evaluated: list[NotEvaluated]
    setup: EvaluationSetup
    compiled: tuple[list[Any], list[Any]]


def _run(config: Config, wanted: list[str], jobs: int | None, trigger: records.Trigger, progress: ScanProgress,
         now: datetime | None, prefetch: GitPrefetch | None) -> ScanOutcome:
    started = time.monotonic()
    started_at = now or datetime.now(UTC)  # the run's start: loading the policies is part of it
    selected = _selected(config, wanted)
    probes_done = start_tool_probes(selected)  # the renderers' versions, found while the scan starts
    try:
        inputs = _load_inputs(config, selected, started_at, prefetch, progress)
    except BaseException:
        probes_done()
        raise
    jobs = worker_count(jobs or config.scan.jobs)
    workers = WorkerPool(inputs.setup, jobs, inputs.compiled)
    store = None
    try:
        runs, not_scanned = _deal_sources(config, selected, jobs, workers, inputs, prefetch, progress, probes_done)
        progress.stage(f"reading and evaluating with {jobs} worker{'s' if jobs > 1 else ''}")
        progress.tasks(len(workers.tasks))
        with importing():  # the store and the reports load here, while the workers are busy
            from scanner.scan.report_data import render_configured_reports, run_numbers
            from scanner.store.store import Store

        store = Store(config.database_url)
        run_id, status, tally, parts = _store_run(config, store, trigger, started_at, inputs, runs, not_scanned,
                                                  workers, progress)
        progress.stage("rendering reports")
        try:
            reports, data = render_configured_reports(store, run_id, config, parts, progress.report)
        except ReportError as exc:
            raise ReportError(f"run {run_id} is stored, but its reports were not written: {exc}; "
                              f"render them later with `scanner report --run {run_id}`") from exc
        numbers = run_numbers(store, run_id, data)
        store.reclaim_replaced()
    finally:
        workers.close()
        if store is not None:
            store.close()
    policy_set = inputs.policy_set
    return ScanOutcome(
        run_id=run_id, status=str(status), resources=numbers.resources, resources_with_results=tally.with_results,
        counts=dict(tally.counts),
        new_findings=numbers.new, resolved_findings=numbers.resolved, errors=tally.errors,
        failed_sources=tuple(tally.failed_sources),
        duration=numbers.duration if numbers.duration is not None else time.monotonic() - started,
        total_seconds=time.monotonic() - started, documents=tally.resources, previous_run_id=numbers.previous_run_id,
        policies=len(policy_set.policies),
        reports=tuple(reports), exit_code=exit_code_for(config, tally),
        skipped={name: dict(sorted(r.skipped.items())) for name, r in runs.items() if r.skipped},
        empty_sources=tuple(name for name, r in runs.items() if not r.fatal and not r.resources),
        unsupported_policies=tuple(f"{u.location}: {u.message}" for u in policy_set.unsupported),
        policy_errors=tuple(str(e) for e in policy_set.errors),
        not_evaluated=tuple(f"{n.location}: {n.message}" for n in inputs.not_evaluated),
        source_failures=tuple(f"source {name}: {'; '.join(runs[name].fatal)}" for name in tally.failed_sources),
        evaluated=tally.evaluated, reused=tally.reused, replayed=tally.replayed,
    )


def _selected(config: Config, wanted: list[str]) -> list[SourceConfig]:
    """The sources ``--source`` names (every source without one); an unknown name is an error."""
    unknown = [n for n in wanted if n not in {s.name for s in config.sources}]
    if unknown:
        raise ConfigError(f"unknown source {unknown[0]!r} (configured: {', '.join(s.name for s in config.sources)})")
    return [s for s in config.sources if not wanted or s.name in wanted]


def _load_inputs(config: Config, selected: list[SourceConfig], started_at: datetime,
                 prefetch: GitPrefetch | None, progress: ScanProgress) -> _Inputs:
    """Load the policies, values and exceptions; index the clusters' objects when the policies
    look anything up."""
    progress.stage("loading policies")
    policy_set = load_config_policies(config)
    if policy_set.errors and config.scan.strict_policies:
        raise PolicySetError(policy_set.errors)
    not_evaluated = split_not_evaluated(policy_set)
    values = load_config_values(config)
    exceptions, exception_errors = load_exceptions(config.exceptions)
    if exception_errors:
        raise PolicySetError(exception_errors, ("policy exception", "policy exceptions"))
    raw_policies = tuple(p.raw for p in policy_set.policies)
    lookups: dict[str, ResourceLookup] = {}
    if policies_need_lookup(raw_policies):
        progress.stage("indexing resources for cluster look-ups")
        lookups = cluster_lookups(selected, config, prefetch)
    reuse = ReuseSetup(evaluation_keys(policy_set.policies, [e.raw for e in exceptions], values_text(config),
                                       __version__, lookups), config.database_url) if config.scan.reuse else None
    setup = EvaluationSetup(raw_policies, values, tuple(e.raw for e in exceptions), started_at, lookups,
                            {cfg.name: cfg.cluster_name for cfg in config.sources}, reuse)
    return _Inputs(policy_set, not_evaluated, setup, (policy_set.policies, exceptions))


def _keyed(tasks: list[ShardTask], inputs: _Inputs) -> list[ShardTask]:
    """``tasks`` (of one source) with the keys their outputs are stored under (``scan.replay``)."""
    setup = inputs.setup
    if not tasks or setup.reuse is None:
        return tasks
    cluster = setup.clusters.get(tasks[0].source)
    keys = shard_keys(tasks, setup.reuse.keys.of(cluster if cluster in setup.lookups else None),
                      len(inputs.policy_set.policies))
    return [replace(task, key=key) for task, key in zip(tasks, keys, strict=True)]


def _deal_sources(config: Config, selected: list[SourceConfig], jobs: int, workers: WorkerPool, inputs: _Inputs,
                  prefetch: GitPrefetch | None, progress: ScanProgress,
                  probes_done: Callable[[], None]) -> tuple[dict[str, SourceRun], list[SourceErrorRecord]]:
    """Prepare each source and hand its shards to the workers: exports (whole files, the largest
    units) first and Git sources last, so that the workers read the sources on disk while the
    Git sources are checked out; the shards of a source GitOps objects may deploy from wait for
    its entry points. Returns each source's run and the records of what is deployed from
    outside the scanned sources. The shards of trees take the renderers' versions along
    (``probes_done`` waits for them)."""
    def with_versions(tasks: list[ShardTask]) -> list[ShardTask]:
        if not tasks or tasks[0].source_type == "export":
            return tasks
        probes_done()
        versions = known()
        return [replace(task, tool_versions=versions) for task in tasks]

    prepared: dict[str, SourceRun] = {}
    held: dict[str, list[ShardTask]] = {}
    for cfg in sorted(selected, key=lambda c: (c.type == "git", c.type != "export")):
        progress.stage(f"source {cfg.name}: preparing")
        first_id = len(workers.tasks) + sum(map(len, held.values()))
        prepared[cfg.name], source_tasks = prepare_source(cfg, config, jobs, first_id, prefetch)
        if cfg.gitops == "off" or cfg.type == "export":
            workers.add(_keyed(with_versions(source_tasks), inputs))
        else:
            held[cfg.name] = source_tasks
    not_scanned: list[SourceErrorRecord] = []
    if held:
        progress.stage("finding GitOps entry points")
        held, not_scanned = with_entry_points([c for c in selected if c.name in held], held, config.sources,
                                              prefetch.names_gitops if prefetch is not None else None)
        for source_tasks in held.values():
            workers.add(_keyed(with_versions(source_tasks), inputs))
    probes_done()  # (every probe reaped, whatever took them)
    runs = {cfg.name: prepared[cfg.name] for cfg in selected}
    for record in not_scanned:
        (runs.get(record.source) or next(iter(runs.values()))).errors.append(record)
    return runs, not_scanned


def _store_run(config: Config, store: Store, trigger: records.Trigger, started_at: datetime, inputs: _Inputs,
               runs: dict[str, SourceRun], not_scanned: list[SourceErrorRecord], workers: WorkerPool,
               progress: ScanProgress) -> tuple[int, records.RunStatus, Tally, Any]:
    """Write the run as the workers send it and finish it; the run id, its status, the tallies
    and the reports' data read while it finished (None without reports)."""
    from scanner.scan.report_data import finish_reading_reports

    policy_set = inputs.policy_set
    with store.begin_run(records.RunStart(started_at=started_at, trigger=trigger, scanner_version=__version__,
                                          config_digest=config.digest)) as writer:
        writer.add_policies(policy_record(p) for p in policy_set.policies)
        writer.add_errors([policy_error_row(e) for e in policy_set.errors])
        writer.add_errors([unsupported_row(u) for u in policy_set.unsupported])
        writer.add_errors([not_evaluated_row(n) for n in inputs.not_evaluated])
        for source_run in runs.values():
            writer.add_source(source_record(source_run.cfg, source_run.source))
            writer.add_errors([error_row(e) for e in source_run.errors])
        collect = Collector(writer, {t.task_id: t for t in workers.tasks}, runs, progress, workers.add)
        collect.tally.errors += (sum(len(r.errors) for r in runs.values()) + len(policy_set.unsupported)
                                 + len(policy_set.errors))
        collect.tally.not_scanned = len(not_scanned)
        workers.collect(collect, collect.worker_failed, progress.idle)
        workers.close()
        progress.stage("writing the last results and finishing the run")
        collect.flush()
        tally = collect.tally
        for name, source_run in runs.items():
            if source_run.fatal:
                tally.failed_sources.append(name)
                writer.add_source(source_record(source_run.cfg, source_run.source, "; ".join(source_run.fatal)))
        run_id = writer.run_id
        workers.join()  # the stopped workers and the pool's threads end: the run may finish in a fork
        status = (records.RunStatus.FAILED if len(tally.failed_sources) == len(runs)
                  else records.RunStatus.PARTIAL if tally.failed_sources else records.RunStatus.SUCCEEDED)
        status, parts = finish_reading_reports(writer, store, config, status,
                                               collect.store_footprints if collect.kept else None)
        return run_id, status, tally, parts


def run_scheduled(config_path: str, jobs: int | None = None) -> int:
    """The scheduler's job: load the config afresh and run one scan (trigger ``schedule``)."""
    config = load_config(config_path)
    from scanner.store.store import Store as _Store

    store = _Store(config.database_url)
    try:
        lock = store.try_lock("scan:" + config.scan_key)
        if lock is None:
            log.warning("scan skipped: another scheduler is running the same scan (sources and database) now")
            return EXIT_CLEAN
        try:
            outcome = run(config, jobs=jobs, trigger=records.Trigger.SCHEDULE)
        finally:
            lock.release()
        for failure in (*outcome.policy_errors, *outcome.unsupported_policies, *outcome.source_failures):
            log.error("run %s: %s", outcome.run_id, failure)
    finally:
        store.close()
    return outcome.exit_code
