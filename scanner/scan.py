"""The one orchestration path: config -> policies -> sources -> engine -> store -> reports.

``run`` is called by ``scanner scan`` and by the scheduler (``run_scheduled``). Policies are
compiled once; worker processes inherit them and evaluate resources in chunks while the
main process reads the sources and streams results to the store in batches.
"""

from __future__ import annotations

import concurrent.futures
import multiprocessing
import os
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Protocol

from scanner import __version__
from scanner.config import Config, SourceConfig, load_config
from scanner.engine.environment import Environment, make_environment
from scanner.engine.evaluate import PolicyIndex, evaluate_policy
from scanner.engine.match import Request, ResourceView
from scanner.engine.policy import Policy
from scanner.engine.types import FailureAction, RuleResult, RuleStatus
from scanner.engine.values import Values, ValuesError, parse_values
from scanner.errors import ConfigError, PolicyError, ScannerError
from scanner.lookup import ResourceLookup, policies_need_lookup
from scanner.policies import PolicySet, load_exceptions, load_policies
from scanner.sources.directory import DirectorySource
from scanner.sources.export import ExportSource
from scanner.sources.git import GitOptions, GitSource, redact
from scanner.sources.provenance import ErrorRecord as SourceErrorRecord
from scanner.sources.provenance import Resource
from scanner.sources.tree import TreeOptions
from scanner.store import records
from scanner.store.store import Store
from scanner.yamldoc import load_documents

CHUNK = 64
EXIT_CLEAN, EXIT_FINDINGS, EXIT_USAGE, EXIT_SOURCES = 0, 1, 2, 3


class ScanProgress(Protocol):
    """Where a scan reports what it is doing (a terminal progress bar, log lines, nothing)."""

    def stage(self, message: str) -> None: ...

    def resources(self, count: int) -> None: ...


class _Silent:
    def stage(self, message: str) -> None:
        pass

    def resources(self, count: int) -> None:
        pass


@dataclass(frozen=True, slots=True)
class ScanOutcome:
    run_id: int
    status: str
    resources: int
    counts: dict[str, int]
    new_findings: int
    resolved_findings: int
    errors: int
    failed_sources: tuple[str, ...]
    duration: float
    reports: tuple[str, ...]
    exit_code: int


class PolicySetError(PolicyError):
    """Invalid policies: the scan stops before anything is written, listing them all."""

    def __init__(self, errors: list[PolicyError]) -> None:
        self.errors = errors
        lines = "\n".join(f"  {e}" for e in errors)
        super().__init__(f"{len(errors)} invalid polic{'y' if len(errors) == 1 else 'ies'}:\n{lines}")


# -- policies, values, sources ---------------------------------------------------------------


def _git_options(ref: Any, config: Config, tree: TreeOptions | None = None) -> GitOptions:
    return GitOptions(url=ref.url, ref=ref.ref, cache_dir=os.path.join(config.scan.cache_dir, "git"),
                      shallow=ref.shallow, token_env=ref.token_env, ssh_key=ref.ssh_key, timeout=ref.timeout,
                      tree=tree or TreeOptions())


def load_config_policies(config: Config) -> PolicySet:
    """Every policy of the config; any invalid or unreadable one raises ``PolicySetError``."""
    result = PolicySet()
    for i, location in enumerate(config.policies):
        if location.path is not None:
            if not os.path.exists(location.path):
                result.errors.append(PolicyError(f"policy path not found: {location.path}"))
                continue
            result.extend(load_policies([location.path]))
        elif location.git is not None:
            source = GitSource(f"policies-{i}", _git_options(location.git, config))
            try:
                workdir, _ = source.checkout()
            except ScannerError as exc:
                result.errors.append(PolicyError(f"policies from Git: {exc}"))
                continue
            result.extend(load_policies([os.path.join(workdir, location.git.path)]))
    if result.errors:
        raise PolicySetError(result.errors)
    if not result.policies:
        raise PolicySetError([PolicyError("no policies found in the configured policy locations")])
    return result


