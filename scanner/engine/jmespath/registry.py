"""The function registry: Kyverno's custom JMESPath functions beside the standard ones.

A ``FunctionSpec`` carries Kyverno's signature (argument types, return type, note) and a
handler taking the list of evaluated arguments. Argument types are checked before the
handler runs; mismatches raise ``JMESPathError`` with Kyverno's wording. Every call, standard
or Kyverno's, is charged to the rule's budget (``jmespath_limits``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from jmespath import functions as jp_functions

from scanner.engine.budget import active
from scanner.engine.golang import fmt as gofmt
from scanner.engine.jmespath.interpreter import JMESPathError
from scanner.engine.jmespath.limits import GROWTH_CHECKS, argument_cost

_TYPE_CHECKS: dict[str, Callable[[Any], bool]] = {
    "string": lambda v: isinstance(v, str),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "array[string]": lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v),
    "bool": lambda v: isinstance(v, bool),
    "any": lambda v: True,
}


@dataclass(frozen=True, slots=True)
class FunctionSpec:
    """One custom function: name, argument types (alternatives per argument), result, note."""

    name: str
    args: tuple[tuple[str, ...], ...]
    returns: str
    note: str
    handler: Callable[[list[Any]], Any]

    @property
    def signature(self) -> str:
        args = ", ".join("|".join(types) for types in self.args)
        return f"{self.name}({args}) {self.returns}"

    def __str__(self) -> str:
        if not self.name:
            return ""
        return f"{self.signature} ({self.note})" if self.note else self.signature


def error(name: str, message: str) -> JMESPathError:
    """Kyverno's function error wording: ``JMESPath function '<name>': <message>``."""
    return JMESPathError(f"JMESPath function '{name}': {message}")


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    names: dict[type, str] = {str: "string", list: "array", dict: "object"}
    return names.get(type(value), type(value).__name__)


class KyvernoFunctions(jp_functions.Functions):
    """Standard JMESPath functions plus Kyverno's, which win on a name clash."""

    def __init__(self, specs: Iterable[FunctionSpec]) -> None:
        self.custom: dict[str, FunctionSpec] = {spec.name: spec for spec in specs}

    def call_function(self, function_name: str, resolved_args: list[Any]) -> Any:
        budget = active()
        budget.charge(argument_cost(resolved_args))
        growth = GROWTH_CHECKS.get(function_name)
        if growth is not None:
            growth(resolved_args, budget)
        result = self._call(function_name, resolved_args)
        if isinstance(result, (list, dict)):
            budget.check_list(len(result), function_name)
            budget.charge(len(result))
        elif isinstance(result, str) and len(result) > budget.limits.string_length:
            budget.check_string(len(result), f"{function_name}()")
        return result

    def _call(self, function_name: str, resolved_args: list[Any]) -> Any:
        spec = self.custom.get(function_name)
        if spec is None:
            return super().call_function(function_name, resolved_args)
        if len(resolved_args) != len(spec.args):
            raise error(
                spec.name, f"expected {len(spec.args)} arguments, got {len(resolved_args)}"
            )
        for index, (value, types) in enumerate(zip(resolved_args, spec.args, strict=True)):
            if not any(_TYPE_CHECKS[t](value) for t in types):
                raise error(
                    spec.name,
                    f"argument #{index + 1} is not of type {' or '.join(types)} "
                    f"(got {_type_name(value)})",
                )
        return spec.handler(resolved_args)


STANDARD_FUNCTION_NAMES = frozenset(jp_functions.Functions.FUNCTION_TABLE)


def int_number(value: float) -> int:
    """Kyverno's ``intNumber``: the Go ``int`` equal to ``value``, else ``ValueError`` with
    Kyverno's message (a fraction, NaN or infinity; a value outside the int64 range)."""
    if not math.isfinite(value) or value != math.trunc(value):
        raise ValueError(f"expected an integer number but got: {gofmt.format_g(value)}")
    if not -(2**63) <= value < 2**63:
        raise ValueError(
            f"number is outside the range of integer numbers: {gofmt.format_g(value)}")
    return int(value)


def as_int(name: str, value: float, what: str) -> int:
    """``int_number`` of function ``name``'s argument ``what`` (``argument #2``), its error
    worded as Kyverno's ``JMESPath function '<name>': <what>: <intNumber error>``."""
    try:
        return int_number(value)
    except ValueError as exc:
        raise error(name, f"{what}: {exc}") from None
