"""The one orchestration path: config -> policies -> sources -> engine -> store -> reports.

``run`` is called by ``scanner scan`` and by the scheduler (``run_scheduled``). Policies are
compiled once; worker processes inherit them and evaluate resources in chunks while the
main process reads the sources and streams results to the store in batches. The run then
finishes (tallies, findings) in a forked process while this one reads what the reports show
of its results.
"""

from __future__ import annotations

import logging
import os
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from scanner import __version__
from scanner.config import Config, SourceConfig, load_config
from scanner.engine.policy import Policy
from scanner.engine.types import FailureAction, RuleStatus
from scanner.engine.values import Values, ValuesError, parse_values
from scanner.errors import ConfigError, Location, PolicyError, ReportError, ScannerError
from scanner.lookup import ResourceLookup, cluster_of, policies_need_lookup
from scanner.policies import (
    NotEvaluated,
    PolicySet,
    UnsupportedPolicy,
    load_exceptions,
    load_policies,
    not_evaluated_reason,
)
from scanner.runtime import importing
from scanner.scan_git import GitPrefetch, git_options
from scanner.scan_gitops import with_entry_points
from scanner.scan_pool import WorkerPool, worker_count
from scanner.scan_workers import EvaluationSetup, ShardTask
from scanner.sources.directory import DirectorySource, root_problem
from scanner.sources.documents import WARNING
from scanner.sources.export import ExportSource
from scanner.sources.git import GitSource, redact
from scanner.sources.paths import PathFilter, Shard
from scanner.sources.provenance import ErrorRecord as SourceErrorRecord
from scanner.sources.provenance import Resource
from scanner.sources.tree import TreeOptions
from scanner.store import records
from scanner.yamldoc import load_documents

EXIT_CLEAN, EXIT_FINDINGS, EXIT_USAGE, EXIT_SOURCES = 0, 1, 2, 3
log = logging.getLogger("scanner.scan")


class ScanProgress(Protocol):
    """Where a scan reports what it is doing (a terminal progress bar, log lines, nothing).
    Called from the scan's one thread only (a progress thread would keep the scan from forking)."""

    def stage(self, message: str) -> None: ...

    def tasks(self, total: int) -> None:
        """The sources are dealt out into ``total`` parts, read and evaluated from now on."""

    def resources(self, count: int) -> None:
        """``count`` more resource documents were read and evaluated."""

    def task_done(self) -> None:
        """One more part is read and evaluated."""

    def idle(self) -> None:
        """Nothing arrived for a while (about half a second): a chance to say the scan still runs."""

    def report(self, fmt: str, path: str) -> None:
        """The report in format ``fmt`` is written to ``path``."""


class _Silent:
    def stage(self, message: str) -> None:
        pass

    def tasks(self, total: int) -> None:
        pass

    def resources(self, count: int) -> None:
        pass

    def task_done(self) -> None:
        pass

    def idle(self) -> None:
        pass

    def report(self, fmt: str, path: str) -> None:
        pass


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


class PolicySetError(PolicyError):
    """Invalid policies: the scan stops before anything is written, listing them all."""

    def __init__(self, errors: list[PolicyError], nouns: tuple[str, str] = ("policy", "policies")) -> None:
        self.errors = errors
        lines = "\n".join(f"  {e}" for e in errors)
        super().__init__(f"{len(errors)} invalid {nouns[len(errors) != 1]}:\n{lines}")


# -- policies, values, sources ---------------------------------------------------------------


