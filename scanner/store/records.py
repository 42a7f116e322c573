"""What a scan hands to the store: runs, sources, policies, resources, results and errors.

These frozen dataclasses and ``ResultRow`` are the writer's input API (see
``scanner.store.writer``). They hold plain values only; the store never sees engine or source
objects.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from functools import partial
from typing import NamedTuple

from scanner.engine.types import FailureAction, RuleResult, RuleStatus


class RunStatus(StrEnum):
    """A run's lifecycle: ``running`` until it ends in one of the other states."""

    RUNNING = "running"
    SUCCEEDED = "succeeded"
    PARTIAL = "partial"
    FAILED = "failed"
    INTERRUPTED = "interrupted"


class Trigger(StrEnum):
    MANUAL = "manual"
    SCHEDULE = "schedule"
    CLI = "cli"


class SourceType(StrEnum):
    GIT = "git"
    EXPORT = "export"
    DIRECTORY = "directory"


class EndReason(StrEnum):
    """Why a finding ended."""

    FIXED = "fixed"
    RESOURCE_GONE = "resource_gone"
    POLICY_CHANGED = "policy_changed"
    POLICY_REMOVED = "policy_removed"


COMPLETED_STATUSES: tuple[RunStatus, ...] = (RunStatus.SUCCEEDED, RunStatus.PARTIAL)
"""Runs whose results count: history, trends, diffs and findings read only these."""

FINDING_STATUSES: tuple[RuleStatus, ...] = (RuleStatus.FAIL, RuleStatus.WARN, RuleStatus.ERROR)
"""Result statuses that make a finding (the same set the reports list as findings)."""


@dataclass(frozen=True, slots=True)
class RunStart:
    """What is known when a run begins."""

    started_at: datetime
    trigger: Trigger = Trigger.CLI
    scanner_version: str = ""
    config_digest: str = ""


@dataclass(frozen=True, slots=True)
class SourceRecord:
    """What a run saw of one source; ``url`` must already have credentials redacted."""

    name: str
    type: SourceType
    url: str = ""
    ref: str = ""
    commit_sha: str = ""
    commit_at: datetime | None = None
    error: str = ""


@dataclass(frozen=True, slots=True)
class PolicyRecord:
    """A policy as evaluated; ``digest`` identifies its content so changes show in history."""

    kind: str
    name: str
    digest: str
    namespace: str = ""
    title: str = ""
    category: str = ""
    severity: str = ""
    description: str = ""
    failure_action: FailureAction = FailureAction.AUDIT
    scored: bool = True

    @property
    def ref(self) -> str:
        """The name results use for this policy: ``namespace/name`` or ``name``."""
        return f"{self.namespace}/{self.name}" if self.namespace else self.name


@dataclass(frozen=True, slots=True)
class ResourceRecord:
    """A resource's stable identity (source + apiVersion/kind/namespace/name) and provenance.

    ``document`` is the 0-based document index in ``path``; ``item`` the index inside a
    ``List`` document; ``line`` 1-based. ``namespace`` is ``""`` for cluster-scoped objects.
    A rendered resource names the ``overlay`` rendered and its ``patches`` (files, one a line).
    """

    source: str
    api_version: str
    kind: str
    name: str
    namespace: str = ""
    path: str = ""
    document: int = 0
    item: int | None = None
    line: int | None = None
    commit_sha: str = ""
    overlay: str | None = None
    patches: str | None = None

    @property
    def identity(self) -> tuple[str, str, str, str, str]:
        return (self.source, self.api_version, self.kind, self.namespace, self.name)

    def __reduce__(self) -> tuple:  # plain tuples pickle much faster than slotted dataclass state
        return (ResourceRecord, (self.source, self.api_version, self.kind, self.name, self.namespace,
                                 self.path, self.document, self.item, self.line, self.commit_sha,
                                 self.overlay, self.patches))


@dataclass(frozen=True, slots=True)
class ResultRecord:
    """One rule's result for one resource. ``policy`` is a ``PolicyRecord.ref`` of the run."""

    policy: str
    rule: str
    resource: ResourceRecord
    status: RuleStatus
    message: str = ""
    path: str = ""
    action: FailureAction = FailureAction.AUDIT
    declared_rule: str = ""

    def __reduce__(self) -> tuple:  # plain tuples pickle much faster than slotted dataclass state
        return (ResultRecord, (self.policy, self.rule, self.resource, self.status, self.message, self.path,
                               self.action, self.declared_rule))

    @classmethod
    def from_rule_result(cls, result: RuleResult, resource: ResourceRecord) -> ResultRecord:
        return cls(policy=result.policy, rule=result.rule, resource=resource,
                   status=result.status, message=result.message, path=result.path,
                   action=result.action, declared_rule=result.declared_rule)


class ResultRow(NamedTuple):
    """One rule's result as a scan hands it to the store (``RunWriter.add_result_rows``): plain
    values, ``status`` and ``action`` as their strings, the resource as its index in the list of
    resources sent with the row.

    Scan workers send these rows between processes as plain tuples in this field order (a
    named tuple pickles and unpickles several times slower than a plain one): ``wire_rows``
    gives them their names back, at C speed, where they arrive."""

    resource_index: int
    policy: str
    rule: str
    status: str
    message: str
    path: str
    action: str
    declared_rule: str


_as_result_row = partial(tuple.__new__, ResultRow)


def wire_rows(rows: list[tuple]) -> list[ResultRow]:
    """Plain tuples in ``ResultRow``'s field order (as sent between processes) as ``ResultRow``s."""
    return list(map(_as_result_row, rows))


def result_rows(records: Iterable[ResultRecord]) -> tuple[list[ResourceRecord], list[ResultRow]]:
    """Result records as ``add_result_rows`` takes them: their distinct resources, and a row each."""
    resources: list[ResourceRecord] = []
    positions: dict[ResourceRecord, int] = {}
    rows: list[ResultRow] = []
    last: ResourceRecord | None = None
    index = 0
    for record in records:
        if record.resource is not last:  # results of one resource usually arrive together
            last = record.resource
            found = positions.get(last)
            if found is None:
                found = positions[last] = len(resources)
                resources.append(last)
            index = found
        rows.append(ResultRow(index, record.policy, record.rule, str(record.status), record.message,
                              record.path, str(record.action), record.declared_rule))
    return resources, rows


UNSUPPORTED = "unsupported"
"""The ``ErrorRecord.kind`` of a policy of a kind not evaluated (ValidatingPolicy, ...): an error."""
NOT_EVALUATED = "not-evaluated"
"""The ``ErrorRecord.kind`` of a valid policy the run did not evaluate (a notice, not an error:
never counted in a run's errors)."""


@dataclass(frozen=True, slots=True)
class ErrorRecord:
    """An input problem recorded with the run: ``kind`` is e.g. manifest, source, kustomize,
    policy, unsupported (a policy of a kind not evaluated), or ``NOT_EVALUATED``."""

    message: str
    kind: str
    source: str | None = None
    path: str = ""
    line: int | None = None


@dataclass(slots=True)
class StoredFootprint:
    """What a run stored for resources written whole with all their results (one shard's), for a
    later run to share without their rows (``RunWriter.share_footprint``): their observations
    (content digest -> id), their results as the chain hashes them (observation id -> text,
    and the checks named), their tallies ((source id, namespace, check id, status) -> count)
    and the policy of each check."""

    observations: dict[str, int]
    texts: dict[int, bytes]
    checks: set[int]
    tallies: dict[tuple[int, str, int, str], int]
    check_policies: dict[int, int]
