"""The query of an API server list path, as a real API server applies it: ``labelSelector``
(equality- and set-based) and ``fieldSelector`` on ``metadata.name`` and ``metadata.namespace``.
Anything else (paging, other fields, watches) is refused as not supported rather than ignored,
which would miscount."""

from __future__ import annotations

import re
from collections.abc import Callable
from urllib.parse import parse_qsl

from scanner.engine.context import ContextError
from scanner.engine.selector import LabelSelector

Filter = Callable[[dict], bool]
_SET = re.compile(r"^\s*(\S+)\s+(in|notin)\s+\(([^)]*)\)\s*$")
_FIELDS = {"metadata.name": "name", "metadata.namespace": "namespace"}


def _requirements(text: str) -> list[str]:
    """``text`` split at the commas outside parentheses."""
    parts, depth, start = [], 0, 0
    for i, char in enumerate(text):
        depth += (char == "(") - (char == ")")
        if char == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p for p in (part.strip() for part in parts) if p]


def parse_label_selector(text: str) -> LabelSelector:
    """A ``labelSelector`` query value: ``a=b``, ``a==b``, ``a!=b``, ``a in (x,y)``,
    ``a notin (x)``, ``a``, ``!a``, joined by commas."""
    expressions: list[tuple[str, str, tuple[str, ...]]] = []
    for part in _requirements(text):
        found = _SET.match(part)
        if found:
            values = tuple(v.strip() for v in found.group(3).split(",") if v.strip())
            expressions.append((found.group(1), "In" if found.group(2) == "in" else "NotIn", values))
        elif "!=" in part:
            key, _, value = part.partition("!=")
            expressions.append((key.strip(), "NotIn", (value.strip(),)))
        elif "=" in part:
            key, _, value = part.partition("==" if "==" in part else "=")
            expressions.append((key.strip(), "In", (value.strip(),)))
        elif part.startswith("!"):
            expressions.append((part[1:].strip(), "DoesNotExist", ()))
        elif re.fullmatch(r"[^\s()=!]+", part):
            expressions.append((part, "Exists", ()))
        else:
            raise ValueError(f"invalid label selector requirement {part!r}")
    return LabelSelector((), tuple(expressions))


def _label_filter(selector: LabelSelector) -> Filter:
    return lambda obj: selector.matches((obj.get("metadata") or {}).get("labels"))


def _field_filter(text: str) -> Filter:
    checks: list[tuple[str, bool, str]] = []
    for part in _requirements(text):
        negated = "!=" in part
        key, _, value = part.partition("!=" if negated else "==" if "==" in part else "=")
        field = _FIELDS.get(key.strip())
        if field is None:
            raise ValueError(f"not supported: field selector on {key.strip()!r}")
        checks.append((field, negated, value.strip()))

    def matches(obj: dict) -> bool:
        meta = obj.get("metadata") or {}
        return all((str(meta.get(field) or "") == value) != negated for field, negated, value in checks)
    return matches


def query_filter(query: str, url_path: str) -> Filter:
    """What a list path's ``query`` keeps of the objects; a ``ContextError`` for what the offline
    cluster does not answer."""
    filters: list[Filter] = []
    for key, value in parse_qsl(query, keep_blank_values=True):
        try:
            if key == "labelSelector":
                filters.append(_label_filter(parse_label_selector(value)))
            elif key == "fieldSelector":
                filters.append(_field_filter(value))
            else:
                raise ValueError(f"not supported: query parameter {key} in an offline API call")
        except ValueError as exc:
            message = str(exc)
            if not message.startswith("not supported"):
                message = f"{message} in {key}"
            raise ContextError(f"{message} ({url_path})") from exc
    return lambda obj: all(f(obj) for f in filters)
