"""Go regular expressions on RE2: Go's results, Go's error texts, linear time on any pattern."""

from __future__ import annotations

import time

import pytest

from scanner.engine.golang.regexp import RegexError, compile_re2


@pytest.mark.parametrize(
    ("pattern", "src", "repl", "literal", "expected"),
    [
        pytest.param("a*", "baaac", "-", False, "-b-c-", id="empty-match-after-match-is-not-replaced"),
        pytest.param("x*", "abc", "-", False, "-a-b-c-", id="empty-matches-between-every-rune"),
        pytest.param(".", "héllo", "x", False, "xxxxx", id="dot-steps-by-rune"),
        pytest.param("(a)", "a", "$1x", False, "", id="dollar-name-takes-longest-word"),
        pytest.param("(a)", "a", "${1}x", False, "ax", id="braced-group-number"),
        pytest.param("b", "abc", "$1", True, "a$1c", id="literal-replacement-keeps-dollars"),
        pytest.param(r"(?P<first>\w+) (?P<last>\w+)", "John Smith", "${last} ${first} $$", False, "Smith John $",
                     id="named-groups-and-escaped-dollar"),
        pytest.param("(?<year>[0-9]{4})", "in 2024", "<$year>", False, "in <2024>", id="angle-named-group"),
        pytest.param("(a)|(b)", "ab", "[$2]", False, "[][b]", id="unmatched-group-inserts-nothing"),
        pytest.param("^", "ab", "-", False, "-ab", id="start-anchor-once"),
        pytest.param("$", "ab", "-", False, "ab-", id="end-anchor-once"),
    ],
)
def test_replace_all_follows_go(pattern: str, src: str, repl: str, literal: bool, expected: str) -> None:
    assert compile_re2(pattern).replace_all(src, repl, literal) == expected


@pytest.mark.parametrize(
    ("pattern", "text", "expected"),
    [
        pytest.param("a$", "a\n", False, id="dollar-is-end-of-text"),
        pytest.param("(?m)a$", "a\n", True, id="multiline-dollar-is-end-of-line"),
        pytest.param(r"^\d$", "٣", False, id="digit-class-is-ascii"),
        pytest.param(r"^\pN$", "٣", True, id="unicode-class-supported"),
        pytest.param("(?U)a+", "aaa", True, id="ungreedy-flag-supported"),
        pytest.param("\ufffd", "\ud800", True, id="unpaired-surrogate-is-replacement-char"),
        pytest.param(r"\Qa.b\E", "a.b", True, id="quoted-literal"),
        pytest.param("x{,3}", "x{,3}", True, id="brace-comma-is-literal"),
    ],
)
def test_matches_follows_go(pattern: str, text: str, expected: bool) -> None:
    assert compile_re2(pattern).matches(text) is expected


@pytest.mark.parametrize(
    ("pattern", "text", "limit", "expected"),
    [
        pytest.param("[0-9]+", "abc 123 def 456", -1, ["123", "456"], id="all-matches"),
        pytest.param("[0-9]+", "abc 123 def 456", 1, ["123"], id="limit-stops-early"),
        pytest.param("[0-9]*", "12 a", -1, ["12", "", ""], id="empty-after-match-skipped"),
        pytest.param("é+", "caféé!é", -1, ["éé", "é"], id="multibyte-matches"),
    ],
)
def test_find_all_follows_go(pattern: str, text: str, limit: int, expected: list[str]) -> None:
    assert compile_re2(pattern).find_all(text, limit) == expected


@pytest.mark.parametrize(
    ("pattern", "message"),
    [
        pytest.param("(", "error parsing regexp: missing closing ): `(`", id="missing-paren"),
        pytest.param("a)", "error parsing regexp: unexpected ): `a)`", id="unexpected-paren"),
        pytest.param("a**", "error parsing regexp: invalid nested repetition operator: `**`", id="double-star"),
        pytest.param("(?=a)", "error parsing regexp: invalid or unsupported Perl syntax: `(?=`", id="lookahead"),
        pytest.param("(a)\\1", "error parsing regexp: invalid escape sequence: `\\1`", id="backreference"),
        pytest.param("a{1001}", "error parsing regexp: invalid repeat count: `{1001}`", id="repeat-over-1000"),
        pytest.param("[z-a]", "error parsing regexp: invalid character class range: `z-a`", id="reversed-range"),
        pytest.param("*", "error parsing regexp: missing argument to repetition operator: `*`", id="bare-star"),
        pytest.param("\\C", "error parsing regexp: invalid escape sequence: `\\C`", id="any-byte-refused-like-go"),
    ],
)
def test_compile_errors_are_worded_as_go(pattern: str, message: str) -> None:
    with pytest.raises(RegexError) as info:
        compile_re2(pattern)
    assert str(info.value) == message


def test_escaped_backslash_before_c_is_allowed() -> None:
    assert compile_re2("\\\\C").matches("\\C")


@pytest.mark.parametrize(
    ("pattern", "text"),
    [
        pytest.param("^(a|a)*$", "a" * 100_000 + "b", id="ambiguous-alternation"),
        pytest.param("^(ab|a|b)*$", "ab" * 50_000 + "c", id="overlapping-alternation"),
        pytest.param("a*a*a*a*a*a*b", "a" * 100_000, id="polynomial-stars"),
        pytest.param("^(a+)+$", "a" * 100_000 + "b", id="nested-repetition"),
        pytest.param("(x+x+)+y", "x" * 100_000, id="nested-pair-repetition"),
    ],
)
def test_hostile_patterns_match_in_linear_time(pattern: str, text: str) -> None:
    regex = compile_re2(pattern)
    start = time.monotonic()
    assert not regex.matches(text)
    assert regex.find_all(text) == []
    assert regex.replace_all(text, "z", False) == text
    assert time.monotonic() - start < 1.0


def test_replace_all_limit_stops_before_building() -> None:
    regex = compile_re2("a")
    with pytest.raises(OverflowError):
        regex.replace_all("a" * 1000, "b" * 1000, True, limit=10_000)
    assert regex.replace_all("a" * 10, "bb", True, limit=20) == "b" * 20
