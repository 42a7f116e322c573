"""Kyverno's custom JMESPath functions (spec 7.7) and the registry builder.

``build_functions(now=..., load_yaml=..., rng=...)`` returns the registry an ``Evaluator``
uses. The engine reads no clock, YAML parser or entropy of its own: callers inject them.
Without a clock, the functions needing "now" fail with a "not supported" error; without a
YAML loader, ``parse_yaml`` does. ``random`` draws from ``rng`` (a seeded default, so scans
are reproducible).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import math
import random as _random
from collections.abc import Callable
from datetime import datetime
from decimal import Decimal
from typing import Any

from scanner.engine import wildcard
from scanner.engine.budget import active
from scanner.engine.golang import fmt as gofmt
from scanner.engine.golang import path as gopath
from scanner.engine.golang import regexp as re2
from scanner.engine.golang import semver
from scanner.engine.imageref import ImageReferenceError, parse_image
from scanner.engine.jmespath.arithmetic import SPECS as ARITHMETIC_SPECS
from scanner.engine.jmespath.extra import build_extra_specs
from scanner.engine.jmespath.interpreter import deep_equal
from scanner.engine.jmespath.registry import (
    STANDARD_FUNCTION_NAMES,
    FunctionSpec,
    KyvernoFunctions,
    as_int,
    error,
)
from scanner.engine.jmespath.time_functions import build_time_specs

S, N, OBJ, A = ("string",), ("number",), ("object",), ("array",)
SN = ("string", "number")
_INT64_LIMIT = 2**63


def float64_text(value: float) -> str:
    """Go ``strconv.FormatFloat(v, 'f', -1, 64)``: shortest round-trip digits, never an exponent."""
    if not math.isfinite(value):
        return {math.inf: "+Inf", -math.inf: "-Inf"}.get(value, "NaN")
    return format(Decimal(repr(value)).normalize(), "f")


def as_text(name: str, index: int, value: Any, kind: str = "String or Real") -> str:
    """Kyverno's ``ifaceToString``: strings as is, booleans, numbers at full float64 precision."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if gofmt.is_number(value):
        return float64_text(float(value))
    raise error(name, f"argument #{index} is not of type {kind}")


def _regex(name: str, pattern: str) -> re2.GoRegexp:
    try:
        return re2.compile_re2(pattern)
    except re2.RegexError as exc:
        raise error(name, str(exc)) from None


def _regex_replace(name: str, a: list[Any], literal: bool) -> str:
    """Go ``ReplaceAllString``/``ReplaceAllLiteralString``, stopped before its result
    outgrows the rule's string limit."""
    regex = _regex(name, a[0])
    src, repl = as_text(name, 2, a[1]), as_text(name, 3, a[2])
    budget = active()
    try:
        return regex.replace_all(src, repl, literal, budget.limits.string_length)
    except OverflowError as exc:
        budget.check_string(exc.args[0], f"{name}()")
        raise


def _simple_case(text: str, upper: bool) -> str:
    out = []
    for ch in text:
        mapped = ch.upper() if upper else ch.lower()
        out.append(mapped if len(mapped) == 1 else ("i" if ch == "\u0130" else ch))
    return "".join(out)


def _equal_fold(a: str, b: str) -> bool:
    if len(a) != len(b):
        return False
    return all(x == y or _simple_case(x, False) == _simple_case(y, False)
               or _simple_case(x, True) == _simple_case(y, True) for x, y in zip(a, b, strict=True))


def _split(text: str, sep: str) -> list[str]:
    return list(text) if sep == "" else text.split(sep)


def _replace(a: list[Any]) -> str:
    """Go ``strings.Replace`` with ``int(n)``: a negative count, or one beyond int64, is all."""
    n = a[3]
    count = int(n) if -_INT64_LIMIT <= n < _INT64_LIMIT else -1
    return a[0].replace(a[1], a[2], count if count >= 0 else -1)


def _to_boolean(a: list[Any]) -> bool:
    lowered = a[0].lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    raise error("to_boolean",
                f"lowercase argument must be 'true' or 'false' (provided: '{a[0]}')")


def _base64_decode(a: list[Any]) -> str:
    text = a[0].replace("\r", "").replace("\n", "")
    try:
        raw = base64.b64decode(text.encode("utf-8", "surrogateescape"), validate=True)
    except (binascii.Error, ValueError) as exc:
        raise error("base64_decode", f"illegal base64 data: {exc}") from None
    return raw.decode("utf-8", "surrogateescape")


def _bytes(text: str) -> bytes:
    return text.encode("utf-8", "surrogateescape")


