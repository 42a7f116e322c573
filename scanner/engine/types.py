"""Values the engine produces: rule statuses and rule results."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class RuleStatus(StrEnum):
    """A rule's outcome for one resource; the same strings everywhere (engine, DB, JSON, HTML)."""

    PASS = "pass"
    FAIL = "fail"
    WARN = "warn"
    ERROR = "error"
    SKIP = "skip"


def reported_status(status: RuleStatus, scored: bool) -> RuleStatus:
    """The result Kyverno's policy reports (and ``kyverno test``) give a rule status: a failure
    of a policy annotated ``policies.kyverno.io/scored: "false"`` is reported as a warning."""
    return RuleStatus.WARN if status is RuleStatus.FAIL and not scored else status


class FailureAction(StrEnum):
    AUDIT = "Audit"
    ENFORCE = "Enforce"


@dataclass(slots=True)
class RuleResult:
    """One rule's result for one resource (not frozen: a scan makes one per rule and
    resource, and a frozen dataclass is twice as slow to build).

    ``rule`` is the rule as evaluated (``autogen-<rule>`` for generated rules);
    ``declared_rule`` the rule as written in the policy. ``path`` is the failing path
    when the message names one. ``action`` is the failure action resolved for the
    resource's namespace.
    """

    policy: str
    rule: str
    status: RuleStatus
    message: str
    path: str = ""
    action: FailureAction = FailureAction.AUDIT
    declared_rule: str = ""
