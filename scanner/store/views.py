"""What the store's queries return: plain frozen dataclasses (never ORM objects)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime

from scanner.engine.types import FailureAction, RuleStatus
from scanner.store.records import EndReason, RunStatus, SourceType, Trigger


def policy_ref(namespace: str, name: str) -> str:
    """A policy as reports and findings name it: ``namespace/name``, or ``name`` when cluster-wide."""
    return f"{namespace}/{name}" if namespace else name


@dataclass(frozen=True, slots=True)
class StatusCounts:
    """Result counts by status."""

    passed: int = 0
    failed: int = 0
    warned: int = 0
    errored: int = 0
    skipped: int = 0

    @classmethod
    def from_mapping(cls, counts: Mapping[str, int]) -> StatusCounts:
        return cls(passed=counts.get("pass", 0), failed=counts.get("fail", 0),
                   warned=counts.get("warn", 0), errored=counts.get("error", 0),
                   skipped=counts.get("skip", 0))

    def get(self, status: RuleStatus | str) -> int:
        return self.as_dict()[RuleStatus(status).value]

    @property
    def total(self) -> int:
        return self.passed + self.failed + self.warned + self.errored + self.skipped

    def as_dict(self) -> dict[str, int]:
        return {"pass": self.passed, "fail": self.failed, "warn": self.warned,
                "error": self.errored, "skip": self.skipped}


@dataclass(frozen=True, slots=True)
class RunInfo:
    """A stored run: status, trigger, times, version and counts."""

    run_id: int
    status: RunStatus
    trigger: Trigger
    started_at: datetime
    finished_at: datetime | None
    heartbeat_at: datetime
    scanner_version: str
    config_digest: str
    resources: int
    counts: StatusCounts
    error_records: int

    @property
    def results(self) -> int:
        return self.counts.total


@dataclass(frozen=True, slots=True)
class RunSourceInfo:
    """What a run saw of one source: its URL, ref, commit and error."""

    name: str
    type: SourceType
    url: str
    ref: str
    commit_sha: str
    commit_at: datetime | None
    error: str


@dataclass(frozen=True, slots=True)
class RunDetail:
    """A stored run with its sources, how many policies it evaluated and how many it listed as
    not evaluated, and how many resource documents it read (``run.resources`` counts the distinct
    resources: one object read from two files is one resource, two documents)."""

    run: RunInfo
    sources: tuple[RunSourceInfo, ...]
    policies: int
    documents: int = 0
    not_evaluated: int = 0


@dataclass(frozen=True, slots=True)
class LatestSourceRun:
    """The latest completed run that scanned a source, and what it saw of it."""

    source: RunSourceInfo
    run: RunInfo


@dataclass(frozen=True, slots=True)
class PolicyInfo:
    """A stored policy version, with the metadata reports show."""

    kind: str
    namespace: str
    name: str
    digest: str
    title: str
    category: str
    severity: str
    description: str
    failure_action: FailureAction
    scored: bool

    @property
    def ref(self) -> str:
        return f"{self.namespace}/{self.name}" if self.namespace else self.name


@dataclass(frozen=True, slots=True)
class ExceptionSkips:
    """Resources whose results of one policy rule were skipped for the same exceptions;
    ``exceptions`` are their ``namespace/name`` keys as the skip message names them."""

    policy: PolicyInfo
    rule: str
    exceptions: tuple[str, ...]
    resources: int


@dataclass(frozen=True, slots=True)
class ErrorInfo:
    """An error record of a run: a file or a source that could not be read."""

    source: str | None
    kind: str
    path: str
    line: int | None
    message: str


@dataclass(frozen=True, slots=True)
class GroupCount:
    """Counts by status for one group; ``key`` has one part per grouping dimension."""

    key: tuple[str, ...]
    counts: StatusCounts

    @property
    def label(self) -> str:
        return " / ".join(self.key)


@dataclass(frozen=True, slots=True)
class RunSummary:
    """A run's result counts by status, policy, rule, namespace, severity and source."""

    run_id: int
    by_status: StatusCounts
    by_policy: tuple[GroupCount, ...]
    by_rule: tuple[GroupCount, ...]
    by_namespace: tuple[GroupCount, ...]
    by_severity: tuple[GroupCount, ...]
    by_source: tuple[GroupCount, ...]


