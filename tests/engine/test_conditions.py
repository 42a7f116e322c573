"""Condition operators (spec 6.4, 7.8) and condition blocks (spec 6.1, 6.2, 6.5)."""

from __future__ import annotations

from typing import Any

import jmespath
import pytest
import yaml

from scanner.engine.conditions import (
    OPERATORS,
    ConditionError,
    apply_operator,
    evaluate_block,
    parse_conditions,
)
from scanner.engine.variables import SubstitutionError, substitute_all
from scanner.errors import PolicyError


def op_case(key: Any, value: Any, expected: bool, id: str) -> Any:
    return pytest.param(key, value, expected, id=id)


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [
        op_case(True, True, True, "bools-equal"),
        op_case(True, "true", False, "bool-key-needs-bool-value"),
        op_case(3.0, 3, True, "numbers-equal"),
        op_case(3.0, "3", True, "number-key-parses-string-value"),
        op_case(3.0, "3.0", True, "number-key-parses-decimal-string"),
        op_case(3.0, "x", False, "number-key-unparsable-string"),
        op_case(3.0, None, False, "number-key-null-value"),
        op_case("3", 3.0, False, "string-key-needs-string-value"),
        op_case("v1.2", "v1.*", True, "value-is-the-wildcard-pattern"),
        op_case("v1.*", "v1.2", False, "key-is-not-a-pattern"),
        op_case("2", "2*", False, "quantity-key-has-no-wildcard-fallback"),
        op_case("1Gi", "1024Mi", True, "quantities-equal"),
        op_case("1024", "1Ki", True, "plain-number-equals-binary-quantity"),
        op_case("1h", "60m", True, "durations-equal"),
        op_case("1m", 60.0, True, "duration-equals-number-of-seconds"),
        op_case("1m", 60.9, True, "number-seconds-truncated"),
        op_case("0", 0.0, False, "literal-zero-is-not-a-duration"),
        op_case("1.5h", "90m", True, "fractional-duration"),
        op_case(".5s", "500ms", True, "duration-without-leading-digit"),
        op_case("1µs", "1000ns", True, "micro-sign-unit"),
        op_case("1k", "1000", True, "decimal-suffix-quantity"),
        op_case("1K", "1000", False, "capital-k-is-not-a-quantity"),
        op_case("1e3", "1k", True, "exponent-quantity"),
        op_case({"a": 1.0}, {"a": 1}, True, "maps-deeply-equal"),
        op_case({"a": 1.0}, {"a": True}, False, "maps-type-sensitive"),
        op_case(["a", "b"], ["b", "a"], False, "lists-order-sensitive"),
        op_case(["a"], "a", False, "list-key-needs-list-value"),
        op_case(None, None, False, "null-key-is-false"),
    ],
)
def test_operator_equals(key: Any, value: Any, expected: bool) -> None:
    assert apply_operator("Equals", key, value) is expected
    assert apply_operator("Equal", key, value) is expected


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [
        op_case(None, "x", False, "null-key-is-false"),
        op_case(True, "true", True, "bool-key-type-mismatch-is-true"),
        op_case(True, False, True, "bools-differ"),
        op_case(3.0, "x", True, "number-key-unparsable-string-is-true"),
        op_case(3.0, "3", False, "number-key-parsed-equal"),
        op_case(3.0, [3], True, "number-key-list-value-is-true"),
        op_case("a", 1.0, True, "string-key-number-value-is-true"),
        op_case("nginx", "ngi*", False, "wildcard-matches"),
        op_case("nginx", "busybox", True, "wildcard-does-not-match"),
        op_case("2", "abc", True, "quantity-key-unparsable-value-is-true"),
        op_case("100Mi", "not-a-quantity", True, "binary-quantity-key-non-quantity-value-is-true"),
        op_case("5", 5.0, True, "quantity-key-number-value-is-true"),
        op_case("1Gi", "1024Mi", False, "equal-quantities"),
        op_case("1h", "61m", True, "different-durations"),
        op_case({"a": 1}, {"a": 2}, True, "different-maps"),
        op_case({"a": 1}, "a", True, "map-key-other-type-is-true"),
        op_case(["a"], ["a"], False, "equal-lists"),
    ],
)
def test_operator_not_equals(key: Any, value: Any, expected: bool) -> None:
    assert apply_operator("NotEquals", key, value) is expected
    assert apply_operator("NotEqual", key, value) is expected


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [
        op_case("a", ["x", "a"], True, "scalar-in-list"),
        op_case("kube-system", ["kube-*"], True, "list-element-is-a-pattern"),
        op_case("kube-*", ["kube-system"], True, "key-is-a-pattern-too"),
        op_case(5.0, ["5"], True, "number-key-as-text"),
        op_case(True, ["true"], True, "bool-key-as-text"),
        op_case("a", "a*", True, "string-value-is-a-pattern"),
        op_case("a", '["a", "b"]', True, "json-array-string"),
        op_case("a*", '["ab"]', False, "json-array-is-exact"),
        op_case("a", "b", False, "non-json-string-value-is-invalid"),
        op_case("a", 5.0, False, "number-value-is-invalid"),
        op_case(["a", "b"], ["a", "b", "c"], True, "every-key-element-present"),
        op_case(["a", "d"], ["a", "b"], False, "one-key-element-missing"),
        op_case(["a*"], ["ab"], False, "list-key-has-no-wildcards"),
        op_case(["a"], ["a", 1.0], False, "non-string-value-element-is-invalid"),
        op_case(["a"], "a", True, "single-element-equal-to-string"),
        op_case(["a", "b"], '["a", "b"]', True, "list-key-json-array"),
        op_case([], ["a"], True, "empty-key-list"),
        op_case({"a": 1}, ["a"], False, "map-key-is-false"),
    ],
)
def test_operator_in(key: Any, value: Any, expected: bool) -> None:
    assert apply_operator("In", key, value) is expected