def clean_path(path: str) -> str:
    """Go ``filepath.Join(path)`` on Unix: lexical clean; empty stays empty."""
    return gopath.join(path)


def _semver_compare(a: list[Any]) -> bool:
    try:
        contains = semver.parse_range(a[1])
    except semver.RangeError as exc:
        raise error("semver_compare", str(exc)) from None
    return contains(semver.parse_version_or_zero(a[0]))


def _reject_constant(constant: str) -> Any:
    raise ValueError(f"invalid character {constant!r}")


def _within_float64(text: str, number: float) -> float:
    """A decoded JSON number, refused (as Go does) when a float64 cannot hold it."""
    if not math.isfinite(float(text)):
        raise ValueError(f"cannot unmarshal number {text} into Go value of type float64")
    return number


def _parse_json(a: list[Any]) -> Any:
    try:
        return json.loads(a[0], parse_constant=_reject_constant,
                          parse_float=lambda text: _within_float64(text, float(text)),
                          parse_int=lambda text: _within_float64(text, int(text)))
    except ValueError as exc:
        raise error("parse_json", str(exc)) from None


def _lookup(a: list[Any]) -> Any:
    coll, key = a
    if isinstance(coll, dict):
        if not isinstance(key, str):
            raise error("lookup", "argument #2 is not of type String")
        return coll.get(key)
    if isinstance(key, str):
        raise error("lookup", "argument #2 is not of type Number")
    index = as_int("lookup", float(key), "argument #2")
    return coll[index] if 0 <= index < len(coll) else None


def _items(a: list[Any]) -> list[dict[str, Any]]:
    coll, key_name, value_name = a
    if isinstance(coll, dict):
        return [{key_name: k, value_name: coll[k]} for k in sorted(coll, key=_bytes)]
    return [{key_name: float(i), value_name: v} for i, v in enumerate(coll)]


def _object_from_lists(a: list[Any]) -> dict[str, Any]:
    keys, values = a
    out: dict[str, Any] = {}
    for i, key in enumerate(keys):
        out[as_text("object_from_lists", 1, key, "StringArray")] = (
            values[i] if i < len(values) else None)
    return out


def _label_match(a: list[Any]) -> bool:
    selector, labels = a
    return all(k in labels and deep_equal(labels[k], v) for k, v in selector.items())


def _image_normalize(a: list[Any]) -> str:
    try:
        return parse_image(a[0]).reference
    except ImageReferenceError as exc:
        raise error("image_normalize", str(exc)) from None


def _to_number(a: list[Any]) -> Any:
    value = a[0]
    if gofmt.is_number(value):
        return value
    if isinstance(value, str):
        if "_" in value or value != value.strip():
            return None
        try:
            return float(value)
        except ValueError:
            return None
    return None


