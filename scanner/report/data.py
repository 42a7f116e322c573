"""The report contract: frozen values every renderer reads, and nothing else.

A ``ReportData`` holds the facts of one stored run (header, policies, every rule result,
errors, the comparison with the previous run, the trend of earlier runs, the exceptions that
applied) and the views derived from them (summary counts, failures grouped by policy,
groupings by namespace and by source). Build it with ``scanner.report.assemble.assemble_report``
so the derived views are computed in one place from the results and cannot disagree with
them; every format (HTML, JSON, SARIF, PolicyReport, JUnit, audit) renders from it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from scanner.engine.types import FailureAction, RuleStatus

__all__ = [
    "FINDING_STATUSES",
    "SEVERITY_ORDER",
    "STATUS_ORDER",
    "UNSET_SEVERITY",
    "CoverageEntry",
    "ErrorEntry",
    "ExceptionApplied",
    "FailureAction",
    "FindingGroup",
    "GroupCounts",
    "PolicyFindings",
    "PolicyInfo",
    "ReportData",
    "ResourceInfo",
    "ResultChange",
    "ResultRecord",
    "RuleStatus",
    "RunInfo",
    "Severity",
    "SourceCoverage",
    "SourceInfo",
    "Summary",
    "TrendPoint",
]


class Severity(StrEnum):
    """A policy's ``policies.kyverno.io/severity``; the PolicyReport severity values."""

    CRITICAL = "critical"
    HIGH = "high"
    MEDIUM = "medium"
    LOW = "low"
    INFO = "info"


UNSET_SEVERITY = "unset"
"""The severity bucket of policies that declare none."""

SEVERITY_ORDER: tuple[str, ...] = (*(s.value for s in Severity), UNSET_SEVERITY)
STATUS_ORDER: tuple[str, ...] = tuple(s.value for s in (
    RuleStatus.FAIL, RuleStatus.ERROR, RuleStatus.WARN, RuleStatus.PASS, RuleStatus.SKIP))
FINDING_STATUSES: frozenset[RuleStatus] = frozenset(
    {RuleStatus.FAIL, RuleStatus.WARN, RuleStatus.ERROR})
"""Statuses listed as findings in the reports (passes and skips are only counted)."""


@dataclass(frozen=True, slots=True)
class SourceInfo:
    """One source of manifests as scanned in the run (``error`` set when it failed)."""

    name: str
    type: str
    url: str = ""
    ref: str = ""
    commit_sha: str = ""
    commit_time: datetime | None = None
    error: str = ""


@dataclass(frozen=True, slots=True)
class RunInfo:
    """The run header. Times are timezone-aware UTC."""

    run_id: int
    started_at: datetime
    finished_at: datetime | None
    scanner_version: str
    status: str
    trigger: str
    sources: tuple[SourceInfo, ...]
    policy_set_digest: str
    # the run's distinct resources (one object read from two files is one) and the resource
    # documents it read, as ``scanner runs`` shows them (None when not known)
    resources: int | None = None
    documents: int | None = None
    chain_digest: str = ""  # the run's link in the store's hash chain of runs ("" when not chained)

    @property
    def duration_seconds(self) -> float | None:
        if self.finished_at is None:
            return None
        return (self.finished_at - self.started_at).total_seconds()


@dataclass(frozen=True, slots=True)
class PolicyInfo:
    """A policy as evaluated in the run. ``digest`` is the content digest of its file;
    ``scored`` is false when its ``policies.kyverno.io/scored`` annotation is ``"false"``."""

    name: str
    title: str
    category: str
    severity: Severity | None
    description: str
    action: FailureAction
    digest: str
    path: str = ""
    rules: tuple[str, ...] = ()
    scored: bool = True

    @property
    def severity_key(self) -> str:
        return self.severity.value if self.severity is not None else UNSET_SEVERITY


# what rendered a resource, when it was not a Kustomize overlay (whose entry is its folder):
# a Helm chart ("chart web, values ...") or a GitOps object ("HelmRelease ns/name (file:line) ...")
RENDERER_LABELS = ("chart ", "overlay ", "Kustomization ", "HelmRelease ", "Application ")


