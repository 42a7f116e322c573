"""Operators inside pattern strings (spec 4.7.4-4.7.6): ``|``, ``&``, ``>=``, ``<=``, ``>``,
``<``, ``!``, ranges ``a-b`` / ``a!-b``, compared as durations, then quantities, then text.

A pattern string is compiled once into a predicate (cached), so matching many resource
values against the same pattern only pays for the value conversions.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from scanner.engine import wildcard
from scanner.engine.golang.duration import parse_duration
from scanner.engine.golang.fmt import format_fixed6, format_upper_e, is_number
from scanner.engine.golang.quantity import parse_quantity

EQUAL = ""
MORE_EQUAL = ">="
LESS_EQUAL = "<="
MORE = ">"
LESS = "<"
NOT_EQUAL = "!"
IN_RANGE = "-"
NOT_IN_RANGE = "!-"

_PREFIX_OPERATORS = (MORE_EQUAL, LESS_EQUAL, MORE, LESS, NOT_EQUAL)
# a range end: optional sign (Kyverno's character class also admits "|"), digits,
# optional fraction, optional unit letters
_END = r"[-|+]?\d+(?:\.\d+)?[A-Za-z]*"
IN_RANGE_PATTERN = re.compile(rf"({_END})-({_END})", re.ASCII)
NOT_IN_RANGE_PATTERN = re.compile(rf"({_END})!-({_END})", re.ASCII)

_GO_FLOAT = re.compile(
    r"[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf|infinity|nan)", re.ASCII | re.IGNORECASE
)
# Go's hexadecimal float: a hexadecimal mantissa and a required binary exponent ("0x1.8p1")
_GO_HEX_FLOAT = re.compile(r"[+-]?0x(?:[0-9a-f]+\.?[0-9a-f]*|\.[0-9a-f]+)p[+-]?\d+", re.ASCII | re.IGNORECASE)

Predicate = Callable[[Any], bool]

_TESTS: dict[str, Callable[[int], bool]] = {
    EQUAL: lambda c: c == 0,
    NOT_EQUAL: lambda c: c != 0,
    MORE: lambda c: c > 0,
    LESS: lambda c: c < 0,
    MORE_EQUAL: lambda c: c >= 0,
    LESS_EQUAL: lambda c: c <= 0,
}


def _underscores_ok(text: str) -> bool:
    """Go ``strconv.underscoreOK``: each ``_`` sits between digits, or between a base prefix and
    a digit."""
    body = text[1:] if text[:1] in ("+", "-") else text
    saw, start, digits = "^", 0, "0123456789"
    if len(body) >= 2 and body[0] == "0" and body[1] in "bBoOxX":
        saw, start = "0", 2
        if body[1] in "xX":
            digits += "abcdefABCDEF"
    for ch in body[start:]:
        if ch in digits:
            saw = "0"
        elif ch == "_":
            if saw != "0":
                return False
            saw = "_"
        elif saw == "_":
            return False
        else:
            saw = "!"
    return saw != "_"


def parse_go_float(text: object) -> float | None:
    """Go ``strconv.ParseFloat(s, 64)``; None when Go reports an error.

    Decimal and hexadecimal (``0x1p-2``) text, with ``_`` between digits (``1_000``);
    out-of-range values (``1e400``) are errors in Go, as are spaces.
    """
    if not isinstance(text, str):
        return None
    if "_" in text:
        if not _underscores_ok(text):
            return None
        text = text.replace("_", "")
    if _GO_HEX_FLOAT.fullmatch(text):
        try:
            return float.fromhex(text)
        except OverflowError:
            return None
    if _GO_FLOAT.fullmatch(text) is None:
        return None
    value = float(text)
    if math.isinf(value) and "inf" not in text.lower():
        return None
    return value


def operator_of(term: str) -> str:
    """The operator a pattern term starts with (spec 4.7.4 step 4); ``EQUAL`` when none."""
    if len(term) < 2:
        return EQUAL
    for op in _PREFIX_OPERATORS:
        if term.startswith(op):
            return op
    if NOT_IN_RANGE_PATTERN.fullmatch(term):
        return NOT_IN_RANGE
    if IN_RANGE_PATTERN.fullmatch(term):
        return IN_RANGE
    return EQUAL


def is_range(text: str) -> bool:
    """Whether ``text`` is an in-range expression ``a-b`` (as the In operators test it)."""
    return operator_of(text) == IN_RANGE


def _number_text(value: Any) -> str | None:
    """A value as text for the duration and quantity attempts (missing counts as zero)."""
    if value is None:
        return "0"
    if isinstance(value, str):
        return value
    if is_number(value):
        return format_fixed6(value)
    return None


def _plain_text(value: Any) -> str | None:
    """A value as text for wildcard comparison; None for null, maps and lists."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if is_number(value):
        return format_upper_e(value)
    return None


def _compare(op: str, operand: str) -> Predicate:
    test = _TESTS[op]
    duration = parse_duration(operand)
    quantity = parse_quantity(operand)
    textual = op in (EQUAL, NOT_EQUAL)
    negate = op == NOT_EQUAL

    def check(value: Any) -> bool:
        if duration is not None or quantity is not None:
            number_text = _number_text(value)
            if number_text is not None:
                if duration is not None:
                    ns = parse_duration(number_text)
                    if ns is not None:
                        return test((ns > duration) - (ns < duration))
                if quantity is not None:
                    parsed = parse_quantity(number_text)
                    if parsed is not None:
                        a, b = parsed.value, quantity.value
                        return test((a > b) - (a < b))
        if not textual:
            return False
        text = _plain_text(value)
        if text is None:
            return False
        return wildcard.match(operand, text) != negate

    return check


def _compile_term(term: str) -> Predicate:
    op = operator_of(term)
    if op == IN_RANGE:
        low, high = IN_RANGE_PATTERN.fullmatch(term).groups()  # type: ignore[union-attr]
        at_least, at_most = _compile_term(f">= {low}"), _compile_term(f"<= {high}")
        return lambda value: at_least(value) and at_most(value)
    if op == NOT_IN_RANGE:
        low, high = NOT_IN_RANGE_PATTERN.fullmatch(term).groups()  # type: ignore[union-attr]
        below, above = _compile_term(f"< {low}"), _compile_term(f"> {high}")
        return lambda value: below(value) or above(value)
    return _compare(op, term[len(op) :].strip())


def _all_of(terms: tuple[Predicate, ...]) -> Predicate:
    if len(terms) == 1:
        return terms[0]
    return lambda value: all(term(value) for term in terms)


@lru_cache(maxsize=8192)
def compile_pattern(pattern: str) -> Predicate:
    """The predicate of a string pattern without the exact-equality shortcut."""
    alternatives = tuple(
        _all_of(tuple(_compile_term(term.strip(" ")) for term in alternative.strip(" ").split("&")))
        for alternative in pattern.split("|")
    )
    if len(alternatives) == 1:
        return alternatives[0]
    return lambda value: any(alternative(value) for alternative in alternatives)


def compare_scalar(value: Any, pattern: str) -> bool:
    """Whether a resource value matches a string pattern (spec 4.7.4).

    ``value`` is any JSON value (None for a missing key); ``pattern`` the pattern string.
    """
    if isinstance(value, str) and value == pattern:
        return True
    return compile_pattern(pattern)(value)
