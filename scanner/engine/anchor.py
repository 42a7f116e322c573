"""Anchor syntax of pattern keys: ``(k)`` ``<(k)`` ``=(k)`` ``X(k)`` ``^(k)`` ``+(k)`` (spec 4.5)."""

from __future__ import annotations

import re
from enum import Enum
from functools import lru_cache


class Anchor(Enum):
    PLAIN = ""
    CONDITIONAL = "("
    GLOBAL = "<"
    EQUALITY = "="
    NEGATION = "X"
    EXISTENCE = "^"
    ADD_IF_NOT_PRESENT = "+"


_PREFIXES = {
    "": Anchor.CONDITIONAL,
    "<": Anchor.GLOBAL,
    "=": Anchor.EQUALITY,
    "X": Anchor.NEGATION,
    "^": Anchor.EXISTENCE,
    "+": Anchor.ADD_IF_NOT_PRESENT,
}
# as Kyverno's RE2 expression, whose "." does not match a newline
_ANCHOR = re.compile(r"([+<=X^]?)\((.+)\)")
# something that looks like an anchor but has a prefix Kyverno does not know, e.g. "!(name)"
_LOOKALIKE = re.compile(r"([^\w\s(])\((.+)\)", re.DOTALL)


@lru_cache(maxsize=4096)
def parse_key(key: str) -> tuple[Anchor, str]:
    """The anchor of a pattern key and its bare key; ``(Anchor.PLAIN, key)`` for plain keys."""
    m = _ANCHOR.fullmatch(key.strip())
    if m is None:
        return Anchor.PLAIN, key
    return _PREFIXES[m.group(1)], m.group(2)


def unknown_anchor(key: str) -> str | None:
    """The unknown prefix if ``key`` looks like an anchor Kyverno does not define."""
    stripped = key.strip()
    if _ANCHOR.fullmatch(stripped):
        return None
    m = _LOOKALIKE.fullmatch(stripped)
    return m.group(1) if m else None


def strip_anchor(key: str) -> str:
    return parse_key(key)[1]
