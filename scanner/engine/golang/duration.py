"""Go ``time.ParseDuration`` and ``Duration.String`` (spec 7.8), in integer nanoseconds."""

from __future__ import annotations

from functools import lru_cache

from scanner.engine.golang.time import quote
from scanner.errors import EngineError

NANOSECOND = 1
MICROSECOND = 1000
MILLISECOND = 1000 * MICROSECOND
SECOND = 1000 * MILLISECOND
MINUTE = 60 * SECOND
HOUR = 60 * MINUTE

_UNITS = {
    "ns": NANOSECOND,
    "us": MICROSECOND,
    "µs": MICROSECOND,  # U+00B5 micro sign
    "μs": MICROSECOND,  # U+03BC Greek mu
    "ms": MILLISECOND,
    "s": SECOND,
    "m": MINUTE,
    "h": HOUR,
}
_LIMIT = 1 << 63  # Go's ParseDuration accumulates in uint64 and allows up to 2**63


class DurationError(EngineError, ValueError):
    """A text Go's ``time.ParseDuration`` rejects; the message is Go's."""


def parse_duration(text: str) -> int | None:
    """Nanoseconds of a Go duration string, or None when it is not one.

    ``"0"`` is a valid duration; any other bare number lacks a unit and is invalid.
    """
    if not isinstance(text, str) or not text:
        return None
    return _parse(text)


@lru_cache(maxsize=4096)
def _parse(text: str) -> int | None:
    try:
        return parse_duration_strict(text)
    except DurationError:
        return None


def _invalid(text: str) -> DurationError:
    # made where raised, never kept in a local: a raised exception held by its own frame
    # would keep the frames of the whole call (and what they hold) alive until a collection
    return DurationError(f"time: invalid duration {quote(text)}")


def _is_digit(ch: str) -> bool:
    return "0" <= ch <= "9"


def _fraction(digits: str) -> tuple[int, float]:
    """Go's ``leadingFraction``: the digits as an integer and its float64 scale, ignoring
    the digits that would overflow."""
    value, scale = 0, 1.0
    for ch in digits:
        value10 = value * 10 + int(ch)
        if value > (_LIMIT - 1) // 10 or value10 > _LIMIT:
            break
        value, scale = value10, scale * 10
    return value, scale


def parse_duration_strict(text: str) -> int:
    """Go ``time.ParseDuration``: nanoseconds, or ``DurationError`` with Go's message
    (``time: invalid duration "x"``, ``time: missing unit in duration "5"``,
    ``time: unknown unit "x" in duration "5x"``)."""
    s, neg = text, False
    if s and s[0] in "+-":
        neg, s = s[0] == "-", s[1:]
    if s == "0":
        return 0
    if not s:
        raise _invalid(text)
    total, i, n = 0, 0, len(s)
    while i < n:
        if not (s[i] == "." or _is_digit(s[i])):
            raise _invalid(text)
        start = i
        while i < n and _is_digit(s[i]):
            i += 1
        value = int(s[start:i] or "0")
        if value > _LIMIT:
            raise _invalid(text)
        has_int = i > start
        frac, scale, has_frac = 0, 1.0, False
        if i < n and s[i] == ".":
            start = i = i + 1
            while i < n and _is_digit(s[i]):
                i += 1
            frac, scale = _fraction(s[start:i])
            has_frac = i > start
        if not has_int and not has_frac:
            raise _invalid(text)
        start = i
        while i < n and not (s[i] == "." or _is_digit(s[i])):
            i += 1
        if i == start:
            raise DurationError(f"time: missing unit in duration {quote(text)}")
        unit = _UNITS.get(s[start:i])
        if unit is None:
            raise DurationError(
                f"time: unknown unit {quote(s[start:i])} in duration {quote(text)}")
        if value > _LIMIT // unit:
            raise _invalid(text)
        value *= unit
        if frac > 0:
            # Go adds the fraction in float64, truncated (nanosecond exact up to hours)
            value += int(float(frac) * (float(unit) / scale))
        total += value
        if value > _LIMIT or total > _LIMIT:
            raise _invalid(text)
    if neg:
        return -total
    if total > _LIMIT - 1:
        raise _invalid(text)
    return total


def _frac(v: int, prec: int) -> tuple[str, int]:
    digits = []
    printed = False
    for _ in range(prec):
        digit = v % 10
        printed = printed or digit != 0
        if printed:
            digits.append(str(digit))
        v //= 10
    text = "".join(reversed(digits))
    return ("." + text if printed else ""), v


def format_duration(ns: int) -> str:
    """Go ``Duration.String``: ``1h2m3.5s``, ``500ms``, ``1.5µs``, ``0s``."""
    if ns == 0:
        return "0s"
    neg = ns < 0
    u = -ns if neg else ns
    if u < SECOND:
        if u < MICROSECOND:
            prec, unit = 0, "ns"
        elif u < MILLISECOND:
            prec, unit = 3, "µs"
        else:
            prec, unit = 6, "ms"
        frac, u = _frac(u, prec)
        out = f"{u}{frac}{unit}"
    else:
        frac, u = _frac(u, 9)
        out = f"{u % 60}{frac}s"
        u //= 60
        if u > 0:
            out = f"{u % 60}m" + out
            u //= 60
            if u > 0:
                out = f"{u}h" + out
    return "-" + out if neg else out