def load_config_policies(config: Config) -> PolicySet:
    """Every policy of the config, with the invalid or unreadable ones (and the names given to
    different policies) as located errors in ``errors``. Raises when no policy at all was found:
    ``PolicySetError`` listing the errors, or a ``PolicyError`` naming where it looked."""
    result = PolicySet()
    for i, location in enumerate(config.policies):
        accept = PathFilter(location.include, location.exclude) if location.include or location.exclude else None
        if location.path is not None:
            if not os.path.exists(location.path):
                result.errors.append(PolicyError(f"policy path not found: {location.path}"))
                continue
            result.extend(load_policies([location.path], accept=accept))
        elif location.git is not None:
            source = GitSource(f"policies-{i}", git_options(location.git, config))
            try:
                workdir, commit = source.checkout()
            except ScannerError as exc:
                result.errors.append(PolicyError(f"policies from Git: {exc}"))
                continue
            folder = os.path.normpath(os.path.join(workdir, location.git.path.lstrip("/")))
            problem = ("leaves the repository" if os.path.commonpath([workdir, folder]) != os.path.normpath(workdir)
                       else None if os.path.exists(folder) else f"is not in the repository at {commit.sha[:12]}")
            if problem:
                result.errors.append(PolicyError(f"policies from Git {redact(location.git.url)}: path "
                                                 f"{location.git.path!r} {problem}"))
                continue
            result.extend(load_policies([folder], accept=accept))
    duplicates = result.duplicates()
    result.errors += [d.error() for d in duplicates]
    result.without({d.ref for d in duplicates})
    if not result.policies:
        if result.errors:
            raise PolicySetError(result.errors)
        places = ", ".join(loc.path if loc.path is not None else f"{redact(loc.git.url)} ({loc.git.path or '.'})"
                           for loc in config.policies if loc.path is not None or loc.git is not None)
        raise PolicyError(result.nothing_found(places))
    return result


def split_not_evaluated(policy_set: PolicySet) -> list[NotEvaluated]:
    """Take the policies that give no validate result (``not_evaluated_reason``) out of
    ``policy_set``: what a scan lists as not evaluated."""
    found = []
    for i, policy in enumerate(policy_set.policies):
        reason = not_evaluated_reason(policy)
        if reason is not None:
            found.append(NotEvaluated(policy.kind, policy.key, policy_set.location_of(i), reason))
    policy_set.without({n.name for n in found})
    return found


def load_config_values(config: Config) -> Values:
    if not config.values:
        return Values()
    try:
        docs = load_documents(Path(config.values).read_bytes(), config.values, keep_nodes=True)
        return parse_values(docs[0].data if docs else {})
    except OSError as exc:
        raise ConfigError(f"cannot read values file {config.values}: {exc.strerror}") from exc
    except ValuesError as exc:
        where = docs[0].locate(exc.pointer)
        raise ConfigError(f"values file: {exc}", Location(where.path, where.line, where.column)) from exc


def build_source(cfg: SourceConfig, config: Config, prefetch: GitPrefetch | None = None) -> Any:
    tree = TreeOptions(include=cfg.include, exclude=cfg.exclude, kustomize=cfg.kustomize,  # type: ignore[arg-type]
                       helm=cfg.helm, kustomize_roots=cfg.kustomize_roots,
                       kustomize_remote_hosts=cfg.kustomize_remote_hosts)
    if cfg.type == "git":
        return GitSource(cfg.name, git_options(cfg.git, config, tree),
                         prefetch.prepared(cfg.name) if prefetch is not None else None)
    if cfg.type == "export":
        return ExportSource(cfg.name, list(cfg.paths), path_filter=tree.path_filter)
    return DirectorySource(cfg.name, cfg.paths[0], tree)


def _source_record(cfg: SourceConfig, source: Any, error: str = "") -> records.SourceRecord:
    commit = getattr(getattr(source, "stats", None), "commit", None)
    url = redact(cfg.git.url) if cfg.git else ", ".join(cfg.paths)
    return records.SourceRecord(
        name=cfg.name, type=records.SourceType(cfg.type), url=url,
        ref=(cfg.git.ref or "") if cfg.git else "",
        commit_sha=commit.sha if commit else "", commit_at=commit.committed_at if commit else None,
        error=error,
    )


def policy_record(policy: Policy) -> records.PolicyRecord:
    return records.PolicyRecord(
        kind=policy.kind, name=policy.name, namespace=policy.namespace if policy.kind == "Policy" else "",
        digest=policy.digest, title=policy.title, category=policy.category,
        severity=policy.severity.strip().lower(),  # as the reports group it: ``Medium`` is ``medium``
        description=policy.annotations.get("policies.kyverno.io/description", ""),
        failure_action=policy.action, scored=policy.scored,
    )


# -- running the shards --------------------------------------------------------------------


@dataclass(slots=True)
class _Tally:
    """The scan's counts as its results are written."""

    resources: int = 0
    with_results: int = 0  # resources some rule gave a result for (what the reports count)
    counts: Counter[str] = field(default_factory=Counter)
    errors: int = 0
    failed_sources: list[str] = field(default_factory=list)
    enforce_failures: int = 0
    not_scanned: int = 0  # of the errors: what GitOps objects deploy from outside the scanned sources


