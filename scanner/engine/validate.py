"""One rule x one resource -> a rule result (or none): the pattern and anyPattern handlers."""

from __future__ import annotations

from scanner.engine.pattern import CompiledPattern, PatternOutcome
from scanner.engine.policy import Rule
from scanner.engine.types import RuleStatus


def pass_message(rule: Rule) -> str:
    return f"validation rule '{rule.name}' passed."


def _with_period(message: str) -> str:
    return message if message.endswith(".") else message + "."


def pattern_failure_message(rule: Rule, outcome: PatternOutcome, message: str | None) -> str:
    """Kyverno's wording for a failed or erroring pattern (spec 4.10)."""
    if not message:
        if outcome.path:
            return f"validation error: rule {rule.name} failed at path {outcome.path}"
        return f"validation error: rule {rule.name} execution error: {outcome.message}"
    msg = _with_period(message)
    if outcome.path:
        return f"validation error: {msg} rule {rule.name} failed at path {outcome.path}"
    return f"validation error: {msg} rule {rule.name} execution error: {outcome.message}"


def message_error(rule: Rule, outcome: PatternOutcome) -> str:
    return (
        f"validation error: variables substitution error in rule {rule.name} "
        f"execution error: {outcome.message}"
    )


def check_pattern(
    rule: Rule, pattern: CompiledPattern, document: object, message: str | None
) -> tuple[RuleStatus, str, str]:
    """(status, message, failing path) of one pattern against a document."""
    outcome = pattern.match(document)
    if outcome.status == "pass":
        return RuleStatus.PASS, pass_message(rule), ""
    if outcome.status == "skip":
        return RuleStatus.SKIP, outcome.message, ""
    if outcome.status == "error":
        return RuleStatus.ERROR, pattern_failure_message(rule, outcome, message), ""
    return RuleStatus.FAIL, pattern_failure_message(rule, outcome, message), outcome.path


def check_any_pattern(
    rule: Rule, patterns: tuple[CompiledPattern, ...], document: object, message: str | None
) -> tuple[RuleStatus, str, str]:
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
        items = " ".join(failed)
        if not message:
            return RuleStatus.FAIL, f"validation error: {items}", first_path
        if message.endswith("."):
            return RuleStatus.FAIL, f"validation error: {message} {items}", first_path
        return RuleStatus.FAIL, f"validation error: {message}. {items}", first_path
    if skipped:
        return RuleStatus.SKIP, " ".join(skipped), ""
    return RuleStatus.PASS, message or "", ""