def describe_via(overlay: str, patches: tuple[str, ...] = ()) -> str:
    """``via overlay X`` (``, patched by A, B``) for a resource rendered from a Kustomize overlay,
    ``via <what rendered it>`` for a chart or a GitOps entry point, ``""`` for a file read as it is."""
    if not overlay:
        return ""
    patched = f", patched by {', '.join(patches)}" if patches else ""
    what = overlay if overlay.startswith(RENDERER_LABELS) else f"overlay {overlay}"
    return f"via {what}{patched}"


@dataclass(frozen=True, slots=True)
class ResourceInfo:
    """A scanned resource and where it came from (``path`` is relative to its source).

    ``path`` and ``line`` are the file and line that define the resource; for a resource
    rendered from a Kustomize overlay that is the base file, ``overlay`` the entry point
    rendered and ``patches`` the patch files that changed it."""

    api_version: str
    kind: str
    namespace: str
    name: str
    source: str
    path: str
    line: int | None = None
    commit: str = ""
    labels: tuple[tuple[str, str], ...] = ()
    annotations: tuple[tuple[str, str], ...] = ()
    overlay: str = ""
    patches: tuple[str, ...] = ()

    @property
    def via(self) -> str:
        """``via overlay X`` (``, patched by A, B``) for a rendered resource, else ``""``."""
        return describe_via(self.overlay, self.patches)

    @property
    def key(self) -> str:
        """``kind/namespace/name`` (``kind/name`` for cluster-scoped resources)."""
        if self.namespace:
            return f"{self.kind}/{self.namespace}/{self.name}"
        return f"{self.kind}/{self.name}"

    @property
    def location(self) -> str:
        """``path:line`` within the source (``path`` alone when the line is unknown)."""
        return f"{self.path}:{self.line}" if self.line is not None else self.path


@dataclass(slots=True, unsafe_hash=True)
class ResultRecord:
    """One rule's result for one resource; ``exception`` names the exception that applied.

    Immutable by convention, not frozen: a report builds one per result of a run, and a frozen
    dataclass is several times slower to build."""

    policy: str
    rule: str
    status: RuleStatus
    message: str
    resource: ResourceInfo
    action: FailureAction = FailureAction.AUDIT
    exception: str = ""


@dataclass(frozen=True, slots=True)
class FindingGroup:
    """The findings of one policy that are one defect: the same rule and status at one defining
    ``path:line`` of one source. A defect of a base rendered by several overlays is one group
    holding a finding per overlay; a resource read as it is makes a group of its own."""

    rule: str
    status: RuleStatus
    source: str
    path: str
    line: int | None
    findings: tuple[ResultRecord, ...]

    @property
    def location(self) -> str:
        return f"{self.path}:{self.line}" if self.line is not None else self.path

    @property
    def overlays(self) -> tuple[str, ...]:
        """The overlays whose renderings hold the defect, in the order of the findings."""
        findings = self.findings
        if len(findings) == 1:  # most defects: a resource read as it is, or one overlay's
            overlay = findings[0].resource.overlay
            return (overlay,) if overlay else ()
        return tuple(dict.fromkeys(r.resource.overlay for r in findings if r.resource.overlay))


@dataclass(frozen=True, slots=True)
class ResultChange:
    """A (policy, rule, resource) whose finding appeared or disappeared since the previous run,
    with where the resource is defined (``path:line``, ``overlay``) and at which ``commit``
    (in the run that has the finding)."""

    policy: str
    rule: str
    kind: str
    namespace: str
    name: str
    source: str
    status_before: RuleStatus | None
    status_after: RuleStatus | None
    message: str = ""
    path: str = ""
    line: int | None = None
    commit: str = ""
    overlay: str = ""

    @property
    def location(self) -> str:
        """``path:line`` within the source (``path`` alone when the line is unknown)."""
        return f"{self.path}:{self.line}" if self.line is not None and self.path else self.path


@dataclass(frozen=True, slots=True)
class ErrorEntry:
    """An input the run could not process: a failed source, an unreadable file, a bad document,
    an invalid policy. In ``ReportData.not_evaluated``: a valid policy the run did not evaluate."""

    source: str
    location: str
    message: str


COVERAGE_KINDS = ("files", "kustomize", "chart", "gitops")
"""What rendered a source's resources, in display order: its files read as they are, a
Kustomize entry point, a Helm chart (on its own or through a kustomization's helmCharts), a
GitOps object (Flux Kustomization or HelmRelease, Argo CD Application)."""