def test_operator_in_rejects_non_string_key_elements() -> None:
    with pytest.raises(ConditionError, match="not a string"):
        apply_operator("In", ["a", 1.0], ["a"])


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [
        op_case("a", ["b"], True, "scalar-not-in-list"),
        op_case("a", ["a"], False, "scalar-in-list"),
        op_case("a", 5.0, False, "invalid-value-type-is-false"),
        op_case("a", "b", False, "non-json-string-is-invalid"),
        op_case(["a", "z"], ["a", "b"], True, "some-key-element-missing"),
        op_case(["a"], ["a", "b"], False, "all-key-elements-present"),
        op_case(["a"], "a", True, "single-element-equal-quirk-is-true"),
        op_case([], ["a"], False, "empty-key-list"),
    ],
)
def test_operator_not_in(key: Any, value: Any, expected: bool) -> None:
    assert apply_operator("NotIn", key, value) is expected


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [
        op_case(["a", "b"], ["b*"], True, "vector-20-any-element-matches-a-pattern"),
        op_case("kube-system", ["default", "kube-*"], True, "scalar-in-list-with-wildcard"),
        op_case("kyverno", "default", False, "scalar-not-equal-string"),
        op_case("kyverno", "kyverno", True, "scalar-equal-string"),
        op_case(64.0, "64", True, "number-key-as-text"),
        op_case(1e6, "1e+06", True, "large-number-key-uses-go-format"),
        op_case(True, "true", True, "bool-key-as-text"),
        op_case("5", "1-10", True, "scalar-in-range"),
        op_case("0", "1-10", False, "scalar-outside-range"),
        op_case("apple", '["apple", "banana"]', True, "json-array-string"),
        op_case("apple", '{"a": 1}', False, "json-that-is-not-a-string-array"),
        op_case("x", 5.0, False, "number-value-is-invalid"),
        op_case("x", None, False, "null-value-is-invalid"),
        op_case(["kube-system", "kube-public"], "kube-*", True, "list-key-wildcard-string"),
        op_case(["kube-system", "default"], "kube-system", True, "list-key-partial"),
        op_case(["default", "kyverno"], "kube-*", False, "list-key-none-match"),
        op_case(["0", "5"], "1-10", True, "list-key-any-in-range"),
        op_case(["0", "20"], "1-10", False, "list-key-none-in-range"),
        op_case([], ["default"], False, "empty-key-list"),
        op_case(["1", "2"], 2.0, True, "number-value-is-one-element-list"),
        op_case(["true"], True, True, "bool-value-is-one-element-list"),
        op_case([1.0, 2.0], ["2"], True, "number-key-elements-as-text"),
        op_case(["a"], {"a": 1}, False, "map-value-is-false"),
    ],
)
def test_operator_any_in(key: Any, value: Any, expected: bool) -> None:
    assert apply_operator("AnyIn", key, value) is expected


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [
        op_case([], ["x"], True, "vector-21-empty-key-list"),
        op_case(["a", "b"], ["a", "b*"], True, "every-element-has-a-partner"),
        op_case(["a", "c"], ["a", "b"], False, "one-element-without-partner"),
        op_case("a", ["a"], True, "scalar-as-any-in"),
        op_case("x", 5.0, False, "scalar-invalid-value-type"),
        op_case(["5", "7"], "1-10", True, "all-in-range"),
        op_case(["5", "70"], "1-10", False, "one-outside-range"),
        op_case(["a"], "a", True, "single-element-equal-string"),
        op_case(["a", "b"], '["a", "b", "c"]', True, "json-array-string"),
        op_case(["1"], 1.0, False, "number-value-is-false-for-lists"),
    ],
)
def test_operator_all_in(key: Any, value: Any, expected: bool) -> None:
    assert apply_operator("AllIn", key, value) is expected


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [
        op_case("x", 5.0, False, "vector-22-invalid-value-type"),
        op_case("x", ["a"], True, "scalar-not-in-list"),
        op_case("a", ["a*"], False, "scalar-in-list"),
        op_case(["a", "z"], ["a", "b"], True, "one-key-element-without-partner"),
        op_case(["a", "b"], ["a", "b"], False, "all-have-partners"),
        op_case(["a"], "a", False, "single-element-equal-string-is-false"),
        op_case(["0", "5"], "1-10", True, "one-element-outside-range"),
        op_case(["2", "5"], "1-10", False, "all-inside-range"),
        op_case([], ["a"], False, "empty-key-list"),
        op_case(["3"], 2.0, True, "number-value-is-one-element-list"),
    ],
)
def test_operator_any_not_in(key: Any, value: Any, expected: bool) -> None:
    assert apply_operator("AnyNotIn", key, value) is expected


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [
        op_case("x", ["a", "b"], True, "scalar-not-in-list"),
        op_case("a", ["a"], False, "scalar-in-list"),
        op_case("x", True, False, "invalid-value-type"),
        op_case(["x", "y"], ["a", "b"], True, "no-element-has-a-partner"),
        op_case(["x", "a"], ["a", "b"], False, "one-element-has-a-partner"),
        op_case([], ["a"], True, "empty-key-list"),
        op_case(["a"], "a", False, "single-element-equal-string-is-false"),
        op_case(["0", "20"], "1-10", True, "none-inside-range"),
        op_case(["0", "5"], "1-10", False, "one-inside-range"),
        op_case(["1"], 1.0, False, "number-value-is-false-for-lists"),
    ],
)
def test_operator_all_not_in(key: Any, value: Any, expected: bool) -> None:
    assert apply_operator("AllNotIn", key, value) is expected


