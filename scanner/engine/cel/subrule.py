"""Kyverno's ``validate.cel`` sub-rule (spec 12): compile once, evaluate per resource.

Every expression, variable, ``messageExpression`` and ``celPreconditions`` entry is
compiled by ``compile_cel_rule``; a problem raises ``CelCompileError`` with the JSON
pointer of the offending text relative to the rule (``/validate/cel/expressions/0/
expression``, ``/celPreconditions/1/expression``). Kyverno reports such problems only
when the rule runs; the scanner rejects the policy when it is loaded instead.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from scanner.engine.cel import expressions as cel_env
from scanner.engine.cel.expressions import CelCompileError, CelResult
from scanner.engine.cel.params import (
    CelParamSpec,
    ParamLookup,
    missing_params_result,
    parse_param_spec,
    plan_param_lookup,
)
from scanner.engine.cel.rewrite import (
    CelSyntaxError,
    apply_orvalue_compat,
    bind_variables,
    replace_variable_refs,
    reserved_identifier,
    rewrite_cel_for_autogen,
    variable_references,
)
from scanner.engine.types import RuleStatus

__all__ = [
    "CelCompileError",
    "CelExpression",
    "CelParamSpec",
    "CelPrecondition",
    "CelResult",
    "CompiledCelRule",
    "ParamLookup",
    "compile_cel_rule",
    "evaluate_cel_rule",
    "missing_params_result",
    "plan_param_lookup",
    "rewrite_cel_for_autogen",
]

PRECONDITIONS_NOT_MET = "cel preconditions not met"
MAX_MESSAGE_BYTES = 5 * 1024  # Kubernetes' limit on an evaluated messageExpression


@dataclass(frozen=True, slots=True)
class CelExpression:
    expression: str  # as written in the policy
    program: Any
    message: str  # the static message ("" when neither it nor validate.message is set)
    message_program: Any | None = None


@dataclass(frozen=True, slots=True)
class CelPrecondition:
    name: str
    expression: str
    program: Any


@dataclass(frozen=True, slots=True)
class CompiledCelRule:
    expressions: tuple[CelExpression, ...]
    preconditions: tuple[CelPrecondition, ...] = ()
    params: CelParamSpec | None = None


def compile_cel_rule(
    cel: dict, *, validate_message: str, preconditions: list[dict] | None
) -> CompiledCelRule:
    """Compile a rule's ``validate.cel`` block and its ``celPreconditions``."""
    base = "/validate/cel"
    if not isinstance(cel, dict):
        raise CelCompileError("cel must be a mapping", base)
    definitions = _compile_variables(cel.get("variables"), base)
    items = cel.get("expressions")
    if not isinstance(items, list) or not items:
        raise CelCompileError("cel.expressions must be a non-empty list", f"{base}/expressions")
    expressions = []
    for i, item in enumerate(items):
        pointer = f"{base}/expressions/{i}"
        if not isinstance(item, dict):
            raise CelCompileError("an expression entry must be a mapping", pointer)
        text = _required_text(item, "expression", pointer)
        program = _compile(text, definitions, f"{pointer}/expression", expect="bool")
        message = _optional_text(item, "message", pointer) or validate_message or ""
        message_program = None
        if (message_text := _optional_text(item, "messageExpression", pointer)) is not None:
            message_program = _compile(
                message_text, definitions, f"{pointer}/messageExpression", expect="string"
            )
        expressions.append(CelExpression(text, program, message.strip(), message_program))
    compiled_pre = []
    if preconditions is not None:
        if not isinstance(preconditions, list):
            raise CelCompileError("celPreconditions must be a list", "/celPreconditions")
        for i, item in enumerate(preconditions):
            pointer = f"/celPreconditions/{i}"
            if not isinstance(item, dict):
                raise CelCompileError("a precondition must be a mapping", pointer)
            text = _required_text(item, "expression", pointer)
            name = _optional_text(item, "name", pointer) or ""
            program = _compile(text, [], f"{pointer}/expression", expect="bool")
            compiled_pre.append(CelPrecondition(name, text, program))
    return CompiledCelRule(tuple(expressions), tuple(compiled_pre), parse_param_spec(cel, base))


def _required_text(item: dict, key: str, pointer: str) -> str:
    value = item.get(key)
    if not isinstance(value, str) or not value.strip():
        raise CelCompileError(f"{key} must be a non-empty string", f"{pointer}/{key}")
    return value


def _optional_text(item: dict, key: str, pointer: str) -> str | None:
    value = item.get(key)
    if value is not None and not isinstance(value, str):
        raise CelCompileError(f"{key} must be a string", f"{pointer}/{key}")
    return value


def _compile_variables(items: Any, base: str) -> list[tuple[str, str]]:
    """Check and rewrite ``cel.variables``; returns (name, bound text) in order."""
    if items is None:
        return []
    if not isinstance(items, list):
        raise CelCompileError("cel.variables must be a list", f"{base}/variables")
    definitions: list[tuple[str, str]] = []
    for i, item in enumerate(items):
        pointer = f"{base}/variables/{i}"
        if not isinstance(item, dict):
            raise CelCompileError("a variable must be a mapping", pointer)
        name = _required_text(item, "name", pointer)
        if not name.isidentifier() or not name.isascii():
            raise CelCompileError(f"invalid variable name {name!r}", f"{pointer}/name")
        if any(name == known for known, _ in definitions):
            raise CelCompileError(f"duplicate variable name {name!r}", f"{pointer}/name")
        text = _required_text(item, "expression", pointer)
        bound = _prepare(text, definitions, f"{pointer}/expression")
        _compile_prepared(bind_variables(bound, definitions), f"{pointer}/expression", None)
        definitions.append((name, bound))
    return definitions


