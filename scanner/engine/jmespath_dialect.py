"""Kyverno's JMESPath dialect (spec 7.3).

Kyverno evaluates JMESPath with a fork whose field access on an object raises
``Unknown key "<k>" in path`` when the key is absent. Whether that error reaches the
caller depends on the node it happens under: it is absorbed (the value becomes null) by
comparators, function arguments, both operands of ``||``, the left operand of ``&&``,
``!``, multiselect members, pipe stages, projection left sides and bodies, filter
projections, flatten and object projections; it propagates through field chains, index
expressions and the right operand of ``&&``.

Expressions are compiled once (bounded cache); unknown function names are rejected at
compile time. Evaluation goes through an ``Evaluator`` that holds one interpreter and one
function registry (see ``jmespath_functions``), and runs each expression as closures built
from its AST once (``jmespath_compiler``, same semantics as the interpreter).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Any

import jmespath
from jmespath import exceptions as jp_exceptions
from jmespath import visitor

from scanner.engine import gofmt
from scanner.engine.budget import active


class JMESPathError(Exception):
    """An expression that cannot be parsed, names an unknown function, or fails to evaluate."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class UnknownKeyError(JMESPathError):
    """Kyverno's "not found" error: a key absent from an object on a propagating path."""

    def __init__(self, key: str) -> None:
        super().__init__(f'Unknown key "{key}" in path')
        self.key = key


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def deep_equal(a: Any, b: Any) -> bool:
    """Go ``reflect.DeepEqual`` on JSON values: booleans never equal numbers. Each map or
    list compared costs its items in steps (a value of shared parts can be huge)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if _is_number(a) or _is_number(b):
        return _is_number(a) and _is_number(b) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        active().charge(len(a))
        return a.keys() == b.keys() and all(deep_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        active().charge(len(a))
        return len(a) == len(b) and all(deep_equal(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


def flattened(elements: list[Any]) -> list[Any]:
    """The elements with those that are lists merged in (``[]``); the merged length is
    checked before it passes the rule's list limit (the message gives the whole length) and
    charged to its budget."""
    budget = active()
    limit = budget.limits.list_length
    merged: list[Any] = []
    for at, element in enumerate(elements):
        if isinstance(element, list):
            if len(merged) + len(element) > limit:
                whole = len(merged) + sum(len(e) if isinstance(e, list) else 1 for e in elements[at:])
                budget.check_list(whole, "a flatten")
            merged.extend(element)
        else:
            merged.append(element)
    budget.charge(len(merged))
    return merged


def _is_false(value: Any) -> bool:
    return value is None or value is False or (value in ("", [], {}) and not _is_number(value))


_ORDERING: dict[str, Callable[[Any, Any], bool]] = {
    "lt": lambda x, y: x < y,
    "lte": lambda x, y: x <= y,
    "gt": lambda x, y: x > y,
    "gte": lambda x, y: x >= y,
}


class KyvernoInterpreter(visitor.TreeInterpreter):
    """The ``jmespath`` tree interpreter with the fork's "Unknown key" semantics."""

    def _absorb(self, node: dict, value: Any) -> Any:
        try:
            return self.visit(node, value)
        except UnknownKeyError:
            return None

    def visit_field(self, node: dict, value: Any) -> Any:
        if isinstance(value, dict):
            try:
                return value[node["value"]]
            except KeyError:
                raise UnknownKeyError(node["value"]) from None
        return None

    def visit_subexpression(self, node: dict, value: Any) -> Any:
        result = value
        for index, child in enumerate(node["children"]):
            if index and result is None:
                return None
            result = self.visit(child, result)
        return result

    visit_index_expression = visit_subexpression

    def visit_comparator(self, node: dict, value: Any) -> Any:
        left = self._absorb(node["children"][0], value)
        right = self._absorb(node["children"][1], value)
        op = node["value"]
        if op == "eq":
            return deep_equal(left, right)
        if op == "ne":
            return not deep_equal(left, right)
        if not (_is_number(left) and _is_number(right)):
            return None
        return _ORDERING[op](left, right)

    def visit_function_expression(self, node: dict, value: Any) -> Any:
        args = [self._absorb(child, value) for child in node["children"]]
        return self._functions.call_function(node["value"], args)

    def visit_expref(self, node: dict, value: Any) -> Any:
        return _Expression(node["children"][0], self)

    def visit_filter_projection(self, node: dict, value: Any) -> Any:
        try:
            base = self.visit(node["children"][0], value)
        except JMESPathError:
            return None
        if not isinstance(base, list):
            return None
        condition, body = node["children"][2], node["children"][1]
        active().charge(len(base))
        collected = []
        for element in base:
            if not _is_false(self._absorb(condition, element)):
                current = self._absorb(body, element)
                if current is not None:
                    collected.append(current)
        return collected

    def visit_flatten(self, node: dict, value: Any) -> Any:
        try:
            base = self.visit(node["children"][0], value)
        except JMESPathError:
            return None
        return flattened(base) if isinstance(base, list) else None

    def visit_multi_select_dict(self, node: dict, value: Any) -> Any:
        if value is None:
            return None
        return {child["value"]: self._absorb(child, value) for child in node["children"]}

    def visit_multi_select_list(self, node: dict, value: Any) -> Any:
        if value is None:
            return None
        return [self._absorb(child, value) for child in node["children"]]

    def visit_or_expression(self, node: dict, value: Any) -> Any:
        matched = self._absorb(node["children"][0], value)
        if _is_false(matched):
            matched = self._absorb(node["children"][1], value)
        return matched

    def visit_and_expression(self, node: dict, value: Any) -> Any:
        matched = self._absorb(node["children"][0], value)
        if _is_false(matched):
            return matched
        return self.visit(node["children"][1], value)

    def visit_not_expression(self, node: dict, value: Any) -> Any:
        return _is_false(self._absorb(node["children"][0], value))

    def visit_pipe(self, node: dict, value: Any) -> Any:
        result = value
        for child in node["children"]:
            result = self._absorb(child, result)
        return result

    def visit_projection(self, node: dict, value: Any) -> Any:
        base = self._absorb(node["children"][0], value)
        if not isinstance(base, list):
            return None
        active().charge(len(base))
        collected = []
        for element in base:
            current = self._absorb(node["children"][1], element)
            if current is not None:
                collected.append(current)
        return collected

    def visit_value_projection(self, node: dict, value: Any) -> Any:
        try:
            base = self.visit(node["children"][0], value)
        except JMESPathError:
            return None
        if not isinstance(base, dict):
            return None
        active().charge(len(base))
        collected = []
        for element in base.values():
            current = self._absorb(node["children"][1], element)
            if current is not None:
                collected.append(current)
        return collected


