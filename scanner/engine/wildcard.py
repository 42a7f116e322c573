"""Kyverno's wildcard matching: ``*`` any run of characters, ``?`` exactly one (spec 2.9)."""

from __future__ import annotations

import re
from functools import lru_cache


def has_wildcard(text: str) -> bool:
    return "*" in text or "?" in text


def _segment(text: str) -> str:
    """A run of the pattern between stars: literals, and ``?`` for any one character."""
    return "".join("." if ch == "?" else re.escape(ch) for ch in text)


@lru_cache(maxsize=8192)
def _compile(pattern: str) -> re.Pattern[str] | None:
    """The pattern as a regular expression that cannot backtrack exponentially.

    Like Kyverno's matcher, a star is never reconsidered once the text after it has been
    found: every star but the last takes the shortest run that lets its following segment
    match (an atomic lazy group); only the last star backtracks, against the end of the text.
    """
    if not has_wildcard(pattern):
        return None
    if "*" not in pattern:
        return re.compile(_segment(pattern), re.DOTALL)
    first, *middle, last = pattern.split("*")
    parts = [_segment(first)]
    parts += [f"(?>.*?{_segment(s)})" for s in middle if s]
    parts.append(f".*{_segment(last)}")
    return re.compile("".join(parts), re.DOTALL)


def match(pattern: str, text: str) -> bool:
    """Whole-text wildcard match of ``pattern`` against ``text`` (case-sensitive)."""
    if pattern == "*":
        return True
    regex = _compile(pattern)
    if regex is None:
        return pattern == text
    return regex.fullmatch(text) is not None