@pytest.mark.parametrize(
    ("operator", "key", "value", "expected"),
    [
        pytest.param("GreaterThan", "1.10.0", "1.9.0", True, id="vector-23-semver"),
        pytest.param("GreaterThan", "10m", 5.0, True, id="vector-24-minutes-against-seconds"),
        pytest.param("GreaterThan", "90s", 60.0, True, id="duration-against-seconds"),
        pytest.param("GreaterThan", 90.0, "1m", True, id="seconds-against-duration"),
        pytest.param("GreaterThan", 6.0, 5.0, True, id="numbers"),
        pytest.param("GreaterThan", 6.0, "5", True, id="number-against-numeric-string"),
        pytest.param("GreaterThan", 6.0, "x", False, id="number-against-text"),
        pytest.param("GreaterThan", 6.0, True, False, id="number-against-bool"),
        pytest.param("GreaterThan", "6", 5.0, True, id="numeric-string-against-number"),
        pytest.param("GreaterThan", "2Gi", "1024Mi", True, id="quantities"),
        pytest.param("GreaterThan", "1.0.0-alpha", "1.0.0", False, id="prerelease-is-lower"),
        pytest.param("GreaterThan", "1.10.0", 1.0, False, id="semver-needs-string-value"),
        pytest.param("GreaterThan", "v1.10.0", "v1.9.0", False, id="v-prefix-is-not-semver"),
        pytest.param("GreaterThan", "abc", "abb", False, id="text-never-ordered"),
        pytest.param("GreaterThan", None, 1.0, False, id="null-key"),
        pytest.param("GreaterThan", ["2"], 1.0, False, id="list-key"),
        pytest.param("GreaterThanOrEquals", "1Gi", "1024Mi", True, id="at-least-equal"),
        pytest.param("GreaterThanOrEquals", "NaN", 1.0, False, id="nan-never-compares"),
        pytest.param("LessThan", "500m", "1", True, id="milli-quantity-below-one"),
        pytest.param("LessThan", 4.5, 5.0, True, id="less-numbers"),
        pytest.param("LessThanOrEquals", "5", "5", True, id="at-most-equal"),
        pytest.param("LessThanOrEquals", "1h", "59m", False, id="at-most-durations"),
        pytest.param("GreaterThan", "1µs", "999ns", True, id="micro-against-nano"),
        pytest.param("GreaterThan", "-1s", "-2s", True, id="negative-durations"),
        pytest.param("LessThan", "1.9.0", "1.10.0", True, id="semver-numeric-not-lexical"),
        pytest.param("GreaterThan", "1.0.0-beta.11", "1.0.0-beta.2", True,
                     id="semver-prerelease-numeric-identifiers"),
        pytest.param("GreaterThan", "01.0.0", "0.9.0", False, id="leading-zero-is-not-semver"),
    ],
)
def test_operator_ordering(operator: str, key: Any, value: Any, expected: bool) -> None:
    assert apply_operator(operator, key, value) is expected