def load_config_values(config: Config) -> Values:
    if not config.values:
        return Values()
    try:
        docs = load_documents(Path(config.values).read_bytes(), config.values)
        return parse_values(docs[0].data if docs else {})
    except OSError as exc:
        raise ConfigError(f"cannot read values file {config.values}: {exc.strerror}") from exc
    except ValuesError as exc:
        raise ConfigError(f"values file {config.values}: {exc}") from exc


def build_source(cfg: SourceConfig, config: Config) -> Any:
    tree = TreeOptions(include=cfg.include, exclude=cfg.exclude, kustomize=cfg.kustomize)  # type: ignore[arg-type]
    if cfg.type == "git":
        return GitSource(cfg.name, _git_options(cfg.git, config, tree))
    if cfg.type == "export":
        return ExportSource(cfg.name, list(cfg.paths))
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
        digest=policy.digest, title=policy.title, category=policy.category, severity=policy.severity,
        description=policy.annotations.get("policies.kyverno.io/description", ""),
        failure_action=policy.action, scored=policy.scored,
    )


def resource_record(resource: Resource) -> records.ResourceRecord:
    ident, prov = resource.identity, resource.provenance
    return records.ResourceRecord(
        source=prov.source, api_version=ident.api_version, kind=ident.kind, name=ident.name or "",
        namespace=ident.namespace or "", path=prov.path, document=prov.document, item=prov.item,
        line=prov.line, commit_sha=prov.commit or "",
    )


# -- evaluation (in worker processes) -----------------------------------------------------------

_WORKER: dict[str, Any] = {}


@dataclass(frozen=True, slots=True)
class EvaluationSetup:
    """What a worker needs to compile the policies and build the environment itself."""

    policies: tuple[dict, ...]
    values: Values
    exceptions: tuple[dict, ...]
    started_at: datetime
    lookup: ResourceLookup | None = None


def _setup_worker(setup: EvaluationSetup) -> None:
    from scanner.engine.exceptions import parse_exception
    from scanner.engine.policy import parse_policy

    policies = [parse_policy(doc) for doc in setup.policies]
    exceptions = tuple(parse_exception(doc) for doc in setup.exceptions)
    lookup = setup.lookup
    _WORKER["index"] = PolicyIndex(policies)
    _WORKER["env"] = make_environment(
        now=lambda: setup.started_at, load_yaml=_load_yaml_value, values=setup.values, exceptions=exceptions,
        load_documents=lambda text: [d.data for d in load_documents(text)], loader=lookup,
        namespaces=lookup.namespaces if lookup else None)

    def labels(namespace: str) -> dict | None:
        found = setup.values.labels_of(namespace)
        return found if found is not None or lookup is None else lookup.namespace_labels(namespace)

    _WORKER["labels"] = labels


def _evaluate(resources: list[Resource]) -> list[list[RuleResult]]:
    index: PolicyIndex = _WORKER["index"]
    env: Environment = _WORKER["env"]
    labels: Callable[[str], Any] = _WORKER["labels"]
    out = []
    for resource in resources:
        data = resource.data
        view = ResourceView.of(data)
        results: list[RuleResult] = []
        for policy in index.for_kind(view.kind):
            request = Request(operation=env.values.operation(policy.name, view.name), namespace_labels=labels)
            results.extend(evaluate_policy(policy, data, request, view, env))
        out.append(results)
    return out


class _Evaluator:
    """Evaluates chunks of resources in order: in worker processes (each compiling the
    policies once) when jobs > 1, else in this process."""

    def __init__(self, setup: EvaluationSetup, jobs: int) -> None:
        self.jobs = jobs
        self.pool: concurrent.futures.ProcessPoolExecutor | None = None
        if jobs > 1:
            # fork is instant; under the scheduler (other threads running) fork a clean server instead
            method = "fork" if threading.active_count() == 1 else "forkserver"
            self.pool = concurrent.futures.ProcessPoolExecutor(
                jobs, mp_context=multiprocessing.get_context(method),
                initializer=_setup_worker, initargs=(setup,))
            for future in [self.pool.submit(os.getpid) for _ in range(jobs)]:
                future.result()  # start the workers before the store opens connections
        else:
            _setup_worker(setup)

    def map(self, chunks: Iterable[list[Resource]]) -> Iterator[tuple[list[Resource], list[list[RuleResult]]]]:
        if self.pool is None:
            for chunk in chunks:
                yield chunk, _evaluate(chunk)
            return
        window: deque[tuple[list[Resource], concurrent.futures.Future[list[list[RuleResult]]]]] = deque()
        for chunk in chunks:
            window.append((chunk, self.pool.submit(_evaluate, chunk)))
            if len(window) >= 3 * self.jobs:
                done, future = window.popleft()
                yield done, future.result()
        while window:
            done, future = window.popleft()
            yield done, future.result()

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)


