"""Pattern-string operators: spec 4.7.4-4.7.6 and the table of 4.7.5."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scanner.engine.operators import (
    EQUAL,
    IN_RANGE,
    LESS,
    LESS_EQUAL,
    MORE,
    MORE_EQUAL,
    NOT_EQUAL,
    NOT_IN_RANGE,
    compare_scalar,
    is_range,
    operator_of,
    parse_go_float,
)

MISSING = None  # a missing resource key reaches the scalar comparison as null


@pytest.mark.parametrize(
    ("value", "pattern", "expected"),
    [
        # rows of the spec 4.7.5 table that belong to string patterns
        pytest.param(MISSING, "*", False, id="missing-against-star-fails"),
        pytest.param("", "*", True, id="empty-string-against-star-passes"),
        pytest.param(MISSING, "?*", False, id="missing-cannot-be-wildcard-matched"),
        pytest.param(MISSING, "", False, id="missing-is-not-empty-text"),
        pytest.param("", "", True, id="existing-empty-string-matches-empty-pattern"),
        pytest.param(MISSING, "!Always", False, id="not-equal-needs-a-value"),
        pytest.param(MISSING, ">=0", True, id="missing-counts-as-zero-for-at-least-zero"),
        pytest.param(MISSING, "<=10", True, id="missing-counts-as-zero-for-at-most-ten"),
        pytest.param(MISSING, "<1", True, id="missing-counts-as-zero-below-one"),
        pytest.param(MISSING, ">0", False, id="missing-is-not-above-zero"),
        pytest.param("512Mi", "<=1Gi", True, id="quantity-at-most"),
        pytest.param("1Gi", "1024Mi", True, id="quantity-equality"),
        pytest.param("100m", "<=200m", True, id="minutes-parse-as-durations"),
        pytest.param("60s", "1m", True, id="duration-equality-across-units"),
        pytest.param(3.0, ">=2", True, id="float-as-six-decimal-quantity"),
        pytest.param("abc", ">1", False, id="ordering-on-text-never-matches"),
        pytest.param(True, "true", True, id="bool-rendered-as-text"),
        pytest.param("nginx:1.2", "*:latest | !*:*", False, id="neither-alternative"),
        pytest.param("nginx", "*:latest | !*:*", True, id="second-alternative-no-colon"),
        pytest.param(80.0, "8*", True, id="float-text-is-exponent-form"),
        pytest.param(80.0, "*0", False, id="float-text-8E+01-does-not-end-in-zero"),
        pytest.param(80, "8E+01", True, id="python-int-is-treated-as-float"),
        pytest.param("--a", "!--privileged*", True, id="negated-wildcard-on-text"),
        pytest.param("--privileged=true", "!--privileged*", False, id="negated-wildcard-hit"),
        # the plain-key "*" special case for maps lives in the pattern walk
        pytest.param({"a": 1}, "*", False, id="map-has-no-text-for-wildcards"),
        pytest.param(["x"], "!y", False, id="list-fails-not-equal-too"),
        pytest.param(False, "!true", True, id="bool-not-equal"),
        # exact equality comes before any parsing
        pytest.param("a|b", "a|b", True, id="literal-with-bar-matches-itself"),
        pytest.param("1-10", "1-10", True, id="literal-range-matches-itself"),
        pytest.param(">1", ">1", True, id="literal-operator-matches-itself"),
        # one-character terms are literals
        pytest.param(">", ">", True, id="lone-operator-is-literal"),
        pytest.param("!", "!", True, id="lone-bang-is-literal"),
        # whitespace around operands and alternatives
        pytest.param("5", ">=   3", True, id="operand-spaces-trimmed"),
        pytest.param("b", " a |  b ", True, id="alternatives-trimmed"),
        # durations first, then quantities
        pytest.param("90s", ">1m", True, id="duration-more"),
        pytest.param("30s", ">1m", False, id="duration-not-more"),
        pytest.param(MISSING, "0", True, id="missing-equals-zero-duration"),
        pytest.param(5.0, "5", True, id="number-equals-quantity"),
        pytest.param(5.0, "5s", False, id="number-text-is-never-a-duration"),
        pytest.param("1500m", "1.5", True, id="milli-quantity-equals-decimal"),
        pytest.param("1.5", "!1500m", False, id="not-equal-on-equal-quantities"),
        pytest.param("2Gi", "!1Gi", True, id="not-equal-quantities"),
        pytest.param("abc", "!1Gi", True, id="not-equal-falls-back-to-text"),
        pytest.param(0.5, ">0.25", True, id="fractional-float-quantity"),
        pytest.param(True, ">0", False, id="bool-is-not-a-number"),
        pytest.param("1e3", "1k", True, id="exponent-quantity"),
    ],
)
def test_compare_scalar_matches_spec_table(value: Any, pattern: str, expected: bool) -> None:
    assert compare_scalar(value, pattern) is expected


@pytest.mark.parametrize(
    ("value", "pattern", "expected"),
    [
        pytest.param(5.0, "1-10", True, id="inside-range"),
        pytest.param(1.0, "1-10", True, id="range-includes-low-end"),
        pytest.param(10.0, "1-10", True, id="range-includes-high-end"),
        pytest.param(0.0, "1-10", False, id="below-range"),
        pytest.param(11.0, "1-10", False, id="above-range"),
        pytest.param(MISSING, "0-5", True, id="missing-is-zero-inside-range"),
        pytest.param("512Mi", "100Mi-1Gi", True, id="quantity-range"),
        pytest.param("2Gi", "100Mi-1Gi", False, id="quantity-outside-range"),
        pytest.param("30s", "10s-1m", True, id="duration-range"),
        pytest.param("2m", "10s-1m", False, id="duration-outside-range"),
        pytest.param("-3", "-5-5", True, id="negative-low-end"),
        pytest.param("-6", "-5-5", False, id="below-negative-low-end"),
        pytest.param("1.5", "1.2-1.8", True, id="decimal-range"),
        pytest.param(0.0, "1!-10", True, id="not-in-range-below"),
        pytest.param(11.0, "1!-10", True, id="not-in-range-above"),
        pytest.param(5.0, "1!-10", False, id="not-in-range-inside"),
        pytest.param(10.0, "1!-10", False, id="not-in-range-high-end-is-inside"),
        pytest.param("abc", "1-10", False, id="text-is-never-in-range"),
        pytest.param("3", "1-2-3", False, id="three-part-range-is-a-literal"),
        pytest.param("1-2-3", "1-2-3", True, id="three-part-range-matches-itself"),
    ],
)
def test_compare_scalar_ranges(value: Any, pattern: str, expected: bool) -> None:
    assert compare_scalar(value, pattern) is expected


@pytest.mark.parametrize(
    ("value", "pattern", "expected"),
    [
        pytest.param(5.0, ">1 & <10", True, id="and-both-hold"),
        pytest.param(15.0, ">1 & <10", False, id="and-second-fails"),
        pytest.param(15.0, "<1 | >10", True, id="or-second-holds"),
        pytest.param(5.0, "<1 | >10", False, id="or-neither-holds"),
        pytest.param(5.0, "<1 | >2 & <6", True, id="and-binds-inside-alternatives"),
        pytest.param("nginx:latest", "!*:latest & nginx*", False, id="and-with-negation"),
        pytest.param("nginx:1.0", "!*:latest & nginx*", True, id="and-with-negation-holds"),
        pytest.param("", "a||b", True, id="empty-alternative-matches-empty-text"),
        pytest.param("x", "a||b", False, id="empty-alternative-needs-empty-text"),
    ],
)
def test_compare_scalar_alternatives_and_terms(value: Any, pattern: str, expected: bool) -> None:
    assert compare_scalar(value, pattern) is expected


@pytest.mark.parametrize(
    ("term", "expected"),
    [
        pytest.param(">=1", MORE_EQUAL, id="at-least"),
        pytest.param("<=1", LESS_EQUAL, id="at-most"),
        pytest.param(">1", MORE, id="more"),
        pytest.param("<1", LESS, id="less"),
        pytest.param("!x", NOT_EQUAL, id="not-equal"),
        pytest.param("!-5", NOT_EQUAL, id="bang-wins-over-range"),
        pytest.param("1!-5", NOT_IN_RANGE, id="not-in-range"),
        pytest.param("1-5", IN_RANGE, id="in-range"),
        pytest.param("100Mi-1Gi", IN_RANGE, id="range-with-units"),
        pytest.param("+1-+5", IN_RANGE, id="range-with-plus-signs"),
        pytest.param("a-b", EQUAL, id="letters-are-not-a-range"),
        pytest.param("1-5\n", EQUAL, id="trailing-newline-is-not-a-range"),
        pytest.param(">", EQUAL, id="single-character-is-literal"),
        pytest.param("", EQUAL, id="empty-is-equality"),
    ],
)
def test_operator_of_reads_the_prefix(term: str, expected: str) -> None:
    assert operator_of(term) == expected


def test_is_range_only_for_in_range() -> None:
    assert is_range("1-10") and not is_range("1!-10") and not is_range(">1")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("3", 3.0, id="integer"),
        pytest.param("-2.5e3", -2500.0, id="exponent"),
        pytest.param(".5", 0.5, id="leading-point"),
        pytest.param("5.", 5.0, id="trailing-point"),
        pytest.param("+Inf", float("inf"), id="infinity-literal"),
        pytest.param("1e400", None, id="out-of-range-is-an-error"),
        pytest.param(" 3", None, id="spaces-rejected"),
        pytest.param("1_000", 1000.0, id="underscores-between-digits"),
        pytest.param("1__000", None, id="double-underscore-rejected"),
        pytest.param("_1000", None, id="leading-underscore-rejected"),
        pytest.param("1000_", None, id="trailing-underscore-rejected"),
        pytest.param("1_.5", None, id="underscore-before-point-rejected"),
        pytest.param("0x_1p4", 16.0, id="underscore-after-base-prefix"),
        pytest.param("٣", None, id="non-ascii-digits-rejected"),
        pytest.param("", None, id="empty-rejected"),
        pytest.param("1Gi", None, id="quantity-is-not-a-float"),
    ],
)
def test_parse_go_float_follows_go(text: str, expected: float | None) -> None:
    assert parse_go_float(text) == expected


@given(st.text(alphabet="abc:*?", min_size=1, max_size=8))
def test_compare_scalar_text_equals_itself(text: str) -> None:
    assert compare_scalar(text, text)


@given(
    st.floats(min_value=-1e6, max_value=1e6, allow_nan=False),
    st.integers(min_value=-1000, max_value=1000),
    st.integers(min_value=-1000, max_value=1000),
)
def test_compare_scalar_combinators_agree_with_terms(value: float, a: int, b: int) -> None:
    first, second = f">{a}", f"<{b}"
    left, right = compare_scalar(value, first), compare_scalar(value, second)
    assert compare_scalar(value, f"{first} | {second}") == (left or right)
    assert compare_scalar(value, f"{first} & {second}") == (left and right)
