"""Kyverno's custom JMESPath functions (spec 7.7, 7.8): one table row per behaviour."""

from __future__ import annotations

import math
import pathlib
import time
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from scanner.engine.golang.regexp import compile_re2
from scanner.engine.jmespath.dialect import Evaluator, compile_expression
from scanner.engine.jmespath.functions import build_functions, custom_specs
from scanner.engine.jmespath.interpreter import JMESPathError
from scanner.engine.jmespath.random_strings import translate
from scanner.engine.jmespath.x509 import decode_pem
from scanner.errors import ManifestError

NOW = datetime(2024, 3, 4, 5, 6, 7, tzinfo=timezone(timedelta(hours=2)))
EVALUATOR = Evaluator(build_functions(now=lambda: NOW, load_yaml=lambda text: {"yaml": text}))
PEM = (pathlib.Path(__file__).parent / "data" / "x509-rsa.pem").read_text()


def run(expr: str, data: Any = None) -> Any:
    return EVALUATOR.search(compile_expression(expr), data)


ROWS = [
    ("compare('a', 'b')", -1, "compare-less"),
    ("compare('b', 'b')", 0, "compare-equal"),
    ("equal_fold('Go', 'GO')", True, "equal-fold-ignores-case"),
    ("equal_fold('Go', 'Ga')", False, "equal-fold-different"),
    ("replace('aaaa', 'a', 'b', `2`)", "bbaa", "replace-first-n"),
    ("replace('aaaa', 'a', 'b', `-1`)", "bbbb", "replace-negative-all"),
    ("replace('aaa', 'a', 'b', `1e20`)", "bbb", "replace-count-beyond-int64-is-all"),
    ("replace_all('a-b-c', '-', '+')", "a+b+c", "replace-all"),
    ("to_upper('abc')", "ABC", "to-upper"),
    ("to_upper('ß')", "ß", "to-upper-keeps-single-rune"),
    ("to_lower('ABC')", "abc", "to-lower"),
    ("trim('xxhixx', 'x')", "hi", "trim-cutset"),
    ("trim_prefix('prefix-name', 'prefix-')", "name", "trim-prefix"),
    ("trim_prefix('name', 'prefix-')", "name", "trim-prefix-absent"),
    ("split('a,b', ',')", ["a", "b"], "split"),
    ("split('', ',')", [""], "split-empty-input"),
    ("split('ab', '')", ["a", "b"], "split-empty-separator"),
    ("regex_replace_all('([a-z]+)-(\\d+)', 'abc-12 x-3', '$2.$1')", "12.abc 3.x",
     "regex-replace-all-numbered"),
    ("regex_replace_all('(?P<w>[a-z]+)', 'ab', '${w}_')", "ab_", "regex-replace-all-named"),
    ("regex_replace_all('a', 'aa', '$1x')", "", "regex-replace-unknown-group-empty"),
    ("regex_replace_all('x*', 'abxd', '-')", "-a-b-d-", "regex-replace-empty-abutting-skipped"),
    ("regex_replace_all('\\.', `1.5`, '_')", "1_5", "regex-replace-number-source"),
    ("regex_replace_all_literal('a', 'aa', '$1')", "$1$1", "regex-replace-literal"),
    ("regex_match('^[0-9]+$', `123`)", True, "regex-match-number"),
    ("regex_match('b', 'abc')", True, "regex-match-unanchored"),
    ("regex_match('^a$', 'a\n')", False, "regex-dollar-is-end-of-text"),
    ("regex_match('(?i)ABC', 'abc')", True, "regex-case-flag"),
    ("regex_match('^[[:digit:]]+$', '42')", True, "regex-posix-class"),
    ("pattern_match('nginx:*', 'nginx:1.2')", True, "pattern-match-wildcard"),
    ("pattern_match('?', `5`)", True, "pattern-match-number"),
    ("label_match(`{\"a\": \"1\"}`, `{\"a\": \"1\", \"b\": \"2\"}`)", True, "label-match-subset"),
    ("label_match(`{\"a\": \"1\"}`, `{\"a\": \"2\"}`)", False, "label-match-value-differs"),
    ("to_boolean('TrUe')", True, "to-boolean-case-insensitive"),
    ("add(`1`, `2`)", 3.0, "add-numbers"),
    ("add('5', '3')", "8", "add-quantity-strings"),
    ("add('1Gi', '512Mi')", "1536Mi", "add-binary-quantities"),
    ("add('1h', '30m0s')", "1h30m0s", "add-durations"),
    ("sum(`[\"1\", \"2\", \"3\"]`)", "6", "sum-quantities"),
    ("sum(`[1.5, 2]`)", 3.5, "sum-numbers"),
    ("subtract('2', '500m')", "1500m", "subtract-quantities"),
    ("subtract(`5`, `7`)", -2.0, "subtract-numbers"),
    ("multiply('512Mi', `3`)", "1536Mi", "multiply-quantity-scalar"),
    ("multiply(`2`, '1h')", "2h0m0s", "multiply-scalar-duration"),
    ("multiply(`2`, `2.5`)", 5.0, "multiply-numbers"),
    ("divide(`5`, `2`)", 2.5, "divide-numbers"),
    ("divide('1Gi', '512Mi')", 2.0, "divide-quantities-gives-number"),
    ("divide('10Mi', `3`)", "3495253", "divide-quantity-rounds-down"),
    ("divide('1Pi', `3`)", "375299968947541333333333n", "divide-large-binary-keeps-nano-scale"),
    ("divide('1h', '30m0s')", 2.0, "divide-durations"),
    ("divide('1h', `4`)", "15m0s", "divide-duration-scalar"),
    ("modulo(`7`, `3`)", 1.0, "modulo-numbers"),
    ("modulo(`-7`, `3`)", -1.0, "modulo-truncated-sign"),
    ("modulo('7', '4')", "3", "modulo-quantities"),
    ("modulo('1h', '25m0s')", "10m0s", "modulo-durations"),
    ("round(`2.5`, `0`)", 3.0, "round-half-away"),
    ("round(`-2.345`, `2`)", -2.35, "round-places"),
    ("round(`1e300`, `10`)", math.inf, "round-overflow-stays-infinite"),
    ("base64_decode('aGVsbG8=')", "hello", "base64-decode"),
    ("base64_encode('hello')", "aGVsbG8=", "base64-encode"),
    ("path_canonicalize('//a/./b/../c/')", "/a/c", "path-canonicalize"),
    ("path_canonicalize('')", "", "path-canonicalize-empty"),
    ("truncate('abcdef', `3`)", "abc", "truncate"),
    ("truncate('abc', `-1`)", "", "truncate-negative"),
    ("semver_compare('1.2.3', '>=1.2.0 <2.0.0')", True, "semver-and-range"),
    ("semver_compare('2.1.0', '<1.0.0 || >=2.0.0')", True, "semver-or-range"),
    ("semver_compare('1.3.0', '1.2.x')", False, "semver-wildcard"),
    ("semver_compare('garbage', '0.0.0')", True, "semver-bad-version-is-zero"),
    ("semver_compare('1.5.0', '1.x.x')", False, "semver-x-x-bumps-minor"),
    ("semver_compare('1.0.5', '1.x.x')", True, "semver-x-x-within-minor"),
    ("semver_compare('3.0.0', '!4.x.x')", False, "semver-negated-wildcard-is-and"),
    ("semver_compare('1.5.0', '1.0.0 - 2.0.0')", False, "semver-one-char-part-dropped"),
    ("parse_json('{\"a\": [1, true]}')", {"a": [1, True]}, "parse-json"),
    ("parse_yaml('a: 1')", {"yaml": "a: 1"}, "parse-yaml-uses-loader"),
    ("lookup(`{\"a\": 1}`, 'a')", 1, "lookup-object"),
    ("lookup(`{\"a\": 1}`, 'b')", None, "lookup-object-absent"),
    ("lookup(`[1, 2]`, `1`)", 2, "lookup-array"),
    ("lookup(`[1, 2]`, `5`)", None, "lookup-array-out-of-range"),
    ("items(`{\"b\": 1, \"a\": 2}`, 'k', 'v')", [{"k": "a", "v": 2}, {"k": "b", "v": 1}],
     "items-object-sorted"),
    ("items(`[\"x\"]`, 'i', 'v')", [{"i": 0.0, "v": "x"}], "items-array"),
    ("object_from_lists(`[\"a\", 1.5]`, `[1]`)", {"a": 1, "1.5": None}, "object-from-lists"),
    ("time_now()", "2024-03-04T05:06:07+02:00", "time-now-local-offset"),
    ("time_now_utc()", "2024-03-04T03:06:07Z", "time-now-utc"),
    ("time_since('', '2024-03-04T00:00:00Z', '2024-03-04T01:30:00Z')", "1h30m0s", "time-since"),
    ("time_since('', '2024-03-04T03:00:00Z', '')", "6m7s", "time-since-now"),
    ("time_add('2024-01-01T00:00:00Z', '90m')", "2024-01-01T01:30:00Z", "time-add"),
    ("time_parse('2006-01-02', '2024-02-29')", "2024-02-29T00:00:00Z", "time-parse-layout"),
    ("time_parse('Mon Jan _2 15:04:05 MST 2006', 'Tue Jan  2 03:04:05 UTC 2024')",
     "2024-01-02T03:04:05Z", "time-parse-ansic"),
    ("time_parse('1136239445', '1700000000')", "2023-11-14T22:13:20Z", "time-parse-unix"),
    ("time_to_cron('2024-01-02T03:04:05Z')", "4 3 2 1 2", "time-to-cron"),
    ("time_utc('2024-01-02T03:04:05+02:00')", "2024-01-02T01:04:05Z", "time-utc"),
    ("time_diff('2024-01-01T00:00:00Z', '2024-01-02T00:00:00.5Z')", "24h0m0.5s", "time-diff"),
    ("time_before('2024-01-01T00:00:00Z', '2024-01-02T00:00:00Z')", True, "time-before"),
    ("time_after('2024-01-01T00:00:00Z', '2024-01-02T00:00:00Z')", False, "time-after"),
    ("time_between('2024-01-02T00:00:00Z', '2024-01-01T00:00:00Z', '2024-01-03T00:00:00Z')",
     True, "time-between"),
    ("time_between('2024-01-01T00:00:00Z', '2024-01-01T00:00:00Z', '2024-01-03T00:00:00Z')",
     False, "time-between-strict"),
    ("time_truncate('2024-01-02T03:04:05Z', '1h')", "2024-01-02T03:00:00Z", "time-truncate"),
    ("image_normalize('nginx')", "docker.io/nginx:latest", "image-normalize-short"),
    ("image_normalize('ghcr.io/org/app:1.0')", "ghcr.io/org/app:1.0", "image-normalize-full"),
    ("image_normalize('localhost:5000/app@sha256:" + "a" * 64 + "')",
     "localhost:5000/app@sha256:" + "a" * 64, "image-normalize-digest"),
    ("is_external_url('https://example.com/x')", True, "external-url-public-name"),
    ("is_external_url('http://10.1.2.3:8080/')", False, "external-url-private-ip"),
    ("is_external_url('http://127.0.0.1/')", False, "external-url-loopback"),
    ("is_external_url('http://8.8.8.8/')", True, "external-url-public-ip"),
    ("is_external_url('http://my-svc:80/')", False, "external-url-single-label"),
    ("is_external_url('http://db.internal/')", False, "external-url-internal-suffix"),
    ("sha256('abc')", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", "sha256"),
    ("sha1('abc')", "a9993e364706816aba3e25717850c26c9cd0d89d", "sha1"),
    ("md5('abc')", "900150983cd24fb0d6963f7d28e17f72", "md5"),
]


@pytest.mark.parametrize(("expr", "expected"), [pytest.param(e, x, id=i) for e, x, i in ROWS])
def test_functions_return_kyverno_values(expr: str, expected: Any) -> None:
    assert run(expr) == expected


ERRORS = [
    ("compare(`1`, 'a')", "argument #1 is not of type string (got number)",
     "wrong-argument-type"),
    ("to_boolean('yes')", "lowercase argument must be 'true' or 'false'", "to-boolean-other"),
    ("add('1h', `1`)", "Types mismatch", "add-duration-number"),
    ("add('x', `1`)", "invalid operands", "add-invalid-operand"),
    ("sum(`[]`)", "at least one element", "sum-empty"),
    ("divide(`1`, `0`)", "Zero divisor passed", "divide-by-zero"),
    ("modulo(`1.5`, `1`)", "Non-integer argument(s) passed for modulo", "modulo-non-integer"),
    ("round(`1.5`, `-1`)", "out of bounds", "round-negative-places"),
    ("base64_decode('abc')", "illegal base64 data", "base64-bad-padding"),
    ("semver_compare('1.0.0', '>=x')", "Could not get version from string", "semver-bad-range"),
    ("semver_compare('1.0.0', '>=1.0')", "Could not parse Range", "semver-bad-range-version"),
    ("parse_json('{')", "JMESPath function 'parse_json'", "parse-json-invalid"),
    ("parse_json('[1e400]')", "into Go value of type float64", "parse-json-number-too-large"),
    ("lookup(`[1]`, `0.5`)", "argument #2: expected an integer number but got: 0.5",
     "lookup-fractional-index"),
    ("regex_match('(', 'x')", "error parsing regexp", "regex-syntax-error"),
    ("regex_match('(?=a)', 'a')", "invalid or unsupported Perl syntax", "regex-lookahead"),
    ("regex_match('(a)\\1', 'aa')", "invalid escape sequence", "regex-backreference"),
    ("regex_match('\\C', 'a')", "invalid escape sequence: `\\C`", "regex-any-byte-refused-as-go"),
    ("regex_match('a**', 'a')", "invalid nested repetition operator: `**`", "regex-go-error-wording"),
    ("time_add('yesterday', '1h')", "parsing time", "time-bad-time"),
    ("time_add('2024-01-01T00:00:00Z', '5')", 'time: missing unit in duration "5"',
     "time-bad-duration"),
    ("image_normalize('Bad Image')", "invalid reference format", "image-invalid"),
    ("is_external_url('no-scheme')", "missing scheme", "external-url-no-scheme"),
    ("x509_decode('nope')", "failed to decode PEM block", "x509-not-pem"),
    ("random('')", "no pattern provided", "random-empty"),
]


@pytest.mark.parametrize(("expr", "fragment"), [pytest.param(e, f, id=i) for e, f, i in ERRORS])
def test_functions_reject_bad_input(expr: str, fragment: str) -> None:
    with pytest.raises(JMESPathError) as info:
        run(expr)
    assert fragment in info.value.message


def test_functions_without_clock_refuse_now() -> None:
    evaluator = Evaluator(build_functions())
    with pytest.raises(JMESPathError, match="not supported: no clock"):
        evaluator.search("time_now()", None)
    assert evaluator.search("time_utc('2024-01-01T01:00:00+01:00')", None) == "2024-01-01T00:00:00Z"


def test_functions_without_yaml_loader_refuse_parse_yaml() -> None:
    with pytest.raises(JMESPathError, match="no YAML loader"):
        Evaluator(build_functions()).search("parse_yaml('a: 1')", None)


def test_parse_yaml_loader_error_is_a_function_error() -> None:
    def refuse(text: str) -> Any:
        raise ManifestError("invalid YAML: did not find expected ']'")

    with pytest.raises(JMESPathError, match="JMESPath function 'parse_yaml': invalid YAML"):
        Evaluator(build_functions(load_yaml=refuse)).search("parse_yaml('a: [1')", None)


def test_round_with_overflowing_places_is_nan() -> None:
    assert math.isnan(run("round(`2`, `400`)"))


def test_random_matches_its_pattern() -> None:
    value = run("random('[a-z]{4}-[0-9]{2}')")
    assert compile_re2("^[a-z]{4}-[0-9]{2}$").search(value)


def test_x509_decode_rsa_certificate() -> None:
    decoded = run("x509_decode(@)", PEM)
    assert decoded["Subject"]["CommonName"] == "test.example"
    assert decoded["Subject"]["Organization"] == ["Example"]
    assert decoded["Issuer"]["CommonName"] == "test.example"
    assert decoded["PublicKey"]["E"] == 65537
    assert decoded["PublicKey"]["N"].isdigit()
    assert decoded["NotBefore"] == "2024-01-01T00:00:00Z"
    assert decoded["NotAfter"] == "2025-01-01T00:00:00Z"
    assert decoded["SerialNumber"] == 42
    assert decoded["IsCA"] is True and decoded["MaxPathLen"] == -1
    assert decoded["DNSNames"] == ["test.example"]
    assert decoded["SignatureAlgorithm"] == 4 and decoded["PublicKeyAlgorithm"] == 1
    assert decoded["Version"] == 3


def test_x509_decode_rejects_other_blocks() -> None:
    with pytest.raises(ValueError, match="neither contains"):
        decode_pem("-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n")


@pytest.mark.parametrize(
    ("pattern", "python"),
    [
        pytest.param("a\\z", "a\\Z", id="end-of-text"),
        pytest.param("(?<n>x)", "(?P<n>x)", id="named-group"),
        pytest.param("\\Q.*\\E", "\\.\\*", id="quoted-literal"),
        pytest.param("a(?i)b", "a(?i:b)", id="mid-pattern-flag-scoped"),
        pytest.param("a{,2}", "a\\{,2}", id="brace-comma-literal"),
        pytest.param("\\d", "[0-9]", id="ascii-digit"),
    ],
)
def test_translate_re2_to_python(pattern: str, python: str) -> None:
    assert translate(pattern) == python


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        pytest.param("regex_match('^(a|a)*$', @)", False, id="ambiguous-alternation-under-star"),
        pytest.param("regex_match('^(ab|a|b)*$', @)", False, id="overlapping-alternation-under-star"),
        pytest.param("regex_match('a*a*a*a*a*a*b', @)", False, id="polynomial-stars"),
        pytest.param("regex_match('^(a+)+$', @)", False, id="nested-repetition"),
        pytest.param("regex_replace_all('(a|a)*c', @, 'x') == @", True, id="replace-with-hostile-pattern"),
    ],
)
def test_regex_hostile_patterns_run_in_linear_time(expr: str, expected: Any) -> None:
    text = "a" * 30_000 + "!"
    start = time.monotonic()
    assert run(expr, text) == expected
    assert time.monotonic() - start < 1.0


def test_regex_bounded_nesting_is_allowed() -> None:
    assert compile_re2("^[a-z0-9]([-a-z0-9]*[a-z0-9])?$").search("my-name")


def test_custom_specs_cover_every_kyverno_function() -> None:
    names = {spec.name for spec in custom_specs()}
    expected = {
        "compare", "equal_fold", "replace", "replace_all", "to_upper", "to_lower", "trim",
        "trim_prefix", "split", "regex_replace_all", "regex_replace_all_literal", "regex_match",
        "pattern_match", "label_match", "to_boolean", "add", "sum", "subtract", "multiply",
        "divide", "modulo", "round", "base64_decode", "base64_encode", "path_canonicalize",
        "truncate", "semver_compare", "parse_json", "parse_yaml", "lookup", "items",
        "object_from_lists", "random", "x509_decode", "time_since", "time_now", "time_now_utc",
        "time_add", "time_parse", "time_to_cron", "time_utc", "time_diff", "time_before",
        "time_after", "time_between", "time_truncate", "image_normalize", "is_external_url",
        "sha256", "sha1", "md5",
    }
    assert names == expected