class _Expression(visitor._Expression):
    """An ``&expr`` argument; "Unknown key" inside it evaluates to null."""

    def visit(self, node: dict, *args: Any, **kwargs: Any) -> Any:
        try:
            return self.interpreter.visit(node, *args, **kwargs)
        except UnknownKeyError:
            return None


class Expression:
    """A compiled JMESPath expression (immutable; share freely)."""

    __slots__ = ("ast", "text")

    def __init__(self, text: str, ast: dict) -> None:
        self.text = text
        self.ast = ast

    def search(self, data: Any, evaluator: Evaluator | None = None) -> Any:
        """Evaluate against ``data`` (no clock unless ``evaluator`` brings one)."""
        return (evaluator or default_evaluator()).search(self, data)

    def __repr__(self) -> str:
        return f"Expression({self.text!r})"


class Evaluator:
    """Evaluates compiled expressions with one function registry and one interpreter."""

    def __init__(self, functions: jmespath.functions.Functions) -> None:
        from scanner.engine.jmespath_compiler import compile_closure  # it imports this module

        self.functions = functions
        self._interpreter = KyvernoInterpreter(visitor.Options(custom_functions=functions))
        self._compile = compile_closure
        self._compiled: dict[Expression, Callable[[Any], Any]] = {}

    def search(self, expression: Expression | str, data: Any) -> Any:
        if isinstance(expression, str):
            expression = compile_expression(expression)
        try:
            run = self._compiled.get(expression)
            if run is None:
                if len(self._compiled) >= _COMPILED_LIMIT:
                    self._compiled.clear()
                run = self._compiled[expression] = self._compile(expression.ast, self._interpreter)
            return run(data)
        except JMESPathError:
            raise
        except jp_exceptions.JMESPathError as exc:
            raise JMESPathError(str(exc)) from exc
        except RecursionError as exc:
            raise JMESPathError("expression nested too deeply") from exc


_COMPILED_LIMIT = 8192  # closures kept per evaluator, as many as compile_expression keeps ASTs
_DEFAULT: list[Evaluator] = []


def default_evaluator() -> Evaluator:
    """The shared evaluator without a clock (time functions needing "now" fail)."""
    if not _DEFAULT:
        from scanner.engine.jmespath_functions import build_functions

        _DEFAULT.append(Evaluator(build_functions()))
    return _DEFAULT[0]


def _function_names(ast: dict) -> list[str]:
    names, stack = [], [ast]
    while stack:
        node = stack.pop()
        if node.get("type") == "function_expression":
            names.append(node["value"])
        stack.extend(c for c in node.get("children", ()) if isinstance(c, dict))
    return names


@lru_cache(maxsize=8192)
def compile_expression(text: str) -> Expression:
    """Parse ``text``; raise ``JMESPathError`` if it is invalid or calls an unknown function."""
    from scanner.engine.jmespath_functions import FUNCTION_NAMES

    if not isinstance(text, str):
        raise JMESPathError(f"expression must be a string, not {gofmt.to_json(text)}")
    try:
        ast = jmespath.compile(text).parsed
    except jp_exceptions.JMESPathError as exc:
        raise JMESPathError(_parse_message(text, exc)) from exc
    except (RecursionError, ValueError) as exc:
        raise JMESPathError(f"invalid JMESPath expression {text!r}: {exc}") from exc
    for name in _function_names(ast):
        if name not in FUNCTION_NAMES:
            raise JMESPathError(f"Unknown function: {name}()")
    return Expression(text, ast)


def _parse_message(text: str, exc: Exception) -> str:
    detail = getattr(exc, "msg", None) or str(exc).splitlines()[0]
    pos = getattr(exc, "lex_position", None)
    where = f" at position {pos}" if isinstance(pos, int) else ""
    return f"invalid JMESPath expression {text!r}{where}: {detail}"