@dataclass(slots=True)
class _SourceRun:
    """One source in a scan: its tasks, what they reported, and why it failed if it did."""

    cfg: SourceConfig
    source: Any
    tasks: int = 0
    done: int = 0
    fatal: list[str] = field(default_factory=list)
    errors: list[SourceErrorRecord] = field(default_factory=list)  # found while preparing
    resources: int = 0
    skipped: Counter[str] = field(default_factory=Counter)  # reason -> documents left out


def _prepare(cfg: SourceConfig, config: Config, jobs: int, first_id: int,
             prefetch: GitPrefetch | None = None) -> tuple[_SourceRun, list[ShardTask]]:
    """Check out a Git source (or take it from ``prefetch``) and deal the source out into shards."""
    source = build_source(cfg, config, prefetch)
    run = _SourceRun(cfg, source)
    # trees are dealt out finer than the worker count so that the pool balances itself
    count = jobs if cfg.type == "export" or jobs == 1 else 6 * jobs
    shards = [Shard(i, count) for i in range(count)]
    tasks: list[ShardTask] = []
    if cfg.type == "git":
        try:
            workdir, commit, on_disk = source.prepare()
        except ScannerError as exc:
            run.errors.append(SourceErrorRecord(cfg.name, "git", exc.message, exc.location or _location(cfg)))
            run.fatal.append(exc.message)
            return run, []
        source.stats.commit = commit
        tasks = [ShardTask(first_id + i, cfg.name, "git", root=workdir, commit=commit.sha, objects=not on_disk,
                           tree=source.options.tree, shard=shard) for i, shard in enumerate(shards)]
    elif cfg.type == "directory":
        problem = root_problem(cfg.paths[0])
        if problem:
            run.errors.append(SourceErrorRecord(cfg.name, "source", problem, Location(cfg.paths[0])))
            run.fatal.append(problem)
            return run, []
        tasks = [ShardTask(first_id + i, cfg.name, "directory", root=cfg.paths[0], tree=source.options, shard=shard)
                 for i, shard in enumerate(shards)]
    else:
        patterns = TreeOptions(include=cfg.include, exclude=cfg.exclude)
        tasks = [ShardTask(first_id + i, cfg.name, "export", paths=cfg.paths, tree=patterns, shard=shard)
                 for i, shard in enumerate(shards)]
    run.tasks = len(tasks)
    return run, tasks


def _error_row(e: SourceErrorRecord) -> records.ErrorRecord:
    return records.ErrorRecord(message=e.message, kind=e.kind, source=e.source,
                               path=e.location.path or "", line=e.location.line)


def _unsupported_row(policy: UnsupportedPolicy) -> records.ErrorRecord:
    return records.ErrorRecord(message=policy.message, kind=records.UNSUPPORTED, path=policy.location.path or "",
                               line=policy.location.line)


def _policy_error_row(error: PolicyError) -> records.ErrorRecord:
    where = error.location or Location(None)
    return records.ErrorRecord(message=error.message, kind="policy", path=where.path or "", line=where.line)


def _not_evaluated_row(policy: NotEvaluated) -> records.ErrorRecord:
    return records.ErrorRecord(message=policy.message, kind=records.NOT_EVALUATED, path=policy.location.path or "",
                               line=policy.location.line)


_FAIL, _ENFORCE = RuleStatus.FAIL.value, FailureAction.ENFORCE.value


