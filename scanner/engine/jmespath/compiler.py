"""JMESPath ASTs -> Python closures with the semantics of ``KyvernoInterpreter``.

The tree interpreter dispatches on a dictionary per node and call; a compiled expression
is a chain of closures, so each node costs one call. Every node type the dialect changes
(and the plain ones policies use most) is compiled here, mirroring the interpreter line
for line, including where the "Unknown key" error is absorbed and where it propagates.
Any other node (slices, ``&expr`` references) is handed to the interpreter itself, so the
result is the interpreter's in every case. Projections charge their elements to the rule's
budget, as the interpreter's do.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Any

from scanner.engine.budget import active
from scanner.engine.jmespath.interpreter import (
    _ORDERING,
    JMESPathError,
    KyvernoInterpreter,
    UnknownKeyError,
    _is_false,
    _is_number,
    deep_equal,
    flattened,
)

Compiled = Callable[[Any], Any]

# nodes that never raise "Unknown key": no need to absorb it around them
_CANNOT_MISS = frozenset({"literal", "current", "identity"})


def compile_closure(node: dict, interpreter: KyvernoInterpreter) -> Compiled:
    """A function of the current value that evaluates ``node`` as ``interpreter`` would."""
    build = _BUILDERS.get(node["type"])
    if build is None:
        visit = interpreter.visit
        return lambda value: visit(node, value)
    return build(node, interpreter)


def _absorbing(node: dict, interpreter: KyvernoInterpreter) -> Compiled:
    """``node`` compiled, with "Unknown key" turned into null (the interpreter's ``_absorb``)."""
    if node["type"] in _CANNOT_MISS:
        return compile_closure(node, interpreter)
    return _null_on(UnknownKeyError, node, interpreter)


def _guarded(node: dict, interpreter: KyvernoInterpreter) -> Compiled:
    """``node`` compiled, with any evaluation error turned into null (projection bases)."""
    return _null_on(JMESPathError, node, interpreter)


def _null_on(error: type[Exception], node: dict, interpreter: KyvernoInterpreter) -> Compiled:
    inner = compile_closure(node, interpreter)

    def caught(value: Any) -> Any:
        try:
            return inner(value)
        except error:
            return None

    return caught


def _field(node: dict, interpreter: KyvernoInterpreter) -> Compiled:
    return _field_path((node["value"],))


def _chain(node: dict, interpreter: KyvernoInterpreter) -> Compiled:
    children = node["children"]
    if all(child["type"] == "field" for child in children):
        return _field_path(tuple(child["value"] for child in children))
    first, *rest = [compile_closure(child, interpreter) for child in children]
    if len(rest) == 1:
        second = rest[0]

        def pair(value: Any) -> Any:
            result = first(value)
            return None if result is None else second(result)

        return pair

    def chain(value: Any) -> Any:
        result = first(value)
        for step in rest:
            if result is None:
                return None
            result = step(result)
        return result

    return chain


def _field_path(keys: tuple[str, ...]) -> Compiled:
    """``a.b.c``: the fields of a chain in one loop (null past a value that is not a map)."""

    def path(value: Any) -> Any:
        for key in keys:
            if not isinstance(value, dict):
                return None
            try:
                value = value[key]
            except KeyError:
                raise UnknownKeyError(key) from None
        return value

    return path


def _current(node: dict, interpreter: KyvernoInterpreter) -> Compiled:
    return lambda value: value


def _literal(node: dict, interpreter: KyvernoInterpreter) -> Compiled:
    constant = node["value"]
    return lambda value: constant


def _index(node: dict, interpreter: KyvernoInterpreter) -> Compiled:
    position = node["value"]

    def index(value: Any) -> Any:
        if not isinstance(value, list):
            return None
        try:
            return value[position]
        except IndexError:
            return None

    return index


def _comparator(node: dict, interpreter: KyvernoInterpreter) -> Compiled:
    left, right = (_absorbing(child, interpreter) for child in node["children"])
    op = node["value"]
    if op == "eq":
        return lambda value: deep_equal(left(value), right(value))
    if op == "ne":
        return lambda value: not deep_equal(left(value), right(value))
    ordering = _ORDERING[op]

    def compare(value: Any) -> Any:
        a, b = left(value), right(value)
        if not (_is_number(a) and _is_number(b)):
            return None
        return ordering(a, b)

    return compare


def _function(node: dict, interpreter: KyvernoInterpreter) -> Compiled:
    args = [_absorbing(child, interpreter) for child in node["children"]]
    name, call = node["value"], interpreter._functions.call_function
    return lambda value: call(name, [arg(value) for arg in args])


def _filter_projection(node: dict, interpreter: KyvernoInterpreter) -> Compiled:
    base = _guarded(node["children"][0], interpreter)
    body = _absorbing(node["children"][1], interpreter)
    condition = _absorbing(node["children"][2], interpreter)

    def filter_projection(value: Any) -> Any:
        elements = base(value)
        if not isinstance(elements, list):
            return None
        active().charge(len(elements))
        collected = []
        for element in elements:
            if not _is_false(condition(element)):
                current = body(element)
                if current is not None:
                    collected.append(current)
        return collected

    return filter_projection


def _flatten(node: dict, interpreter: KyvernoInterpreter) -> Compiled:
    base = _guarded(node["children"][0], interpreter)

    def flatten(value: Any) -> Any:
        elements = base(value)
        return flattened(elements) if isinstance(elements, list) else None

    return flatten


def _multi_select_dict(node: dict, interpreter: KyvernoInterpreter) -> Compiled:
    # each child is a key_val_pair, which evaluates its one child
    members = [(child["value"], _absorbing(child["children"][0], interpreter)) for child in node["children"]]

    def multi_select_dict(value: Any) -> Any:
        if value is None:
            return None
        return {key: member(value) for key, member in members}

    return multi_select_dict


def _multi_select_list(node: dict, interpreter: KyvernoInterpreter) -> Compiled:
    members = [_absorbing(child, interpreter) for child in node["children"]]

    def multi_select_list(value: Any) -> Any:
        if value is None:
            return None
        return [member(value) for member in members]

    return multi_select_list


def _or(node: dict, interpreter: KyvernoInterpreter) -> Compiled:
    left, right = (_absorbing(child, interpreter) for child in node["children"])

    def either(value: Any) -> Any:
        matched = left(value)
        return right(value) if _is_false(matched) else matched

    return either


def _and(node: dict, interpreter: KyvernoInterpreter) -> Compiled:
    left = _absorbing(node["children"][0], interpreter)
    right = compile_closure(node["children"][1], interpreter)

    def both(value: Any) -> Any:
        matched = left(value)
        return matched if _is_false(matched) else right(value)

    return both


def _not(node: dict, interpreter: KyvernoInterpreter) -> Compiled:
    operand = _absorbing(node["children"][0], interpreter)
    return lambda value: _is_false(operand(value))


def _pipe(node: dict, interpreter: KyvernoInterpreter) -> Compiled:
    stages = [_absorbing(child, interpreter) for child in node["children"]]

    def pipe(value: Any) -> Any:
        for stage in stages:
            value = stage(value)
        return value

    return pipe


def _projection(node: dict, interpreter: KyvernoInterpreter) -> Compiled:
    base = _absorbing(node["children"][0], interpreter)
    body = _absorbing(node["children"][1], interpreter)

    def projection(value: Any) -> Any:
        elements = base(value)
        return _projected(body, elements) if isinstance(elements, list) else None

    return projection


def _projected(body: Compiled, elements: Collection[Any]) -> list[Any]:
    """``body`` of each element, nulls dropped (what every projection collects)."""
    active().charge(len(elements))
    collected = []
    for element in elements:
        current = body(element)
        if current is not None:
            collected.append(current)
    return collected


def _value_projection(node: dict, interpreter: KyvernoInterpreter) -> Compiled:
    base = _guarded(node["children"][0], interpreter)
    body = _absorbing(node["children"][1], interpreter)

    def value_projection(value: Any) -> Any:
        mapping = base(value)
        return _projected(body, mapping.values()) if isinstance(mapping, dict) else None

    return value_projection


_BUILDERS: dict[str, Callable[[dict, KyvernoInterpreter], Compiled]] = {
    "field": _field,
    "subexpression": _chain,
    "index_expression": _chain,
    "current": _current,
    "identity": _current,
    "literal": _literal,
    "index": _index,
    "comparator": _comparator,
    "function_expression": _function,
    "filter_projection": _filter_projection,
    "flatten": _flatten,
    "multi_select_dict": _multi_select_dict,
    "multi_select_list": _multi_select_list,
    "or_expression": _or,
    "and_expression": _and,
    "not_expression": _not,
    "pipe": _pipe,
    "projection": _projection,
    "value_projection": _value_projection,
}
