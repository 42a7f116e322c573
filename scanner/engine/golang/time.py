"""Go ``time.Parse`` with reference layouts, and RFC 3339 text, in integer nanoseconds.

A ``GoTime`` is an instant (Unix nanoseconds) with a fixed UTC offset, like a Go
``time.Time`` in a fixed zone. Years 0-9999 are supported (Go's zero year included).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from scanner.errors import EngineError

NS = 1_000_000_000
RFC3339 = "2006-01-02T15:04:05Z07:00"
_MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August",
           "September", "October", "November", "December"]
_DAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]
_INT64 = (-(2**63), 2**63 - 1)


class TimeParseError(EngineError, ValueError):
    """Text that does not match a Go layout."""


def quote(text: str) -> str:
    """The ``time`` package's ``quote``: bytes outside printable ASCII as ``\\xNN``."""
    out = []
    for ch in text:
        if " " <= ch < "\x80":
            out.append("\\" + ch if ch in '"\\' else ch)
        else:
            out.append("".join(f"\\x{b:02x}" for b in ch.encode("utf-8", "surrogateescape")))
    return '"' + "".join(out) + '"'


def days_from_civil(y: int, m: int, d: int) -> int:
    y -= m <= 2
    era = y // 400  # floor division: no correction for negative years
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def civil_from_days(z: int) -> tuple[int, int, int]:
    z += 719468
    era = z // 146097
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
    """An instant as Go's ``time.Time`` holds it: nanoseconds since the epoch and a zone offset."""

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
# numeric zone layouts (without the leading Z or -): length, starts of hh/mm/ss, colons
_ZONE_FIELDS = {
    "07:00": (6, (1, 4), (3,)),
    "07": (3, (1,), ()),
    "07:00:00": (9, (1, 4, 7), (3, 6)),
    "070000": (7, (1, 3, 5), ()),
    "0700": (5, (1, 3), ()),
}


class _Bad(EngineError):
    """A value element that does not match its layout element (Go's ``errBad``)."""


class _Mismatch(EngineError):
    def __init__(self, value_elem: str, layout_elem: str) -> None:
        super().__init__(value_elem, layout_elem)
        self.value_elem, self.layout_elem = value_elem, layout_elem


class _Range(EngineError):
    """A value out of range; the text follows the quoted value in Go's message."""


def _chunks(layout: str) -> list[tuple[str, bool]]:
    """Split a Go layout into (text, is_token) chunks; literal runs stay whole."""
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
        elif out and not out[-1][1]:
            out[-1] = (out[-1][0] + c, False)
            i += 1
        else:
            out.append((c, False))
            i += 1
    return out


def _skip(value: str, pos: int, literal: str) -> int:
    """Go ``skip``: match a layout literal; a space matches any run of spaces."""
    i = 0
    while i < len(literal):
        if literal[i] == " ":
            if pos < len(value) and value[pos] != " ":
                raise _Mismatch(value[pos:], literal)
            while i < len(literal) and literal[i] == " ":
                i += 1
            while pos < len(value) and value[pos] == " ":
                pos += 1
            continue
        if pos >= len(value) or value[pos] != literal[i]:
            raise _Mismatch(value[pos:], literal)
        i, pos = i + 1, pos + 1
    return pos


def _is_digit(value: str, pos: int) -> bool:
    return pos < len(value) and "0" <= value[pos] <= "9"


def _digits(value: str, pos: int, lo: int, hi: int) -> tuple[int, int]:
    end = pos
    while end - pos < hi and _is_digit(value, end):
        end += 1
    if end - pos < lo:
        raise _Bad
    return int(value[pos:end]), end


def _name(value: str, pos: int, names: list[str], short: bool) -> tuple[int, int]:
    for index, name in enumerate(names):
        text = name[:3] if short else name
        if value[pos:pos + len(text)].lower() == text.lower():
            return index, pos + len(text)
    raise _Bad


def _zone(value: str, pos: int, token: str) -> tuple[int, int]:
    """A numeric zone offset in seconds east of UTC, as Go reads it."""
    if token[0] == "Z" and value.startswith("Z", pos):
        return 0, pos + 1
    length, starts, colons = _ZONE_FIELDS[token[1:]]
    text = value[pos:pos + length]
    if len(text) < length or any(text[i] != ":" for i in colons):
        raise _Bad
    fields = [text[i:i + 2] for i in starts]
    valid = all(_is_digit(f, 0) and _is_digit(f, 1) for f in fields)
    hh, mm, ss = ([int(f) for f in fields] if valid else []) + [0, 0, 0][len(fields):]
    for unit, amount, limit in (("second", ss, 60), ("minute", mm, 60), ("hour", hh, 24)):
        if amount > limit:
            raise _Range(f"time zone offset {unit} out of range")
    if not valid or text[0] not in "+-":
        raise _Bad
    return (-1 if text[0] == "-" else 1) * (hh * 3600 + mm * 60 + ss), pos + length


def _signed_offset(value: str) -> int:
    """Go ``parseSignedOffset``: length of ``+h``/``-hh`` (hours up to 12), else 0."""
    digits = len(value[1:]) - len(value[1:].lstrip("0123456789"))
    if value[:1] not in ("+", "-") or not digits or int(value[1:1 + digits]) > 12:
        return 0
    return 1 + digits