@pytest.mark.parametrize(
    ("operator", "key", "value", "expected"),
    [
        pytest.param("DurationGreaterThan", "2h", "90m", True, id="durations"),
        pytest.param("DurationGreaterThan", 61.7, "1m", True, id="seconds-truncated"),
        pytest.param("DurationGreaterThanOrEquals", "0", 0.0, True, id="literal-zero-accepted"),
        pytest.param("DurationLessThan", "1s", "1001ms", True, id="sub-second"),
        pytest.param("DurationLessThanOrEquals", "1m", 60.0, True, id="minute-vs-seconds"),
        pytest.param("DurationLessThan", "5", "1m", False, id="bare-number-string-invalid"),
        pytest.param("DurationLessThan", True, "1m", False, id="bool-key-invalid"),
    ],
)
def test_operator_duration(operator: str, key: Any, value: Any, expected: bool) -> None:
    assert apply_operator(operator, key, value) is expected


def test_operator_names_are_case_insensitive_in_the_engine() -> None:
    assert apply_operator("equals", "a", "a") and apply_operator("ANYIN", "a", ["a"])


def test_operator_unknown_name_is_an_error() -> None:
    with pytest.raises(ConditionError, match="unknown condition operator 'Matches'"):
        apply_operator("Matches", "a", "a")


