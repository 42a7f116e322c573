"""Kyverno's JMESPath dialect: "Unknown key" propagation and absorption (spec 7.3)."""

from __future__ import annotations

from typing import Any

import pytest

from scanner.engine.jmespath.dialect import compile_expression, default_evaluator
from scanner.engine.jmespath.interpreter import JMESPathError, UnknownKeyError

DATA: dict[str, Any] = {
    "a": {"b": None, "s": "text", "n": 3, "list": [{"x": 1}, {"y": 2}], "nested": [[1], [2]]},
    "empty": [],
}


def search(text: str, data: Any = DATA) -> Any:
    return compile_expression(text).search(data)


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        pytest.param("a.b", None, id="present-null-key-is-null"),
        pytest.param("a.s.x", None, id="field-on-string-is-null"),
        pytest.param("a.b.c", None, id="field-below-null-is-null"),
        pytest.param("a.missing || 'x'", "x", id="or-left-absorbs"),
        pytest.param("a.b || a.missing", None, id="or-right-absorbs"),
        pytest.param("a.missing && a.n", None, id="and-left-absorbs"),
        pytest.param("!a.missing", None, id="not-binds-tighter-than-dot"),
        pytest.param("!(a.missing)", True, id="not-absorbs"),
        pytest.param("a.missing == null", True, id="comparator-absorbs"),
        pytest.param("a.missing != 'x'", True, id="comparator-ne-absorbs"),
        pytest.param("length(a.missing || `[]`)", 0, id="function-arg-with-default"),
        pytest.param("not_null(a.missing, 'd')", "d", id="function-arg-absorbs"),
        pytest.param("[a.missing, a.n]", [None, 3], id="multiselect-list-absorbs"),
        pytest.param("{x: a.missing, y: a.n}", {"x": None, "y": 3}, id="multiselect-hash-absorbs"),
        pytest.param("a.missing | length(@ || `[]`)", 0, id="pipe-stage-absorbs"),
        pytest.param("a.list[].x", [1], id="projection-body-drops-missing"),
        pytest.param("a.list[*].x", [1], id="wildcard-projection-drops-missing"),
        pytest.param("a.gone[*].x", None, id="projection-missing-left-is-null"),
        pytest.param("a.list[?x == `1`]", [{"x": 1}], id="filter-condition-absorbs"),
        pytest.param("a.gone[?x == `1`]", None, id="filter-missing-left-is-null"),
        pytest.param("a.gone[]", None, id="flatten-missing-left-is-null"),
        pytest.param("a.nested[]", [1, 2], id="flatten-merges-lists"),
        pytest.param("a.*.x", [], id="object-projection-absorbs"),
        pytest.param("map(&y, a.list)", [None, 2], id="expref-absorbs"),
        pytest.param("`[1, 2]` == `[1.0, 2.0]`", True, id="numbers-equal-across-int-float"),
        pytest.param("`true` == `1`", False, id="bool-never-equals-number"),
        pytest.param("'a' < 'b'", None, id="ordering-strings-is-null"),
        pytest.param("a.n > `2`", True, id="ordering-numbers"),
        pytest.param("!`0`", False, id="zero-is-truthy"),
        pytest.param("to_string(`1`)", "1", id="to-string-go-number"),
        pytest.param("to_string(`{\"b\": 1, \"a\": \"<\"}`)", '{"a":"\\u003c","b":1}',
                     id="to-string-go-json"),
        pytest.param("to_number('12.5')", 12.5, id="to-number-decimal"),
        pytest.param("to_number('abc')", None, id="to-number-non-numeric-null"),
        pytest.param("to_number('1_000')", None, id="to-number-rejects-underscore"),
        pytest.param("\"a\".\"b\"", None, id="quoted-identifiers"),
    ],
)
def test_dialect_evaluates_like_kyverno(expr: str, expected: Any) -> None:
    assert search(expr) == expected


@pytest.mark.parametrize(
    ("expr", "key"),
    [
        pytest.param("a.missing", "missing", id="plain-chain"),
        pytest.param("missing.b.c", "missing", id="first-missing-key-reported"),
        pytest.param("a.missing[0]", "missing", id="index-on-missing-key"),
        pytest.param("a.n && a.missing", "missing", id="and-right-propagates"),
        pytest.param("a.list[0].y", "y", id="index-then-missing-field"),
    ],
)
def test_dialect_propagates_unknown_key(expr: str, key: str) -> None:
    with pytest.raises(UnknownKeyError) as info:
        search(expr)
    assert info.value.message == f'Unknown key "{key}" in path'
    assert info.value.key == key


def test_dialect_function_type_error_is_not_unknown_key() -> None:
    with pytest.raises(JMESPathError) as info:
        search("length(a.missing)")
    assert not isinstance(info.value, UnknownKeyError)
    assert "invalid type" in info.value.message


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        pytest.param("a.[", "invalid JMESPath expression", id="syntax-error"),
        pytest.param("foo(@)", "Unknown function: foo()", id="unknown-function"),
        pytest.param("a | length(b) | nope(@)", "Unknown function: nope()", id="unknown-nested"),
    ],
)
def test_compile_expression_rejects(text: str, fragment: str) -> None:
    with pytest.raises(JMESPathError) as info:
        compile_expression(text)
    assert fragment in info.value.message


def test_compile_expression_is_cached_and_bounded() -> None:
    assert compile_expression("a.b") is compile_expression("a.b")
    assert compile_expression.cache_info().maxsize is not None


def test_evaluator_reuses_one_interpreter() -> None:
    evaluator = default_evaluator()
    assert evaluator is default_evaluator()
    assert evaluator.search("a.n", DATA) == 3