# -- the scan ---------------------------------------------------------------------------


@dataclass(slots=True)
class _Tally:
    resources: int = 0
    counts: Counter[str] = field(default_factory=Counter)
    errors: int = 0
    failed_sources: list[str] = field(default_factory=list)
    enforce_failures: int = 0


def _chunks(items: Iterable[Any], errors: list[SourceErrorRecord]) -> Iterator[list[Resource]]:
    chunk: list[Resource] = []
    for item in items:
        if isinstance(item, SourceErrorRecord):
            errors.append(item)
            continue
        chunk.append(item)
        if len(chunk) >= CHUNK:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def _scan_source(cfg: SourceConfig, config: Config, writer: Any, evaluator: _Evaluator, tally: _Tally,
                 progress: ScanProgress) -> None:
    source = build_source(cfg, config)
    progress.stage(f"source {cfg.name}: reading")
    writer.add_source(_source_record(cfg, source))
    errors: list[SourceErrorRecord] = []
    errors_fatal: list[SourceErrorRecord] = []
    try:
        for chunk, results in evaluator.map(_chunks(source.iter_items(), errors)):
            resource_records = [resource_record(r) for r in chunk]
            writer.add_resources(resource_records)
            rows = []
            for record, rule_results in zip(resource_records, results, strict=True):
                for result in rule_results:
                    rows.append(records.ResultRecord.from_rule_result(result, record))
                    tally.counts[str(result.status)] += 1
                    if result.status is RuleStatus.FAIL and result.action is FailureAction.ENFORCE:
                        tally.enforce_failures += 1
            writer.add_results(rows)
            tally.resources += len(chunk)
            progress.resources(len(chunk))
            if errors:
                fatal_seen = _flush_errors(writer, errors, tally)
                if fatal_seen:
                    errors_fatal.extend(fatal_seen)
    except Exception as exc:  # noqa: BLE001 - one failing source never stops the others
        errors.append(SourceErrorRecord(cfg.name, "source", f"source failed: {exc}",
                                        _location(cfg)))
    fatal = errors_fatal + _flush_errors(writer, errors, tally)
    if fatal:
        tally.failed_sources.append(cfg.name)
    writer.add_source(_source_record(cfg, source, "; ".join(e.message for e in fatal)))


def source_fatal_errors(errors: list[SourceErrorRecord]) -> list[SourceErrorRecord]:
    """Errors that mean the source as a whole could not be read (not one bad file)."""
    return [e for e in errors if e.kind in ("git", "source")]


def _location(cfg: SourceConfig) -> Any:
    from scanner.errors import Location

    return Location(redact(cfg.git.url) if cfg.git else (cfg.paths[0] if cfg.paths else None))


def _flush_errors(writer: Any, errors: list[SourceErrorRecord], tally: _Tally) -> list[SourceErrorRecord]:
    """Store the pending error records; returns those that failed the whole source."""
    if not errors:
        return []
    fatal = source_fatal_errors(errors)
    writer.add_errors([records.ErrorRecord(message=e.message, kind=e.kind, source=e.source,
                                           path=e.location.path or "", line=e.location.line) for e in errors])
    tally.errors += len(errors)
    errors.clear()
    return fatal


def exit_code_for(config: Config, tally: _Tally) -> int:
    if tally.failed_sources:
        return EXIT_SOURCES
    fail_on = config.scan.fail_on
    if fail_on == "enforce" and (tally.enforce_failures or tally.counts["error"]):
        return EXIT_FINDINGS
    if fail_on == "fail" and (tally.counts["fail"] or tally.counts["error"]):
        return EXIT_FINDINGS
    if fail_on == "error" and tally.counts["error"]:
        return EXIT_FINDINGS
    return EXIT_CLEAN


