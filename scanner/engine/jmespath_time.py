"""Kyverno's ``time_*`` JMESPath functions (spec 7.7). "Now" comes from an injected clock."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime
from typing import Any

from scanner.engine import gotime
from scanner.engine.duration import format_duration, parse_duration
from scanner.engine.jmespath_registry import FunctionSpec, error

Clock = Callable[[], datetime]
_INTEGER = re.compile(r"[+-]?\d+", re.ASCII)


def _time(name: str, text: str, layout: str = gotime.RFC3339) -> gotime.GoTime:
    try:
        return gotime.parse(layout or gotime.RFC3339, text)
    except gotime.TimeParseError as exc:
        raise error(name, str(exc)) from None


def _duration(name: str, text: str) -> int:
    ns = parse_duration(text)
    if ns is None:
        raise error(name, f'time: invalid duration "{text}"')
    return ns


def _now(name: str, now: Clock | None) -> gotime.GoTime:
    if now is None:
        raise error(name, "not supported: no clock is available to read the current time")
    return gotime.GoTime.from_datetime(now())


def build_time_specs(now: Clock | None) -> tuple[FunctionSpec, ...]:
    """The time functions; those reading the current time use ``now``."""

    def since(a: list[Any]) -> str:
        layout, t1, t2 = a
        start = _time("time_since", t1, layout)
        end = _time("time_since", t2, layout) if t2 else _now("time_since", now)
        return format_duration(end.sub(start))

    def parse(a: list[Any]) -> str:
        layout, value = a
        if _INTEGER.fullmatch(layout) and abs(int(layout)) < 2**63:
            if not _INTEGER.fullmatch(value) or abs(int(value)) >= 2**63:
                raise error("time_parse", f'strconv.ParseInt: parsing "{value}": invalid syntax')
            return gotime.GoTime(int(value) * gotime.NS).rfc3339()
        return _time("time_parse", value, layout).rfc3339()

    def to_cron(a: list[Any]) -> str:
        _, month, day, hour, minute, _, weekday = _time("time_to_cron", a[0]).fields()
        return f"{minute} {hour} {day} {month} {weekday}"

    def between(a: list[Any]) -> bool:
        t, start, end = (_time("time_between", x).unix_ns for x in a)
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
                     lambda a: _time("time_add", a[0]).add(_duration("time_add", a[1])).rfc3339()),
        FunctionSpec("time_parse", ((s,), (s,)), s,
                     "changes a time value of a given layout to RFC 3339", parse),
        FunctionSpec("time_utc", ((s,),), s,
                     "calcutes time in UTC from a given time in RFC 3339 format",
                     lambda a: _time("time_utc", a[0]).utc().rfc3339()),
        FunctionSpec("time_diff", ((s,), (s,)), s,
                     "calculate the difference between a start and end date in RFC3339 format",
                     lambda a: format_duration(
                         _time("time_diff", a[1]).sub(_time("time_diff", a[0])))),
        FunctionSpec("time_before", ((s,), (s,)), "bool",
                     "checks if a time is before another time, both in RFC3339 format",
                     lambda a: _time("time_before", a[0]).unix_ns
                     < _time("time_before", a[1]).unix_ns),
        FunctionSpec("time_after", ((s,), (s,)), "bool",
                     "checks if a time is after another time, both in RFC3339 format",
                     lambda a: _time("time_after", a[0]).unix_ns
                     > _time("time_after", a[1]).unix_ns),
        FunctionSpec("time_between", ((s,), (s,), (s,)), "bool",
                     "checks if a time is between a start and end time, all in RFC3339 format",
                     between),
        FunctionSpec("time_truncate", ((s,), (s,)), s,
                     "returns the result of rounding time down to a multiple of duration",
                     lambda a: _time("time_truncate", a[0]).truncate(
                         _duration("time_truncate", a[1])).rfc3339()),
    )
