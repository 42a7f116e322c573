"""Dotted keys of values files (``request.object.metadata.labels."app.kubernetes.io/name"``) and
writing them into JSON-shaped trees."""

from __future__ import annotations

from typing import Any


def split_dotted(key: str) -> list[str]:
    """Split a values key on dots; a double-quoted segment may contain dots (spec 7.6)."""
    parts: list[str] = []
    buf: list[str] = []
    quoted = False
    for ch in key:
        if ch == '"':
            quoted = not quoted
        elif ch == "." and not quoted:
            parts.append("".join(buf))
            buf = []
        else:
            buf.append(ch)
    parts.append("".join(buf))
    return parts


def set_path(tree: dict, keys: list[str], value: Any, merge: bool = True) -> dict:
    """A copy of ``tree`` with ``value`` written at ``keys`` (maps merge when ``merge``)."""
    out = dict(tree)
    if len(keys) == 1:
        old = out.get(keys[0])
        if merge and isinstance(old, dict) and isinstance(value, dict):
            merged = dict(old)
            for k, v in value.items():
                merged = set_path(merged, [k], v, merge)
            out[keys[0]] = merged
        else:
            out[keys[0]] = value
        return out
    child = out.get(keys[0])
    out[keys[0]] = set_path(child if isinstance(child, dict) else {}, keys[1:], value, merge)
    return out
