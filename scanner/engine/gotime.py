"""Go ``time.Parse`` with reference layouts, and RFC 3339 text, in integer nanoseconds.

A ``GoTime`` is an instant (Unix nanoseconds) with a fixed UTC offset, like a Go
``time.Time`` in a fixed zone. Years 0-9999 are supported (Go's zero year included).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

NS = 1_000_000_000
RFC3339 = "2006-01-02T15:04:05Z07:00"
_MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August",
           "September", "October", "November", "December"]
_DAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]
_INT64 = (-(2**63), 2**63 - 1)


class TimeParseError(ValueError):
    """Text that does not match a Go layout."""


def days_from_civil(y: int, m: int, d: int) -> int:
    y -= m <= 2
    era = (y if y >= 0 else y - 399) // 400
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def civil_from_days(z: int) -> tuple[int, int, int]:
    z += 719468
    era = (z if z >= 0 else z - 146096) // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = mp + (3 if mp < 10 else -9)
    return yoe + era * 400 + (m <= 2), m, d


def _days_in_month(y: int, m: int) -> int:
    if m == 2:
        return 29 if y % 4 == 0 and (y % 100 != 0 or y % 400 == 0) else 28
    return 30 if m in (4, 6, 9, 11) else 31


@dataclass(frozen=True, slots=True)
class GoTime:
    unix_ns: int
    offset: int = 0  # seconds east of UTC

    @classmethod
    def from_datetime(cls, value: datetime) -> GoTime:
        if value.tzinfo is None:
            value = value.replace(tzinfo=UTC)
        delta = value - datetime(1970, 1, 1, tzinfo=UTC)
        ns = (delta.days * 86400 + delta.seconds) * NS + delta.microseconds * 1000
        offset = value.utcoffset()
        return cls(ns, int(offset.total_seconds()) if offset else 0)

    def fields(self) -> tuple[int, int, int, int, int, int, int]:
        """Local year, month, day, hour, minute, second, weekday (0 = Sunday)."""
        secs = (self.unix_ns // NS) + self.offset
        days, rem = divmod(secs, 86400)
        y, m, d = civil_from_days(days)
        return y, m, d, rem // 3600, rem % 3600 // 60, rem % 60, (days + 4) % 7

    def utc(self) -> GoTime:
        return GoTime(self.unix_ns, 0)

    def add(self, ns: int) -> GoTime:
        return GoTime(self.unix_ns + ns, self.offset)

    def sub(self, other: GoTime) -> int:
        """Go ``Time.Sub``: nanoseconds, saturating at the int64 range."""
        return min(max(self.unix_ns - other.unix_ns, _INT64[0]), _INT64[1])

    def truncate(self, ns: int) -> GoTime:
        """Go ``Time.Truncate``: round down to a multiple of ``ns`` since year 1 (UTC)."""
        if ns <= 0:
            return self
        since_zero = self.unix_ns - days_from_civil(1, 1, 1) * 86400 * NS
        return GoTime(self.unix_ns - since_zero % ns, self.offset)

    def rfc3339(self) -> str:
        y, m, d, hh, mm, ss, _ = self.fields()
        if self.offset == 0:
            zone = "Z"
        else:
            sign = "-" if self.offset < 0 else "+"
            off = abs(self.offset) // 60
            zone = f"{sign}{off // 60:02d}:{off % 60:02d}"
        return f"{y:04d}-{m:02d}-{d:02d}T{hh:02d}:{mm:02d}:{ss:02d}{zone}"


_TOKENS = sorted(
    ["January", "Jan", "Monday", "Mon", "MST", "01", "02", "03", "04", "05", "06", "002",
     "15", "1", "2006", "2", "_2", "__2", "3", "4", "5", "PM", "pm", "-070000", "-07:00:00",
     "-0700", "-07:00", "-07", "Z070000", "Z07:00:00", "Z0700", "Z07:00", "Z07"],
    key=len, reverse=True,
)


def _chunks(layout: str) -> list[tuple[str, bool]]:
    """Split a Go layout into (text, is_token) chunks."""
    out: list[tuple[str, bool]] = []
    i = 0
    while i < len(layout):
        c = layout[i]
        if c in ".," and i + 1 < len(layout) and layout[i + 1] in "09":
            j = i + 1
            while j < len(layout) and layout[j] == layout[i + 1]:
                j += 1
            if not (j < len(layout) and layout[j].isdigit()):
                out.append((layout[i:j], True))
                i = j
                continue
        token = next((t for t in _TOKENS if layout.startswith(t, i)), None)
        if token == "_2" and layout.startswith("_2006", i):
            token = None
        if token:
            out.append((token, True))
            i += len(token)
        else:
            out.append((c, False))
            i += 1
    return out


def _digits(value: str, pos: int, lo: int, hi: int) -> tuple[int, int]:
    end = pos
    while end < len(value) and end - pos < hi and value[end].isdigit() and value[end].isascii():
        end += 1
    if end - pos < lo:
        raise TimeParseError("bad number")
    return int(value[pos:end]), end


def _name(value: str, pos: int, names: list[str], short: bool) -> tuple[int, int]:
    for index, name in enumerate(names):
        text = name[:3] if short else name
        if value[pos:pos + len(text)].lower() == text.lower():
            return index, pos + len(text)
    raise TimeParseError("bad name")


def _zone(value: str, pos: int, token: str) -> tuple[int, int]:
    if token.startswith("Z") and value.startswith("Z", pos):
        return 0, pos + 1
    if pos >= len(value) or value[pos] not in "+-":
        raise TimeParseError("bad zone")
    sign = -1 if value[pos] == "-" else 1
    shape = token[1:]
    hh, p = _digits(value, pos + 1, 2, 2)
    mm = ss = 0
    if shape in ("07:00", "07:00:00"):
        if value[p:p + 1] != ":":
            raise TimeParseError("bad zone")
        mm, p = _digits(value, p + 1, 2, 2)
    elif shape in ("0700", "070000"):
        mm, p = _digits(value, p, 2, 2)
    if shape in ("07:00:00",):
        if value[p:p + 1] != ":":
            raise TimeParseError("bad zone")
        ss, p = _digits(value, p + 1, 2, 2)
    elif shape == "070000":
        ss, p = _digits(value, p, 2, 2)
    if hh > 24 or mm > 60 or ss > 60:
        raise TimeParseError("bad zone")
    return sign * (hh * 3600 + mm * 60 + ss), p


def parse(layout: str, value: str) -> GoTime:
    """Go ``time.Parse(layout, value)`` for fixed offsets; ``TimeParseError`` on mismatch."""
    try:
        return _parse(layout, value)
    except TimeParseError as exc:
        raise TimeParseError(f'parsing time "{value}" as "{layout}": {exc}') from None


def _parse(layout: str, value: str) -> GoTime:
    year, month, day, yday, hour, minute, sec, nanos, offset = 0, 1, 1, 0, 0, 0, 0, 0, 0
    pm: bool | None = None
    chunks = _chunks(layout)
    pos = 0
    for index, (text, is_token) in enumerate(chunks):
        if not is_token:
            if not value.startswith(text, pos):
                raise TimeParseError(f'cannot parse "{value[pos:]}" as "{text}"')
            pos += len(text)
            continue
        t = text
        if t == "2006":
            year, pos = _digits(value, pos, 4, 4)
        elif t == "06":
            year, pos = _digits(value, pos, 2, 2)
            year += 1900 if year >= 69 else 2000
        elif t in ("01", "1"):
            month, pos = _digits(value, pos, len(t), 2)
        elif t in ("Jan", "January"):
            month, pos = _name(value, pos, _MONTHS, t == "Jan")
            month += 1
        elif t in ("Mon", "Monday"):
            _, pos = _name(value, pos, _DAYS, t == "Mon")
        elif t in ("02", "2", "_2"):
            if t == "_2" and value.startswith(" ", pos):
                pos += 1
            day, pos = _digits(value, pos, 2 if t == "02" else 1, 2)
        elif t in ("002", "__2"):
            yday, pos = _digits(value, pos, 3 if t == "002" else 1, 3)
        elif t in ("15", "03", "3"):
            hour, pos = _digits(value, pos, 2 if t == "03" else 1, 2)
            if t != "15" and not 1 <= hour <= 12:
                raise TimeParseError("hour out of range")
        elif t in ("04", "4"):
            minute, pos = _digits(value, pos, len(t), 2)
        elif t in ("05", "5"):
            sec, pos = _digits(value, pos, len(t), 2)
            following = chunks[index + 1][0] if index + 1 < len(chunks) else ""
            if (value[pos:pos + 1] in (".", ",") and pos + 1 < len(value)
                    and value[pos + 1].isdigit()
                    and not following[:2].startswith((".0", ".9", ",0", ",9"))):
                end = pos + 1
                while end < len(value) and value[end].isdigit():
                    end += 1
                nanos = int((value[pos + 1:end] + "0" * 9)[:9])
                pos = end
        elif t in ("PM", "pm"):
            word = value[pos:pos + 2]
            if word not in ({"AM", "PM"} if t == "PM" else {"am", "pm"}):
                raise TimeParseError(f'cannot parse "{value[pos:]}" as "{t}"')
            pm, pos = word.upper() == "PM", pos + 2
        elif t == "MST":
            end = pos
            while end < len(value) and value[end].isalpha() and value[end].isupper():
                end += 1
            if end - pos < 3:
                raise TimeParseError(f'cannot parse "{value[pos:]}" as "MST"')
            pos = end
        elif t[0] in "-Z":
            offset, pos = _zone(value, pos, t)
        else:  # fractional seconds .000 / .999
            if value[pos:pos + 1] not in (".", ","):
                if t[1] == "9":
                    continue
                raise TimeParseError(f'cannot parse "{value[pos:]}" as "{t}"')
            lo = len(t) - 1 if t[1] == "0" else 1
            digits_start = pos + 1
            _, pos = _digits(value, digits_start, lo, len(t) - 1 if t[1] == "0" else 9)
            nanos = int((value[digits_start:pos] + "0" * 9)[:9])
    if pos != len(value):
        raise TimeParseError(f'extra text: "{value[pos:]}"')
    if pm is not None:
        hour = (hour % 12) + (12 if pm else 0)
    if yday:
        if yday > (366 if _days_in_month(year, 2) == 29 else 365):
            raise TimeParseError("day-of-year out of range")
        _, month, day = civil_from_days(days_from_civil(year, 1, 1) + yday - 1)
    if not 1 <= month <= 12:
        raise TimeParseError("month out of range")
    if not 1 <= day <= _days_in_month(year, month):
        raise TimeParseError("day out of range")
    if hour > 23 or minute > 59 or sec > 59:
        raise TimeParseError("time out of range")
    secs = days_from_civil(year, month, day) * 86400 + hour * 3600 + minute * 60 + sec - offset
    return GoTime(secs * NS + nanos, offset)
