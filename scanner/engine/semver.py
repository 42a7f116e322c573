"""Strict semantic versions (``MAJOR.MINOR.PATCH[-pre][+build]``, no ``v``), compared by precedence."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

_NUM = r"(0|[1-9]\d*)"
_IDENT = r"[0-9A-Za-z-]+"
_SEMVER = re.compile(
    rf"{_NUM}\.{_NUM}\.{_NUM}(?:-({_IDENT}(?:\.{_IDENT})*))?(?:\+({_IDENT}(?:\.{_IDENT})*))?",
    re.ASCII,
)


@dataclass(frozen=True, slots=True)
class Version:
    major: int
    minor: int
    patch: int
    pre: tuple[str, ...] = ()

    def _key(self) -> tuple:
        pre_key: tuple = (1,) if not self.pre else (
            0,
            tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in self.pre),
        )
        return (self.major, self.minor, self.patch, pre_key)

    def compare(self, other: Version) -> int:
        a, b = self._key(), other._key()
        return (a > b) - (a < b)


def parse_version(text: str) -> Version | None:
    """Parse a strict semantic version; None when ``text`` is not one."""
    if not isinstance(text, str):
        return None
    m = _SEMVER.fullmatch(text)
    if m is None:
        return None
    pre = tuple(m.group(4).split(".")) if m.group(4) else ()
    if any(p.isdigit() and len(p) > 1 and p[0] == "0" for p in pre):
        return None
    return Version(int(m.group(1)), int(m.group(2)), int(m.group(3)), pre)


_RANGE_OP = re.compile(r"(>=|<=|!=|==|=|>|<|!)?(.*)", re.DOTALL)
_ZERO = Version(0, 0, 0)


class RangeError(ValueError):
    """A version range in blang/semver syntax could not be parsed."""


def _split_range(text: str) -> list[str]:
    """Split on spaces, keeping an operator joined to the version after it (``> 1.2.3``)."""
    parts: list[str] = []
    current = ""
    last = ""
    for ch in text:
        if ch == " " and last not in (">", "<", "="):
            if current:
                parts.append(current)
            current = ""
        elif ch != " ":
            current += ch
            last = ch
    if current:
        parts.append(current)
    return parts


def _expand_wildcard(op: str, text: str) -> list[list[tuple[str, str]]]:
    """``1.2.x`` style wildcards as OR-of-AND comparisons (blang/semver expansion rules)."""
    fields = text.split(".")
    if "x" not in fields:
        return [[(op, text)]]
    if len(fields) not in (2, 3) or (fields.index("x") != len(fields) - 1 and fields[-1] != "x"):
        raise RangeError(f"Could not parse Range {text!r}: invalid wildcard")
    if fields[1] == "x":  # 1.x / 1.x.x
        low = f"{fields[0]}.0.0"
        high = f"{int(fields[0]) + 1}.0.0" if fields[0].isdigit() else None
    else:  # 1.2.x
        low = f"{fields[0]}.{fields[1]}.0"
        high = f"{fields[0]}.{int(fields[1]) + 1}.0" if fields[1].isdigit() else None
    if high is None:
        raise RangeError(f"Could not parse Range {text!r}: invalid wildcard")
    table = {
        ">=": [[(">=", low)]],
        ">": [[(">=", high)]],
        "<": [[("<", low)]],
        "<=": [[("<", high)]],
        "!=": [[("<", low)], [(">=", high)]],
        "!": [[("<", low)], [(">=", high)]],
    }
    return table.get(op, [[(">=", low), ("<", high)]])


_TESTS = {
    "": lambda c: c == 0, "=": lambda c: c == 0, "==": lambda c: c == 0,
    "!=": lambda c: c != 0, "!": lambda c: c != 0,
    ">": lambda c: c > 0, ">=": lambda c: c >= 0, "<": lambda c: c < 0, "<=": lambda c: c <= 0,
}


def parse_range(text: str) -> Callable[[Version], bool]:
    """A blang/semver range: spaces AND comparisons, ``||`` separates alternatives.

    Raises ``RangeError`` for a malformed range or version inside it.
    """
    groups: list[list[str]] = [[]]
    for part in _split_range(text):
        if part == "||":
            groups.append([])
        else:
            groups[-1].append(part)
    if any(not g for g in groups):
        raise RangeError(f"Could not parse Range {text!r}: empty alternative")
    alternatives: list[list[tuple[str, Version]]] = []
    for group in groups:
        expanded: list[list[tuple[str, str]]] = [[]]
        for part in group:
            m = _RANGE_OP.fullmatch(part)
            op, ver = (m.group(1) or ""), m.group(2)  # type: ignore[union-attr]
            options = _expand_wildcard(op, ver)
            expanded = [prefix + opt for prefix in expanded for opt in options]
        for conj in expanded:
            checks = []
            for op, ver in conj:
                version = parse_version(ver)
                if version is None:
                    raise RangeError(f"Could not parse Range {text!r}: invalid version {ver!r}")
                checks.append((op, version))
            alternatives.append(checks)

    def contains(version: Version) -> bool:
        return any(
            all(_TESTS[op](version.compare(bound)) for op, bound in conj) for conj in alternatives
        )

    return contains


def parse_version_or_zero(text: str) -> Version:
    """``semver.Parse`` as Kyverno uses it: an unparsable version counts as ``0.0.0``."""
    return parse_version(text) or _ZERO
