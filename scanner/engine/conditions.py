"""Condition blocks of ``deny``, ``preconditions`` and foreach preconditions (spec 6).

``parse_conditions`` turns the raw YAML shape into a ``ConditionBlock`` once per policy;
``evaluate_block`` evaluates it for one resource, calling the caller's ``substitute`` for
keys and values that contain variables or references. The operators themselves live in
``apply_operator`` (spec 6.4), with Kyverno's exact type coercions.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from scanner.engine.condition_operators import ConditionError, evaluate_operator
from scanner.engine.variables import SubstitutionError
from scanner.errors import Location, PolicyError

OPERATORS: frozenset[str] = frozenset(
    {
        "Equals",
        "NotEquals",
        "Equal",
        "NotEqual",
        "In",
        "NotIn",
        "AnyIn",
        "AllIn",
        "AnyNotIn",
        "AllNotIn",
        "GreaterThan",
        "GreaterThanOrEquals",
        "LessThan",
        "LessThanOrEquals",
        "DurationGreaterThan",
        "DurationGreaterThanOrEquals",
        "DurationLessThan",
        "DurationLessThanOrEquals",
    }
)

__all__ = [
    "OPERATORS",
    "BlockResult",
    "Condition",
    "ConditionBlock",
    "ConditionError",
    "apply_operator",
    "evaluate_block",
    "parse_conditions",
]


def apply_operator(operator: str, key: Any, value: Any) -> bool:
    """Apply a condition operator (matched case-insensitively) to a substituted key and value.

    Raises ``ConditionError`` for an unknown operator and for inputs Kyverno cannot
    evaluate (a non-string element in the key list of ``In``/``NotIn``).
    """
    return evaluate_operator(operator, key, value)


def _needs_substitution(value: Any) -> bool:
    if isinstance(value, str):
        return "{{" in value or "$(" in value
    if isinstance(value, dict):
        return any(_needs_substitution(k) or _needs_substitution(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_needs_substitution(v) for v in value)
    return False


@dataclass(frozen=True, slots=True)
class Condition:
    """One condition: ``key``, ``operator``, ``value`` (absent = null) and ``message``."""

    key: Any
    operator: str
    value: Any = None
    message: str = ""
    key_is_static: bool = True
    value_is_static: bool = True


@dataclass(frozen=True, slots=True)
class ConditionBlock:
    """A parsed block: legacy list (``legacy``) or any/all (``any`` None when absent)."""

    any: tuple[Condition, ...] | None = None
    all: tuple[Condition, ...] = ()
    legacy: bool = False

    @property
    def separator(self) -> str:
        return ";" if self.legacy else "; "


@dataclass(frozen=True, slots=True)
class BlockResult:
    """The value of a block and the messages that explain it (spec 6.2)."""

    value: bool
    messages: list[str]
    separator: str = "; "

    @property
    def message(self) -> str:
        return self.separator.join(self.messages)


def _error(message: str, pointer: str) -> PolicyError:
    return PolicyError(message, Location(pointer=pointer or None))


def _parse_condition(raw: Any, pointer: str) -> Condition:
    if not isinstance(raw, dict):
        raise _error("a condition must be a mapping with key, operator and value", pointer)
    operator = raw.get("operator")
    if not isinstance(operator, str) or not operator:
        raise _error("condition operator is missing or not a string", f"{pointer}/operator")
    message = raw.get("message")
    if message is not None and not isinstance(message, str):
        raise _error("condition message must be a string", f"{pointer}/message")
    key, value = raw.get("key"), raw.get("value")
    return Condition(
        key=key,
        operator=operator,
        value=value,
        message=message or "",
        key_is_static=not _needs_substitution(key),
        value_is_static=not _needs_substitution(value),
    )


def _parse_list(raw: Any, pointer: str) -> tuple[Condition, ...]:
    if not isinstance(raw, list):
        raise _error("expected a list of conditions", pointer)
    return tuple(_parse_condition(item, f"{pointer}/{i}") for i, item in enumerate(raw))


def parse_conditions(raw: Any, *, foreach: bool = False, pointer: str = "") -> ConditionBlock:
    """Decode a condition block: a legacy list, or an object with optional ``any``/``all``.

    ``foreach=True`` accepts only the any/all object form. ``pointer`` is the JSON pointer
    of the block inside the policy, used in ``PolicyError`` locations. A null block is an
    empty any/all block (always true); other fields of the object are ignored, as Kyverno
    ignores them when it decodes the block.
    """
    if raw is None:
        return ConditionBlock()
    if isinstance(raw, list):
        if foreach:
            raise _error("foreach preconditions must be an object with any/all", pointer)
        return ConditionBlock(all=_parse_list(raw, pointer), legacy=True)
    if not isinstance(raw, dict):
        raise _error("conditions must be a list or an object with any/all", pointer)
    any_raw, all_raw = raw.get("any"), raw.get("all")
    return ConditionBlock(
        any=None if any_raw is None else _parse_list(any_raw, f"{pointer}/any"),
        all=() if all_raw is None else _parse_list(all_raw, f"{pointer}/all"),
    )


def _evaluate(condition: Condition, substitute: Callable[[Any], Any]) -> bool:
    key, value = condition.key, condition.value
    if not condition.key_is_static:
        try:
            key = substitute(key)
        except SubstitutionError as e:
            raise SubstitutionError(f"failed to substitute variables in condition key: {e}") from e
    if not condition.value_is_static:
        try:
            value = substitute(value)
        except SubstitutionError as e:
            raise SubstitutionError(
                f"failed to substitute variables in condition value: {e}"
            ) from e
    return evaluate_operator(condition.operator, key, value)


def _keep(messages: list[str], message: str) -> None:
    if message:
        messages.append(message)


def evaluate_block(block: ConditionBlock, substitute: Callable[[Any], Any]) -> BlockResult:
    """Evaluate a block with Kyverno's short-circuits (spec 6.2, 6.5).

    ``substitute`` performs the substitution of a key or value the way Kyverno does for
    conditions (``resolve_references`` then ``substitute_all``) and raises
    ``SubstitutionError``; it is called only for keys/values containing ``{{`` or ``$(``.
    The first error (``SubstitutionError`` or ``ConditionError``) aborts the block.
    """
    true_messages: list[str] = []
    false_messages: list[str] = []
    if block.legacy:
        for condition in block.all:
            if not _evaluate(condition, substitute):
                return BlockResult(False, [condition.message] if condition.message else [], ";")
            _keep(true_messages, condition.message)
        return BlockResult(True, true_messages, ";")
    any_result = True
    if block.any is not None:
        any_result = False
        for condition in block.any:
            if _evaluate(condition, substitute):
                any_result = True
                _keep(true_messages, condition.message)
                break
            _keep(false_messages, condition.message)
    all_result = True
    for condition in block.all:
        if not _evaluate(condition, substitute):
            all_result = False
            _keep(false_messages, condition.message)
            break
        _keep(true_messages, condition.message)
    if any_result and all_result:
        return BlockResult(True, true_messages)
    return BlockResult(False, false_messages)
