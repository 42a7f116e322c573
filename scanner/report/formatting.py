"""How report values become text: UTC timestamps, durations, short digests, identities."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Generic, TypeVar

from scanner.report.data import ResourceInfo

T = TypeVar("T")

_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ufffe\uffff]")


def iso_time(value: datetime | None) -> str:
    """``2024-03-01T06:00:00Z`` (UTC, second precision); empty for ``None``."""
    if value is None:
        return ""
    if value.tzinfo is None:
        raise ValueError(f"naive datetime {value!r}: report times must be timezone-aware")
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def duration_text(seconds: float | None) -> str:
    """``1h 02m 03s`` / ``2m 05s`` / ``4.2s``; ``-`` when unknown."""
    if seconds is None:
        return "-"
    if seconds < 60:
        return f"{seconds:.1f}s"
    whole = round(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h {minutes:02d}m {secs:02d}s"
    return f"{minutes}m {secs:02d}s"


def short_sha(value: str, length: int = 12) -> str:
    """The first ``length`` characters of a commit or digest (after any ``sha256:`` prefix)."""
    _, _, tail = value.rpartition(":")
    return tail[:length]


def xml_safe(text: str) -> str:
    """Replace characters XML 1.0 cannot carry (control characters) with U+FFFD."""
    return _CONTROL.sub("\ufffd", text)


def resource_identity(resource: ResourceInfo) -> str:
    """Source, API group/kind, namespace and name: what stays the same across runs."""
    group = resource.api_version.rpartition("/")[0] if "/" in resource.api_version else ""
    return "\x1f".join((resource.source, group, resource.kind, resource.namespace, resource.name))


def finding_id(resource: ResourceInfo, policy: str, rule: str) -> str:
    """A stable id of (source, resource identity, policy, rule): SHA-256, hex."""
    text = "\x1e".join((resource_identity(resource), policy, rule))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class PerResource(Generic[T]):
    """``make`` of each resource, made once per resource object (the results of one resource
    share its object): kept by ``id()`` with the object itself, so no id is reused meanwhile."""

    __slots__ = ("_known", "_make")

    def __init__(self, make: Callable[[ResourceInfo], T]) -> None:
        self._make = make
        self._known: dict[int, tuple[ResourceInfo, T]] = {}

    def __call__(self, resource: ResourceInfo) -> T:
        known = self._known.get(id(resource))
        if known is None or known[0] is not resource:
            known = self._known[id(resource)] = (resource, self._make(resource))
        return known[1]


class FindingIds:
    """``finding_id`` of many results: each resource's identity made and encoded once."""

    __slots__ = ("_identities",)

    def __init__(self) -> None:
        self._identities = PerResource(lambda resource: (resource_identity(resource) + "\x1e").encode("utf-8"))

    def __call__(self, resource: ResourceInfo, policy: str, rule: str) -> str:
        return hashlib.sha256(self._identities(resource) + f"{policy}\x1e{rule}".encode()).hexdigest()
