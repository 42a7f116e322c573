"""Strict semantic versions (``MAJOR.MINOR.PATCH[-pre][+build]``, no ``v``), compared by precedence."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from scanner.errors import EngineError

_NUM = r"(0|[1-9]\d*)"
_IDENT = r"[0-9A-Za-z-]+"
_SEMVER = re.compile(
    rf"{_NUM}\.{_NUM}\.{_NUM}(?:-({_IDENT}(?:\.{_IDENT})*))?(?:\+({_IDENT}(?:\.{_IDENT})*))?",
    re.ASCII,
)


@dataclass(frozen=True, slots=True)
class Version:
    """A semantic version (major, minor, patch, pre-release), ordered as semver orders them."""

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


_ZERO = Version(0, 0, 0)
_NO_SPLIT_AFTER = b"<>="
_INTEGER = re.compile(r"[+-]?\d+", re.ASCII)


class RangeError(EngineError, ValueError):
    """A version range in blang/semver syntax could not be parsed."""


def _split_and_trim(text: str) -> list[str]:
    """blang's ``splitAndTrim``: split on spaces that do not follow ``<``, ``>`` or ``=``.

    As in blang, a part shorter than two bytes is dropped (so ``1.0.0 - 2.0.0`` has two parts).
    """
    data = text.encode("utf-8", "surrogateescape")
    parts: list[bytes] = []
    last, last_char = 0, 0
    for i, byte in enumerate(data):
        if byte == 0x20 and last_char not in _NO_SPLIT_AFTER:
            if last < i - 1:
                parts.append(data[last:i])
            last = i + 1
        elif byte != 0x20:
            last_char = byte
    if last < len(data) - 1:
        parts.append(data[last:])
    return [p.replace(b" ", b"").decode("utf-8", "surrogateescape") for p in parts]


def _or_groups(parts: list[str]) -> list[list[str]]:
    groups: list[list[str]] = []
    last = 0
    for i, part in enumerate(parts):
        if part == "||":
            if i == 0:
                raise RangeError("First element in range is '||'")
            groups.append(parts[last:i])
            last = i + 1
    if last == len(parts):
        raise RangeError("Last element in range is '||'")
    groups.append(parts[last:])
    return groups


def _split_comparator(part: str) -> tuple[str, str]:
    """The operator (everything before the first digit) and the version."""
    for i, ch in enumerate(part):
        if ch.isdecimal():
            return part[:i].strip(), part[i:]
    raise RangeError(f"Could not get version from string: {part!r}")


def _bump(version: str, index: int) -> str:
    """Increment dotted field ``index``; empty when that field is not an integer (as blang)."""
    fields = version.split(".")
    if not _INTEGER.fullmatch(fields[index]):
        return ""
    fields[index] = str(int(fields[index]) + 1)
    return ".".join(fields)


# operator -> (extra leading comparison operator, result operator, bump the version)
_WILDCARD_RULES = {
    ">": ("", ">=", True), ">=": ("", ">=", False), "<": ("", "<", False),
    "<=": ("", "<", True), "": (">=", "<", True), "=": (">=", "<", True),
    "==": (">=", "<", True), "!=": ("<", ">=", True), "!": ("<", ">=", True),
}


def _expand_wildcard(part: str) -> list[str]:
    """blang's ``expandWildcardVersion`` for one part containing an ``x``, as plain text.

    ``1.2.x`` and ``1.x.x`` bump the minor field, ``1.x`` the major one; a negated wildcard
    becomes two AND-ed comparisons (``<low >=high``), exactly as blang writes it.
    """
    op, version = _split_comparator(part)
    fields = version.split(".")
    bump_field = {3: 1, 2: 0}.get(len(fields)) if fields[-1] == "x" else None
    flat = version.replace(".x.x", ".x", 1).replace(".x", ".0", 1)
    if flat.count(".") == 1:
        flat += ".0"
    leading, result_op, bump = _WILDCARD_RULES.get(op, ("", "", False))
    if not bump:
        result = flat
    else:
        result = _bump(flat, bump_field) if bump_field is not None else ""
    return ([leading + flat] if leading else []) + [result_op + result]


_TESTS: dict[str, Callable[[int], bool]] = {
    "": lambda c: c == 0, "=": lambda c: c == 0, "==": lambda c: c == 0,
    "!=": lambda c: c != 0, "!": lambda c: c != 0,
    ">": lambda c: c > 0, ">=": lambda c: c >= 0, "<": lambda c: c < 0, "<=": lambda c: c <= 0,
}


def _comparison(part: str) -> tuple[Callable[[int], bool], Version]:
    op, text = _split_comparator(part)
    test = _TESTS.get(op)
    if test is None:
        raise RangeError(f"Could not parse Range {part!r}: Could not parse comparator {op!r}")
    version = parse_version(text)
    if version is None:
        raise RangeError(f"Could not parse Range {part!r}: Could not parse version {text!r}")
    return test, version


@lru_cache(maxsize=256)
def parse_range(text: str) -> Callable[[Version], bool]:
    """A blang/semver range: spaces AND comparisons, ``||`` separates alternatives.

    Raises ``RangeError`` for a malformed range or version inside it.
    """
    alternatives: list[list[tuple[Callable[[int], bool], Version]]] = []
    for group in _or_groups(_split_and_trim(text)):
        expanded = [p for part in group
                    for p in (_expand_wildcard(part) if "x" in part else [part])]
        if not expanded:
            raise RangeError("empty range")
        alternatives.append([_comparison(part) for part in expanded])

    def contains(version: Version) -> bool:
        return any(all(test(version.compare(bound)) for test, bound in conj)
                   for conj in alternatives)

    return contains


def parse_version_or_zero(text: str) -> Version:
    """``semver.Parse`` as Kyverno uses it: an unparsable version counts as ``0.0.0``."""
    return parse_version(text) or _ZERO