NOT_SCANNED_KINDS = frozenset({"not-scanned", "render", "renderer-missing", "unsupported"})
"""The error kinds of what a source holds but the run did not render: listed as coverage gaps."""


def coverage_kind(overlay: str) -> str:
    """The ``COVERAGE_KINDS`` entry of an observation's ``overlay`` (what rendered it)."""
    if not overlay:
        return "files"
    if overlay.startswith(("Kustomization ", "HelmRelease ", "Application ")):
        return "gitops"
    if overlay.startswith("chart ") or (overlay.startswith("overlay ") and ": chart " in overlay):
        return "chart"
    return "kustomize"


@dataclass(frozen=True, slots=True)
class CoverageEntry:
    """What one entry point of a source rendered: ``entry`` is the overlay, chart or GitOps
    object (``""`` for the files read as they are), with the resources it gave and the files
    defining them."""

    kind: str
    entry: str
    resources: int
    files: int

    @property
    def label(self) -> str:
        if self.kind == "files":
            return "files read as they are"
        return self.entry if self.entry.startswith(RENDERER_LABELS) else f"overlay {self.entry}"


@dataclass(frozen=True, slots=True)
class SourceCoverage:
    """A source's coverage: what was rendered from what, and what was not scanned and why."""

    source: str
    entries: tuple[CoverageEntry, ...]
    not_scanned: tuple[ErrorEntry, ...] = ()

    @property
    def resources(self) -> int:
        return sum(e.resources for e in self.entries)

    def count(self, kind: str) -> int:
        """The entry points of one kind (the resources, for files read as they are)."""
        return sum(1 for e in self.entries if e.kind == kind)


@dataclass(frozen=True, slots=True)
class TrendPoint:
    """Failures of one run per severity (keys from ``SEVERITY_ORDER``)."""

    run_id: int
    started_at: datetime
    failures: Mapping[str, int]

    @property
    def total(self) -> int:
        return sum(self.failures.values())


@dataclass(frozen=True, slots=True)
class ExceptionApplied:
    """A policy exception or override that changed results in the run."""

    name: str
    namespace: str
    policy: str
    rule: str
    resources: int
    reason: str = ""
    path: str = ""


@dataclass(frozen=True, slots=True)
class Summary:
    """Counts: results by status (every status present), failures by severity."""

    by_status: Mapping[str, int]
    failures_by_severity: Mapping[str, int]
    resources: int
    policies: int
    results: int


@dataclass(frozen=True, slots=True)
class PolicyFindings:
    """A policy and its findings (fail, warn, error results), ordered by resource, and the
    same findings grouped by defect (``groups``, ordered by their first finding)."""

    policy: PolicyInfo
    findings: tuple[ResultRecord, ...]
    counts: Mapping[str, int]
    groups: tuple[FindingGroup, ...] = ()


@dataclass(frozen=True, slots=True)
class GroupCounts:
    """Result counts of one namespace or one source."""

    key: str
    counts: Mapping[str, int]
    resources: int
    failing_resources: int


@dataclass(frozen=True, slots=True)
class ReportData:
    """Everything a report shows. Sequences are in display order; renderers do not re-sort.

    ``results`` holds every result of the run, or only its findings when ``findings_only``
    (enough for the formats that list findings; the counts still cover every result).
    """

    run: RunInfo
    policies: tuple[PolicyInfo, ...]
    results: tuple[ResultRecord, ...]
    errors: tuple[ErrorEntry, ...]
    previous_run_id: int | None
    new_findings: tuple[ResultChange, ...]
    resolved_findings: tuple[ResultChange, ...]
    trend: tuple[TrendPoint, ...]
    exceptions: tuple[ExceptionApplied, ...]
    summary: Summary
    failures_by_policy: tuple[PolicyFindings, ...]
    by_namespace: tuple[GroupCounts, ...]
    by_source: tuple[GroupCounts, ...]
    findings_only: bool = False
    not_evaluated: tuple[ErrorEntry, ...] = ()  # policies listed, not evaluated, with the reason
    coverage: tuple[SourceCoverage, ...] = ()  # per source: what rendered what, what was not scanned

    @property
    def findings(self) -> int:
        """The run's findings: its fail, warn and error results."""
        return sum(self.summary.by_status[s.value] for s in FINDING_STATUSES)

    def policy(self, name: str) -> PolicyInfo | None:
        for policy in self.policies:
            if policy.name == name:
                return policy
        return None