def _zone_name(value: str) -> tuple[int, int]:
    """Go ``parseTimeZone``: (length of the zone name, its offset); length 0 if none.

    Names are not looked up: a GMT offset is kept, any other name gets offset 0.
    """
    if value.startswith("UTC") or value[:4] in ("ChST", "MeST"):
        return (3 if value.startswith("UTC") else 4), 0
    if value.startswith("GMT"):
        length = 3 + (_signed_offset(value[3:]) if len(value) > 3 else 0)
        return length, int(value[3:length] or 0) * 3600
    if value[:1] in ("+", "-"):
        return _signed_offset(value), 0
    upper = len(value[:6]) - len(value[:6].lstrip("ABCDEFGHIJKLMNOPQRSTUVWXYZ"))
    if upper == 3 or (upper == 4 and (value[3] == "T" or value[:4] == "WITA")) or (
            upper == 5 and value[4] == "T"):
        return upper, 0
    return 0, 0


def parse(layout: str, value: str) -> GoTime:
    """Go ``time.Parse(layout, value)`` for fixed offsets, with Go's error messages."""
    try:
        return _parse(layout, value)
    except _Mismatch as exc:
        raise TimeParseError(
            f"parsing time {quote(value)} as {quote(layout)}: cannot parse "
            f"{quote(exc.value_elem)} as {quote(exc.layout_elem)}") from None
    except _Range as exc:
        raise TimeParseError(f"parsing time {quote(value)}: {exc}") from None


def _fraction(value: str, pos: int, end: int) -> int:
    """Go ``parseNanoseconds`` of ``value[pos:end]`` (a separator, then digits)."""
    return int((value[pos + 1:end] + "0" * 9)[:9])


def _parse(layout: str, value: str) -> GoTime:
    year, month, day, yday, hour, minute, sec, nanos = 0, -1, -1, -1, 0, 0, 0, 0
    offset: int | None = None  # a numeric offset read from the value
    shown_offset = 0  # offset of a zone name: shown, not applied (as Go's fake zones)
    pm: bool | None = None
    chunks = _chunks(layout)
    pos = 0
    for index, (t, is_token) in enumerate(chunks):
        if not is_token:
            pos = _skip(value, pos, t)
            continue
        start = pos
        try:
            if t == "2006":
                if not _is_digit(value, pos):
                    raise _Bad
                year, pos = _digits(value, pos, 4, 4)
            elif t == "06":
                year, pos = _digits(value, pos, 2, 2)
                year += 1900 if year >= 69 else 2000
            elif t in ("01", "1"):
                month, pos = _digits(value, pos, len(t), 2)
                if not 1 <= month <= 12:
                    raise _Range("month out of range")
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
                for _ in range(2 if t == "__2" else 0):
                    pos += value.startswith(" ", pos)
                yday, pos = _digits(value, pos, 3 if t == "002" else 1, 3)
            elif t in ("15", "03", "3"):
                hour, pos = _digits(value, pos, 2 if t == "03" else 1, 2)
                if hour >= (24 if t == "15" else 13):
                    raise _Range("hour out of range")
            elif t in ("04", "4"):
                minute, pos = _digits(value, pos, len(t), 2)
                if minute >= 60:
                    raise _Range("minute out of range")
            elif t in ("05", "5"):
                sec, pos = _digits(value, pos, len(t), 2)
                if sec >= 60:
                    raise _Range("second out of range")
                following = next((c for c, tok in chunks[index + 1:] if tok), "")
                if (value[pos:pos + 1] in (".", ",") and _is_digit(value, pos + 1)
                        and not following[:2].startswith((".0", ".9", ",0", ",9"))):
                    end = pos + 2
                    while _is_digit(value, end):
                        end += 1
                    nanos, pos = _fraction(value, pos, end), end
            elif t in ("PM", "pm"):
                word = value[pos:pos + 2]
                if word not in ({"AM", "PM"} if t == "PM" else {"am", "pm"}):
                    raise _Bad
                pm, pos = word.upper() == "PM", pos + 2
            elif t == "MST":
                length, shown_offset = _zone_name(value[pos:])
                if not length:
                    raise _Bad
                pos += length
            elif t[0] in "-Z":
                offset, pos = _zone(value, pos, t)
            elif t[1] == "0":  # fractional seconds with exactly len(t) - 1 digits
                end = pos + len(t)
                if value[pos:pos + 1] not in (".", ",") or not all(
                        _is_digit(value, i) for i in range(pos + 1, end)):
                    raise _Bad
                nanos, pos = _fraction(value, pos, end), end
            elif value[pos:pos + 1] in (".", ",") and _is_digit(value, pos + 1):
                end = pos + 2  # .999: any number of digits, or none at all
                while _is_digit(value, end):
                    end += 1
                nanos, pos = _fraction(value, pos, end), end
        except _Bad:
            raise _Mismatch(value[start:], t) from None
    if pos != len(value):
        raise _Range(f"extra text: {quote(value[pos:])}")
    if pm and hour < 12:
        hour += 12
    elif pm is False and hour == 12:
        hour = 0
    if yday >= 0:
        month, day = _month_day_of(year, yday, month, day)
    month, day = (1 if month < 0 else month), (1 if day < 0 else day)
    if not 1 <= day <= _days_in_month(year, month):
        raise _Range("day out of range")
    secs = days_from_civil(year, month, day) * 86400 + hour * 3600 + minute * 60 + sec
    if offset is None:
        return GoTime(secs * NS + nanos, shown_offset)
    return GoTime((secs - offset) * NS + nanos, offset)


def _month_day_of(year: int, yday: int, month: int, day: int) -> tuple[int, int]:
    """The month and day of a day of the year, checked against any parsed month/day."""
    leap = _days_in_month(year, 2) == 29
    if not 1 <= yday <= (366 if leap else 365):
        raise _Range("day-of-year out of range")
    _, m, d = civil_from_days(days_from_civil(year, 1, 1) + yday - 1)
    if month >= 0 and month != m:
        raise _Range("day-of-year does not match month")
    if day >= 0 and day != d:
        raise _Range("day-of-year does not match day")
    return m, d