def _string_specs() -> tuple[FunctionSpec, ...]:
    return (
        FunctionSpec("compare", (S, S), "number", "compares two strings lexicographically",
                     lambda a: (_bytes(a[0]) > _bytes(a[1])) - (_bytes(a[0]) < _bytes(a[1]))),
        FunctionSpec("equal_fold", (S, S), "bool", "allows comparing two strings for "
                     "equivalency where the only differences are letter cases",
                     lambda a: _equal_fold(a[0], a[1])),
        FunctionSpec("replace", (S, S, S, N), "string", "replaces a specified number of "
                     "instances of the source string with the replacement string in a parent ",
                     _replace),
        FunctionSpec("replace_all", (S, S, S), "string", "replace all instances of one string "
                     "with another in an overall parent string",
                     lambda a: a[0].replace(a[1], a[2])),
        FunctionSpec("to_upper", (S,), "string", "takes in a string and outputs the same "
                     "string with all upper-case letters", lambda a: _simple_case(a[0], True)),
        FunctionSpec("to_lower", (S,), "string", "takes in a string and outputs the same "
                     "string with all lower-case letters", lambda a: _simple_case(a[0], False)),
        FunctionSpec("trim", (S, S), "string", "trims both ends of the source string by "
                     "characters appearing in the second string", lambda a: a[0].strip(a[1])),
        FunctionSpec("trim_prefix", (S, S), "string", "trims the second string prefix from "
                     "the first string if the first string starts with the prefix",
                     lambda a: a[0].removeprefix(a[1])),
        FunctionSpec("split", (S, S), "array[string]", "splits the first string when the "
                     "second string is found and converts it into an array ",
                     lambda a: _split(a[0], a[1])),
        FunctionSpec("regex_replace_all", (S, SN, SN), "string",
                     "converts all parameters to string",
                     lambda a: _regex_replace("regex_replace_all", a, literal=False)),
        FunctionSpec("regex_replace_all_literal", (S, SN, SN), "string",
                     "converts all parameters to string",
                     lambda a: _regex_replace("regex_replace_all_literal", a, literal=True)),
        FunctionSpec("regex_match", (S, SN), "bool", "first string is the regular exression "
                     "which is compared with second input which can be a number or string",
                     lambda a: _regex("regex_match", a[0]).matches(as_text("regex_match", 2, a[1]))),
        FunctionSpec("pattern_match", (S, SN), "bool", "'*' matches zero or more alphanumeric "
                     "characters, '?' matches a single alphanumeric character",
                     lambda a: wildcard.match(a[0], as_text("pattern_match", 2, a[1]))),
        FunctionSpec("label_match", (OBJ, OBJ), "bool", "object arguments must be enclosed in "
                     "backticks; ex. `{{request.object.spec.template.metadata.labels}}`",
                     _label_match),
        FunctionSpec("to_boolean", (S,), "bool", "It returns true or false for any string, "
                     "such as 'True', 'TruE', 'False', 'FAlse', 'faLSE', etc.", _to_boolean),
        FunctionSpec("base64_decode", (S,), "string", "decodes a base 64 string",
                     _base64_decode),
        FunctionSpec("base64_encode", (S,), "string", "encodes a regular, plaintext and "
                     "unencoded string to base64",
                     lambda a: base64.b64encode(_bytes(a[0])).decode("ascii")),
        FunctionSpec("path_canonicalize", (S,), "string", "normalizes or canonicalizes a given "
                     "path by removing excess slashes", lambda a: clean_path(a[0])),
        FunctionSpec("truncate", (S, N), "string", "length argument must be enclosed in "
                     "backticks; ex. \"{{request.object.metadata.name | truncate(@, `9`)}}\"",
                     lambda a: a[0][:max(0, int(a[1]) if math.isfinite(a[1]) else 0)]),
        FunctionSpec("semver_compare", (S, S), "bool", "compares two strings which comply with "
                     "the semantic versioning schema and outputs a boolean response as to the "
                     "position of the second relative to the first", _semver_compare),
        FunctionSpec("parse_json", (S,), "any", "decodes a valid JSON encoded string to the "
                     "appropriate type. Opposite of `to_string` function", _parse_json),
        FunctionSpec("lookup", (("object", "array"), SN), "any", "returns the value "
                     "corresponding to the given key/index in the given object/array", _lookup),
        FunctionSpec("items", (("object", "array"), S, S), "array", "converts a map or array "
                     "to an array of objects where each key:value is an item in the array",
                     _items),
        FunctionSpec("object_from_lists", (A, A), "object", "converts a pair of lists "
                     "containing keys and values to an object", _object_from_lists),
        FunctionSpec("image_normalize", (S,), "string", "normalizes an image reference",
                     _image_normalize),
        FunctionSpec("sha256", (S,), "string", "generate unique hash of the string (SHA-256)",
                     lambda a: hashlib.sha256(_bytes(a[0])).hexdigest()),
        FunctionSpec("sha1", (S,), "string", "generate unique hash of the string (SHA-1)",
                     lambda a: hashlib.sha1(_bytes(a[0])).hexdigest()),
        FunctionSpec("md5", (S,), "string", "generate unique hash of the string (MD5)",
                     lambda a: hashlib.md5(_bytes(a[0])).hexdigest()),
    )


# Standard functions whose Go behaviour differs from Python's jmespath.
_STANDARD_OVERRIDES = (
    FunctionSpec("to_string", (("any",),), "string", "", lambda a: gofmt.to_text(a[0])),
    FunctionSpec("to_number", (("any",),), "number", "", _to_number),
)


def build_functions(
    now: Callable[[], datetime] | None = None,
    load_yaml: Callable[[str], Any] | None = None,
    rng: _random.Random | None = None,
) -> KyvernoFunctions:
    """The registry of standard and Kyverno functions with the given clock, YAML loader, RNG."""
    return KyvernoFunctions(_STANDARD_OVERRIDES + custom_specs(now, load_yaml, rng))


def custom_specs(
    now: Callable[[], datetime] | None = None,
    load_yaml: Callable[[str], Any] | None = None,
    rng: _random.Random | None = None,
) -> tuple[FunctionSpec, ...]:
    """Kyverno's custom functions (what ``jp function`` lists), sorted by name."""
    specs = (_string_specs() + ARITHMETIC_SPECS + build_time_specs(now)
             + build_extra_specs(load_yaml, rng or _random.Random(0)))
    return tuple(sorted(specs, key=lambda s: s.name))


FUNCTION_NAMES = frozenset(STANDARD_FUNCTION_NAMES | {s.name for s in custom_specs()})
