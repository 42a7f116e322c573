"""Stored runs -> report data: the bridge between the report database and the renderers.

Used by the scan (reports after each run) and by ``scanner report`` (any stored run).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from hashlib import sha256
from operator import attrgetter
from pathlib import Path

from scanner.config import Config
from scanner.engine.exceptions import skipping_exceptions
from scanner.engine.types import FailureAction, RuleStatus
from scanner.errors import Location, ReportError
from scanner.report.assemble import GroupTally, RunCounts, assemble_report, resource_order, source_coverage
from scanner.report.data import (
    FINDING_STATUSES,
    UNSET_SEVERITY,
    ErrorEntry,
    ExceptionApplied,
    PolicyInfo,
    ReportData,
    ResourceInfo,
    ResultChange,
    ResultRecord,
    RunInfo,
    Severity,
    SourceCoverage,
    SourceInfo,
    TrendPoint,
)
from scanner.report.render import lists_every_result
from scanner.scan.finish import finish_while, render_reports
from scanner.scan.processes import uncollected
from scanner.store import COMPLETED_STATUSES, views
from scanner.store.records import NOT_EVALUATED, UNSUPPORTED, RunStatus
from scanner.store.store import Store
from scanner.store.summary import normal_severity
from scanner.store.writer import RunWriter

_SEVERITIES = {s.value for s in Severity}
_POLICY, _RULE = attrgetter("policy"), attrgetter("rule")


def _severity_key(severity: str) -> str:
    """The report's bucket of a stored severity (``Medium`` is ``medium``; one the reports do not
    know counts as unset)."""
    severity = normal_severity(severity)
    return severity if severity in _SEVERITIES else UNSET_SEVERITY


def _policy_ref(policy: views.PolicyInfo) -> str:
    return views.policy_ref(policy.namespace, policy.name)


def _change(entry: views.DiffEntry) -> ResultChange:
    r = entry.resource
    return ResultChange(policy=entry.policy, rule=entry.rule, kind=r.kind, namespace=r.namespace, name=r.name,
                        source=r.source, status_before=entry.status_before, status_after=entry.status_after,
                        message=entry.message, path=entry.file, line=entry.line, commit=entry.commit_sha,
                        overlay=entry.overlay)


@dataclass(frozen=True, slots=True)
class RunNumbers:
    """A stored run's numbers as ``scanner scan`` prints them, ``scanner runs`` shows them and the
    reports show them: the same store rows, so they agree. ``resources`` counts distinct resources
    (source, apiVersion, kind, namespace, name), ``documents`` the resource documents read; ``new``
    is every finding of the run when there is no previous run (``previous_run_id`` None)."""

    previous_run_id: int | None
    new: int
    resolved: int
    resources: int
    documents: int
    duration: float | None  # from the run's stored start to its stored end


def run_numbers(store: Store, run_id: int, data: ReportData | None = None) -> RunNumbers:
    """``RunNumbers`` of a finished run (the comparison read from its report ``data`` when built)."""
    detail = store.get_run(run_id)
    run = detail.run
    duration = (run.finished_at - run.started_at).total_seconds() if run.finished_at else None
    if data is not None:
        previous = data.previous_run_id
        new, resolved = (data.findings, 0) if previous is None else (len(data.new_findings),
                                                                      len(data.resolved_findings))
    else:
        previous = store.previous_run_id(run_id)
        if previous is None:
            counts = run.counts
            new, resolved = counts.failed + counts.warned + counts.errored, 0
        else:
            diff = store.diff_runs(previous, run_id, limit=0)
            new, resolved = diff.new_count, diff.resolved_count
    return RunNumbers(previous_run_id=previous, new=new, resolved=resolved, resources=run.resources,
                      documents=detail.documents, duration=duration)


@dataclass(frozen=True, slots=True)
class RunResults:
    """What a run's reports read of its results, policies, errors and observations: all
    written before the run finishes (``read_run_results``), so read while it finishes. The
    results come in report order (``assemble_report``'s), which ``report_data`` keeps."""

    run_id: int
    findings_only: bool
    policies: list[views.PolicyInfo]
    results: list[ResultRecord]
    errors: list[ErrorEntry]
    exceptions: list[ExceptionApplied]
    not_evaluated: list[ErrorEntry] = field(default_factory=list)
    # with ``findings_only``: the resources with results, and per namespace and per source
    # the resources and the failing ones (the counts the findings alone do not give)
    resources: int = 0
    observed: dict[str, dict[str, list[int]]] = field(default_factory=dict)
    coverage: tuple[SourceCoverage, ...] = ()  # per source: what rendered what, what was not scanned


def _report_order(observations: dict[int, views.ObservationInfo]) -> list[int]:
    """The observations in the order reports list a rule's results (``assemble_report``'s),
    equal ones as read."""
    def key(observation_id: int) -> tuple[str, str, str, str, str, int]:
        ob = observations[observation_id]
        r = ob.resource
        return resource_order(r.namespace, r.kind, r.name, r.source, ob.file, ob.line)

    return sorted(observations, key=key)


def _check_order(namespace: str, name: str, rule: str) -> tuple[str, str]:
    """A check's place in reports: its policy as they name it, then its rule."""
    return views.policy_ref(namespace, name), rule


@uncollected()  # (172,000 results of the 10k benchmark: a tenth of the read was collections)
def read_run_results(store: Store, run_id: int, *, findings_only: bool = False) -> RunResults:
    """The part of a run's report data that finishing the run does not change: every result,
    or (``findings_only``) the findings and the resources observed."""
    rows, observations = store.run_result_rows(run_id, statuses=FINDING_STATUSES if findings_only else (),
                                               order=_report_order, check_key=_check_order)
    # one object per place a resource was found (observations in the same place share it)
    places: dict[tuple, ResourceInfo] = {}
    infos: dict[int, ResourceInfo] = {}
    wanted = {row[8] for row in rows} if findings_only else observations.keys()
    for observation_id in wanted:
        ob = observations[observation_id]
        r = ob.resource
        key = (r, ob.file, ob.line, ob.commit_sha, ob.overlay, ob.patches)
        info = places.get(key)
        if info is None:
            info = places[key] = ResourceInfo(
                api_version=r.api_version, kind=r.kind, namespace=r.namespace, name=r.name, source=r.source,
                path=ob.file, line=ob.line, commit=ob.commit_sha, overlay=ob.overlay, patches=ob.patches)
        infos[observation_id] = info
    refs = {policy_id: _policy_ref(p) for policy_id, p in store.run_policies_by_id(run_id).items()}
    by_value = {s.value: s for s in RuleStatus}
    actions = {a.value: a for a in FailureAction}
    skip = RuleStatus.SKIP.value
    results = [  # (positional: the fields' order)
        ResultRecord(refs[policy_id], rule, by_value[status], message, infos[observation_id], actions[action],
                     ", ".join(skipping_exceptions(message)) if status == skip else "")
        for _, policy_id, rule, _, status, message, _, action, observation_id in rows]
    errors: list[ErrorEntry] = []
    not_evaluated: list[ErrorEntry] = []
    kinds: list[tuple[str, str, ErrorEntry]] = []
    for e in store.run_errors(run_id):  # a policy of a kind not supported is both an error and not evaluated
        entry = ErrorEntry(source=e.source or "", location=f"{e.path}:{e.line}" if e.line else e.path,
                           message=e.message)
        kinds.append((e.source or "", e.kind, entry))
        if e.kind != NOT_EVALUATED:
            errors.append(entry)
        if e.kind in (NOT_EVALUATED, UNSUPPORTED):
            not_evaluated.append(entry)
    resources = 0
    observed: dict[str, dict[str, list[int]]] = {}
    if findings_only:
        observed = {"namespace": defaultdict(lambda: [0, 0]), "source": defaultdict(lambda: [0, 0])}
        for namespace, source, failing in store.iter_run_observations(run_id):
            resources += 1
            for group, groups in ((namespace, observed["namespace"]), (source, observed["source"])):
                groups[group][0] += 1
                groups[group][1] += failing
    return RunResults(run_id=run_id, findings_only=findings_only, policies=store.run_policies(run_id),
                      results=results, errors=errors, exceptions=_exceptions(store, run_id),
                      not_evaluated=not_evaluated, resources=resources, observed=observed,
                      coverage=source_coverage(((c.source, c.overlay, c.resources, c.files)
                                                for c in store.run_coverage(run_id)), kinds))


@dataclass(frozen=True, slots=True)
class RunOutcome:
    """What a run's reports read of what finishing it gave (``read_run_outcome``): its
    status and times, its tallies, the findings it opened and ended, the trend up to it."""

    detail: views.RunDetail
    summary: views.RunSummary | None  # with ``findings_only`` (the counts then come from the tallies)
    previous_run_id: int | None
    new_findings: list[ResultChange]
    resolved_findings: list[ResultChange]
    trend: list[TrendPoint]
    chain_digest: str = ""


def read_run_outcome(store: Store, run_id: int, *, findings_only: bool = False, history: int = 30) -> RunOutcome:
    """The part of a run's report data that finishing the run gives."""
    previous = store.previous_run_id(run_id)
    new: list[ResultChange] = []
    resolved: list[ResultChange] = []
    if previous is not None:
        diff = store.diff_runs(previous, run_id)
        new = [_change(e) for e in diff.new]
        resolved = [_change(e) for e in diff.resolved]
    link = store.chain_link(run_id)
    return RunOutcome(detail=store.get_run(run_id), summary=store.summarize_run(run_id) if findings_only else None,
                      previous_run_id=previous, new_findings=new, resolved_findings=resolved,
                      trend=_trend(store, run_id, history), chain_digest=link.chain_digest if link else "")


def build_report_data(store: Store, run_id: int, *, history: int = 30, findings_only: bool = False) -> ReportData:
    """The report data of a stored run: every result, or (``findings_only``) the findings
    and the counts over all results, which is what the HTML, JSON and SARIF reports show
    and takes a fraction of the time and memory."""
    return report_data(read_run_results(store, run_id, findings_only=findings_only),
                       read_run_outcome(store, run_id, findings_only=findings_only, history=history))


@uncollected()
def report_data(read: RunResults, outcome: RunOutcome) -> ReportData:
    """The report data of a run from its two parts, read by ``read_run_results`` and
    ``read_run_outcome`` (of the same run, both with or both without ``findings_only``)."""
    run, summary = outcome.detail.run, outcome.summary
    if read.run_id != run.run_id or read.findings_only != (summary is not None):
        raise ValueError(f"report data parts do not match: results of run {read.run_id} (findings only: "
                         f"{read.findings_only}), outcome of run {run.run_id} (tallies read: {summary is not None})")
    digest_source = ",".join(sorted(p.digest for p in read.policies))
    run_info = RunInfo(
        run_id=run.run_id, started_at=run.started_at, finished_at=run.finished_at,
        scanner_version=run.scanner_version, status=str(run.status), trigger=str(run.trigger),
        sources=tuple(SourceInfo(name=s.name, type=str(s.type), url=s.url, ref=s.ref, commit_sha=s.commit_sha,
                                 commit_time=s.commit_at, error=s.error) for s in outcome.detail.sources),
        policy_set_digest="sha256:" + sha256(digest_source.encode()).hexdigest(),
        resources=run.resources, documents=outcome.detail.documents,
        chain_digest=outcome.chain_digest,
    )
    # each policy's rules that gave results: from the results when all are read, else from the run's tallies
    rules: dict[str, dict[str, None]] = defaultdict(dict)
    for policy_ref, rule in ((g.key[0], g.key[1]) for g in summary.by_rule) if summary else dict.fromkeys(
            zip(map(_POLICY, read.results), map(_RULE, read.results), strict=True)):  # (each pair once, in C)
        rules[policy_ref][rule] = None
    policy_infos = [PolicyInfo(
        name=_policy_ref(p), title=p.title, category=p.category,
        severity=Severity(normal_severity(p.severity)) if normal_severity(p.severity) in _SEVERITIES else None,
        description=p.description, action=p.failure_action, digest=p.digest, scored=p.scored,
        rules=tuple(rules.get(_policy_ref(p), ())),
    ) for p in read.policies]
    return assemble_report(run=run_info, policies=policy_infos, results=read.results, errors=read.errors,
                           previous_run_id=outcome.previous_run_id, new_findings=outcome.new_findings,
                           resolved_findings=outcome.resolved_findings, trend=outcome.trend,
                           exceptions=read.exceptions, counts=_run_counts(summary, read) if summary else None,
                           not_evaluated=read.not_evaluated, coverage=read.coverage, in_order=True)


def _exceptions(store: Store, run_id: int) -> list[ExceptionApplied]:
    """Each policy exception that skipped results of the run, per policy rule, with the number
    of resources whose results it skipped."""
    resources: dict[tuple[str, str, str], int] = defaultdict(int)
    for skips in store.exception_skips(run_id):
        for key in skips.exceptions:
            resources[(key, _policy_ref(skips.policy), skips.rule)] += skips.resources
    out = []
    for (key, policy, rule), count in resources.items():
        namespace, _, name = key.rpartition("/")
        out.append(ExceptionApplied(name=name, namespace=namespace, policy=policy, rule=rule, resources=count))
    return out


def _run_counts(summary: views.RunSummary, read: RunResults) -> RunCounts:
    """The counts over every result of a run: its summary (the tallies), and the resources by group."""
    severity: dict[str, int] = {}
    for group in summary.by_severity:
        key = _severity_key(group.key[0])
        severity[key] = severity.get(key, 0) + group.counts.failed

    def tallies(groups: tuple[views.GroupCount, ...], dim: str) -> dict[str, GroupTally]:
        return {g.key[0]: GroupTally(g.counts.as_dict(), *read.observed[dim].get(g.key[0], (0, 0))) for g in groups}

    return RunCounts(by_status=summary.by_status.as_dict(), failures_by_severity=severity, resources=read.resources,
                     by_namespace=tallies(summary.by_namespace, "namespace"),
                     by_source=tallies(summary.by_source, "source"))


def _trend_runs(store: Store, run_id: int, history: int) -> list[views.RunInfo]:
    """The last ``history`` completed runs up to and including ``run_id`` that read resources
    (a run whose sources all failed is no clean point), oldest first."""
    return store.list_runs(limit=history, up_to=run_id, statuses=COMPLETED_STATUSES, evaluated=True)[::-1]


def _trend(store: Store, run_id: int, history: int) -> list[TrendPoint]:
    recent = _trend_runs(store, run_id, history)
    if not recent:
        return []
    starts = [r.started_at for r in recent]  # ``until`` is exclusive
    points = store.trend(since=min(starts), until=max(starts) + timedelta(microseconds=1), group_by="severity",
                         bucket="run", statuses=("fail",))  # the points count failures only
    wanted = {r.run_id for r in recent}
    by_run: dict[int, dict[str, int]] = defaultdict(dict)
    for p in points:
        key = _severity_key(p.key)
        for counted in wanted.intersection(p.runs):
            by_run[counted][key] = by_run[counted].get(key, 0) + p.counts.failed
    return [TrendPoint(run_id=r.run_id, started_at=r.started_at, failures=by_run.get(r.run_id, {}))
            for r in recent]


ReportParts = tuple[RunResults, RunOutcome]


def render_configured_reports(store: Store, run_id: int, config: Config, parts: ReportParts | None = None,
                              written: Callable[[str, str], None] | None = None) -> tuple[list[str], ReportData | None]:
    """Render every format the config names into ``reports.out`` (the findings-only variants
    with ``reports.findings_only``), then remove the report files of runs older than the
    ``reports.keep`` newest or written more than ``reports.keep_days`` days ago: the files
    written, and the report data (``None`` when no format is configured). ``parts`` are the run's report data
    read already (``read_configured_results`` and ``read_configured_outcome``); ``written`` is
    told each format and file as it is written."""
    if not config.reports.formats:
        return [], None
    read, outcome = parts or (read_configured_results(store, run_id, config),
                              read_configured_outcome(store, run_id, config))
    data = report_data(read, outcome)
    out = Path(config.reports.out)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise ReportError(f"cannot create the reports folder: {e.strerror or type(e).__name__}",
                          Location(path=str(out))) from e
    paths = render_reports(data, config.reports.formats, out, written, findings_only=config.reports.findings_only)
    files = [str(path) for path in paths] + sign_configured_reports(data, config, paths, written)
    if config.reports.keep is not None or config.reports.keep_days is not None:
        from scanner.report.keep import prune_reports

        prune_reports(out, config.reports.keep, current=run_id, keep_days=config.reports.keep_days)
    return files, data


def sign_configured_reports(data: ReportData, config: Config, paths: list[Path],
                            written: Callable[[str, str], None] | None = None) -> list[str]:
    """With a signing key in the config: sign the audit reports among ``paths`` (the reports
    written, in the order of the config's formats); the signature files written (``written`` is
    told each, as the format's ``signature``), none without a key."""
    key_source = config.reports.signing_key
    audit = [(fmt, path) for path, fmt in zip(paths, config.reports.formats, strict=True) if fmt.startswith("audit-")]
    if key_source is None or not audit:
        return []
    from scanner.report.signing import read_signing_key, write_signature  # (cryptography: only to sign)

    key = read_signing_key(file=key_source.file, env=key_source.env)
    signatures = []
    for fmt, path in audit:
        signatures.append(str(write_signature(path, data, key)))
        if written is not None:
            written(f"{fmt} signature", signatures[-1])
    return signatures


def finish_reading_reports(writer: RunWriter, store: Store, config: Config, status: RunStatus,
                           aside: Callable[[], None] | None = None) -> tuple[RunStatus, ReportParts | None]:
    """Finish the run and read its configured reports' data: what finishing does not change
    (the results) while it finishes, the rest (findings, trends) after; ``aside`` meanwhile
    (``finish_while``). The final status, and the data (None without configured reports)."""
    run_id = writer.run_id
    if not config.reports.formats:  # (finished in a child only beside ``aside``)
        return (finish_while(writer, lambda: None, lambda: None, status, aside)[0] if aside is not None
                else writer.finish(status)), None
    status, read, outcome = finish_while(writer, lambda: read_configured_results(store, run_id, config),
                                         lambda: read_configured_outcome(store, run_id, config), status, aside)
    return status, (read, outcome)


def read_configured_results(store: Store, run_id: int, config: Config) -> RunResults:
    """``read_run_results`` for the configured reports (only the findings when they show no more)."""
    return read_run_results(store, run_id, findings_only=_findings_only(config))


def read_configured_outcome(store: Store, run_id: int, config: Config) -> RunOutcome:
    """``read_run_outcome`` for the configured reports."""
    return read_run_outcome(store, run_id, findings_only=_findings_only(config), history=config.reports.history)


def _findings_only(config: Config) -> bool:
    return not any(lists_every_result(fmt, config.reports.findings_only) for fmt in config.reports.formats)
