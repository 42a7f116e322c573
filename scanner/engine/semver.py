"""Strict semantic versions (``MAJOR.MINOR.PATCH[-pre][+build]``, no ``v``), compared by precedence."""

from __future__ import annotations

import re
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
