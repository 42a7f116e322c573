"""Kyverno's unit tests for the condition operators, as table rows against this engine.

Sources (kyverno/kyverno, ``pkg/engine/variables/operator/``): ``equal_test.go``, ``notequal_test.go``,
``in_test.go``, ``anyin_test.go``, ``anynotin_test.go``, ``allnotin_test.go``, ``numeric_test.go``,
``duration_test.go``, ``operator_test.go`` and ``utils_test.go`` (every stored version of each; rows
that several versions share appear once), read beside ``equal.go``, ``notequal.go``, ``in.go``,
``anyin.go``, ``allin.go``, ``anynotin.go``, ``allnotin.go``, ``numeric.go``, ``duration.go`` and
``operator.go``. Each row names its Go test function and case.

Go tests call the handlers with Go ``int``/``int64`` values; the CLI decodes every number of a
policy or resource as a 64-bit float, so each row's key and value go through ``decoded`` (JSON with
integers read as floats) first. Go-internal helpers (``keyExistsInArray``, ``setExistsInArray``,
``isIn``, ``parseDuration``, ``compareByCondition`` ...) are tested through the operators that use
them; ``parseQuantity`` through the project's quantity parser.

Rows are adapted where the project's spec deliberately differs from what a test asserts:

* String key against a number value (``Equals("5", 5)``): the spec (6.4, "Note the asymmetry")
  pins Kyverno's released behaviour — a string key needs a string value, so Equals is false and
  NotEquals true. The rows that assert the symmetric result come from the still-open fixes for
  kyverno/kyverno#16358 (PRs #16363 and #16368); they assert the spec's result here.
* An unknown operator: Kyverno's engine answers false; the project rejects such a policy as invalid
  before evaluation (spec 1.7, 6.2), and ``apply_operator`` raises ``ConditionError``.
* Values with no JSON form (Go ``struct{}``) become ``null``, the engine's unsupported key.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from scanner.engine.conditions import OPERATORS, ConditionError, apply_operator
from scanner.engine.golang.quantity import parse_quantity

OBJ = {"foo": "bar"}


def decoded(x: Any) -> Any:
    """A value as the Kyverno CLI hands it to the engine: integers become floats."""
    return json.loads(json.dumps(x), parse_int=float)


def evaluate(operator: str, key: Any, value: Any) -> bool:
    return apply_operator(operator, decoded(key), decoded(value))


def row(operator: str, key: Any, value: Any, expected: bool, id: str) -> Any:
    return pytest.param(operator, key, value, expected, id=id)


def check(operator: str, key: Any, value: Any, expected: bool) -> None:
    assert evaluate(operator, key, value) is expected


# -- equal_test.go ----------------------------------------------------------------------

EQUAL_ROWS = [
    # TestEqualHandler_Evaluate
    row("Equals", True, True, True, "Evaluate/bool-equal-true"),
    row("Equals", False, False, True, "Evaluate/bool-equal-false"),
    row("Equals", True, False, False, "Evaluate/bool-not-equal"),
    row("Equals", True, "true", False, "Evaluate/bool-with-wrong-type"),
    row("Equals", 42, 42, True, "Evaluate/int-equal"),
    row("Equals", 42, 43, False, "Evaluate/int-not-equal"),
    row("Equals", 100, 100, True, "Evaluate/int64-equal"),
    row("Equals", 42, 42, True, "Evaluate/int-with-int64"),
    row("Equals", 42, 42.0, True, "Evaluate/int-with-float64-no-fraction"),
    row("Equals", 42, 42.5, False, "Evaluate/int-with-float64-with-fraction"),
    row("Equals", 42, "42", True, "Evaluate/int-with-string"),
    row("Equals", 42, "invalid", False, "Evaluate/int-with-invalid-string"),
    row("Equals", 3.14, 3.14, True, "Evaluate/float-equal"),
    row("Equals", 3.14, 2.71, False, "Evaluate/float-not-equal"),
    row("Equals", 42.0, 42, True, "Evaluate/float-with-int-no-fraction"),
    row("Equals", 100.0, 100, True, "Evaluate/float-with-int64"),
    row("Equals", 3.14, "3.14", True, "Evaluate/float-with-string"),
    row("Equals", 3.14, "invalid", False, "Evaluate/float-with-invalid-string"),
    row("Equals", "hello", "hello", True, "Evaluate/string-equal"),
    row("Equals", "hello", "world", False, "Evaluate/string-not-equal"),
    row("Equals", "hello-world", "hello-*", True, "Evaluate/string-with-wildcard-match"),
    row("Equals", "goodbye-world", "hello-*", False, "Evaluate/string-with-wildcard-no-match"),
    row("Equals", "hello", 123, False, "Evaluate/string-with-wrong-type"),
    # adapted (spec 6.4 asymmetry; Kyverno #16358 fix not released): Go expects true
    row("Equals", "5", 5, False, "Evaluate/string-key-equal-int-value-ADAPTED"),
    row("Equals", "5", 5, False, "Evaluate/string-key-equal-int64-value-ADAPTED"),
    row("Equals", "5", 5.0, False, "Evaluate/string-key-equal-float64-value-ADAPTED"),
    row("Equals", "5.5", 5.5, False, "Evaluate/string-key-equal-fractional-float64-value-ADAPTED"),
    row("Equals", "5", 6, False, "Evaluate/string-key-not-equal-int-value"),
    row("Equals", "abc", 5, False, "Evaluate/non-numeric-string-key-vs-int-value"),
    row("Equals", "100Mi", "100Mi", True, "Evaluate/resource-quantity-equal"),
    row("Equals", "1Gi", "1024Mi", True, "Evaluate/resource-quantity-equal-different-format"),
    row("Equals", "100Mi", "200Mi", False, "Evaluate/resource-quantity-not-equal"),
    row("Equals", "1h", "60m", True, "Evaluate/duration-equal"),
    row("Equals", "1h", "30m", False, "Evaluate/duration-not-equal"),
    row("Equals", OBJ, {"foo": "bar"}, True, "Evaluate/map-equal"),
    row("Equals", OBJ, {"foo": "baz"}, False, "Evaluate/map-not-equal"),
    row("Equals", OBJ, "not a map", False, "Evaluate/map-with-wrong-type"),
    row("Equals", ["a", "b", "c"], ["a", "b", "c"], True, "Evaluate/slice-equal"),
    row("Equals", ["a", "b", "c"], ["a", "b", "d"], False, "Evaluate/slice-not-equal"),
    row("Equals", ["a", "b", "c"], ["a", "b"], False, "Evaluate/slice-different-length"),
    row("Equals", ["a", "b", "c"], "not a slice", False, "Evaluate/slice-with-wrong-type"),
    # adapted: Go struct{}{} has no JSON form; null is the unsupported key type
    row("Equals", None, None, False, "Evaluate/unsupported-type-ADAPTED"),
    # TestEqualHandler_ValidateValueWithIntPattern
    row("Equals", 10, 10, True, "IntPattern/int-with-int"),
    row("Equals", 10, 10, True, "IntPattern/int-with-int64"),
    row("Equals", 10, 10.0, True, "IntPattern/int-with-float64-no-fraction"),
    row("Equals", 10, 10.5, False, "IntPattern/int-with-float64-with-fraction"),
    row("Equals", 10, "10", True, "IntPattern/int-with-string-valid"),
    row("Equals", 10, "abc", False, "IntPattern/int-with-string-invalid"),
    row("Equals", 10, True, False, "IntPattern/int-with-wrong-type"),
    # TestEqualHandler_ValidateValueWithFloatPattern
    row("Equals", 10.0, 10, True, "FloatPattern/float-with-int"),
    row("Equals", 10.0, 10, True, "FloatPattern/float-with-int64"),
    row("Equals", 10.5, 10, False, "FloatPattern/float-with-fraction-and-int"),
    row("Equals", 3.14, 3.14, True, "FloatPattern/float-with-float64"),
    row("Equals", 3.14, "3.14", True, "FloatPattern/float-with-string-valid"),
    row("Equals", 3.14, "abc", False, "FloatPattern/float-with-string-invalid"),
    row("Equals", 3.14, True, False, "FloatPattern/float-with-wrong-type"),
    # TestEqualHandler_ValidateValueWithBoolPattern
    row("Equals", True, True, True, "BoolPattern/true-equals-true"),
    row("Equals", False, False, True, "BoolPattern/false-equals-false"),
    row("Equals", True, False, False, "BoolPattern/true-not-equals-false"),
    row("Equals", True, "true", False, "BoolPattern/bool-with-wrong-type"),
]


@pytest.mark.parametrize(("operator", "key", "value", "expected"), EQUAL_ROWS)
def test_equal_handler(operator: str, key: Any, value: Any, expected: bool) -> None:
    check(operator, key, value, expected)


@pytest.mark.parametrize(
    ("a", "b", "equals_ab", "equals_ba"),
    [
        # TestEqualNotEqual_TypeSymmetry. Go asserts Equals(a, b) == Equals(b, a); adapted to the
        # spec's asymmetry (6.4): a number key parses a string value, a string key needs a string.
        pytest.param("5", 5, False, True, id="string-and-int-ADAPTED"),
        pytest.param("5", 5, False, True, id="string-and-int64-ADAPTED"),
        pytest.param("5", 5.0, False, True, id="string-and-float64-ADAPTED"),
        pytest.param("5.5", 5.5, False, True, id="fractional-string-and-float64-ADAPTED"),
        pytest.param("5", 6, False, False, id="non-equal-string-and-int"),
        pytest.param("abc", 5, False, False, id="non-numeric-string-and-int"),
    ],
)
def test_equal_not_equal_type_symmetry(a: Any, b: Any, equals_ab: bool, equals_ba: bool) -> None:
    assert evaluate("Equals", a, b) is equals_ab
    assert evaluate("Equals", b, a) is equals_ba
    # NotEquals is the negation of Equals in both orders (kept from the Go test as is)
    assert evaluate("NotEquals", a, b) is not equals_ab
    assert evaluate("NotEquals", b, a) is not equals_ba


# -- notequal_test.go -------------------------------------------------------------------

NOT_EQUAL_ROWS = [
    # TestNotEqualHandler_Evaluate
    row("NotEquals", True, False, True, "Evaluate/bool"),
    row("NotEquals", 42, 43, True, "Evaluate/int"),
    row("NotEquals", 5, 5.5, True, "Evaluate/int-vs-fractional-float"),
    row("NotEquals", 3.14, 2.71, True, "Evaluate/float"),
    row("NotEquals", "hello", "world", True, "Evaluate/string"),
    # adapted (spec 6.4 asymmetry; Kyverno #16358 fix not released): Go expects false. The same
    # rows appear in Test_NotEqual_ResourceQuantityCrossType of another version of the file.
    row("NotEquals", "5", 5, True, "Evaluate/string-key-not-equal-int-value-equal-values-ADAPTED"),
    row("NotEquals", "5", 5, True, "Evaluate/string-key-not-equal-int64-value-equal-values-ADAPTED"),
    row("NotEquals", "5", 5.0, True, "Evaluate/string-key-not-equal-float64-value-equal-values-ADAPTED"),
    row("NotEquals", "5", 6, True, "Evaluate/string-key-not-equal-int-value-different-values"),
    row("NotEquals", "abc", 5, True, "Evaluate/non-numeric-string-key-vs-int-value"),
    row("NotEquals", "100Mi", "not-a-quantity", True, "Evaluate/resource-quantity-vs-non-quantity"),
    row("NotEquals", "1h", "30m", True, "Evaluate/duration"),
    row("NotEquals", OBJ, {"foo": "baz"}, True, "Evaluate/map"),
    row("NotEquals", ["a", "b"], ["a", "c"], True, "Evaluate/slice"),
]


@pytest.mark.parametrize(("operator", "key", "value", "expected"), NOT_EQUAL_ROWS)
def test_not_equal_handler(operator: str, key: Any, value: Any, expected: bool) -> None:
    check(operator, key, value, expected)


# -- in_test.go -------------------------------------------------------------------------

FRUITS = ["apple", "banana", "cherry"]
FRUITS_JSON = '["apple", "banana", "cherry"]'
ABC_JSON = '["a", "b", "c"]'

IN_ROWS = [
    # TestInHandler_Evaluate
    row("In", "apple", FRUITS, True, "Evaluate/string-in-slice-found"),
    row("In", "grape", FRUITS, False, "Evaluate/string-in-slice-not-found"),
    row("In", "apple", [], False, "Evaluate/string-in-slice-empty-slice"),
    row("In", "hello", "hello", True, "Evaluate/string-matches-string-value"),
    row("In", "hello-world", "hello-*", True, "Evaluate/string-matches-wildcard-value"),
    row("In", "goodbye-world", "hello-*", False, "Evaluate/string-no-match-wildcard-value"),
    row("In", "apple", FRUITS_JSON, True, "Evaluate/string-in-JSON-array-string-found"),
    row("In", "grape", FRUITS_JSON, False, "Evaluate/string-in-JSON-array-string-not-found"),
    row("In", 42, ["42", "43", "44"], True, "Evaluate/int-in-slice-found"),
    row("In", 99, ["42", "43", "44"], False, "Evaluate/int-in-slice-not-found"),
    row("In", 100, ["100", "200"], True, "Evaluate/int64-in-slice-found"),
    row("In", 3.14, ["3.14", "2.71"], True, "Evaluate/float64-in-slice-found"),
    row("In", True, ["true", "false"], True, "Evaluate/bool-in-slice-found"),
    row("In", ["apple", "banana"], FRUITS, True, "Evaluate/slice-subset-of-slice-all-found"),
    row("In", ["apple", "grape"], FRUITS, False, "Evaluate/slice-subset-of-slice-not-all-found"),
    row("In", ["apple", "banana"], FRUITS_JSON, True, "Evaluate/slice-subset-of-JSON-array-all-found"),
    row("In", OBJ, ["a", "b"], False, "Evaluate/unsupported-key-type"),
    row("In", "apple", 12345, False, "Evaluate/invalid-value-type"),
    # TestInHandler_ValidateValueWithStringPattern
    row("In", "test", ["test", "other"], True, "StringPattern/found-in-slice"),
    row("In", "missing", ["test", "other"], False, "StringPattern/not-found-in-slice"),
    row("In", "prefix-suffix", "prefix-*", True, "StringPattern/matches-string-with-wildcard"),
    row("In", "test", 123, False, "StringPattern/invalid-value-type"),
    # TestInHandler_ValidateValueWithStringSetPattern
    row("In", ["a", "b"], ["a", "b", "c"], True, "StringSetPattern/all-keys-in-slice"),
    row("In", ["a", "d"], ["a", "b", "c"], False, "StringSetPattern/not-all-keys-in-slice"),
    row("In", ["a", "b"], ABC_JSON, True, "StringSetPattern/all-keys-in-JSON-array"),
    row("In", ["test"], "test", True, "StringSetPattern/single-key-matches-string"),
    row("In", ["other"], "test", False, "StringSetPattern/single-key-no-match-string"),
    row("In", ["a"], 123, False, "StringSetPattern/invalid-value-type"),
    # Test_ValidateValueWithStringSetPattern (the oldest version of the file)
    row("In", ["a", "b", "c"], ["a", "b", "c", "d", "e"], True, "ValidateValueWithStringSetPattern/subset"),
    # TestIsIn (set semantics, through In with list key and list value)
    row("In", ["a", "b"], ["a", "b", "c"], True, "IsIn/all-keys-in-value"),
    row("In", ["a", "d"], ["a", "b", "c"], False, "IsIn/not-all-keys-in-value"),
    row("In", [], ["a", "b"], True, "IsIn/empty-key"),
    row("In", ["a"], [], False, "IsIn/empty-value"),
    row("In", [], [], True, "IsIn/both-empty"),
    # TestIsNotIn (through NotIn with list key and list value)
    row("NotIn", ["a", "d"], ["a", "b", "c"], True, "IsNotIn/any-key-not-in-value"),
    row("NotIn", ["a", "b"], ["a", "b", "c"], False, "IsNotIn/all-keys-in-value"),
    row("NotIn", [], ["a", "b"], False, "IsNotIn/empty-key-none-not-in"),
    row("NotIn", ["a"], [], True, "IsNotIn/key-not-in-empty-value"),
    row("NotIn", [], [], False, "IsNotIn/both-empty"),
]


@pytest.mark.parametrize(("operator", "key", "value", "expected"), IN_ROWS)
def test_in_handler(operator: str, key: Any, value: Any, expected: bool) -> None:
    check(operator, key, value, expected)


@pytest.mark.parametrize(
    ("key", "value", "invalid", "exists"),
    [
        # TestKeyExistsInArray: (invalidType, keyExists) for a scalar key
        pytest.param("apple", ["apple", "banana"], False, True, id="key-in-slice"),
        pytest.param("cherry", ["apple", "banana"], False, False, id="key-not-in-slice"),
        pytest.param("hello-world", ["hello-*", "goodbye"], False, True, id="key-matches-with-wildcard-in-slice"),
        pytest.param("hello-*", ["hello-world", "goodbye"], False, True, id="key-is-wildcard-matches-value"),
        pytest.param("test", "test", False, True, id="key-matches-string-value"),
        pytest.param("prefix-suffix", "prefix-*", False, True, id="key-matches-wildcard-string"),
        pytest.param("a", ABC_JSON, False, True, id="key-in-JSON-array"),
        pytest.param("d", ABC_JSON, False, False, id="key-not-in-JSON-array"),
        pytest.param("a", "not-valid-json", True, False, id="invalid-JSON"),
        pytest.param("a", 12345, True, False, id="invalid-value-type"),
    ],
)
def test_key_exists_in_array(key: Any, value: Any, invalid: bool, exists: bool) -> None:
    # In answers keyExists; NotIn answers false on an invalid type, else not keyExists
    assert evaluate("In", key, value) is exists
    assert evaluate("NotIn", key, value) is (not invalid and not exists)


@pytest.mark.parametrize(
    ("key", "value", "not_in", "invalid", "exists"),
    [
        # TestSetExistsInArray: (invalidType, keyExists) for a list key, In or NotIn
        pytest.param(["a", "b"], ["a", "b", "c"], False, False, True, id="all-keys-in-slice-In-check"),
        pytest.param(["a", "d"], ["a", "b", "c"], False, False, False, id="not-all-keys-in-slice-In-check"),
        pytest.param(["a", "d"], ["a", "b", "c"], True, False, True, id="any-key-not-in-slice-NotIn-check"),
        pytest.param(["a", "b"], ["a", "b", "c"], True, False, False, id="all-keys-in-slice-NotIn-check"),
        pytest.param(["test"], "test", False, False, True, id="single-key-matches-string-value"),
        pytest.param(["a", "b"], ABC_JSON, False, False, True, id="keys-in-JSON-array"),
        pytest.param(["a"], "not-json", False, True, False, id="invalid-JSON"),
        pytest.param(["a"], ["a", 123], False, True, False, id="non-string-in-value-slice"),
        pytest.param(["a"], 12345, False, True, False, id="invalid-value-type"),
    ],
)
def test_set_exists_in_array(key: Any, value: Any, not_in: bool, invalid: bool, exists: bool) -> None:
    operator, other = ("NotIn", "In") if not_in else ("In", "NotIn")
    assert evaluate(operator, key, value) is exists
    if invalid:  # an invalid value type makes both operators false
        assert evaluate(other, key, value) is False


# -- anyin_test.go ----------------------------------------------------------------------

ANY_IN_ROWS = [
    # TestAnyInHandler_Evaluate
    row("AnyIn", "kyverno", "kyverno", True, "key-is-string-and-in-value"),
    row("AnyIn", "kube-system", ["default", "kube-*"], True, "key-is-string-and-in-value-with-wildcard"),
    row("AnyIn", "kyverno", "default", False, "key-is-string-and-not-in-value"),
    row("AnyIn", 64, "64", True, "key-is-int-and-in-value"),
    row("AnyIn", 1, [1, 2, 3], True, "key-is-int-and-in-value-slice"),
    row("AnyIn", 64, "default", False, "key-is-int-and-not-in-value"),
    row("AnyIn", 3.14, "3.14", True, "key-is-float-and-in-value"),
    row("AnyIn", 2.2, [1.1, 2.2, 3.3], True, "key-is-float-and-in-value-slice"),
    row("AnyIn", 3.14, "default", False, "key-is-float-and-not-in-value"),
    row("AnyIn", True, "true", True, "key-is-boolean-and-in-value"),
    row("AnyIn", ["kube-system", "kube-public"], "kube-*", True, "key-is-array-and-all-in-value-with-wildcard"),
    row("AnyIn", ["kube-system", "default"], "kube-system", True, "key-is-array-and-partially-in-value"),
    row("AnyIn", ["default", "kyverno"], "kube-*", False, "key-is-array-and-not-in-value"),
    row("AnyIn", ["default", "kyverno"], ["kube-*", "ky*"], True, "key-and-value-are-array-and-any-in-value"),
    row("AnyIn", ["default", "kyverno"], ["kube-*", "kube-system"], False, "key-and-value-are-array-and-none-in-value"),
    row("AnyIn", [], ["default", "kyverno"], False, "key-is-an-empty-array"),
    row("AnyIn", "", ["default", "kyverno"], False, "key-is-an-empty-string-and-value-is-an-array"),
    row("AnyIn", OBJ, "test", False, "unsupported-key-type"),
    row("AnyIn", "5", "1-10", True, "key-is-string-and-in-numeric-range"),
    row("AnyIn", "0", "1-10", False, "key-is-string-and-outside-numeric-range"),
    row("AnyIn", ["0", "5"], "1-10", True, "key-is-array-and-any-value-in-numeric-range"),
    row("AnyIn", ["0", "20"], "1-10", False, "key-is-array-and-no-value-in-numeric-range"),
    row("AnyIn", "apple", '["apple", "banana"]', True, "key-is-string-and-in-JSON-array-string"),
    row("AnyIn", "cherry", '["apple", "banana"]', False, "key-is-string-and-not-in-JSON-array-string"),
    row("AnyIn", ["apple", "cherry"], '["apple", "banana"]', True, "key-is-array-and-any-in-JSON-array-string"),
    row("AnyIn", ["cherry", "date"], '["apple", "banana"]', False, "key-is-array-and-none-in-JSON-array-string"),
]


@pytest.mark.parametrize(("operator", "key", "value", "expected"), ANY_IN_ROWS)
def test_any_in_handler(operator: str, key: Any, value: Any, expected: bool) -> None:
    check(operator, key, value, expected)


# -- anynotin_test.go -------------------------------------------------------------------

ANY_NOT_IN_ROWS = [
    # TestAnyNotInHandler_Evaluate (Go repeats some case names; the ids tell them apart)
    row("AnyNotIn", "kyverno", "kyverno", False, "key-is-string-and-in-value"),
    row("AnyNotIn", "kube-system", ["default", "kube-*"], False, "key-is-string-and-in-value-wildcard-list"),
    row("AnyNotIn", "kyverno", "default", True, "key-is-string-and-not-in-value"),
    row("AnyNotIn", 64, "64", False, "key-is-int-and-in-value"),
    row("AnyNotIn", 1, [1, 2, 3], False, "key-is-int-and-in-value-list"),
    row("AnyNotIn", 64, "default", True, "key-is-int-and-not-in-value"),
    row("AnyNotIn", 3.14, "3.14", False, "key-is-float-and-in-value"),
    row("AnyNotIn", 2.2, [1.1, 2.2, 3.3], False, "key-is-float-and-in-value-list"),
    row("AnyNotIn", 3.14, "default", True, "key-is-float-and-not-in-value"),
    row("AnyNotIn", True, True, False, "key-is-boolean-and-in-value"),
    row("AnyNotIn", ["kube-system", "kube-public"], "kube-*", False, "key-is-array-and-in-value"),
    row("AnyNotIn", ["kube-system", "default"], "kube-system", True, "key-is-array-and-partially-in-value"),
    row("AnyNotIn", ["default", "kyverno"], "kube-*", True, "key-is-array-and-not-in-value"),
    row("AnyNotIn", [1, 2, 3], 2, True, "key-is-array-of-int-and-partially-in-value"),
    row("AnyNotIn", [1, 2, 3], 4, True, "key-is-array-of-int-and-not-in-value"),
    row("AnyNotIn", [1.1, 2.2, 3.3], 1.1, True, "key-is-array-of-float-and-partially-in-value"),
    row("AnyNotIn", [1.1, 2.2, 3.3], 4.4, True, "key-is-array-of-float-and-not-in-value"),
    row("AnyNotIn", [True, False], True, True, "key-is-array-of-bool-and-partially-in-value"),
    row("AnyNotIn", [True], False, True, "key-is-an-array-of-bool-and-not-in-value"),
    row("AnyNotIn", ["default", "kyverno"], ["kube-*", "kube-system"], True, "key-and-value-are-array-and-not-in-value"),
    row("AnyNotIn", ["default", "kyverno"], ["kube-*", "ky*"], True, "key-and-value-are-array-and-partially-in-value"),
    row("AnyNotIn", [], ["default", "kyverno"], False, "key-is-an-empty-array"),
    row("AnyNotIn", "", ["default", "kyverno"], True, "key-is-an-empty-string-not-in-value"),
]


@pytest.mark.parametrize(("operator", "key", "value", "expected"), ANY_NOT_IN_ROWS)
def test_any_not_in_handler(operator: str, key: Any, value: Any, expected: bool) -> None:
    check(operator, key, value, expected)


# -- allnotin_test.go -------------------------------------------------------------------

ALL_NOT_IN_ROWS = [
    # TestAllNotInHandler_Evaluate
    row("AllNotIn", "kyverno", "kyverno", False, "key-is-string-and-in-value"),
    row("AllNotIn", "kube-system", ["default", "kube-*"], False, "key-is-string-and-in-value-wildcard-list"),
    row("AllNotIn", "kyverno", "default", True, "key-is-string-and-not-in-value"),
    row("AllNotIn", 64, "64", False, "key-is-int-and-in-value"),
    row("AllNotIn", 64, "default", True, "key-is-int-and-not-in-value"),
    row("AllNotIn", ["kube-system", "kube-public"], "kube-*", False, "key-is-array-and-in-value"),
    row("AllNotIn", ["kube-system", "default"], "kube-system", False, "key-is-array-and-partially-in-value"),
    row("AllNotIn", ["default", "kyverno"], "kube-*", True, "key-is-array-and-not-in-value"),
    row("AllNotIn", ["default", "kyverno"], ["kube-*", "kube-system"], True, "key-and-value-are-array-and-not-in-value"),
    row("AllNotIn", ["default", "kyverno"], ["kube-*", "ky*"], False, "key-and-value-are-array-and-partially-in-value"),
]


@pytest.mark.parametrize(("operator", "key", "value", "expected"), ALL_NOT_IN_ROWS)
def test_all_not_in_handler(operator: str, key: Any, value: Any, expected: bool) -> None:
    check(operator, key, value, expected)


# -- numeric_test.go --------------------------------------------------------------------

GT, GE, LT, LE = "GreaterThan", "GreaterThanOrEquals", "LessThan", "LessThanOrEquals"

NUMERIC_ROWS = [
    # Test_compareByCondition_greater_than
    row(GT, 5.0, 3.0, True, "compare-gt/pod_replicas_5_greater_than_3"),
    row(GT, 3.0, 5.0, False, "compare-gt/pod_replicas_3_not_greater_than_5"),
    row(GT, 10.0, 10.0, False, "compare-gt/equal_values_not_greater_than"),
    row(GT, -1.0, -5.0, True, "compare-gt/negative_values_minus_1_greater_than_minus_5"),
    row(GT, 0.0, -1.0, True, "compare-gt/zero_greater_than_negative"),
    row(GT, 2.5, 2.4, True, "compare-gt/decimal_precision_2_5_greater_than_2_4"),
    # Test_compareByCondition_greater_than_or_equals
    row(GE, 1024.0, 512.0, True, "compare-ge/memory_limit_1024_gte_512"),
    row(GE, 100.0, 100.0, True, "compare-ge/exact_equality_passes"),
    row(GE, 50.0, 100.0, False, "compare-ge/smaller_value_fails"),
    row(GE, 0.0, 0.0, True, "compare-ge/zero_gte_zero"),
    # Test_compareByCondition_less_than
    row(LT, 2.0, 5.0, True, "compare-lt/replica_count_2_less_than_5"),
    row(LT, 10.0, 5.0, False, "compare-lt/larger_value_fails"),
    row(LT, 7.0, 7.0, False, "compare-lt/equal_values_not_less_than"),
    row(LT, -10.0, -5.0, True, "compare-lt/negative_minus_10_less_than_minus_5"),
    # Test_compareByCondition_less_than_or_equals
    row(LE, 100.0, 200.0, True, "compare-le/cpu_request_100_lte_200"),
    row(LE, 64.0, 64.0, True, "compare-le/exact_equality_passes"),
    row(LE, 150.0, 100.0, False, "compare-le/larger_value_fails"),
    # TestNumericOperatorHandler_Evaluate_int_key (GreaterThan)
    row(GT, 10, 5, True, "int-key/int_key_int_value_10_gt_5"),
    row(GT, 100, 50, True, "int-key/int_key_int64_value_100_gt_50"),
    row(GT, 25, 20.5, True, "int-key/int_key_float64_value_25_gt_20_5"),
    row(GT, 30, "25", True, "int-key/int_key_string_value_30_gt_25"),
    row(GT, 10, "5.5", True, "int-key/int_key_string_float_value"),
    # TestNumericOperatorHandler_Evaluate_int64_key (LessThan)
    row(LT, 5, 10, True, "int64-key/int64_key_less_than_int_value"),
    row(LT, 20, 30, True, "int64-key/int64_key_less_than_int64_value"),
    row(LT, 100, 50, False, "int64-key/int64_key_not_less_than_smaller_value"),
    # TestNumericOperatorHandler_Evaluate_float64_key (GreaterThanOrEquals)
    row(GE, 10.5, 10, True, "float64-key/float64_key_gte_int_value"),
    row(GE, 3.14, 3.14, True, "float64-key/float64_key_gte_float64_value_equal"),
    row(GE, 5.5, "4.5", True, "float64-key/float64_key_gte_string_value"),
    row(GE, 2.5, 5.0, False, "float64-key/float64_key_less_than_value_fails"),
    # TestNumericOperatorHandler_Evaluate_string_key_with_numeric_values (GreaterThan)
    row(GT, "10.5", 10, True, "string-key/string_key_parsed_as_float_gt_int"),
    row(GT, "100", 50, True, "string-key/string_key_parsed_as_int_gt_int"),
    row(GT, "25.5", "20.0", True, "string-key/string_key_parsed_as_float_gt_string"),
    # TestNumericOperatorHandler_Evaluate_resource_quantities
    row(GT, "200m", "100m", True, "quantities/cpu_200m_greater_than_100m"),
    row(GT, "100m", "200m", False, "quantities/cpu_100m_not_greater_than_200m"),
    row(GT, "1Gi", "500Mi", True, "quantities/memory_1Gi_greater_than_500Mi"),
    row(LT, "256Mi", "1Gi", True, "quantities/memory_256Mi_less_than_1Gi"),
    row(GE, "500m", "500m", True, "quantities/cpu_500m_gte_500m"),
    row(LE, "2Gi", "2Gi", True, "quantities/memory_2Gi_lte_2Gi"),
    # TestNumericOperatorHandler_Evaluate_semver_versions
    row(GT, "1.2.0", "1.1.0", True, "semver/version_1_2_0_greater_than_1_1_0"),
    row(LT, "1.0.0", "2.0.0", True, "semver/version_1_0_0_less_than_2_0_0"),
    row(GE, "1.5.0", "1.5.0", True, "semver/version_1_5_0_gte_1_5_0"),
    row(LT, "2.0.0", "1.9.0", False, "semver/version_2_0_0_not_less_than_1_9_0"),
    row(LE, "0.9.0", "1.0.0", True, "semver/version_0_9_0_lte_1_0_0"),
    # Test_compareVersionByCondition
    row(GT, "1.2.3", "1.2.2", True, "compare-version/patch_version_gt"),
    row(LT, "1.1.0", "1.2.0", True, "compare-version/minor_version_lt"),
    row(GE, "2.0.0", "2.0.0", True, "compare-version/major_version_gte_equal"),
    row(LT, "1.0.0-alpha", "1.0.0", True, "compare-version/prerelease_version_lt"),
    # TestNumericOperatorHandler_Evaluate_unsupported_types (GreaterThan)
    row(GT, True, False, False, "unsupported/bool_key_unsupported"),
    row(GT, OBJ, "100", False, "unsupported/map_key_unsupported"),
    row(GT, ["a", "b"], "100", False, "unsupported/slice_key_unsupported"),
    row(GT, None, "100", False, "unsupported/nil_key_unsupported"),
    # TestNumericOperatorHandler_validateValueWith{Int,Float}Pattern_invalid_value (GreaterThan)
    row(GT, 10, True, False, "int-pattern/bool-value"),
    row(GT, 10, "not-a-number", False, "int-pattern/unparseable-string"),
    row(GT, 10.5, True, False, "float-pattern/bool-value"),
    row(GT, 10.5, "not-a-number", False, "float-pattern/unparseable-string"),
    # TestNumericOperatorHandler_stub_methods_return_false (keys the handler cannot order)
    row(GT, True, "value", False, "stubs/validateValueWithBoolPattern_returns_false"),
    row(GT, {"key": "val"}, "value", False, "stubs/validateValueWithMapPattern_returns_false"),
    row(GT, ["a", "b"], "value", False, "stubs/validateValueWithSlicePattern_returns_false"),
    # Test_NumericOperatorHandler_Evaluate (an older, shorter version of the file)
    row(GT, 10, 5, True, "Evaluate/gt-true"),
    row(GT, 5, 10, False, "Evaluate/gt-false"),
    row(GT, 5, 5, False, "Evaluate/gt-equal"),
    row(GE, 10, 10, True, "Evaluate/ge-true"),
    row(LT, 5, 10, True, "Evaluate/lt-true"),
    row(LE, 5, 5, True, "Evaluate/le-true"),
    row(GT, 10.5, 10.4, True, "Evaluate/float-gt"),
    row(LT, 10.4, 10.5, True, "Evaluate/float-lt"),
    row(GT, "100", 50, True, "Evaluate/string-numeric-gt"),
    row(LT, "50", "100", True, "Evaluate/string-numeric-lt"),
    row(GT, "1.2.3", "1.2.2", True, "Evaluate/semver-gt"),
    row(LT, "1.1.0", "1.2.0", True, "Evaluate/semver-lt"),
    row(GE, "1.2.0", "1.2.0", True, "Evaluate/semver-ge"),
    row(GT, "200Mi", "100Mi", True, "Evaluate/resource-gt"),
    row(LT, "1Gi", "2Gi", True, "Evaluate/resource-lt"),
    row(GE, "500m", "0.5", True, "Evaluate/resource-ge"),
    row(GT, True, 5, False, "Evaluate/unsupported-type-key"),
    row(GT, "not-a-number", 5, False, "Evaluate/invalid-numeric-string"),
    row(GT, None, 5, False, "Evaluate/nil-key"),
]


@pytest.mark.parametrize(("operator", "key", "value", "expected"), NUMERIC_ROWS)
def test_numeric_handler(operator: str, key: Any, value: Any, expected: bool) -> None:
    check(operator, key, value, expected)


@pytest.mark.parametrize(
    ("key", "value", "error"),
    [
        # Test_parseQuantity: both sides must be strings that parse as quantities
        pytest.param("100m", "200m", False, id="valid_cpu_quantities"),
        pytest.param("1Gi", "512Mi", False, id="valid_memory_quantities"),
        pytest.param(100, "200m", True, id="key_not_string"),
        pytest.param("100m", 200, True, id="value_not_string"),
        pytest.param("not-a-quantity", "200m", True, id="invalid_quantity_format"),
    ],
)
def test_parse_quantity(key: Any, value: Any, error: bool) -> None:
    parsed = [parse_quantity(x) for x in decoded([key, value])]
    assert (None in parsed) is error


# -- duration_test.go -------------------------------------------------------------------

DGT, DGE = "DurationGreaterThan", "DurationGreaterThanOrEquals"
DLT, DLE = "DurationLessThan", "DurationLessThanOrEquals"

DURATION_ROWS = [
    # TestDurationOperatorHandler_Evaluate_GreaterThan
    row(DGT, "2h", "1h", True, "gt/duration-string-gt-string-true"),
    row(DGT, "1h", "2h", False, "gt/duration-string-gt-string-false"),
    row(DGT, "1h", "1h", False, "gt/duration-string-gt-string-equal"),
    row(DGT, "60m", "1h", False, "gt/duration-60m-gt-1h-equal"),
    row(DGT, "61m", "1h", True, "gt/duration-61m-gt-1h-true"),
    row(DGT, 120, 60, True, "gt/int-gt-int-true"),
    row(DGT, 60, 120, False, "gt/int-gt-int-false"),
    row(DGT, 3600, 1800, True, "gt/int64-gt-int64-true"),
    row(DGT, 120, "1m", True, "gt/int-gt-string-duration-true"),
    row(DGT, 120.5, 60.5, True, "gt/float-gt-float-true"),
    row(DGT, 120.5, 60, True, "gt/float-gt-int-true"),
    row(DGT, 120.0, "1m", True, "gt/float-gt-string-duration-true"),
    row(DGT, True, False, False, "gt/unsupported-type"),
    # TestDurationOperatorHandler_Evaluate_GreaterThanOrEquals
    row(DGE, "2h", "1h", True, "ge/duration-ge-duration-true-greater"),
    row(DGE, "1h", "60m", True, "ge/duration-ge-duration-true-equal"),
    row(DGE, "30m", "1h", False, "ge/duration-ge-duration-false"),
    row(DGE, 60, 60, True, "ge/int-ge-int-true-equal"),
    # TestDurationOperatorHandler_Evaluate_LessThan
    row(DLT, "30m", "1h", True, "lt/duration-lt-duration-true"),
    row(DLT, "2h", "1h", False, "lt/duration-lt-duration-false"),
    row(DLT, "1h", "60m", False, "lt/duration-lt-duration-equal"),
    row(DLT, 30, 60, True, "lt/int-lt-int-true"),
    # TestDurationOperatorHandler_Evaluate_LessThanOrEquals
    row(DLE, "30m", "1h", True, "le/duration-le-duration-true-less"),
    row(DLE, "1h", "60m", True, "le/duration-le-duration-true-equal"),
    row(DLE, "2h", "1h", False, "le/duration-le-duration-false"),
    row(DLE, 60, 60, True, "le/int-le-int-true-equal"),
    # TestDurationOperatorHandler_ValidateValueWithIntPattern (DurationGreaterThan)
    row(DGT, 120, 60, True, "int-pattern/int64-gt-int"),
    row(DGT, 120, 60, True, "int-pattern/int64-gt-int64"),
    row(DGT, 120, 60.0, True, "int-pattern/int64-gt-float64"),
    row(DGT, 120, "1m", True, "int-pattern/int64-gt-string-duration"),
    row(DGT, 120, "invalid", False, "int-pattern/int64-with-invalid-string"),
    row(DGT, 120, True, False, "int-pattern/int64-with-wrong-type"),
    # TestDurationOperatorHandler_ValidateValueWithFloatPattern (DurationGreaterThan)
    row(DGT, 120.0, 60, True, "float-pattern/float-gt-int"),
    row(DGT, 120.0, 60, True, "float-pattern/float-gt-int64"),
    row(DGT, 120.0, 60.0, True, "float-pattern/float-gt-float64"),
    row(DGT, 120.0, "1m", True, "float-pattern/float-gt-string-duration"),
    row(DGT, 120.0, "invalid", False, "float-pattern/float-with-invalid-string"),
    row(DGT, 120.0, True, False, "float-pattern/float-with-wrong-type"),
    # TestDurationOperatorHandler_ValidateValueWithStringPattern (DurationGreaterThan)
    row(DGT, "2m", 60, True, "string-pattern/string-duration-gt-int"),
    row(DGT, "2m", 60, True, "string-pattern/string-duration-gt-int64"),
    row(DGT, "2m", 60.0, True, "string-pattern/string-duration-gt-float64"),
    row(DGT, "2h", "1h", True, "string-pattern/string-duration-gt-string-duration"),
    row(DGT, "invalid", 60, False, "string-pattern/invalid-key-string"),
    row(DGT, "1h", "invalid", False, "string-pattern/string-duration-with-invalid-value-string"),
    row(DGT, "1h", True, False, "string-pattern/string-duration-with-wrong-type"),
    # TestDurationCompareByCondition (time.Duration operands written as duration strings)
    row(DGE, "2h", "1h", True, "compare/DurationGreaterThanOrEquals-true-greater"),
    row(DGE, "1h", "1h", True, "compare/DurationGreaterThanOrEquals-true-equal"),
    row(DGT, "2h", "1h", True, "compare/DurationGreaterThan-true"),
    row(DGT, "1h", "1h", False, "compare/DurationGreaterThan-equal-false"),
    row(DLE, "30m", "1h", True, "compare/DurationLessThanOrEquals-true-less"),
    row(DLE, "1h", "1h", True, "compare/DurationLessThanOrEquals-true-equal"),
    row(DLT, "30m", "1h", True, "compare/DurationLessThan-true"),
    row(DLT, "1h", "1h", False, "compare/DurationLessThan-equal-false"),
    # TestDurationOperatorHandler_UnreachableMethods (keys the handler cannot read)
    row(DGT, True, True, False, "unreachable/validateValueWithBoolPattern"),
    row(DGT, {}, None, False, "unreachable/validateValueWithMapPattern"),
    row(DGT, [], None, False, "unreachable/validateValueWithSlicePattern"),
]


@pytest.mark.parametrize(("operator", "key", "value", "expected"), DURATION_ROWS)
def test_duration_handler(operator: str, key: Any, value: Any, expected: bool) -> None:
    check(operator, key, value, expected)


# -- operator_test.go -------------------------------------------------------------------

HANDLER_ROWS = [
    # TestCreateOperatorHandler_*: each name reaches its handler (probed with a telling input)
    row("Equal", "a", "a", True, "Equal/Equal-operator"),
    row("Equals", "a", "a", True, "Equal/Equals-operator"),
    row("NotEqual", "a", "b", True, "NotEqual/NotEqual-operator"),
    row("NotEquals", "a", "b", True, "NotEqual/NotEquals-operator"),
    row("In", ["a", "x"], ["a"], False, "InOperators/In-operator"),
    row("AnyIn", ["a", "x"], ["a"], True, "InOperators/AnyIn-operator"),
    row("AllIn", ["a", "x"], ["a"], False, "InOperators/AllIn-operator"),
    row("NotIn", ["a", "x"], ["a"], True, "InOperators/NotIn-operator"),
    row("AnyNotIn", ["a", "x"], ["a"], True, "InOperators/AnyNotIn-operator"),
    row("AllNotIn", ["a", "x"], ["a"], False, "InOperators/AllNotIn-operator"),
    row(GE, 2, 2, True, "NumericOperators/GreaterThanOrEquals-operator"),
    row(GT, 2, 2, False, "NumericOperators/GreaterThan-operator"),
    row(LE, 2, 2, True, "NumericOperators/LessThanOrEquals-operator"),
    row(LT, 2, 2, False, "NumericOperators/LessThan-operator"),
    row(DGE, "1h", "60m", True, "DurationOperators/DurationGreaterThanOrEquals-operator"),
    row(DGT, "1h", "60m", False, "DurationOperators/DurationGreaterThan-operator"),
    row(DLE, "1h", "60m", True, "DurationOperators/DurationLessThanOrEquals-operator"),
    row(DLT, "1h", "60m", False, "DurationOperators/DurationLessThan-operator"),
    # TestCreateOperatorHandler_CaseInsensitive
    row("EQUALS", "a", "a", True, "CaseInsensitive/uppercase-EQUALS"),
    row("Equals", "a", "b", False, "CaseInsensitive/mixed-case-Equals"),
    row("equals", "a", "a", True, "CaseInsensitive/lowercase-equals"),
]


@pytest.mark.parametrize(("operator", "key", "value", "expected"), HANDLER_ROWS)
def test_create_operator_handler(operator: str, key: Any, value: Any, expected: bool) -> None:
    check(operator, key, value, expected)


@pytest.mark.parametrize(
    ("operator", "key", "value"),
    [
        # adapted: Kyverno answers false for these; the project rejects the policy (spec 1.7, 6.2)
        pytest.param("InvalidOp", "a", "a", id="TestCreateOperatorHandler_UnsupportedOperator-ADAPTED"),
        pytest.param("InvalidOp", 10, 5, id="Test_compareByCondition_invalid_operator-ADAPTED"),
        pytest.param("Invalid", "1h", "1h", id="TestDurationCompareByCondition/invalid-operator-ADAPTED"),
    ],
)
def test_unknown_operator_is_an_error(operator: str, key: Any, value: Any) -> None:
    with pytest.raises(ConditionError, match="unknown condition operator"):
        evaluate(operator, key, value)


@pytest.mark.parametrize(
    ("key", "value", "at_least", "at_most"),
    [
        # TestParseDuration_BothStringDurations / _StringDurationWithNumeric: the two durations
        # parseDuration returns, observed through the ordering operators (which use it)
        pytest.param("2h", "1h", True, False, id="BothStringDurations/hours"),
        pytest.param("90m", "1h30m", True, True, id="BothStringDurations/mixed-units"),
        pytest.param("30s", "45s", False, True, id="BothStringDurations/seconds"),
        pytest.param("0s", "1h", False, True, id="BothStringDurations/explicit-zero-duration-0s"),
        pytest.param("2m", 60, True, False, id="StringDurationWithNumeric/string-key-with-int-value"),
        pytest.param("1h", 120, True, False, id="StringDurationWithNumeric/string-key-with-int64-value"),
        pytest.param("30s", 10.0, True, False, id="StringDurationWithNumeric/string-key-with-float64-value"),
        pytest.param(120, "2m", True, True, id="StringDurationWithNumeric/int-key-with-string-value"),
        pytest.param(3600, "30m", True, False, id="StringDurationWithNumeric/int64-key-with-string-value"),
        pytest.param(60.0, "1m", True, True, id="StringDurationWithNumeric/float64-key-with-string-value"),
        # TestParseDuration_NeitherIsDuration: the rule does not apply; the next steps decide
        pytest.param("hello", "world", False, False, id="NeitherIsDuration/both-non-duration-strings"),
        pytest.param(100, 200, False, True, id="NeitherIsDuration/both-ints-without-duration-context"),
        pytest.param("0", "0", True, True, id="NeitherIsDuration/zero-string-values"),
        # TestParseDuration_InvalidNonDurationFallback: "no valid duration value", no other step fits
        pytest.param("1h", True, False, False, id="InvalidNonDurationFallback/string-duration-key-with-bool-value"),
        pytest.param(True, "1h", False, False, id="InvalidNonDurationFallback/bool-key-with-string-duration-value"),
        pytest.param("1h", {}, False, False, id="InvalidNonDurationFallback/string-duration-key-with-unsupported-type"),
    ],
)
def test_parse_duration(key: Any, value: Any, at_least: bool, at_most: bool) -> None:
    assert evaluate(GE, key, value) is at_least
    assert evaluate(LE, key, value) is at_most


def test_parse_duration_literal_zero_is_not_a_duration() -> None:
    # own row for TestParseDuration_NeitherIsDuration/zero-string-values: were "0" a duration,
    # Equals("0", 0) would compare 0 s with 0 s; it is not, and a string key needs a string value
    assert evaluate("Equals", "0", 0) is False
    assert evaluate("Equals", "0s", 0) is True


# -- utils_test.go ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("operator", "valid"),
    [
        # TestGetAllConditionOperators and TestIsOperatorValid
        *(pytest.param(name, True, id=f"valid/{name}") for name in (
            "Equals", "NotEquals", "GreaterThan", "GreaterThanOrEquals", "LessThan", "LessThanOrEquals",
            "AllIn", "AnyIn", "AllNotIn", "AnyNotIn",
        )),
        # TestGetAllDeprecatedOperators: deprecated, still valid
        pytest.param("In", True, id="deprecated/In"),
        pytest.param("NotIn", True, id="deprecated/NotIn"),
        pytest.param("InvalidOperator", False, id="invalid/Invalid-operator"),
        pytest.param("", False, id="invalid/Empty-operator"),
    ],
)
def test_operator_validity(operator: str, valid: bool) -> None:
    assert (operator in OPERATORS) is valid