def test_operators_set_is_exact() -> None:
    assert len(OPERATORS) == 18 and "Equals" in OPERATORS and "equals" not in OPERATORS


# -- blocks ----------------------------------------------------------------------------

CONTEXT = {
    "request": {
        "operation": "CREATE",
        "object": {
            "metadata": {"name": "web-1", "labels": {"app": "web"}},
            "spec": {"replicas": 3.0},
        },
    }
}


def strict_resolve(expression: str) -> Any:
    """A resolver with the dialect's "Unknown key" error for plain field chains."""
    if all(part.isidentifier() for part in expression.split(".")):
        node: Any = CONTEXT
        for part in expression.split("."):
            if not isinstance(node, dict) or part not in node:
                raise LookupError(f'Unknown key "{part}" in path')
            node = node[part]
        return node
    return jmespath.search(expression, CONTEXT)


def substitute(value: Any) -> Any:
    return substitute_all(value, strict_resolve)


def block(text: str, **kwargs: Any) -> Any:
    return parse_conditions(yaml.safe_load(text), **kwargs)


def test_block_vector_16_whole_variable_keeps_number_type() -> None:
    result = evaluate_block(
        block("all: [{key: '{{request.object.spec.replicas}}', operator: Equals, value: '3'}]"),
        substitute,
    )
    assert result.value is True


def test_block_vector_25_unknown_key_is_an_error_not_false() -> None:
    conditions = block("all: [{key: '{{ request.object.metadata.labels.x }}', operator: Equals}]")
    with pytest.raises(SubstitutionError) as caught:
        evaluate_block(conditions, substitute)
    assert str(caught.value) == (
        "failed to substitute variables in condition key: failed to resolve "
        'request.object.metadata.labels.x at path : Unknown key "x" in path'
    )


def test_block_vector_26_default_with_or_evaluates_to_empty_string() -> None:
    key = "{{ request.object.metadata.labels.x || '' }}"
    conditions = block(f"all: [{{key: \"{key}\", operator: Equals, value: ''}}]")
    assert evaluate_block(conditions, substitute).value is True


def test_block_value_substitution_error_names_the_value() -> None:
    conditions = block("all: [{key: a, operator: Equals, value: '{{ request.nope }}'}]")
    with pytest.raises(SubstitutionError) as caught:
        evaluate_block(conditions, substitute)
    assert str(caught.value).startswith("failed to substitute variables in condition value: ")


T = "{key: a, operator: Equals, value: a"
F = "{key: a, operator: Equals, value: b"
BOOM = "{key: '{{ request.nope }}', operator: Equals, value: a"


@pytest.mark.parametrize(
    ("text", "expected", "message"),
    [
        pytest.param(f"any: [{F}, message: f1}}, {T}, message: t1}}]", True, "t1", id="any-true"),
        pytest.param(f"any: [{F}, message: f1}}, {F}, message: f2}}]", False, "f1; f2",
                     id="any-false-lists-every-false-message"),
        pytest.param("any: []", False, "", id="explicit-empty-any-is-false"),
        pytest.param("any: null", True, "", id="null-any-counts-as-absent"),
        pytest.param("{}", True, "", id="empty-object-is-true"),
        pytest.param("all: []", True, "", id="empty-all-is-true"),
        pytest.param(f"all: [{T}, message: t1}}, {T}, message: t2}}]", True, "t1; t2",
                     id="all-true-joins-true-messages"),
        pytest.param(f"all: [{T}, message: t1}}, {F}, message: f1}}, {F}, message: f2}}]", False,
                     "f1", id="all-stops-at-first-false"),
        pytest.param(f"any: [{F}, message: f1}}, {T}, message: t1}}]\nall: [{F}, message: f2}}]",
                     False, "f1; f2", id="false-messages-of-any-and-all"),
        pytest.param(f"any: [{T}, message: t1}}]\nall: [{T}, message: ''}}, {T}, message: t2}}]",
                     True, "t1; t2", id="empty-messages-dropped"),
        pytest.param(f"[{T}, message: t1}}, {T}, message: t2}}]", True, "t1;t2",
                     id="legacy-true-joins-without-space"),
        pytest.param(f"[{T}, message: t1}}, {F}, message: f1}}, {F}, message: f2}}]", False, "f1",
                     id="legacy-false-reports-first-false"),
        pytest.param(f"any: [{T}}}, {BOOM}}}]", True, "", id="any-stops-before-an-error"),
        pytest.param(f"all: [{F}}}, {BOOM}}}]", False, "", id="all-stops-before-an-error"),
        pytest.param(f"[{F}}}, {BOOM}}}]", False, "", id="legacy-stops-before-an-error"),
    ],
)
def test_block_evaluation_and_messages(text: str, expected: bool, message: str) -> None:
    result = evaluate_block(block(text), substitute)
    assert (result.value, result.message) == (expected, message)


