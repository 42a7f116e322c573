"""``foreach`` validation: per-element preconditions, context, deny/pattern/anyPattern and nesting (spec 9)."""

from __future__ import annotations

from typing import Any

from scanner.engine.budget import active
from scanner.engine.conditions import ConditionError, evaluate_block
from scanner.engine.context import ContextError, VariableContext
from scanner.engine.golang.fmt import type_name
from scanner.engine.jmespath.interpreter import JMESPathError, UnknownKeyError
from scanner.engine.pattern import CompiledPattern
from scanner.engine.rule import Rule
from scanner.engine.rule_parts import ForeachEntry
from scanner.engine.types import RuleStatus
from scanner.engine.validate import check_any_pattern, check_pattern, lazy_message, run_deny
from scanner.engine.variables import SubstitutionError

Outcome = tuple[RuleStatus, str, str] | None
ELEMENT_STEPS = 16  # what one element costs the rule's budget, beside the expressions it runs
_FAILURES = (SubstitutionError, ConditionError, ContextError, JMESPathError)


def run_foreach(rule: Rule, entries: tuple[ForeachEntry, ...], ctx: VariableContext, resource: dict,
                depth: int, operation: str) -> Outcome:
    """Iterate the foreach entries; the first failing or erroring element decides."""
    counted = 0
    list_error: str | None = None
    element_key, index_key = f"element{depth}", f"elementIndex{depth}"
    for position, entry in enumerate(entries):
        try:
            items = ctx.search(entry.list)
        except UnknownKeyError:
            continue
        except _FAILURES as exc:
            list_error = str(exc)
            continue
        if not isinstance(items, list):
            items = [items]
        budget = active()
        if len(items) > budget.limits.list_length:
            budget.check_list(len(items), f"the foreach list {entry.list!r}")
        state = ctx.checkpoint()
        charge = budget.charge
        for index, element in enumerate(items):
            if element is None:
                continue
            charge(ELEMENT_STEPS)
            ctx.restore(state)
            if entry.raw.get("elementScope") is True and not isinstance(element, dict):
                return RuleStatus.ERROR, _scope_error(element), ""
            ctx.set_all({"element": element, element_key: element, "elementIndex": index, index_key: index})
            ctx.foreach_position = (position, index)
            outcome = _element(rule, entry, ctx, resource, element, depth, operation)
            if outcome is None or outcome[0] is RuleStatus.SKIP:
                continue
            if outcome[0] is RuleStatus.PASS:
                counted += 1
                continue
            ctx.restore(state)
            return outcome[0], f"validation failure: {outcome[1]}", outcome[2]
        ctx.restore(state)
    if counted == 0:
        if list_error is not None:
            return RuleStatus.ERROR, f"failed to evaluate list: {list_error}", ""
        return None
    return RuleStatus.PASS, "rule passed", ""


def _scope_error(element: Any) -> str:
    """Kyverno's message for ``elementScope: true`` on an element that is not a map."""
    return ("failed to process foreach: cannot use elementScope=true foreach rules for elements "
            f"that are not maps, expected type=map got type={type_name(element)}")


def _element(rule: Rule, entry: ForeachEntry, ctx: VariableContext, resource: dict, element: Any,
             depth: int, operation: str) -> Outcome:
    raw = entry.raw
    scoped = isinstance(element, dict) and raw.get("elementScope") is not False
    document = element if scoped else resource
    ctx.add_entries(raw.get("context"))
    if entry.preconditions is not None:
        try:
            block = evaluate_block(entry.preconditions.parsed(), ctx.substitute)
        except _FAILURES:
            return None
        if not block.value:
            return None
    if entry.deny is not None:
        return run_deny(rule, entry.deny, ctx)
    if raw.get("pattern") is not None or raw.get("anyPattern") is not None:
        if operation == "DELETE" and document is resource:
            return None
        try:
            if raw.get("pattern") is not None:
                pattern = entry.pattern or CompiledPattern(ctx.substitute(raw["pattern"]))
                return check_pattern(rule, pattern, document, lazy_message(rule, ctx))
            patterns = entry.any_pattern
            if patterns is None:
                any_pattern = ctx.substitute(raw["anyPattern"])
                if not isinstance(any_pattern, list):
                    return RuleStatus.ERROR, "failed to deserialize anyPattern, expected type array", ""
                patterns = tuple(CompiledPattern(p) for p in any_pattern)
        except _FAILURES as exc:
            return RuleStatus.ERROR, f"variable substitution failed: {exc}", ""
        return check_any_pattern(rule, patterns, document, lazy_message(rule, ctx))
    if entry.nested is not None:
        return run_foreach(rule, entry.nested, ctx, resource, depth + 1, operation)
    return None
