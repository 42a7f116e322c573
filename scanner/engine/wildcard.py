"""Kyverno's wildcard matching: ``*`` any run of characters, ``?`` exactly one (spec 2.9)."""

from __future__ import annotations

import re
from functools import lru_cache


def has_wildcard(text: str) -> bool:
    return "*" in text or "?" in text


@lru_cache(maxsize=8192)
def _compile(pattern: str) -> re.Pattern[str] | None:
    if not has_wildcard(pattern):
        return None
    parts = []
    for ch in pattern:
        if ch == "*":
            if not parts or parts[-1] != ".*":
                parts.append(".*")
        elif ch == "?":
            parts.append(".")
        else:
            parts.append(re.escape(ch))
    return re.compile("".join(parts), re.DOTALL)


def match(pattern: str, text: str) -> bool:
    """Whole-text wildcard match of ``pattern`` against ``text`` (case-sensitive)."""
    if pattern == "*":
        return True
    regex = _compile(pattern)
    if regex is None:
        return pattern == text
    return regex.fullmatch(text) is not None