def _prepare(text: str, definitions: list[tuple[str, str]], pointer: str) -> str:
    """Syntax-check ``text`` as written, then apply the variable and orValue rewrites."""
    try:
        cel_env.check_syntax(text)
        if (reserved := reserved_identifier(text)) is not None:
            raise CelCompileError(f"identifier {reserved!r} is reserved", pointer)
        known = {name for name, _ in definitions}
        for name in variable_references(text):
            if name not in known:
                raise CelCompileError(
                    f"undefined variable {name!r} (variables may use only earlier ones)",
                    pointer,
                )
        return apply_orvalue_compat(replace_variable_refs(text))
    except CelSyntaxError as e:
        raise CelCompileError(str(e), pointer) from e
    except CelCompileError as e:
        raise CelCompileError(e.message, pointer) from e


def _compile_prepared(text: str, pointer: str, expect: str | None) -> Any:
    try:
        return cel_env.compile_program(text, expect=expect)
    except CelCompileError as e:
        raise CelCompileError(e.message, pointer) from e


def _compile(text: str, definitions: list[tuple[str, str]], pointer: str, *, expect: str) -> Any:
    body = _prepare(text, definitions, pointer)
    return _compile_prepared(bind_variables(body, definitions), pointer, expect)


def evaluate_cel_rule(
    rule: CompiledCelRule,
    *,
    rule_name: str,
    object: dict | None,
    old_object: dict | None,
    request: dict,
    namespace_object: dict | None,
    params: list[dict] | None,
) -> CelResult:
    """Evaluate a compiled rule for one admission request (spec 12.3, steps 3-7).

    ``params`` are the parameter objects the caller resolved for the rule's ``paramRef``
    (see ``cel_params.plan_param_lookup``); ``None`` binds ``params`` to null. An empty
    list applies ``parameterNotFoundAction``.
    """
    if rule.params is not None and params is not None and not params:
        return missing_params_result(rule.params, rule_name)
    data = {
        "object": cel_env.as_cel_data(object),
        "oldObject": cel_env.as_cel_data(old_object),
        "request": request,
        "namespaceObject": namespace_object,
    }
    for param in params if params else [None]:
        bound = cel_env.activation({**data, "params": cel_env.as_cel_data(param)})
        try:
            outcome = _unmet_preconditions(rule, bound) or _first_failure(rule, bound)
        except cel_env.CelUnsupportedError as e:
            return CelResult(RuleStatus.ERROR, str(e))
        if outcome is not None:
            return outcome
    return CelResult(RuleStatus.PASS, f"Validation rule '{rule_name}' passed.")


def _unmet_preconditions(rule: CompiledCelRule, bound: Any) -> CelResult | None:
    """``skip`` when any precondition is false (even after one erred), else ``fail`` with
    every precondition error (Kubernetes' match-condition semantics), else None."""
    errors: list[str] = []
    for pre in rule.preconditions:
        outcome = cel_env.run(pre.program, bound)
        if outcome.error is not None:
            errors.append(_error_message(pre.expression, outcome.error))
        elif not isinstance(outcome.value, bool):
            errors.append(_non_boolean_message(pre.expression))
        elif not outcome.value:
            return CelResult(RuleStatus.SKIP, PRECONDITIONS_NOT_MET)
    if errors:
        return CelResult(RuleStatus.FAIL, _aggregate(errors))
    return None


def _aggregate(messages: list[str]) -> str:
    """Several error messages as Kubernetes aggregates them: repeats dropped, more than one
    listed in brackets."""
    distinct = list(dict.fromkeys(messages))
    return distinct[0] if len(distinct) == 1 else "[" + ", ".join(distinct) + "]"


def _first_failure(rule: CompiledCelRule, bound: Any) -> CelResult | None:
    for item in rule.expressions:
        outcome = cel_env.run(item.program, bound)
        if outcome.error is not None:
            return CelResult(RuleStatus.FAIL, _error_message(item.expression, outcome.error))
        if not isinstance(outcome.value, bool):
            return CelResult(RuleStatus.FAIL, _non_boolean_message(item.expression))
        if not outcome.value:
            return CelResult(RuleStatus.FAIL, _failure_message(item, bound))
    return None


def _error_message(expression: str, error: str) -> str:
    return f"expression '{expression}' resulted in error: {error}"


def _non_boolean_message(expression: str) -> str:
    return f"expression '{expression}' resulted in a non-boolean value"


def _failure_message(item: CelExpression, bound: Any) -> str:
    if item.message_program is not None:
        outcome = cel_env.run(item.message_program, bound)
        text = outcome.value.strip() if isinstance(outcome.value, str) else ""
        if text and "\n" not in text and len(text.encode()) <= MAX_MESSAGE_BYTES:
            return text
    if item.message:
        return item.message
    return f"failed expression: {item.expression.strip()}"
