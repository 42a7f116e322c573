"""Go ``time.ParseDuration`` and ``Duration.String`` (spec 7.8), in integer nanoseconds."""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache

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
_MAX = 2**63 - 1


def parse_duration(text: str) -> int | None:
    """Nanoseconds of a Go duration string, or None when it is not one.

    ``"0"`` is a valid duration; any other bare number lacks a unit and is invalid.
    """
    if not isinstance(text, str) or not text:
        return None
    return _parse(text)


@lru_cache(maxsize=4096)
def _parse(text: str) -> int | None:
    s = text
    neg = False
    if s[0] in "+-":
        neg = s[0] == "-"
        s = s[1:]
    if s == "0":
        return 0
    if not s:
        return None
    total = Fraction(0)
    i, n = 0, len(s)
    while i < n:
        start = i
        while i < n and s[i].isdigit() and s[i].isascii():
            i += 1
        int_part = s[start:i]
        frac_part = ""
        if i < n and s[i] == ".":
            i += 1
            fstart = i
            while i < n and s[i].isdigit() and s[i].isascii():
                i += 1
            frac_part = s[fstart:i]
        if not int_part and not frac_part:
            return None
        ustart = i
        while i < n and s[i] != "." and not (s[i].isdigit() and s[i].isascii()):
            i += 1
        unit = _UNITS.get(s[ustart:i])
        if unit is None:
            return None
        value = Fraction(int(int_part or "0"))
        if frac_part:
            value += Fraction(int(frac_part), 10 ** len(frac_part))
        total += value * unit
        if total > _MAX + 1:
            return None
    ns = int(total)  # truncates toward zero like Go's integer arithmetic
    if ns > _MAX and not (neg and ns == _MAX + 1):
        return None
    return -ns if neg else ns


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