class _Collector:
    """Writes what the shards emit to the store, in batches, and keeps the tallies."""

    # results per write: short transactions, and a small last one, written after the workers end
    BATCH = 2000

    def __init__(self, writer: Any, tasks: dict[int, ShardTask], runs: dict[str, _SourceRun],
                 progress: ScanProgress) -> None:
        self.writer, self.tasks, self.runs, self.progress = writer, tasks, runs, progress
        self.tally = _Tally()
        self.pending: list[tuple[list[records.ResourceRecord], list[records.ResultRow]]] = []
        self.pending_results = 0

    def flush(self) -> None:
        if self.pending:
            self.writer.add_result_rows(self.pending)
            self.pending, self.pending_results = [], 0

    def __call__(self, message: tuple) -> None:
        if message[0] == "chunk":
            _, task_id, resource_rows, wired, errors = message
            resources = [records.ResourceRecord(*row) for row in resource_rows]
            result_rows = records.wire_rows(wired)
            self.pending.append((resources, result_rows))
            self.pending_results += len(result_rows)
            if self.pending_results >= self.BATCH:
                self.flush()
            tally = self.tally
            tally.counts.update(row.status for row in result_rows)
            tally.enforce_failures += sum(row.status == _FAIL and row.action == _ENFORCE for row in result_rows)
            if errors:
                self.writer.add_errors([_error_row(e) for e in errors])
                tally.errors += sum(e.kind != WARNING for e in errors)  # a warning fails no gate
                for e in source_fatal_errors(errors):
                    self.runs[e.source].fatal.append(e.message)
            tally.resources += len(resources)
            tally.with_results += len({row.resource_index for row in result_rows})
            self.runs[self.tasks[task_id].source].resources += len(resources)
            self.progress.resources(len(resources))
        else:
            _, task_id, stats, failure = message
            run = self.runs[self.tasks[task_id].source]
            run.done += 1
            self.progress.task_done()
            run.skipped.update(stats.skipped)
            if failure:
                self.fail(run, f"source failed: {failure}")

    def worker_failed(self, task: ShardTask, error: BaseException) -> None:
        run = self.runs[task.source]
        run.done += 1
        self.progress.task_done()
        self.fail(run, f"worker failed: {type(error).__name__}: {error}")

    def fail(self, run: _SourceRun, message: str) -> None:
        run.fatal.append(message)
        self.writer.add_errors([_error_row(SourceErrorRecord(run.cfg.name, "source", message, _location(run.cfg)))])
        self.tally.errors += 1


def source_fatal_errors(errors: list[SourceErrorRecord]) -> list[SourceErrorRecord]:
    """Errors that mean the source as a whole could not be read (not one bad file)."""
    return [e for e in errors if e.kind in ("git", "source")]


def _location(cfg: SourceConfig) -> Location:
    return Location(redact(cfg.git.url) if cfg.git else (cfg.paths[0] if cfg.paths else None))


