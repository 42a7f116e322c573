"""Plain YAML scalars as go-yaml v2 reads them (resolve.go): YAML 1.1 booleans with ``y``/``n``,
``0o``/``0x``/``0b`` and leading-zero octal integers, timestamps kept as text, no base-60
numbers. Shared by the libyaml loader (:mod:`scanner.yamldoc.loader`) and the block reader
(:mod:`scanner.yamldoc.block`), so that both give every scalar the same value."""

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
# the most significant digits a 64-bit integer has in each base (beyond: out of range unread)
_MAX_DIGITS = {2: 64, 8: 22, 10: 20, 16: 16}


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
        if number is not None:
            return INT, number
    if _FLOAT_TEXT.fullmatch(plain):
        return _float_value(plain)
    return STR, None


def _go_int(plain: str) -> int | None:
    """The value of integer text as Go's ``strconv.ParseInt``/``ParseUint`` (base 0, 64 bits)
    read it, or None when it is out of their range: go-yaml then tries it as a float, and
    keeps it as text when that fails too (every integer of a document fits in 64 bits).

    The digits are counted before any conversion: no integer text is ever converted whole
    whatever its length (Python refuses decimal text beyond 4,300 digits, and any long
    conversion costs time quadratic in its length)."""
    digits = plain.lstrip("+-")
    if len(digits) > 1 and digits[0] == "0" and digits[1] not in "bBoOxX":
        base, body = 8, digits
    elif digits[:2] in ("0x", "0X", "0o", "0O", "0b", "0B"):
        base, body = {"x": 16, "o": 8, "b": 2}[digits[1].lower()], digits[2:]
    else:
        base, body = 10, digits
    if len(body.lstrip("0")) > _MAX_DIGITS[base]:
        return None
    number = int(body, base)
    if plain[0] == "-":
        number = -number
    if INT64_MIN <= number <= INT64_MAX or (0 <= number <= _UINT64_MAX and plain[0] != "+"):
        return number
    return None


def _float_value(text: str) -> tuple[str, Any]:
    try:
        number = float(text)
    except ValueError:
        return STR, None
    return (STR, None) if math.isinf(number) else (FLOAT, number)  # Go refuses overflow


# the tag and value (None for text) of each plain scalar seen so far: manifests repeat their
# values (kinds, booleans, ports, policies), and a look-up is cheaper than resolving again. One
# entry holds both, so that a reader in another thread emptying the cache never splits them.
PLAIN: dict[str, tuple[str, Any]] = {}
_PLAIN_LIMIT = 65_536


def resolved(text: str) -> tuple[str, Any]:
    """The tag of a plain scalar and its value (None for ``STR``: the value is the text)."""
    found = PLAIN.get(text)
    if found is None:
        found = resolve_plain(text)
        if len(PLAIN) >= _PLAIN_LIMIT:
            PLAIN.clear()
        PLAIN[text] = found
    return found
