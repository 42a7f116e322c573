"""Plain YAML scalars as go-yaml v2 reads them (resolve.go): YAML 1.1 booleans with ``y``/``n``,
``0o``/``0x``/``0b`` and leading-zero octal integers, timestamps kept as text, no base-60
numbers. Shared by the libyaml loader (:mod:`scanner.yamldoc`) and the block reader
(:mod:`scanner.yamlblock`), so that both give every scalar the same value."""

from __future__ import annotations

import math
import re
from typing import Any

STR, INT, BOOL, NULL, FLOAT, MAP, SEQ, MERGE, BINARY = (
    f"tag:yaml.org,2002:{name}"
    for name in ("str", "int", "bool", "null", "float", "map", "seq", "merge", "binary"))

# go-yaml v2's words (resolve.go): YAML 1.1 booleans including y/n, nulls, infinities, NaN
_WORDS: dict[str, tuple[str, Any]] = {
    **dict.fromkeys(("y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"), (BOOL, True)),
    **dict.fromkeys(("n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"), (BOOL, False)),
    **dict.fromkeys(("", "~", "null", "Null", "NULL"), (NULL, None)),
    **dict.fromkeys((".nan", ".NaN", ".NAN"), (FLOAT, math.nan)),
    **dict.fromkeys((".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"), (FLOAT, math.inf)),
    **dict.fromkeys(("-.inf", "-.Inf", "-.INF"), (FLOAT, -math.inf)),
    "<<": (MERGE, "<<"),
}
# Go's strconv.ParseInt with base 0 (after go-yaml drops every "_"): 0x, 0o, 0b, leading-0 octal
_INT_TEXT = re.compile(r"[-+]?(?:0[bB][01]+|0[oO][0-7]+|0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)")
_FLOAT_TEXT = re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?")
_NUMBER_START = frozenset("+-0123456789")
INT64_MIN, INT64_MAX, _UINT64_MAX = -(2**63), 2**63 - 1, 2**64 - 1


def resolve_plain(text: str) -> tuple[str, Any]:
    """The tag and value go-yaml v2 gives a plain scalar (resolve.go). Timestamps stay text,
    as go-yaml v2 decodes them into an untyped value; no base-60 numbers."""
    word = _WORDS.get(text)
    if word is not None:
        return word
    first = text[:1]
    if first == ".":
        return _float_value(text)
    if first not in _NUMBER_START:
        return STR, None
    plain = text.replace("_", "")
    if _INT_TEXT.fullmatch(plain):
        number = _go_int(plain)
        if INT64_MIN <= number <= INT64_MAX or (0 <= number <= _UINT64_MAX and plain[0] != "+"):
            return INT, number
        if not _FLOAT_TEXT.fullmatch(plain):
            return INT, number  # a hexadecimal, octal or binary number beyond 64 bits
    if _FLOAT_TEXT.fullmatch(plain):
        return _float_value(plain)
    return STR, None


def _go_int(plain: str) -> int:
    digits = plain.lstrip("+-")
    if len(digits) > 1 and digits[0] == "0" and digits[1] not in "bBoOxX":
        number = int(digits, 8)
    else:
        number = int(digits, 0)
    return -number if plain[0] == "-" else number


def _float_value(text: str) -> tuple[str, Any]:
    try:
        number = float(text)
    except ValueError:
        return STR, None
    return (STR, None) if math.isinf(number) else (FLOAT, number)  # Go refuses overflow


# the tags (and values, but for text) of plain scalars seen so far: manifests repeat their
# values (kinds, booleans, ports, policies), and a look-up is cheaper than resolving again
TAGS: dict[str, str] = {}
VALUES: dict[str, Any] = {}
_TAGS_LIMIT = 65_536


def remember(text: str) -> str:
    tag, value = resolve_plain(text)
    if len(TAGS) >= _TAGS_LIMIT:
        TAGS.clear()
        VALUES.clear()
    TAGS[text] = tag
    if tag != STR:
        VALUES[text] = value
    return tag


def tag_of(text: str) -> str:
    """The tag of a plain scalar; its value is ``text`` for ``STR``, else ``VALUES[text]``."""
    tag = TAGS.get(text)
    return remember(text) if tag is None else tag
