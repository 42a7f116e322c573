"""Values the engine produces: rule statuses and rule results."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class RuleStatus(StrEnum):
    """A rule's outcome for one resource; the same strings everywhere (engine, DB, JSON, HTML)."""

    PASS = "pass"
    FAIL = "fail"
    WARN = "warn"
    ERROR = "error"
    SKIP = "skip"


class FailureAction(StrEnum):
    AUDIT = "Audit"
    ENFORCE = "Enforce"


@dataclass(frozen=True, slots=True)
class RuleResult:
    """One rule's result for one resource.

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
    properties: dict[str, Any] = field(default_factory=dict)
