"""Kyverno's ``time_*`` JMESPath functions (spec 7.7). "Now" comes from an injected clock."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime
from typing import Any

from scanner.engine.golang import time as gotime
from scanner.engine.golang.duration import DurationError, format_duration, parse_duration_strict
from scanner.engine.jmespath.interpreter import JMESPathError
from scanner.engine.jmespath.registry import FunctionSpec, error

Clock = Callable[[], datetime]
_INTEGER = re.compile(r"[+-]?\d+", re.ASCII)


_GO_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r",
               "\t": "\\t", "\v": "\\v", '"': '\\"', "\\": "\\\\"}


def _strconv_quote(text: str) -> str:
    """Go ``strconv.Quote`` (as in ``strconv`` error messages)."""
    out = []
    for ch in text:
        if ch in _GO_ESCAPES:
            out.append(_GO_ESCAPES[ch])
        elif ch.isprintable():
            out.append(ch)
        elif ord(ch) < 0x80:
            out.append(f"\\x{ord(ch):02x}")
        else:
            out.append(f"\\u{ord(ch):04x}" if ord(ch) < 0x10000 else f"\\U{ord(ch):08x}")
    return '"' + "".join(out) + '"'


def _time(text: str, layout: str = gotime.RFC3339) -> gotime.GoTime:
    """Go ``time.Parse``; its error reaches the user as is (Kyverno adds no prefix)."""
    try:
        return gotime.parse(layout or gotime.RFC3339, text)
    except gotime.TimeParseError as exc:
        raise JMESPathError(str(exc)) from None


def _duration(text: str) -> int:
    """Go ``time.ParseDuration``; its error reaches the user as is."""
    try:
        return parse_duration_strict(text)
    except DurationError as exc:
        raise JMESPathError(str(exc)) from None


def _parse_int(text: str) -> int:
    """Go ``strconv.ParseInt(text, 10, 64)``; its error reaches the user as is."""
    if not _INTEGER.fullmatch(text):
        raise JMESPathError(f"strconv.ParseInt: parsing {_strconv_quote(text)}: invalid syntax")
    value = int(text)
    if not -(2**63) <= value < 2**63:
        raise JMESPathError(
            f"strconv.ParseInt: parsing {_strconv_quote(text)}: value out of range")
    return value


def _now(name: str, now: Clock | None) -> gotime.GoTime:
    if now is None:
        raise error(name, "not supported: no clock is available to read the current time")
    return gotime.GoTime.from_datetime(now())


def build_time_specs(now: Clock | None) -> tuple[FunctionSpec, ...]:
    """The time functions; those reading the current time use ``now``."""

    def since(a: list[Any]) -> str:
        layout, t1, t2 = a
        start = _time(t1, layout)
        end = _time(t2, layout) if t2 else _now("time_since", now)
        return format_duration(end.sub(start))

    def parse(a: list[Any]) -> str:
        layout, value = a
        if _INTEGER.fullmatch(layout) and -(2**63) <= int(layout) < 2**63:
            return gotime.GoTime(_parse_int(value) * gotime.NS).rfc3339()
        return _time(value, layout).rfc3339()

    def to_cron(a: list[Any]) -> str:
        _, month, day, hour, minute, _, weekday = _time(a[0]).fields()
        return f"{minute} {hour} {day} {month} {weekday}"

    def between(a: list[Any]) -> bool:
        t, start, end = (_time(x).unix_ns for x in a)
        return start < t < end

    s = "string"
    return (
        FunctionSpec("time_since", ((s,), (s,), (s,)), s,
                     "calculate the difference between a start and end period of time where "
                     "the end may either be a static definition or the then-current time", since),
        FunctionSpec("time_now", (), s, "returns current time in RFC 3339 format",
                     lambda a: _now("time_now", now).rfc3339()),
        FunctionSpec("time_now_utc", (), s, "returns current UTC time in RFC 3339 format",
                     lambda a: _now("time_now_utc", now).utc().rfc3339()),
        FunctionSpec("time_to_cron", ((s,),), s,
                     "converts a time (RFC 3339) to a cron expression (string).", to_cron),
        FunctionSpec("time_add", ((s,), (s,)), s,
                     "adds duration (second string) to a time value (first string)",
                     lambda a: _time(a[0]).add(_duration(a[1])).rfc3339()),
        FunctionSpec("time_parse", ((s,), (s,)), s,
                     "changes a time value of a given layout to RFC 3339", parse),
        FunctionSpec("time_utc", ((s,),), s,
                     "calcutes time in UTC from a given time in RFC 3339 format",
                     lambda a: _time(a[0]).utc().rfc3339()),
        FunctionSpec("time_diff", ((s,), (s,)), s,
                     "calculate the difference between a start and end date in RFC3339 format",
                     lambda a: format_duration(_time(a[1]).sub(_time(a[0])))),
        FunctionSpec("time_before", ((s,), (s,)), "bool",
                     "checks if a time is before another time, both in RFC3339 format",
                     lambda a: _time(a[0]).unix_ns < _time(a[1]).unix_ns),
        FunctionSpec("time_after", ((s,), (s,)), "bool",
                     "checks if a time is after another time, both in RFC3339 format",
                     lambda a: _time(a[0]).unix_ns > _time(a[1]).unix_ns),
        FunctionSpec("time_between", ((s,), (s,), (s,)), "bool",
                     "checks if a time is between a start and end time, all in RFC3339 format",
                     between),
        FunctionSpec("time_truncate", ((s,), (s,)), s,
                     "returns the result of rounding time down to a multiple of duration",
                     lambda a: _time(a[0]).truncate(_duration(a[1])).rfc3339()),
    )
