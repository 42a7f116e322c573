"""Kyverno's JMESPath semantics (spec 7.3): the tree interpreter of its fork.

Kyverno evaluates JMESPath with a fork whose field access on an object raises
``Unknown key "<k>" in path`` when the key is absent. Whether that error reaches the
caller depends on the node it happens under: it is absorbed (the value becomes null) by
comparators, function arguments, both operands of ``||``, the left operand of ``&&``,
``!``, multiselect members, pipe stages, projection left sides and bodies, filter
projections, flatten and object projections; it propagates through field chains, index
expressions and the right operand of ``&&``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from jmespath import visitor

from scanner.engine.budget import active
from scanner.errors import EngineError


class JMESPathError(EngineError):
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
    checked as soon as it passes the rule's list limit (the message gives the whole length)
    and charged to its budget."""
    budget = active()
    limit = budget.limits.list_length
    merged: list[Any] = []
    for element in elements:
        if isinstance(element, list):
            merged.extend(element)  # (past the limit by at most this list, which exists already)
            if len(merged) > limit:
                budget.check_list(sum(len(e) if isinstance(e, list) else 1 for e in elements), "a flatten")
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