@dataclass(frozen=True, slots=True)
class ResourceRef:
    """A resource's identity: source, API version, kind, namespace and name."""

    source: str
    api_version: str
    kind: str
    namespace: str
    name: str


@dataclass(frozen=True, slots=True)
class DiffEntry:
    """A (resource, rule) whose status differs between two runs."""

    resource: ResourceRef
    policy: str
    rule: str
    status_before: RuleStatus | None
    status_after: RuleStatus | None
    message: str
    file: str
    line: int | None
    commit_sha: str = ""
    overlay: str = ""  # the overlay rendered, for a rendered resource


@dataclass(frozen=True, slots=True)
class RunDiff:
    """Failures of ``head`` against ``base``; lists are cut at the query's limit."""

    base_run_id: int
    head_run_id: int
    new_count: int
    resolved_count: int
    still_failing_count: int
    new: tuple[DiffEntry, ...]
    resolved: tuple[DiffEntry, ...]
    still_failing: tuple[DiffEntry, ...]


@dataclass(frozen=True, slots=True)
class TrendPoint:
    """Counts for one bucket (a run, or a UTC day) and one group key ("" when ungrouped)."""

    bucket: str
    started_at: datetime
    key: str
    counts: StatusCounts
    runs: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class ResourceResult:
    """One rule's result for a resource in one run."""

    policy: str
    rule: str
    status: RuleStatus
    message: str
    path: str
    action: FailureAction


@dataclass(frozen=True, slots=True)
class ResourceRunEntry:
    """Where one run found a resource, and the results it gave it."""

    run_id: int
    started_at: datetime
    file: str
    document: int
    item: int | None
    line: int | None
    commit_sha: str
    results: tuple[ResourceResult, ...]


@dataclass(frozen=True, slots=True)
class ResourceHistory:
    """A resource's results run by run, newest first."""

    resource: ResourceRef
    entries: tuple[ResourceRunEntry, ...]


@dataclass(frozen=True, slots=True)
class FindingInfo:
    """One finding's lifecycle: the failing (resource, rule), when it opened and how it ended."""

    finding_id: int
    resource: ResourceRef
    policy: str
    rule: str
    first_run_id: int | None
    first_seen_at: datetime
    last_run_id: int | None
    last_seen_at: datetime | None
    resolved_run_id: int | None
    resolved_at: datetime | None
    end_reason: EndReason | None

    @property
    def is_open(self) -> bool:
        return self.resolved_at is None


@dataclass(frozen=True, slots=True)
class ObservationInfo:
    """Where a run found a resource: file, document, item, line, commit and, for a rendered
    resource, the overlay rendered and the patch files that changed it."""

    resource: ResourceRef
    file: str
    document: int
    item: int | None
    line: int | None
    commit_sha: str
    overlay: str = ""
    patches: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ReportResult:
    """One result of a run with its policy metadata and the resource's provenance."""

    policy: PolicyInfo
    rule: str
    declared_rule: str
    status: RuleStatus
    message: str
    path: str
    action: FailureAction
    resource: ResourceRef
    file: str
    document: int
    item: int | None
    line: int | None
    commit_sha: str
    overlay: str = ""  # the overlay rendered, for a rendered resource
    patches: tuple[str, ...] = ()  # the patch files that changed it


@dataclass(frozen=True, slots=True)
class PruneResult:
    """What a prune deleted, and before which time."""

    cutoff: datetime
    runs: int
    resources: int
    policies: int
    findings: int
    orphans_kept: bool = False  # a scan was running: what no run references is deleted next time
    discarded_results: int = 0  # results of failed or interrupted runs deleted (those runs are kept)
