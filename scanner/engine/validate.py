"""One rule's validate handlers: pattern, anyPattern and deny, with Kyverno's messages (spec 4.10, 5, 6.3)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from scanner.engine.conditions import ConditionError, evaluate_block
from scanner.engine.context import ContextError, VariableContext
from scanner.engine.jmespath.interpreter import JMESPathError
from scanner.engine.pattern import CompiledPattern, PatternOutcome
from scanner.engine.rule import Rule
from scanner.engine.rule_parts import Conditions
from scanner.engine.types import RuleStatus
from scanner.engine.variables import SubstitutionError

Message = str | Callable[[], str] | None
Outcome = tuple[RuleStatus, str, str] | None
SUBSTITUTION_FAILURES = (SubstitutionError, ConditionError, ContextError, JMESPathError)


def lazy_message(rule: Rule, ctx: VariableContext | None) -> Message:
    """The rule's message, substituted only when a failure message is built.

    Kyverno substitutes messages as whole documents (``SubstituteAll``): ``$( )`` references
    first, resolved against the message itself, then ``{{ }}`` variables."""
    if ctx is None or not rule.message_substituted:
        return rule.message

    def build() -> str:
        value = ctx.substitute(rule.message)
        return value if isinstance(value, str) else str(value)

    return build


def _resolve(message: Message) -> str:
    return message() if callable(message) else (message or "")


def pattern_failure_message(rule: Rule, outcome: PatternOutcome, message: Message) -> str:
    """Kyverno's wording for a failed or erroring pattern (spec 4.10)."""
    if not rule.message:
        if outcome.path:
            return f"validation error: rule {rule.name} failed at path {outcome.path}"
        return f"validation error: rule {rule.name} execution error: {outcome.message}"
    try:
        msg = _resolve(message)
    except SUBSTITUTION_FAILURES:
        return (f"validation error: variables substitution error in rule {rule.name} "
                f"execution error: {outcome.message}")
    msg = msg if msg.endswith(".") else msg + "."
    if outcome.path:
        return f"validation error: {msg} rule {rule.name} failed at path {outcome.path}"
    return f"validation error: {msg} rule {rule.name} execution error: {outcome.message}"


def check_pattern(rule: Rule, pattern: CompiledPattern, document: Any, message: Message) -> Outcome:
    """(status, message, failing path) of one pattern against a document."""
    outcome = pattern.match(document)
    if outcome.status == "pass":
        return RuleStatus.PASS, rule.pass_message, ""
    if outcome.status == "skip":
        return RuleStatus.SKIP, outcome.message, ""
    if outcome.status == "error":
        return RuleStatus.ERROR, pattern_failure_message(rule, outcome, message), ""
    return RuleStatus.FAIL, pattern_failure_message(rule, outcome, message), outcome.path


def check_any_pattern(rule: Rule, patterns: tuple[CompiledPattern, ...], document: Any,
                      message: Message) -> Outcome:
    """anyPattern: one pass wins; one fail beats skips; all skipped -> skip (spec 5)."""
    failed: list[str] = []
    skipped: list[str] = []
    first_path = ""
    for i, pattern in enumerate(patterns):
        outcome = pattern.match(document)
        if outcome.status == "pass":
            return RuleStatus.PASS, f"validation rule '{rule.name}' anyPattern[{i}] passed.", ""
        if outcome.status == "skip":
            skipped.append(f"rule {rule.name}[{i}] skipped: {outcome.message}")
        elif outcome.path:
            failed.append(f"rule {rule.name}[{i}] failed at path {outcome.path}")
            first_path = first_path or outcome.path
        else:
            failed.append(f"rule {rule.name}[{i}] failed: {outcome.message}")
    if failed:
        return RuleStatus.FAIL, any_pattern_failure_message(rule, " ".join(failed), message), first_path
    if skipped:
        return RuleStatus.SKIP, " ".join(skipped), ""
    return RuleStatus.PASS, rule.message, ""


def any_pattern_failure_message(rule: Rule, items: str, message: Message) -> str:
    """Kyverno's wording for an anyPattern where no pattern passed and some failed (spec 5)."""
    if not rule.message:
        return f"validation error: {items}"
    try:
        msg = _resolve(message)
    except SUBSTITUTION_FAILURES:
        return f"validation error: variables substitution error in rule {rule.name} execution error: {items}"
    sep = " " if msg.endswith(".") else ". "
    return f"validation error: {msg}{sep}{items}"


def run_deny(rule: Rule, conditions: Conditions, ctx: VariableContext) -> Outcome:
    """deny: conditions true -> fail with the rule and condition messages (spec 6.3)."""
    try:
        block = evaluate_block(conditions.parsed(), ctx.substitute)
    except SUBSTITUTION_FAILURES as exc:
        return RuleStatus.ERROR, f"failed to check deny conditions: {exc}", ""
    if not block.value:
        return RuleStatus.PASS, rule.pass_message, ""
    parts = [m for m in (rule.message, block.message) if m]
    if not parts:
        return RuleStatus.FAIL, f"validation error: rule {rule.name} failed", ""
    try:
        value = ctx.substitute("; ".join(parts))
    except SUBSTITUTION_FAILURES:
        return RuleStatus.FAIL, block.message, ""
    if not isinstance(value, str):
        return RuleStatus.FAIL, "the produced message didn't resolve to a string, check your policy definition.", ""
    return RuleStatus.FAIL, value, ""


def run_pattern_rule(rule: Rule, resource: dict, ctx: Callable[[], VariableContext]) -> Outcome:
    """pattern / anyPattern at rule level, substituting variables when the rule has any."""
    validate = rule.validate
    if rule.handler == "pattern":
        if rule.pattern is not None:
            message = lazy_message(rule, ctx()) if rule.message_substituted else rule.message
            return check_pattern(rule, rule.pattern, resource, message)
        context = ctx()
        try:
            pattern = CompiledPattern(context.substitute(validate["pattern"]))
        except SUBSTITUTION_FAILURES as exc:
            return RuleStatus.ERROR, f"variable substitution failed: {exc}", ""
        return check_pattern(rule, pattern, resource, lazy_message(rule, context))
    raw = validate["anyPattern"]
    if not isinstance(raw, list):
        return RuleStatus.ERROR, "failed to deserialize anyPattern, expected type array", ""
    if rule.any_patterns is not None:
        message = lazy_message(rule, ctx()) if rule.message_substituted else rule.message
        return check_any_pattern(rule, rule.any_patterns, resource, message)
    context = ctx()
    try:
        substituted = context.substitute(raw)
    except SUBSTITUTION_FAILURES as exc:
        return RuleStatus.ERROR, f"variable substitution failed: {exc}", ""
    patterns = tuple(CompiledPattern(p) for p in substituted)
    return check_any_pattern(rule, patterns, resource, lazy_message(rule, context))