@pytest.mark.parametrize(
    "text",
    [
        pytest.param(f"any: [{F}}}]\nall: [{BOOM}}}]", id="all-still-evaluated-after-false-any"),
        pytest.param(f"any: [{F}}}, {BOOM}}}]", id="any-reaches-the-error"),
        pytest.param(f"all: [{T}}}, {BOOM}}}]", id="all-reaches-the-error"),
    ],
)
def test_block_errors_abort_the_block(text: str) -> None:
    with pytest.raises(SubstitutionError):
        evaluate_block(block(text), substitute)


def test_block_static_conditions_never_call_substitute() -> None:
    def refuse(value: Any) -> Any:
        raise AssertionError(f"substitute called for {value!r}")

    assert evaluate_block(block(f"all: [{T}}}]"), refuse).value is True


def test_block_operator_errors_propagate() -> None:
    with pytest.raises(ConditionError):
        evaluate_block(block("[{key: a, operator: Matches, value: a}]"), substitute)


@pytest.mark.parametrize(
    ("raw", "kwargs", "pointer"),
    [
        pytest.param([{"key": "a", "operator": "Equals"}], {"foreach": True}, "/p",
                     id="foreach-rejects-legacy-list"),
        pytest.param("all", {}, "/p", id="scalar-block"),
        pytest.param({"all": {"key": "a"}}, {}, "/p/all", id="all-not-a-list"),
        pytest.param({"any": ["x"]}, {}, "/p/any/0", id="condition-not-a-mapping"),
        pytest.param({"all": [{"key": "a"}]}, {}, "/p/all/0/operator", id="operator-missing"),
        pytest.param({"all": [{"key": "a", "operator": 1}]}, {}, "/p/all/0/operator",
                     id="operator-not-a-string"),
        pytest.param({"all": [{"key": "a", "operator": "Equals", "message": 3}]}, {},
                     "/p/all/0/message", id="message-not-a-string"),
    ],
)
def test_parse_conditions_rejects_bad_shapes(
    raw: Any, kwargs: dict[str, Any], pointer: str
) -> None:
    with pytest.raises(PolicyError) as caught:
        parse_conditions(raw, pointer="/p", **kwargs)
    assert caught.value.location is not None and caught.value.location.pointer == pointer


def test_parse_conditions_reads_both_shapes() -> None:
    legacy = parse_conditions([{"key": "a", "operator": "Equals", "value": "a", "message": "m"}])
    assert legacy.legacy and legacy.any is None and legacy.all[0].message == "m"
    modern = parse_conditions({"any": [{"key": 1, "operator": "In"}]}, foreach=True)
    assert not modern.legacy and modern.any is not None and modern.any[0].value is None
    assert parse_conditions(None).any is None
    assert parse_conditions({"none": [1]}) == parse_conditions({})
