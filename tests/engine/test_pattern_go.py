"""Kyverno's unit tests for pattern validation, as table rows against this engine.

Sources (kyverno/kyverno), newest stored versions:

* ``pkg/engine/pattern/pattern_test.go`` (``Validate``, ``validateStringPattern(s)``, ``validateString``,
  ``compareString``, ``validateNilPattern``, ``validateMapPattern``, ``convertNumberToString``, ``split``):
  the current home of the tests ``pkg/engine/validate/pattern_test.go`` held before the package moved;
* ``pkg/engine/operator/operator_test.go`` (``GetOperatorFromStringPattern``);
* ``pkg/engine/validate/validate_test.go`` (``validateMap`` / ``validateResourceElement`` with their failure
  paths, and the ``MatchPattern`` tables ``TestConditionalAnchorWithMultiplePatterns``, ``Test_global_anchor``,
  ``Test_negation_anchor``, ...) and ``utils_test.go`` (``hasNestedAnchors``, ``getSortedNestedAnchorResource``);
* ``pkg/engine/anchor/anchor_test.go`` (``Parse``), ``error_test.go``, ``handlers_test.go``,
  ``anchormap_test.go`` and ``utils_test.go``, read with ``anchor.go``, ``handlers.go``, ``anchormap.go``.

Kyverno's leaf functions (``Validate`` and friends) are reached here the way ``validateResourceElement``
reaches them: a scalar pattern under a map key, walked by ``CompiledPattern``. Numbers are floats, as the CLI
decodes JSON; Go rows written with ``int`` / ``int64`` values are translated once, as floats, and their
expectation is checked to be the same for the float (noted where it is not).

Rows are adapted, with a comment, where the Go expectation cannot be the engine's rule:

* ``testMatchPattern`` has no ``RuleStatusFail`` branch, so a row labelled ``Fail`` asserts nothing in Go;
  rows whose walk really ends in a global-anchor skip (``validate.go``: a global anchor error travels up to
  ``MatchPattern`` and ``skip()`` holds) expect ``skip``;
* leaf checks the walk never makes (``validateNilPattern([])``, ``validateMapPattern``'s content-blind pass,
  ``compareString`` on a number) expect what the walk does with the same values.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from scanner.engine.anchor import Anchor, parse_key
from scanner.engine.operators import (
    EQUAL,
    IN_RANGE,
    IN_RANGE_PATTERN,
    MORE_EQUAL,
    NOT_IN_RANGE,
    NOT_IN_RANGE_PATTERN,
    _number_text,
    operator_of,
)
from scanner.engine.pattern import CompiledPattern, MapNode
from scanner.engine.variables import _without_anchors, resolve_references


def load(text: str) -> Any:
    return json.loads(text, parse_int=float)


def walk(pattern: Any, resource: Any) -> tuple[str, str]:
    """``MatchPattern``: the status of the whole walk and the path it reports."""
    outcome = CompiledPattern(pattern).match(resource)
    return outcome.status, outcome.path


def value_matches(value: Any, pattern: Any) -> bool:
    """``pattern.Validate`` as ``validateResourceElement`` reaches it: a scalar pattern under a key."""
    return walk({"v": pattern}, {"v": value}) == ("pass", "")


# -- pkg/engine/pattern/pattern_test.go ----------------------------------------------------------

SCALARS = [
    # TestValidateValueWithFloatPattern_* / TestValidateValueWithIntPattern_*
    pytest.param(7.9914, 7.9914, True, id="float-equal"),
    pytest.param(7.9914, 7.99141, False, id="float-not-equal"),
    pytest.param(7.0, 7.000000, True, id="float-pattern-without-fraction"),
    pytest.param(7.000001, 7.0, False, id="float-value-with-fraction-against-whole"),
    pytest.param(8.0, 7.0, False, id="int-pattern-not-pass"),
    # TestValidateValueWithStringPattern_WithSpace
    pytest.param(4.0, ">= 3", True, id="operator-followed-by-space"),
    # TestValidateValueWithStringPattern_Ranges
    pytest.param(0.0, "0-2", True, id="range-0-in-0-2"),
    pytest.param(1.0, "0-2", True, id="range-1-in-0-2"),
    pytest.param(2.0, "0-2", True, id="range-2-in-0-2"),
    pytest.param(3.0, "0-2", False, id="range-3-not-in-0-2"),
    pytest.param(0.0, "10!-20", True, id="not-range-0-outside-10-20"),
    pytest.param(15.0, "10!-20", False, id="not-range-15-inside-10-20"),
    pytest.param(25.0, "10!-20", True, id="not-range-25-outside-10-20"),
    pytest.param(0.0, "0.00001-2.00001", False, id="fraction-range-below"),
    pytest.param(1.0, "0.00001-2.00001", True, id="fraction-range-1-inside"),
    pytest.param(2.0, "0.00001-2.00001", True, id="fraction-range-2-inside"),
    pytest.param(2.0001, "0.00001-2.00001", False, id="fraction-range-above"),
    pytest.param(0.0, "0.00001!-2.00001", True, id="fraction-not-range-below"),
    pytest.param(1.0, "0.00001!-2.00001", False, id="fraction-not-range-1-inside"),
    pytest.param(2.0, "0.00001!-2.00001", False, id="fraction-not-range-2-inside"),
    pytest.param(2.0001, "0.00001!-2.00001", True, id="fraction-not-range-above"),
    pytest.param(2.0, "2-2", True, id="degenerate-range-holds-its-bound"),
    pytest.param(2.0, "2!-2", False, id="degenerate-not-range-excludes-its-bound"),
    pytest.param(2.99999, "2.99998-3", True, id="close-range-inside"),
    pytest.param(2.99997, "2.99998!-3", True, id="close-not-range-below"),
    pytest.param(3.00001, "2.99998!-3", True, id="close-not-range-above"),
    pytest.param("256Mi", "128Mi-512Mi", True, id="quantity-range-inside"),
    pytest.param("1024Mi", "128Mi-512Mi", False, id="quantity-range-above"),
    pytest.param("64Mi", "128Mi-512Mi", False, id="quantity-range-below"),
    pytest.param("256Mi", "128Mi!-512Mi", False, id="quantity-not-range-inside"),
    pytest.param("1024Mi", "128Mi!-512Mi", True, id="quantity-not-range-above"),
    pytest.param("64Mi", "128Mi!-512Mi", True, id="quantity-not-range-below"),
    pytest.param(-9.0, "-10-8", True, id="negative-low-bound"),
    pytest.param(9.0, "-10--8", False, id="both-bounds-negative-value-above"),
    pytest.param(9.0, "-10!--8", True, id="not-range-both-bounds-negative-value-above"),
    pytest.param("9Mi", "-10Mi!--8Mi", True, id="quantity-not-range-both-negative"),
    pytest.param(-9.0, "-10!--8", False, id="not-range-both-negative-value-inside"),
    pytest.param("-9Mi", "-10Mi-8Mi", True, id="quantity-range-negative-value"),
    pytest.param("9Mi", "-10Mi!-8Mi", True, id="quantity-not-range-negative-low-bound"),
    pytest.param(0.0, "-10-+8", True, id="plus-signed-high-bound"),
    pytest.param("7Mi", "-10Mi-+8Mi", True, id="quantity-plus-signed-high-bound"),
    pytest.param(10.0, "-10!-+8", True, id="not-range-plus-signed-high-bound"),
    pytest.param("10Mi", "-10Mi!-+8Mi", True, id="quantity-not-range-plus-signed-high-bound"),
    pytest.param(0.0, "+0-+1", True, id="both-bounds-plus-signed"),
    pytest.param("10Mi", "+0Mi-+1024Mi", True, id="quantity-both-bounds-plus-signed"),
    pytest.param(10.0, "+0!-+1", True, id="not-range-both-plus-signed"),
    pytest.param("1025Mi", "+0Mi!-+1024Mi", True, id="quantity-not-range-both-plus-signed"),
    # TestValidateNumberWithStr_LessFloatAndInt (validateString with the operator written in front)
    pytest.param(7.00001, ">7.000001", True, id="float-more-than-float"),
    pytest.param(7.00001, "!7", True, id="float-not-equal-int"),
    pytest.param(7.0, "7", True, id="whole-float-equals-int-text"),
    pytest.param(6.000000001, "<6", False, id="six-decimals-round-before-comparing"),
    # TestValidateQuantity_InvalidQuantity
    pytest.param("1024Gi", "", False, id="empty-pattern-is-not-a-quantity"),
    pytest.param("gii", "1024Gi", False, id="value-not-a-quantity"),
    # TestValidateDuration
    pytest.param("12s", "12s", True, id="duration-equal"),
    pytest.param("12s", "!15s", True, id="duration-not-equal"),
    pytest.param("12s", "<15s", True, id="duration-less"),
    pytest.param("12s", "<=15s", True, id="duration-less-equal-below"),
    pytest.param("12s", "<=12s", True, id="duration-less-equal-same"),
    pytest.param("15s", "<12s", False, id="duration-less-fails-above"),
    pytest.param("15s", "<=12s", False, id="duration-less-equal-fails-above"),
    pytest.param("15s", ">12s", True, id="duration-more"),
    pytest.param("15s", ">=12s", True, id="duration-more-equal-above"),
    pytest.param("12s", ">=12s", True, id="duration-more-equal-same"),
    pytest.param("12s", ">15s", False, id="duration-more-fails-below"),
    pytest.param("12s", ">=15s", False, id="duration-more-equal-fails-below"),
    # TestValidateQuantity_Equal
    pytest.param("1024Gi", "1024Gi", True, id="quantity-equal-same-text"),
    pytest.param("1024Mi", "1Gi", True, id="quantity-equal-other-unit"),
    pytest.param("0.2", "200m", True, id="quantity-decimal-equals-milli"),
    pytest.param("500", "500", True, id="quantity-plain-number"),
    pytest.param("2048", "1024", False, id="quantity-plain-number-differs"),
    pytest.param(1024.0, "1024", True, id="number-value-as-quantity"),
    # TestValidateQuantity_Operation
    pytest.param("1Gi", ">1000Mi", True, id="quantity-more"),
    pytest.param("1G", "<1Gi", True, id="quantity-decimal-less-than-binary"),
    pytest.param("500m", ">=0.5", True, id="quantity-milli-more-equal-decimal"),
    pytest.param("1", ">=500m", True, id="quantity-one-more-equal-milli"),
    pytest.param("0.5", "<=.5", True, id="quantity-leading-dot"),
    pytest.param("0.2", "<=.5", True, id="quantity-less-equal-leading-dot"),
    pytest.param("0.2", "!.5", True, id="quantity-not-equal-leading-dot"),
    # TestValidateQuantity_Operation_No_String_Check: decided by the quantities, never by text
    pytest.param("500m", ">=0.6", False, id="quantity-ordering-not-text"),
    # TestValidate
    pytest.param(True, True, True, id="bool-true-true"),
    pytest.param(True, False, False, id="bool-true-false"),
    pytest.param(False, True, False, id="bool-false-true"),
    pytest.param(False, False, True, id="bool-false-false"),
    pytest.param("value", None, False, id="null-pattern-string-value"),
    pytest.param("", None, True, id="null-pattern-empty-string"),
    pytest.param(0.0, None, True, id="null-pattern-zero"),
    pytest.param(False, None, True, id="null-pattern-false"),
    pytest.param("10.100.11.54", "192.168.88.1 | 10.100.11.*", True, id="or-of-addresses"),
    pytest.param("10", ">1 & <20", True, id="and-of-bounds"),
    pytest.param("10", ">1 & <20 | >31 & <33", True, id="or-of-ands-first"),
    pytest.param("32", ">1 & <20 | >31 & <33", True, id="or-of-ands-second"),
    pytest.param("21", ">1 & <20 | >31 & <33", False, id="or-of-ands-neither"),
    pytest.param(7.0, 7.000, True, id="two-floats"),
    pytest.param(10.0, 10.0, True, id="number-equal"),
    pytest.param(8.0, 10.0, False, id="number-differs"),
    pytest.param(None, [], False, id="list-pattern-against-null"),
    pytest.param({"a": True}, {"a": True}, True, id="map-pattern-against-map"),
    pytest.param(None, False, False, id="bool-pattern-against-null"),
    pytest.param(8.0, 8.0, True, id="whole-float-value"),
    pytest.param(8.1, 8.0, False, id="fraction-value-against-whole"),
    pytest.param("8", 8.0, True, id="numeric-string-parsed"),
    pytest.param("8.1", 8.0, False, id="numeric-string-fraction"),
    pytest.param(False, 8.0, False, id="bool-value-number-pattern"),
    pytest.param(8.0, 8.1, False, id="whole-value-fraction-pattern"),
    pytest.param("8.1", 8.1, True, id="fraction-string-parsed"),
    pytest.param("abc", 8.1, False, id="non-numeric-string"),
    # pattern.go validateFloatPattern parses a string value with strconv.ParseFloat, whose syntax takes
    # Go's hexadecimal floats: a hexadecimal mantissa and a required binary exponent (atof_test.go)
    pytest.param("0x1p-2", 0.25, True, id="hex-float-string-parsed"),
    pytest.param("-0X.8P1", -1.0, True, id="hex-float-fraction-only"),
    pytest.param("0x10", 16.0, False, id="hex-float-needs-an-exponent"),
    pytest.param("0x1p99999", 8.0, False, id="hex-float-overflow-is-an-error"),
    # ParseFloat also takes underscores between digits ("1_23.50_0_0e+1_2" in atof_test.go)
    pytest.param("1_000", 1000.0, True, id="underscore-digit-separators"),
    pytest.param("1_23.50_0_0e+1_2", 1.235e14, True, id="underscores-everywhere-between-digits"),
    pytest.param("123.5e+1__2", 1.235e14, False, id="double-underscore-is-an-error"),
    # Test_validateMapPattern (a map pattern only needs a map; the walk then checks its keys)
    pytest.param(None, {}, False, id="map-pattern-null"),
    pytest.param(True, {}, False, id="map-pattern-bool"),
    pytest.param(8.0, {}, False, id="map-pattern-number"),
    pytest.param("", {}, False, id="map-pattern-empty-string"),
    pytest.param("abc", {}, False, id="map-pattern-string"),
    pytest.param({}, {}, True, id="map-pattern-empty-map"),
    pytest.param({"a": True}, {}, True, id="map-pattern-any-map"),
    # Test_validateNilPattern
    pytest.param(None, None, True, id="nil-pattern-null"),
    pytest.param({}, None, False, id="nil-pattern-map"),
    pytest.param(1.0, None, False, id="nil-pattern-one"),
    pytest.param("abc", None, False, id="nil-pattern-text"),
    pytest.param(True, None, False, id="nil-pattern-true"),
    pytest.param(0.1, None, False, id="nil-pattern-fraction"),
    # validateNilPattern([]) is false, but the walk never hands a list to Validate: a list meets a
    # scalar pattern element by element (validateResourceElement), so an empty list passes
    pytest.param([], None, True, id="nil-pattern-empty-list-walked-per-element"),
    # Test_validateStringPatterns (and TestValidateKernelVersion_NotEquals of the older file)
    pytest.param("5.16.5-arch1-1", "!5.10.84-1", True, id="kernel-not-equal"),
    pytest.param("5.10.84-1", "5.10.84-1", True, id="kernel-equal"),
    pytest.param("!5.10.84-1", "!5.10.84-1", True, id="value-equal-to-pattern-text"),
    pytest.param("5.10.84-1", "!5.10.84-1", False, id="kernel-not-equal-fails"),
    pytest.param("5.16.5-arch1-1", "!5.10.84-1 & !5.15.2-1", True, id="kernel-and-of-not-equals"),
    pytest.param("5.10.84-1", "!5.10.84-1 & !5.15.2-1", False, id="kernel-and-first-fails"),
    pytest.param("5.15.2-1", "!5.10.84-1 & !5.15.2-1", False, id="kernel-and-second-fails"),
    # Test_compareString
    pytest.param("anything", "*", True, id="star-anything"),
    pytest.param("", "*", True, id="star-empty"),
    pytest.param("leftright", "*right", True, id="left-star"),
    pytest.param("right", "*right", True, id="left-star-empty-run"),
    pytest.param("leftmiddle", "*right", False, id="left-star-wrong-suffix"),
    pytest.param("middle", "*right", False, id="left-star-no-suffix"),
    pytest.param("abbeba", "ab*ba", True, id="middle-star"),
    pytest.param("abbca", "ab*ba", False, id="middle-star-wrong-suffix"),
    pytest.param("abbba", "ab?ba", True, id="question-mark-one"),
    pytest.param("abbbba", "ab?ba", False, id="question-mark-not-two"),
    pytest.param(None, "ab?ba", False, id="null-is-not-text"),
    pytest.param("", "ab?ba", False, id="empty-text-wildcard"),
    pytest.param("", "", True, id="empty-text-empty-pattern"),
    # compareString(1, "1") holds for Go ints; a float is "1E+00" as text, and the walk matches it as
    # the quantity 1 before any text comparison
    pytest.param(1.0, "1", True, id="number-one-against-text-one"),
    pytest.param(1.0, "1E+*", True, id="float-text-is-exponent-form"),
    pytest.param(True, "true", True, id="bool-as-text"),
]


@pytest.mark.parametrize(("value", "pattern", "expected"), SCALARS)
def test_value_against_pattern(value: Any, pattern: Any, expected: bool) -> None:
    assert value_matches(value, pattern) is expected


@pytest.mark.parametrize(
    ("value", "text"),
    [
        # Test_convertNumberToString: the text of a value in the duration and quantity attempts
        pytest.param(None, "0", id="null-is-zero"),
        pytest.param("123", "123", id="numeric-string"),
        pytest.param("", "", id="empty-string"),
        pytest.param("abc", "abc", id="string"),
        pytest.param(0.0, "0.000000", id="float-zero"),
        pytest.param(3.10, "3.100000", id="float"),
        pytest.param(-3.10, "-3.100000", id="negative-float"),
        # Go ints print as "-3", "3", "0"; offline every number is a float (six decimals)
        pytest.param(-3.0, "-3.000000", id="negative-whole-number"),
        pytest.param(3.0, "3.000000", id="whole-number"),
        pytest.param(False, None, id="bool-is-not-a-number"),
    ],
)
def test_number_text(value: Any, text: str | None) -> None:
    assert _number_text(value) == text


def test_range_regexes_do_not_split_an_empty_pattern() -> None:
    """Test_split: neither range expression matches an empty pattern."""
    assert IN_RANGE_PATTERN.fullmatch("") is None
    assert NOT_IN_RANGE_PATTERN.fullmatch("") is None


# -- pkg/engine/operator/operator_test.go --------------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "operator"),
    [
        pytest.param("f", EQUAL, id="one-char"),
        pytest.param("", EQUAL, id="empty"),
        pytest.param(">=", MORE_EQUAL, id="only-operator"),
        pytest.param("0-1", IN_RANGE, id="range"),
        pytest.param("0Mi-1024Mi", IN_RANGE, id="quantity-range"),
        pytest.param("0!-1", NOT_IN_RANGE, id="not-range"),
        pytest.param("0Mi!-1024Mi", NOT_IN_RANGE, id="quantity-not-range"),
        pytest.param("text1024Mi-2048Mi", EQUAL, id="text-before-range"),
        pytest.param("test-value", EQUAL, id="dashed-text"),
        pytest.param("value-*", EQUAL, id="dashed-wildcard"),
        pytest.param("text1024Mi!-2048Mi", EQUAL, id="text-before-not-range"),
        pytest.param("test!-value", EQUAL, id="bang-dashed-text"),
        pytest.param("value!-*", EQUAL, id="bang-dashed-wildcard"),
        pytest.param("-10--8", IN_RANGE, id="negative-bounds"),
        pytest.param("-10Mi--8Mi", IN_RANGE, id="negative-quantity-bounds"),
        pytest.param("-10!--8", NOT_IN_RANGE, id="not-range-negative-bounds"),
        pytest.param("-10Mi!--8Mi", NOT_IN_RANGE, id="not-range-negative-quantity-bounds"),
        pytest.param("-10-+8", IN_RANGE, id="plus-signed-high"),
        pytest.param("-10Mi-+8Mi", IN_RANGE, id="quantity-plus-signed-high"),
        pytest.param("-10!-+8", NOT_IN_RANGE, id="not-range-plus-signed-high"),
        pytest.param("-10Mi!-+8Mi", NOT_IN_RANGE, id="not-range-quantity-plus-signed-high"),
        pytest.param("+0-+1", IN_RANGE, id="plus-signed-bounds"),
        pytest.param("+0Mi-+1024Mi", IN_RANGE, id="quantity-plus-signed-bounds"),
        pytest.param("+0!-+1", NOT_IN_RANGE, id="not-range-plus-signed-bounds"),
        pytest.param("+0Mi!-+1024Mi", NOT_IN_RANGE, id="not-range-quantity-plus-signed-bounds"),
    ],
)
def test_operator_of(pattern: str, operator: str) -> None:
    assert operator_of(pattern) == operator


# -- pkg/engine/anchor ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "anchor", "bare"),
    [
        # TestParse (a key that is not an anchor is a plain key, kept as written)
        pytest.param("(something)", Anchor.CONDITIONAL, "something", id="condition"),
        pytest.param("()", Anchor.PLAIN, "()", id="empty-condition"),
        pytest.param("something", Anchor.PLAIN, "something", id="plain"),
        pytest.param("(something", Anchor.PLAIN, "(something", id="no-closing-paren"),
        pytest.param("something)", Anchor.PLAIN, "something)", id="no-opening-paren"),
        pytest.param("so)m(et(hin)g", Anchor.PLAIN, "so)m(et(hin)g", id="parens-inside"),
        pytest.param("", Anchor.PLAIN, "", id="empty"),
        pytest.param("^(abc)", Anchor.EXISTENCE, "abc", id="existence"),
        pytest.param("^(abc", Anchor.PLAIN, "^(abc", id="existence-unclosed"),
        pytest.param("^abc", Anchor.PLAIN, "^abc", id="existence-no-parens"),
        pytest.param("^()", Anchor.PLAIN, "^()", id="existence-empty"),
        pytest.param("(abc)", Anchor.CONDITIONAL, "abc", id="condition-abc"),
        pytest.param("(abc", Anchor.PLAIN, "(abc", id="condition-unclosed"),
        pytest.param("abc", Anchor.PLAIN, "abc", id="plain-abc"),
        pytest.param("=(abc)", Anchor.EQUALITY, "abc", id="equality"),
        pytest.param("=(abc", Anchor.PLAIN, "=(abc", id="equality-unclosed"),
        pytest.param("=abc", Anchor.PLAIN, "=abc", id="equality-no-parens"),
        pytest.param("+(abc)", Anchor.ADD_IF_NOT_PRESENT, "abc", id="add-if-not-present"),
        pytest.param("+(abc", Anchor.PLAIN, "+(abc", id="add-if-not-present-unclosed"),
        pytest.param("+abc", Anchor.PLAIN, "+abc", id="add-if-not-present-no-parens"),
        pytest.param("X(abc)", Anchor.NEGATION, "abc", id="negation"),
        pytest.param("X(abc", Anchor.PLAIN, "X(abc", id="negation-unclosed"),
        pytest.param("Xabc", Anchor.PLAIN, "Xabc", id="negation-no-parens"),
        pytest.param("<(abc)", Anchor.GLOBAL, "abc", id="global"),
        pytest.param("<(abc", Anchor.PLAIN, "<(abc", id="global-unclosed"),
        pytest.param("<abc", Anchor.PLAIN, "<abc", id="global-no-parens"),
        # anchor.go Parse: strings.TrimSpace, then ^(?P<modifier>[+<=X^])?\((?P<key>.+)\)$, whose "."
        # (RE2, no s flag) does not match a newline
        pytest.param(" =(abc)\n", Anchor.EQUALITY, "abc", id="surrounding-space-trimmed"),
        pytest.param("( abc )", Anchor.CONDITIONAL, " abc ", id="inner-space-kept"),
        pytest.param("(a\nb)", Anchor.PLAIN, "(a\nb)", id="newline-inside-is-not-an-anchor"),
    ],
)
def test_parse_anchor(key: str, anchor: Anchor, bare: str) -> None:
    assert parse_key(key) == (anchor, bare)


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        # TestRemoveAnchorsFromPath
        pytest.param("/path/(to)/X(anchors)", "/path/to/anchors", id="absolute"),
        pytest.param("path/(to)/X(anchors)", "path/to/anchors", id="relative"),
        pytest.param("../(to)/X(anchors)", "../to/anchors", id="parent"),
    ],
)
def test_remove_anchors_from_path(path: str, expected: str) -> None:
    assert _without_anchors(path) == expected


def anchor_keys(raw: dict) -> list[str]:
    """The keys ``validateMap`` evaluates in its anchors phase, in order."""
    return [entry.full_key for entry in MapNode(raw).anchors]


def plain_keys(raw: dict) -> list[str]:
    """The keys of the resources phase, in ``getSortedNestedAnchorResource`` order."""
    return [entry.full_key for entry in MapNode(raw).plain]


@pytest.mark.parametrize(
    ("raw", "anchors", "plain"),
    [
        # anchor/utils_test.go TestGetAnchorsResourcesFromMap
        pytest.param({"spec": "test"}, [], ["spec"], id="plain-key-is-a-resource"),
        pytest.param({"(spec)": "test"}, ["(spec)"], [], id="condition-key-is-an-anchor"),
        # validate/utils_test.go TestGetSortedNestedAnchorResource_*
        pytest.param({}, [], [], id="empty"),
        pytest.param({"gamma": "v3", "alpha": "v1", "beta": "v2"}, [], ["alpha", "beta", "gamma"],
                     id="no-anchors-sorted"),
        pytest.param({"zeta": "v1", "alpha": {"(anchor)": "nested"}, "beta": "v2"}, [], ["alpha", "beta", "zeta"],
                     id="nested-anchor-first"),
        pytest.param({"zeta": "v1", "<(globalRef)": "g", "alpha": "v2"}, [], ["<(globalRef)", "alpha", "zeta"],
                     id="global-anchor-first"),
    ],
)
def test_map_phases(raw: dict, anchors: list[str], plain: list[str]) -> None:
    assert (anchor_keys(raw), plain_keys(raw)) == (anchors, plain)


@pytest.mark.parametrize(
    ("pattern", "nested"),
    [
        # validate/utils_test.go TestHasNestedAnchors_*: a value with an anchor anywhere below is
        # evaluated in front of the plain keys
        pytest.param({}, False, id="empty-map"),
        pytest.param({"metadata": {"name": "test"}}, False, id="no-anchors"),
        pytest.param({"(metadata)": {"name": "test"}}, True, id="condition"),
        pytest.param({"^(containers)": [{"name": "test"}]}, True, id="existence"),
        pytest.param({"=(metadata)": {"name": "test"}}, True, id="equality"),
        pytest.param({"X(badField)": "value"}, True, id="negation"),
        pytest.param({"<(globalRef)": "value"}, True, id="global"),
        pytest.param({"spec": {"template": {"(containers)": [{"name": "test"}]}}}, True, id="deeply-nested"),
        pytest.param([{"name": "test"}, {"name": "test2"}], False, id="list-without-anchors"),
        pytest.param([{"(name)": "test"}], True, id="list-with-anchor"),
        pytest.param("test", False, id="string"),
        pytest.param(42.0, False, id="number"),
        pytest.param(3.14, False, id="float"),
        pytest.param(True, False, id="bool"),
        pytest.param(None, False, id="null"),
        # TestGetAnchorsFromMap_*: the anchor keys that count (global included, plain keys not)
        pytest.param({"metadata": "value", "spec": "value"}, False, id="anchors-from-map-none"),
        pytest.param({"(metadata)": "value", "spec": "other"}, True, id="anchors-from-map-condition"),
        pytest.param({"(condition)": "v1", "^(existence)": "v2", "=(equality)": "v3", "normalKey": "v4"}, True,
                     id="anchors-from-map-several"),
    ],
)
def test_nested_anchors_go_first(pattern: Any, nested: bool) -> None:
    order = plain_keys({"probe": pattern, "a": "x"})
    assert (order[0] == "probe") is nested


@pytest.mark.parametrize(
    ("pattern", "resource", "status", "path", "message"),
    [
        # handlers_test.go TestNegationHandler_Handle (root path "/" instead of the test's "testPath/")
        pytest.param({"X(testKey)": None}, {"testKey": "value"}, "fail", "/testKey/",
                     "negation anchor matched in resource: /testKey/ is not allowed", id="negation-key-present"),
        pytest.param({"X(testKey)": None}, {}, "pass", "", "", id="negation-key-absent"),
        # TestEqualityHandler_Handle (the test's mock handler message is Kyverno's real mismatch here)
        pytest.param({"=(testKey)": "value"}, {"testKey": "value"}, "pass", "", "", id="equality-matches"),
        pytest.param({"=(testKey)": "value"}, {"testKey": "wrongValue"}, "fail", "/testKey/",
                     "resource value 'wrongValue' does not match 'value' at path /testKey/", id="equality-mismatch"),
        pytest.param({"=(testKey)": "value"}, {}, "pass", "", "", id="equality-key-absent"),
        # error_test.go: the prefixes newConditionalAnchorError / newGlobalAnchorError write
        pytest.param({"(a)": "x", "b": "y"}, {"a": "z", "b": "y"}, "skip", "",
                     "conditional anchor mismatch: resource value 'z' does not match 'x' at path /a/",
                     id="conditional-anchor-error-prefix"),
        pytest.param({"<(a)": "x"}, {"a": "z"}, "skip", "",
                     "global anchor mismatch: resource value 'z' does not match 'x' at path /a/",
                     id="global-anchor-error-prefix"),
        # anchormap_test.go TestAnchorMap_KeysAreMissing: an anchor key recorded absent turns a plain
        # failure into an error with no path; all present, it stays a failure
        pytest.param({"c": "y"}, {"c": "z"}, "fail", "/c/", None, id="no-anchors-recorded"),
        pytest.param({"^(a)": [{"x": "*"}], "^(b)": [{"x": "*"}], "c": "y"}, {"a": [{"x": "1"}], "c": "z"},
                     "error", "", None, id="one-anchor-key-missing"),
        pytest.param({"^(a)": [{"x": "*"}], "^(b)": [{"x": "*"}], "c": "y"},
                     {"a": [{"x": "1"}], "b": [{"x": "2"}], "c": "z"}, "fail", "/c/", None, id="all-anchor-keys-present"),
        # anchormap.go KeysAreMissing: negations are expected to be absent and never count as missing
        pytest.param({"X(d)": None, "c": "y"}, {"c": "z"}, "fail", "/c/", None, id="absent-negation-not-missing"),
    ],
)
def test_anchor_handlers(pattern: dict, resource: dict, status: str, path: str, message: str | None) -> None:
    outcome = CompiledPattern(pattern).match(resource)
    assert (outcome.status, outcome.path) == (status, path), outcome.message
    if message is not None:
        assert outcome.message == message


# -- pkg/engine/validate/validate_test.go: validateMap / validateResourceElement -----------------

DEPLOYMENT = """{
  "apiVersion": "apps/v1", "kind": "Deployment",
  "metadata": {"name": "nginx-deployment", "labels": {"app": "nginx"}},
  "spec": {
    "replicas": 3, "selector": {"matchLabels": {"app": "nginx"}},
    "template": {
      "metadata": {"labels": {"app": "nginx"}},
      "spec": {
        "securityContext": {"runAsNonRoot": true},
        "containers": [{
          "name": "nginx", "image": "https://nirmata/nginx:latest", "imagePullPolicy": "Always",
          "readinessProbe": {"exec": {"command": ["cat", "/tmp/healthy"]}, "initialDelaySeconds": 5, "periodSeconds": 10},
          "livenessProbe": {"tcpSocket": {"port": 8080}, "initialDelaySeconds": 15, "periodSeconds": 11},
          "resources": {"limits": {"memory": "2Gi", "cpu": 8}, "requests": {"memory": "512Mi", "cpu": "8"}},
          "ports": [{"containerPort": 80}]
        }]
      }
    }
  }
}"""


def stateful_set(liveness_probe: str | None) -> str:
    """The StatefulSet of the TestValidateMap_Asterisk* tests; ``None`` leaves livenessProbe out."""
    probe = "" if liveness_probe is None else f', "livenessProbe": {liveness_probe}'
    return f"""{{
      "apiVersion": "apps/v1", "kind": "StatefulSet",
      "metadata": {{"name": "game-web", "labels": {{"originalLabel": "isHere"}}}},
      "spec": {{
        "selector": {{"matchLabels": {{"app": "nginxo"}}}}, "serviceName": "nginxo", "replicas": 3,
        "template": {{
          "metadata": {{"labels": {{"app": "nginxo"}}}},
          "spec": {{
            "terminationGracePeriodSeconds": 10,
            "containers": [{{
              "name": "nginxo", "image": "registry.k8s.io/nginx-but-no-slim:0.8",
              "ports": [{{"containerPort": 8780, "name": "webp"}}],
              "volumeMounts": [{{"name": "www", "mountPath": "/usr/share/nginxo/html"}}]{probe}
            }}]
          }}
        }},
        "volumeClaimTemplates": [{{
          "metadata": {{"name": "www"}},
          "spec": {{"accessModes": ["ReadWriteOnce"], "storageClassName": "my-storage-class",
                    "resources": {{"requests": {{"storage": "1Gi"}}}}}}
        }}]
      }}
    }}"""


def template_containers(container: str) -> str:
    return f'{{"spec": {{"template": {{"spec": {{"containers": [{container}]}}}}}}}}'


def memory_request(request: str, limits_key: str = "limits", memory_key: str = "memory") -> str:
    """The container resources of the reference tests: a requests.memory pattern and a 2048Mi limit."""
    return (f'{{"spec": {{"containers": [{{"name": "*", "resources": {{"requests": {{"memory": "{request}"}}, '
            f'"{limits_key}": {{"{memory_key}": "2048Mi"}}}}}}]}}}}')


NIRMATA_DEPLOYMENT = memory_request("1024Mi").replace('"*"', '"nirmata"')
REQUEST_PATH = "/spec/containers/0/resources/requests/memory/"

NAME_OBJECT_LIST = '[{"(name)": "nirmata-*", "object": [{"(key1)": "value*", "key2": "value*"}]}]'


@pytest.mark.parametrize(
    ("pattern", "resource", "references", "status", "path"),
    [
        pytest.param(template_containers('{"name": "?*", "resources": {"requests": {"cpu": "<4|8"}}}'), DEPLOYMENT,
                     False, "pass", "", id="TestValidateMap"),
        pytest.param(template_containers('{"name": "*", "livenessProbe": {"periodSeconds": "*"}}'),
                     stateful_set('{"periodSeconds": 11}'), False, "pass", "", id="TestValidateMap_AsteriskForInt"),
        pytest.param(template_containers('{"name": "*", "livenessProbe": "*"}'),
                     stateful_set('{"periodSeconds": 11}'), False, "pass", "", id="TestValidateMap_AsteriskForMap"),
        pytest.param('{"spec": {"template": {"spec": {"containers": "*"}}}}', stateful_set('{"periodSeconds": 11}'),
                     False, "pass", "", id="TestValidateMap_AsteriskForArray"),
        pytest.param(template_containers('{"name": "*", "livenessProbe": "*"}'), stateful_set("null"), False,
                     "fail", "/spec/template/spec/containers/0/", id="TestValidateMap_AsteriskFieldIsMissing"),
        pytest.param(template_containers('{"name": "*", "livenessProbe": null}'), stateful_set("null"), False,
                     "pass", "", id="TestValidateMap_livenessProbeIsNull"),
        pytest.param(template_containers('{"name": "*", "livenessProbe": null}'), stateful_set(None), False,
                     "pass", "", id="TestValidateMap_livenessProbeIsMissing"),
        pytest.param('{"^(list)": ' + NAME_OBJECT_LIST + "}",
                     '{"list": [{"name": "nirmata-1", "object": [{"key1": "value1", "key2": "value2"}]},'
                     ' {"name": "nirmata-1", "object": [{"key1": "not_value", "key2": "not_value"}]}]}',
                     False, "pass", "", id="TestValidateMapElement_TwoElementsInArrayOnePass"),
        pytest.param(NAME_OBJECT_LIST, '[{"name": "nirmata-1", "object": [{"key1": "value1", "key2": "value2"}]}]',
                     False, "pass", "", id="TestValidateMapElement_OneElementInArrayPass"),
        pytest.param(memory_request("$(<=./../../limits/memory)"), NIRMATA_DEPLOYMENT, True, "pass", "",
                     id="TestValidateMap_CorrectRelativePathInConfig"),
        pytest.param(memory_request("$(./../somekey/somekey2/memory)"), NIRMATA_DEPLOYMENT, False, "fail",
                     REQUEST_PATH, id="TestValidateMap_RelativePathDoesNotExists"),
        pytest.param(memory_request("$()"), NIRMATA_DEPLOYMENT, False, "fail", REQUEST_PATH,
                     id="TestValidateMap_OnlyAnchorsInPath"),
        pytest.param(memory_request("$"), NIRMATA_DEPLOYMENT, False, "fail", REQUEST_PATH,
                     id="TestValidateMap_MalformedReferenceOnlyDolarMark"),
        pytest.param(memory_request("$(<=./../../lim(its/mem)ory)", "lim(its", "mem)ory"),
                     memory_request("1024Mi", "lim(its", "mem)ory").replace('"*"', '"nirmata"'), True, "pass", "",
                     id="TestValidateMap_RelativePathWithParentheses"),
        pytest.param(memory_request("$(>2048)"), NIRMATA_DEPLOYMENT, False, "fail", REQUEST_PATH,
                     id="TestValidateMap_MalformedPath"),
        pytest.param(memory_request("$(<=/spec/containers/0/resources/limits/memory)"), NIRMATA_DEPLOYMENT, True,
                     "pass", "", id="TestValidateMap_AbosolutePathExists"),
        pytest.param('{"spec": {"containers": [{"(name)": "kyverno", "image": "kyverno.io*"}]}}',
                     '{"spec": {"containers": [{"name": "kyverno", "image": "kyverno.io/test:latest"}]}}', False,
                     "pass", "", id="TestValidateMap_AbsolutePathToMetadata"),
        pytest.param('{"metadata": {"labels": {"app": "nirmata*"}},'
                     ' "spec": {"containers": [{"(name)": "$(/metadata/labels/app)", "image": "nirmata.io*"}]}}',
                     '{"metadata": {"labels": {"app": "nirmata*"}},'
                     ' "spec": {"containers": [{"name": "nirmata", "image": "nginx"}]}}', True,
                     "fail", "/spec/containers/0/image/", id="TestValidateMap_AbsolutePathToMetadata_fail"),
        pytest.param(memory_request("$(<=/some/memory)"), NIRMATA_DEPLOYMENT, False, "fail", REQUEST_PATH,
                     id="TestValidateMap_AbosolutePathDoesNotExists"),
        pytest.param(NAME_OBJECT_LIST, '[{"name": "nirmata-1", "object": [{"key1": "value5", "key2": "1value1"}]}]',
                     False, "fail", "/0/object/0/key2/", id="TestValidateMapElement_OneElementInArrayNotPass"),
    ],
)
def test_validate_map(pattern: str, resource: str, references: bool, status: str, path: str) -> None:
    """``references``: the Go test runs ``variables.SubstituteAll`` (``$( )`` references) first."""
    raw = load(pattern)
    if references:
        raw = resolve_references(raw)
    assert walk(raw, load(resource)) == (status, path)


@pytest.mark.parametrize(
    ("pattern", "resource", "path"),
    [
        # TestValidateMapWildcardKeys (testValidationPattern: the path, and no error when it is empty)
        pytest.param('{"metadata": {"annotations": {"test/*": "value1"}}}',
                     '{"metadata": {"annotations": {"test/bar": "value1"}}}', "", id="1"),
        pytest.param('{"metadata": {"annotations": {"test/b??": "v*"}}}',
                     '{"metadata": {"annotations": {"test/bar": "value1"}}}', "", id="2"),
        pytest.param("{}", '{"metadata": {"annotations": {"test/bar": "value1"}}}', "", id="3"),
        pytest.param('{"metadata": {"annotations": {"test/b??": "v*"}}}',
                     '{"metadata": {"labels": {"test/bar": "value1"}}}', "/metadata/annotations/", id="4"),
        pytest.param('{"metadata": {"labels": {"*/test": "foo"}}}',
                     '{"metadata": {"labels": {"foo/test": "foo"}}}', "", id="5"),
        pytest.param('{"metadata": {"labels": {"foo/a*": "bar"}}}',
                     '{"metadata": {"labels": {"foo/aa?": "bar", "foo/789": "bar"}}}', "", id="6"),
        pytest.param('{"metadata": {"labels": {"foo/ABC*": "bar"}}}',
                     '{"metadata": {"labels": {"foo/AB?": "bar", "foo/ABC": "bar2"}}}', "/metadata/labels/foo/ABC/",
                     id="7"),
        pytest.param('{"=(metadata)": {"=(labels)": {"foo/P*": "bar", "foo/Q*": "bar2"}}}',
                     '{"metadata": {"labels": {"foo/PQR": "bar", "foo/QR": "bar2"}}}', "", id="8"),
        pytest.param('{"metadata": {"labels": {"foo/1*": "bar"}}}',
                     '{"metadata": {"labels": {"foo/123": "bar222"}}}', "/metadata/labels/foo/123/", id="9"),
        pytest.param('{"metadata": {"labels": {"foo/X*": "bar", "foo/A*": "bar2"}}}',
                     '{"metadata": {"labels": {"foo/XYZ": "bar"}}}', "/metadata/labels/foo/A*/", id="10"),
        pytest.param('{"=(metadata)": {"=(labels)": {"foo/1*": "bar", "foo/4*": "bar2"}}}',
                     '{"metadata": {"labels": {"foo/123": "bar"}}}', "/metadata/labels/foo/4*/", id="11"),
    ],
)
def test_validate_map_wildcard_keys(pattern: str, resource: str, path: str) -> None:
    assert walk(load(pattern), load(resource)) == ("fail" if path else "pass", path)


# -- pkg/engine/validate/validate_test.go: MatchPattern -------------------------------------------


def containers(*specs: tuple[str, str, str]) -> str:
    """A resource whose containers are (name, image, imagePullPolicy)."""
    items = ", ".join(f'{{"name": "{n}", "image": "{i}", "imagePullPolicy": "{p}"}}' for n, i, p in specs)
    return f'{{"spec": {{"containers": [{items}]}}}}'


def env_containers(env_name: str, pull_policy: str) -> str:
    return ('{"spec": {"containers": [{"name": "nginx", "image": "nginx", '
            f'"env": [{{"name": "{env_name}", "value": "bar"}}], "imagePullPolicy": "{pull_policy}"}}]}}}}')


LATEST_OR_UNTAGGED = ('{"spec": {"containers": [{"name": "*", "(image)": "*:latest | !*:*", '
                      '"imagePullPolicy": "!Always"}]}}')
UNTAGGED_OR_LATEST = ('{"spec": {"containers": [{"name": "*", "(image)": "!*:* | *:latest", '
                      '"imagePullPolicy": "!Always"}]}}')
GLOBAL_LATEST = '{"spec": {"containers": [{"name": "*", "<(image)": "*:latest", "imagePullPolicy": "!Always"}]}}'
GLOBAL_NGINX_ENV = ('{"spec": {"containers": [{"name": "*", "<(image)": "nginx", '
                    '"env": [{"<(name)": "foo", "<(value)": "bar"}], "imagePullPolicy": "!Always"}]}}')
GLOBAL_ENV = ('{"spec": {"containers": [{"name": "*", "env": [{"<(name)": "foo", "<(value)": "bar"}], '
              '"imagePullPolicy": "!Always"}]}}')
GLOBAL_NAME = '{"metadata": {"<(name)": "nginx"}, "spec": {"imagePullSecrets": [{"name": "regcred"}]}}'
GLOBAL_LABEL = ('{"metadata": {"labels": {"<(foo)": "bar"}}, '
                '"spec": {"containers": [{"name": "nginx", "image": "!*:latest"}]}}')
GLOBAL_IMAGE_SECRET = ('{"spec": {"containers": [{"name": "*", "<(image)": "nginx"}], '
                       '"imagePullSecrets": [{"name": "my-registry-secret"}]}}')
DOCKER_SOCKET = ('{"metadata": {"labels": {"allow-docker": "true"}}, '
                 '"(spec)": {"(volumes)": [{"(hostPath)": {"path": "/var/run/docker.sock"}}]}}')
CACHE_VOLUME = '{"spec": {"=(volumes)": [{"(name)": "!cache-volume", "=(emptyDir)": {"sizeLimit": "?*"}}]}}'
RUN_AS_USER = ('{"spec": {"=(initContainers)": [{"(name)": "!istio-init", "=(securityContext)": '
               '{"=(runAsUser)": ">0"}}], "=(containers)": [{"=(securityContext)": {"=(runAsUser)": ">0"}}]}}')
ISTIO_VOLUMES = ('{"spec": {"=(volumes)": [{"(name)": '
                 '"!credential-socket&!istio-data&!istio-envoy&!workload-certs&!workload-socket", '
                 '"=(emptyDir)": {"sizeLimit": "?*"}}]}}')


def docker_pod(labels: str, volumes: str = "") -> str:
    extra = f', "volumes": [{{"hostPath": {{"path": "{volumes}"}}}}]' if volumes else ""
    return (f'{{"metadata": {{"labels": {labels}, "name": "nginx"}}, '
            f'"spec": {{"containers": [{{"image": "nginx", "name": "nginx"}}]{extra}}}}}')


BUSYBOX = ("busybox", "busybox:1.28", "Always")

MATCH_PATTERN = [
    # TestConditionalAnchorWithMultiplePatterns
    pytest.param(LATEST_OR_UNTAGGED, containers(("nginx", "nginx:1.2.3", "Always")), "skip", id="test-1"),
    pytest.param(LATEST_OR_UNTAGGED, containers(("nginx", "nginx:latest", "Always")), "fail", id="test-2"),
    pytest.param(LATEST_OR_UNTAGGED, containers(("nginx", "nginx", "Always")), "fail", id="test-3"),
    pytest.param(LATEST_OR_UNTAGGED, containers(("nginx", "nginx", "Never")), "pass", id="test-4"),
    pytest.param(LATEST_OR_UNTAGGED, containers(("nginx", "nginx:latest", "Never")), "pass", id="test-5"),
    pytest.param(LATEST_OR_UNTAGGED, containers(("nginx", "nginx:1.2.3", "Never")), "skip", id="test-6"),
    pytest.param(LATEST_OR_UNTAGGED, containers(("nginx", "nginx", "Always"), BUSYBOX), "fail", id="test-7"),
    pytest.param(LATEST_OR_UNTAGGED, containers(("nginx", "nginx:latest", "Always"), BUSYBOX), "fail", id="test-8"),
    pytest.param(LATEST_OR_UNTAGGED, containers(("nginx", "nginx:1.2.3", "Always"), BUSYBOX), "skip", id="test-9"),
    pytest.param(LATEST_OR_UNTAGGED, containers(("nginx", "nginx", "Never"), BUSYBOX), "pass", id="test-10"),
    pytest.param(LATEST_OR_UNTAGGED, containers(("nginx", "nginx:latest", "Never"), BUSYBOX), "pass", id="test-11"),
    pytest.param(LATEST_OR_UNTAGGED, containers(("nginx", "nginx:1.2.3", "Never"), BUSYBOX), "skip", id="test-12"),
    pytest.param(LATEST_OR_UNTAGGED, containers(BUSYBOX, ("nginx", "nginx", "Always")), "fail", id="test-13"),
    pytest.param(LATEST_OR_UNTAGGED, containers(BUSYBOX, ("nginx", "nginx:latest", "Always")), "fail", id="test-14"),
    pytest.param(LATEST_OR_UNTAGGED, containers(BUSYBOX, ("nginx", "nginx:1.2.3", "Always")), "skip", id="test-15"),
    pytest.param(LATEST_OR_UNTAGGED, containers(BUSYBOX, ("nginx", "nginx", "Never")), "pass", id="test-16"),
    pytest.param(LATEST_OR_UNTAGGED, containers(BUSYBOX, ("nginx", "nginx:latest", "Never")), "pass", id="test-17"),
    pytest.param(LATEST_OR_UNTAGGED, containers(BUSYBOX, ("nginx", "nginx:1.2.3", "Never")), "skip", id="test-18"),
    pytest.param(LATEST_OR_UNTAGGED, containers(("busybox", "busybox", "Always"), ("nginx", "nginx", "Always")),
                 "fail", id="test-19"),
    pytest.param(LATEST_OR_UNTAGGED,
                 containers(("busybox", "busybox:latest", "Always"), ("nginx", "nginx:latest", "Always")),
                 "fail", id="test-20"),
    pytest.param(LATEST_OR_UNTAGGED,
                 containers(("busybox", "busybox:1.2.3", "Always"), ("nginx", "nginx:latest", "IfNotPresent")),
                 "pass", id="test-21"),
    pytest.param(UNTAGGED_OR_LATEST, containers(("nginx", "nginx:latest", "Always")), "fail", id="test-22"),
    # Go labels test-23 Fail, unasserted: the global anchor fails on every container, so the list
    # aggregates a global skip (the same walk as check_global_anchor_skip below)
    pytest.param(GLOBAL_LATEST, containers(("nginx", "nginx", "Always")), "skip", id="test-23"),
    pytest.param(GLOBAL_LATEST, containers(("nginx", "nginx:latest", "Always")), "fail", id="test-24"),
    # test-25 and test-27, labelled Fail (unasserted): env holds global anchors, so it is evaluated
    # first; <(name) fails on the only env entry and the global skip reaches MatchPattern
    pytest.param(GLOBAL_NGINX_ENV, env_containers("foo1", "Always"), "skip", id="test-25"),
    pytest.param(GLOBAL_NGINX_ENV, env_containers("foo", "Always"), "fail", id="test-26"),
    pytest.param(GLOBAL_ENV, env_containers("foo1", "Always"), "skip", id="test-27"),
    pytest.param(GLOBAL_ENV, env_containers("foo", "IfNotpresent"), "pass", id="test-28"),
    pytest.param(GLOBAL_ENV, env_containers("foo", "Always"), "fail", id="test-29"),
    # test-30, labelled Fail (unasserted): metadata holds the global anchor, is evaluated before spec,
    # and its global anchor error is returned unchanged to MatchPattern, which skips
    pytest.param(GLOBAL_NAME, '{"metadata": {"name": "somename"}, "spec": {"containers": '
                 '[{"name": "nginx", "image": "nginx:latest"}], "imagePullSecrets": [{"name": "cred"}]}}',
                 "skip", id="test-30"),
    pytest.param(GLOBAL_NAME, '{"metadata": {"name": "nginx"}, "spec": {"containers": '
                 '[{"name": "nginx", "image": "nginx:latest"}], "imagePullSecrets": [{"name": "cred"}]}}',
                 "fail", id="test-31"),
    pytest.param(GLOBAL_LABEL, '{"metadata": {"name": "nginx", "labels": {"foo": "bar"}}, '
                 '"spec": {"containers": [{"name": "nginx", "image": "nginx"}]}}', "pass", id="test-32"),
    pytest.param(GLOBAL_LABEL, '{"metadata": {"name": "nginx", "labels": {"foo": "bar"}}, '
                 '"spec": {"containers": [{"name": "nginx", "image": "nginx:latest"}]}}', "fail", id="test-33"),
    pytest.param(GLOBAL_IMAGE_SECRET, '{"spec": {"containers": [{"name": "nginx", "image": "nginx"}], '
                 '"imagePullSecrets": [{"name": "cred"}]}}', "fail", id="test-34"),
    # test-35, labelled Fail (unasserted): containers (nested global anchor) go before imagePullSecrets
    # and every container skips
    pytest.param(GLOBAL_IMAGE_SECRET, '{"spec": {"containers": [{"name": "nginx", "image": "somepod"}], '
                 '"imagePullSecrets": [{"name": "cred"}]}}', "skip", id="test-35"),
    pytest.param(GLOBAL_IMAGE_SECRET, '{"spec": {"containers": [{"name": "nginx", "image": "nginx"}], '
                 '"imagePullSecrets": [{"name": "my-registry-secret"}]}}', "pass", id="test-36"),
    pytest.param(DOCKER_SOCKET, docker_pod('{"run": "nginx"}'), "skip", id="test-37"),
    pytest.param(DOCKER_SOCKET, docker_pod('{"run": "nginx"}', "/var/run/docker.sock"), "fail", id="test-38"),
    pytest.param(DOCKER_SOCKET, docker_pod('{"run": "nginx"}', "/randome/value"), "skip", id="test-39"),
    pytest.param(DOCKER_SOCKET, docker_pod('{"run": "nginx", "allow-docker": "true"}', "/var/run/docker.sock"),
                 "pass", id="test-40"),
    pytest.param(DOCKER_SOCKET, docker_pod('{"run": "nginx", "allow-docker": "false"}', "/var/run/docker.sock"),
                 "fail", id="test-41"),
    pytest.param(DOCKER_SOCKET, docker_pod('{"run": "nginx"}', "/var/run/docker.sock"), "fail", id="test-42"),
    pytest.param(CACHE_VOLUME, '{"spec": {"volumes": [{"name": "cache-volume", "emptyDir": {}}]}}', "skip",
                 id="test-43"),
    pytest.param(RUN_AS_USER, '{"spec": {"initContainers": [{"name": "nginx", "securityContext": {"runAsUser": 1000}}], '
                 '"containers": [{"name": "nginx", "image": "nginx"}]}}', "pass", id="test-44"),
    pytest.param(RUN_AS_USER, '{"spec": {"initContainers": [{"name": "nginx", "securityContext": {"runAsUser": 0}}], '
                 '"containers": [{"name": "nginx", "image": "nginx"}]}}', "fail", id="test-45"),
    pytest.param(RUN_AS_USER, '{"spec": {"initContainers": [{"name": "istio-init", "securityContext": '
                 '{"runAsUser": 0}}], "containers": [{"securityContext": {"runAsUser": 1000}}]}}', "pass", id="test-46"),
    pytest.param(RUN_AS_USER, '{"spec": {"initContainers": [{"name": "istio-init", "securityContext": '
                 '{"runAsUser": 1000}}], "containers": [{"securityContext": {"runAsUser": 0}}]}}', "fail", id="test-47"),
    pytest.param(RUN_AS_USER, '{"spec": {"containers": [{"securityContext": {"runAsUser": 1000}}]}}', "pass",
                 id="test-48"),
    pytest.param(RUN_AS_USER, '{"spec": {"containers": [{"securityContext": {"runAsUser": 0}}]}}', "fail",
                 id="test-49"),
    pytest.param(RUN_AS_USER, '{"spec": {"initContainers": [{"name": "istio-init", "securityContext": '
                 '{"runAsUser": 0}}], "containers": [{"name": "nginx", "image": "nginx"}]}}', "pass", id="test-50"),
    pytest.param(ISTIO_VOLUMES, '{"spec": {"volumes": [{"name": "credential-socket", "emptyDir": '
                 '{"sizeLimit": "1Gi"}}]}}', "skip", id="test-51"),
    pytest.param(ISTIO_VOLUMES, '{"spec": {"volumes": [{"name": "cache-volume", "emptyDir": {"sizeLimit": "1Gi"}}]}}',
                 "pass", id="test-52"),
    pytest.param(ISTIO_VOLUMES, '{"spec": {"volumes": [{"name": "cache-volume"}]}}', "pass", id="test-53"),
    pytest.param(ISTIO_VOLUMES, '{"spec": {"volumes": [{"name": "cache-volume", "emptyDir": {}}]}}', "fail",
                 id="test-54"),
    # Test_global_anchor
    pytest.param(GLOBAL_LATEST, containers(("nginx", "nginx:v1", "Always")), "skip", id="check_global_anchor_skip"),
    pytest.param(GLOBAL_LATEST, containers(("nginx", "nginx:latest", "Always")), "fail",
                 id="check_global_anchor_fail"),
    pytest.param(GLOBAL_LATEST, containers(("nginx", "nginx:latest", "IfNotPresent")), "pass",
                 id="check_global_anchor_pass"),
    pytest.param(GLOBAL_LATEST, containers(("nginx", "nginx:latest", "IfNotPresent"), ("nginx", "nginx:v2", "IfNotPresent")),
                 "pass", id="check_global_anchor_mixed"),
    # TestMatchPattern_AnchorClassificationThroughPatternError
    pytest.param('{"spec": {"containers": [{"(name)": "nginx", "image": "nginx:latest"}]}}',
                 '{"spec": {"containers": [{"name": "redis", "image": "redis:7"}]}}', "skip",
                 id="conditional-skip-survives-list-aggregation"),
]


@pytest.mark.parametrize(("pattern", "resource", "status"), MATCH_PATTERN)
def test_match_pattern(pattern: str, resource: str, status: str) -> None:
    outcome = CompiledPattern(load(pattern)).match(load(resource))
    assert outcome.status == status, outcome.message


@pytest.mark.parametrize(
    ("pattern", "resource", "status", "path"),
    [
        # TestMatchPattern_ResourceValueMimickingAnchorMessage: a value quoting an anchor message is a
        # plain mismatch, never a skip
        *(
            pytest.param('{"metadata": {"annotations": {"owner": "platform-team"}}}',
                         json.dumps({"metadata": {"annotations": {"owner": value}}}), "fail",
                         "/metadata/annotations/owner/", id=f"mimic-{name}")
            for name, value in [
                ("control", "intruder"),
                ("conditional", "conditional anchor mismatch"),
                ("global", "global anchor mismatch"),
                ("negation", "negation anchor matched in resource"),
                ("substring", "x-conditional anchor mismatch-y"),
            ]
        ),
        # Test_negation_anchor
        pytest.param('{"spec": {"X(hostNetwork)": "*"}}', '{"spec": {"containers": [{"name": "a"}]}}', "pass", "",
                     id="negated-key-absent"),
        pytest.param('{"spec": {"X(hostNetwork)": "*"}}', '{"spec": {"hostNetwork": true}}', "fail",
                     "/spec/hostNetwork/", id="negated-key-present"),
        pytest.param('{"spec": {"containers": [{"X(securityContext)": "*"}]}}',
                     '{"spec": {"containers": [{"name": "a"}]}}', "pass", "", id="negated-key-absent-in-list"),
        pytest.param('{"spec": {"containers": [{"X(securityContext)": "*"}]}}',
                     '{"spec": {"containers": [{"name": "a", "securityContext": {"privileged": true}}]}}', "fail",
                     "/spec/containers/0/securityContext/", id="negated-key-present-in-list"),
        # Test_existence_anchor_nestedConditional: the conditional errors of the elements stay inside
        # the existence anchor
        *(
            pytest.param('{"spec": {"^(containers)": [{"(name)": "nginx", "image": "nginx:latest"}]}}',
                         json.dumps({"spec": {"containers": [{"name": name, "image": image}]}}), status, path,
                         id=f"existence-{case}")
            for case, name, image, status, path in [
                ("element-satisfies", "nginx", "nginx:latest", "pass", ""),
                ("no-element-satisfies-condition", "redis", "redis:7", "fail", "/spec/containers/"),
                ("condition-holds-value-differs", "nginx", "nginx:v1", "fail", "/spec/containers/"),
            ]
        ),
    ],
)
def test_match_pattern_paths(pattern: str, resource: str, status: str, path: str) -> None:
    assert walk(load(pattern), load(resource)) == (status, path)