def run(config: Config, *, only_sources: Iterable[str] = (), jobs: int | None = None,
        trigger: records.Trigger = records.Trigger.CLI, progress: ScanProgress | None = None,
        now: datetime | None = None) -> ScanOutcome:
    """Run one scan and store it; render the configured reports. Raises on config/policy errors."""
    progress = progress or _Silent()
    started = time.monotonic()
    wanted = list(only_sources)
    unknown = [n for n in wanted if n not in {s.name for s in config.sources}]
    if unknown:
        raise ConfigError(f"unknown source {unknown[0]!r} (configured: {', '.join(s.name for s in config.sources)})")
    selected = [s for s in config.sources if not wanted or s.name in wanted]
    progress.stage("loading policies")
    policy_set = load_config_policies(config)
    values = load_config_values(config)
    exceptions, exception_errors = load_exceptions(config.exceptions)
    if exception_errors:
        raise PolicySetError(exception_errors)
    started_at = now or datetime.now(timezone.utc)
    raw_policies = tuple(p.raw for p in policy_set.policies)
    lookup = None
    if policies_need_lookup(raw_policies):
        progress.stage("indexing resources for cluster look-ups")
        lookup = _prepass(selected, config)
    setup = EvaluationSetup(raw_policies, values, tuple(e.raw for e in exceptions), started_at, lookup)
    jobs = jobs or config.scan.jobs or os.cpu_count() or 1
    evaluator = _Evaluator(setup, jobs)
    tally = _Tally()
    try:
        store = Store(config.database_url)
        try:
            with store.begin_run(records.RunStart(started_at=started_at, trigger=trigger,
                                                  scanner_version=__version__,
                                                  config_digest=config.digest)) as writer:
                writer.add_policies(policy_record(p) for p in policy_set.policies)
                for cfg in selected:
                    _scan_source(cfg, config, writer, evaluator, tally, progress)
                status = writer.finish(records.RunStatus.PARTIAL if tally.failed_sources
                                       else records.RunStatus.SUCCEEDED)
                run_id = writer.run_id
            progress.stage("rendering reports")
            from scanner.report_builder import render_configured_reports, run_changes

            new, resolved = run_changes(store, run_id)
            reports = render_configured_reports(store, run_id, config)
        finally:
            store.close()
    finally:
        evaluator.close()
    return ScanOutcome(
        run_id=run_id, status=str(status), resources=tally.resources, counts=dict(tally.counts),
        new_findings=new, resolved_findings=resolved, errors=tally.errors,
        failed_sources=tuple(tally.failed_sources), duration=time.monotonic() - started,
        reports=tuple(reports), exit_code=exit_code_for(config, tally),
    )


def _prepass(selected: list[SourceConfig], config: Config) -> ResourceLookup:
    """Read the sources once to serve apiCall/configMap/namespaceSelector look-ups like the CLI's
    fake API server: every resource of the scan is visible to every other."""
    lookup = ResourceLookup()
    for cfg in selected:
        try:
            for item in build_source(cfg, config).iter_items():
                if isinstance(item, Resource):
                    lookup.add(item.data)
        except Exception:  # noqa: BLE001 - the main pass records the source's failure
            continue
    return lookup


def _load_yaml_value(text: str) -> Any:
    docs = load_documents(text)
    return docs[0].data if docs else None


def run_scheduled(config_path: str, jobs: int | None = None) -> int:
    """The scheduler's job: load the config afresh and run one scan (trigger ``schedule``)."""
    config = load_config(config_path)
    from scanner.store.store import Store as _Store

    store = _Store(config.database_url)
    try:
        lock = store.try_lock("scan:" + config.digest)
        if lock is None:
            return EXIT_CLEAN  # another scheduler is running this scan now
        try:
            outcome = run(config, jobs=jobs, trigger=records.Trigger.SCHEDULE)
        finally:
            lock.release()
    finally:
        store.close()
    return outcome.exit_code
