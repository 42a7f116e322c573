"""Compiled JMESPath closures against the dialect's tree interpreter: the same value, or the
same error, for every expression and input."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from scanner.engine.jmespath.compiler import compile_closure
from scanner.engine.jmespath.dialect import compile_expression, default_evaluator

INPUTS: list[Any] = [
    {
        "a": {"b": None, "s": "text", "n": 3, "z": 0, "f": False, "e": "", "list": [{"x": 1}, {"y": 2}, 7],
              "nested": [[1], [2, [3]], 4], "map": {"k": {"x": 1}, "j": {"x": None}, "i": 5}},
        "spec": {"containers": [{"name": "c", "image": "nginx:1", "securityContext": {"capabilities": {
            "drop": ["ALL"]}}}, {"name": "d", "image": "busybox"}], "initContainers": None},
        "empty": [],
        "obj": {},
    },
    {"a": [1, 2, 3], "spec": "text"},
    [{"a": 1}, {"a": {"b": 2}}, None, [1, 2]],
    "text",
    3,
    None,
    True,
]

EXPRESSIONS = [
    "a", "a.b", "a.b.c", "a.missing", "a.missing.deeper", "a.s.x", "missing", "@", "`1`", "'lit'",
    "a.list[0]", "a.list[5]", "a.list[-1]", "a.list[0].x", "a.list[1].x", "a[0]", "[0]", "[0].a",
    "a.list[0:2]", "a.list[::-1]", "a.list[]", "a.list[].x", "a.list[*].x", "a.list[*].missing",
    "a.gone[*].x", "a.nested[]", "a.nested[][]", "a.gone[]", "a.*", "a.*.x", "a.map.*.x", "a.gone.*.x",
    "a.list[?x == `1`]", "a.list[?x]", "a.list[?missing == null]", "a.gone[?x == `1`]", "[?a == `1`]",
    "a.list[?x == `1`].x", "a.list[?length(@) > `0`]",
    "a.missing || 'x'", "a.b || a.missing", "a.z || 'x'", "a.f || a.e || a.n", "a.missing && a.n",
    "a.n && a.missing", "a.n && a.s", "a.f && a.missing", "!a.missing", "!(a.missing)", "!a.z", "!a.e",
    "!`0`", "a.missing == null", "a.missing != 'x'", "a.n > `2`", "a.n >= `3`", "a.n < a.missing",
    "'a' < 'b'", "`[1, 2]` == `[1.0, 2.0]`", "`true` == `1`", "a.list == a.list", "a.map != a.map",
    "length(a.missing || `[]`)", "not_null(a.missing, 'd')", "length(a.s)", "length(a.n)",
    "keys(a.map)", "to_string(a.map)", "contains(a.list[].x, `1`)", "starts_with(a.s, 'te')",
    "map(&x, a.list[0:2])", "map(&missing, a.list[0:2])", "sort_by(a.list[0:2], &to_string(x))",
    "max_by(a.list[0:2], &x)", "sum(a.nested[0])", "split(a.s, 'x')", "a.missing | length(@ || `[]`)",
    "a.list | [0]", "a | list | [1]", "a.map | keys(@)", "[a.missing, a.n]", "[a.n, a.s][0]",
    "{x: a.missing, y: a.n}", "{x: a.missing}.x", "a.list[].{x: x, y: y}", "a.list[].[x, y]",
    "spec.[ephemeralContainers, initContainers, containers][]",
    "spec.[ephemeralContainers, initContainers, containers][].securityContext.capabilities.drop[]",
    "spec.containers[].image", "spec.containers[?contains(image, ':')].name",
    "spec.containers[].securityContext.capabilities.drop[] || `[]`",
    "length(spec.containers[?securityContext.capabilities.drop && contains("
    "securityContext.capabilities.drop, 'ALL')])",
    "spec.initContainers[].name", "spec.missing[].name || `[]`", "a.n.to_string(@)",
    "a.list[0].x.y", "a.map.k", "a.map.k.x", "a.map.j.x.y", "empty[0]", "empty[]", "obj.x", "obj.*",
    "a.b.to_string(@)", "a.b.not_null(@, 'd')", "a.s[]", "a.map[]", "a.s[*]", "a.s[?x]",
    "length(a.n)[]", "split(a.n, 'x')[]", "split(a.n, 'x')[?x]", "split(a.n, 'x').*",
    "split(a.n, 'x')[*].x", "@.to_string(@)", "a.b | @.to_string(@)",
]


def _outcome(run: Any) -> tuple[str, Any]:
    try:
        return "value", run()
    except Exception as exc:  # the error's class and text must match too
        return type(exc).__name__, str(exc)


@pytest.mark.parametrize("text", EXPRESSIONS)
def test_compiled_expression_matches_interpreter(text: str) -> None:
    evaluator = default_evaluator()
    expression = compile_expression(text)
    compiled = compile_closure(expression.ast, evaluator._interpreter)
    for data in INPUTS:
        expected = _outcome(lambda: evaluator._interpreter.visit(expression.ast, data))  # noqa: B023
        assert _outcome(lambda: compiled(data)) == expected, (text, data)  # noqa: B023


def test_every_node_type_of_the_table_is_exercised() -> None:
    """The table reaches every node type the compiler builds, and the interpreter fallback."""
    from scanner.engine.jmespath.compiler import _BUILDERS

    seen = set()
    for text in EXPRESSIONS:
        stack = [compile_expression(text).ast]
        while stack:
            node = stack.pop()
            seen.add(node["type"])
            stack.extend(c for c in node.get("children", ()) if isinstance(c, dict))
    assert set(_BUILDERS) <= seen
    assert {"slice", "expref"} <= seen


def test_search_uses_one_compiled_closure_per_expression() -> None:
    evaluator = default_evaluator()
    expression = compile_expression("a.list[].x")
    results = [evaluator.search(expression, data) for data in itertools.islice(INPUTS, 2)]
    assert results == [[1], None]
    assert evaluator._compiled[expression] is evaluator._compiled[compile_expression("a.list[].x")]