def exit_code_for(config: Config, tally: _Tally) -> int:
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
        now: datetime | None = None, prefetch: GitPrefetch | None = None) -> ScanOutcome:
    """Run one scan and store it; render the configured reports. Raises on config/policy errors.

    ``prefetch`` (``start_git_prefetch``) is fetching the Git sources already."""
    progress = progress or _Silent()
    started = time.monotonic()
    started_at = now or datetime.now(UTC)  # the run's start: loading the policies is part of it
    wanted = list(only_sources)
    unknown = [n for n in wanted if n not in {s.name for s in config.sources}]
    if unknown:
        raise ConfigError(f"unknown source {unknown[0]!r} (configured: {', '.join(s.name for s in config.sources)})")
    selected = [s for s in config.sources if not wanted or s.name in wanted]
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
        lookups = _prepass(selected, config, prefetch)
    setup = EvaluationSetup(raw_policies, values, tuple(e.raw for e in exceptions), started_at, lookups,
                            {cfg.name: cfg.cluster_name for cfg in config.sources})
    jobs = worker_count(jobs or config.scan.jobs)
    workers = WorkerPool(setup, jobs, (policy_set.policies, exceptions))
    store = None
    try:
        prepared: dict[str, _SourceRun] = {}
        # exports (whole files, the largest units) first, Git sources last: the workers read
        # the sources on disk while the Git sources are checked out
        held: dict[str, list[ShardTask]] = {}  # sources GitOps objects may deploy from: held for their entry points
        for cfg in sorted(selected, key=lambda c: (c.type == "git", c.type != "export")):
            progress.stage(f"source {cfg.name}: preparing")
            first_id = len(workers.tasks) + sum(map(len, held.values()))
            prepared[cfg.name], source_tasks = _prepare(cfg, config, jobs, first_id, prefetch)
            if cfg.gitops == "off" or cfg.type == "export":
                workers.add(source_tasks)
            else:
                held[cfg.name] = source_tasks
        gitops_records: list[SourceErrorRecord] = []
        if held:
            progress.stage("finding GitOps entry points")
            held, gitops_records = with_entry_points([c for c in selected if c.name in held], held, config.sources)
            for source_tasks in held.values():
                workers.add(source_tasks)
        runs = {cfg.name: prepared[cfg.name] for cfg in selected}
        for record in gitops_records:
            (runs.get(record.source) or next(iter(runs.values()))).errors.append(record)
        progress.stage(f"reading and evaluating with {jobs} worker{'s' if jobs > 1 else ''}")
        progress.tasks(len(workers.tasks))
        with importing():  # the store and the reports load here, while the workers are busy
            from scanner.report_builder import (
                read_configured_outcome,
                read_configured_results,
                render_configured_reports,
                run_numbers,
            )
            from scanner.store.store import Store

        store = Store(config.database_url)
        with store.begin_run(records.RunStart(started_at=started_at, trigger=trigger, scanner_version=__version__,
                                              config_digest=config.digest)) as writer:
            writer.add_policies(policy_record(p) for p in policy_set.policies)
            writer.add_errors([_policy_error_row(e) for e in policy_set.errors])
            writer.add_errors([_unsupported_row(u) for u in policy_set.unsupported])
            writer.add_errors([_not_evaluated_row(n) for n in not_evaluated])
            for source_run in runs.values():
                writer.add_source(_source_record(source_run.cfg, source_run.source))
                writer.add_errors([_error_row(e) for e in source_run.errors])
            collect = _Collector(writer, {t.task_id: t for t in workers.tasks}, runs, progress)
            collect.tally.errors += (sum(len(r.errors) for r in runs.values()) + len(policy_set.unsupported)
                                     + len(policy_set.errors))
            collect.tally.not_scanned = len(gitops_records)
            workers.collect(collect, collect.worker_failed, progress.idle)
            workers.close()
            progress.stage("writing the last results and finishing the run")
            collect.flush()
            tally = collect.tally
            for name, source_run in runs.items():
                if source_run.fatal:
                    tally.failed_sources.append(name)
                    writer.add_source(_source_record(source_run.cfg, source_run.source, "; ".join(source_run.fatal)))
            run_id = writer.run_id
            workers.join()  # the stopped workers and the pool's threads end: the run may finish in a fork
            status = (records.RunStatus.FAILED if len(tally.failed_sources) == len(runs)
                      else records.RunStatus.PARTIAL if tally.failed_sources else records.RunStatus.SUCCEEDED)
            parts = None
            if config.reports.formats:  # the reports' data is read while the run finishes
                status, read, outcome = writer.finish_while(lambda: read_configured_results(store, run_id, config),
                                                            lambda: read_configured_outcome(store, run_id, config),
                                                            status)
                parts = read, outcome
            else:
                status = writer.finish(status)
        progress.stage("rendering reports")
        try:
            reports, data = render_configured_reports(store, run_id, config, parts, progress.report)
        except ReportError as exc:
            raise ReportError(f"run {run_id} is stored, but its reports were not written: {exc}; "
                              f"render them later with `scanner report --run {run_id}`") from exc
        numbers = run_numbers(store, run_id, data)
    finally:
        workers.close()
        if store is not None:
            store.close()
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
        not_evaluated=tuple(f"{n.location}: {n.message}" for n in not_evaluated),
        source_failures=tuple(f"source {name}: {'; '.join(runs[name].fatal)}" for name in tally.failed_sources),
    )


def _prepass(selected: list[SourceConfig], config: Config, prefetch: GitPrefetch | None) -> dict[str, ResourceLookup]:
    """Read the sources of each cluster a selected source belongs to, to serve its apiCall,
    configMap, namespaceSelector and CEL parameter look-ups as the cluster would: a source sees
    the objects of its own cluster only (by default itself; ``sources[].cluster`` joins sources
    into one), and all of them, whichever sources ``--source`` selects, so that a source's
    results do not depend on what else is scanned."""
    wanted = {cfg.cluster_name for cfg in selected}
    members: dict[str, list[SourceConfig]] = {}
    for cfg in config.sources:
        if cfg.cluster_name in wanted:
            members.setdefault(cfg.cluster_name, []).append(cfg)
    return {name: _cluster_lookup(sources, config, prefetch) for name, sources in members.items()}


def _cluster_lookup(sources: list[SourceConfig], config: Config, prefetch: GitPrefetch | None) -> ResourceLookup:
    """The objects of one cluster's sources."""
    read: list[dict] = []
    for cfg in sources:
        try:
            read.extend(item.data for item in build_source(cfg, config, prefetch).iter_items()
                        if isinstance(item, Resource))
        except Exception as exc:  # the source's own scan records why it failed
            log.debug("source %s not read for look-ups: %s", cfg.name, exc)
    return cluster_of(read)


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
