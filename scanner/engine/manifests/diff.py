"""Signed original vs submitted resource: the difference sigstore reports (spec 19.7).

Both sides are flattened to ``dotted.path -> scalar``; differences are classified as
additions, removals, changes and type changes, then the built-in tolerances (re-indexed
list entries, one-sided empty strings, image canonicalisation, ignored fields, the added
namespace) remove what is not reported. Values compare by JSON type first: ``1`` and
``True``, ``"1"`` and ``1`` are different values here.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

from scanner.engine.golang.fmt import format_g, is_number, to_json
from scanner.engine.golang.regexp import GoRegexp, RegexError, compile_re2
from scanner.engine.manifests.ignore import is_ignored

ItemKind = Literal["add", "remove", "change", "type"]
_INDEX_INSIDE = re.compile(r"\.\d+\.", re.ASCII)
_MIRROR = {"add": "remove", "remove": "add"}


@dataclass(frozen=True, slots=True)
class DiffItem:
    """One difference; ``before``/``after`` are ``None`` for the missing side."""

    path: str
    kind: ItemKind
    before: Any
    after: Any


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if is_number(value):
        return "float64"
    return "string"


def _typed(value: Any) -> tuple[str, Any]:
    """A comparison key that never confuses ``True`` with ``1`` or ``1`` with ``"1"``."""
    tag = _json_type(value)
    if tag == "float64":
        return tag, float(value)
    if tag == "string" and not isinstance(value, str):
        return tag, str(value)
    return tag, value


def flatten(value: Any) -> dict[str, Any]:
    """``dotted.path -> scalar`` for every non-null scalar; empty maps and lists vanish."""
    out: dict[str, Any] = {}
    stack: list[tuple[str, Any]] = [("", value)]
    while stack:
        prefix, node = stack.pop()
        if isinstance(node, dict):
            children: Iterable[tuple[Any, Any]] = node.items()
        elif isinstance(node, list):
            children = enumerate(node)
        else:
            if node is not None and prefix:
                out[prefix] = node
            continue
        for key, child in children:
            stack.append((f"{prefix}.{key}" if prefix else str(key), child))
    return out


def printed(value: Any) -> str:
    """Go ``%v`` of a flattened scalar (used to rank candidate documents by value)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if is_number(value):
        return format_g(value)
    return str(value)


def _type_text(value: Any) -> str:
    tag = _json_type(value)
    if tag == "string":
        return f"(type: string) {value}"
    return f"(type: {tag}) %!s({tag}={printed(value)})"


def raw_diff(before: dict[str, Any], after: dict[str, Any]) -> list[DiffItem]:
    items = []
    for path in before.keys() | after.keys():
        if path not in after:
            items.append(DiffItem(path, "remove", before[path], None))
        elif path not in before:
            items.append(DiffItem(path, "add", None, after[path]))
        else:
            old, new = _typed(before[path]), _typed(after[path])
            if old[0] != new[0]:
                items.append(DiffItem(path, "type", _type_text(before[path]),
                                      _type_text(after[path])))
            elif old[1] != new[1]:
                items.append(DiffItem(path, "change", before[path], after[path]))
    return items


def _one_sided_value(item: DiffItem) -> Any:
    return item.after if item.kind == "add" else item.before


@lru_cache(maxsize=4096)
def _reindex_regex(path: str) -> GoRegexp | None:
    text = _INDEX_INSIDE.sub(lambda _m: r"\.\d+\.", path)
    try:
        return compile_re2(text)
    except RegexError:
        return None


def _is_reindexed(item: DiffItem, items: list[DiffItem]) -> bool:
    """An addition/removal inside a list element that re-appears at another index."""
    if item.kind not in _MIRROR or not _INDEX_INSIDE.search(item.path):
        return False
    regex = _reindex_regex(item.path)
    if regex is None:
        return False
    mirror, value = _MIRROR[item.kind], _typed(_one_sided_value(item))
    return any(other.kind == mirror and _typed(_one_sided_value(other)) == value
               and regex.search(other.path) for other in items)


def _is_canonical_image(item: DiffItem) -> bool:
    if item.kind != "change" or not item.path.endswith("image"):
        return False
    old, new = item.before, item.after
    return (isinstance(old, str) and isinstance(new, str)
            and (new == "docker.io/" + old or new == old + ":latest"))


def remaining_differences(items: list[DiffItem], ignore_fields: Iterable[str]) -> list[DiffItem]:
    """Apply the tolerances of spec 19.7.4, in order; the result is sorted by path."""
    fields = tuple(ignore_fields)
    kept = [i for i in items if not _is_reindexed(i, items)]
    kept = [i for i in kept if not (i.kind in _MIRROR and _one_sided_value(i) == ""
                                    and isinstance(_one_sided_value(i), str))]
    kept.sort(key=lambda i: i.path.encode("utf-8", "surrogatepass"))
    kept = [i for i in kept if not _is_canonical_image(i)]
    kept = [i for i in kept if not is_ignored(i.path, fields)]
    return [i for i in kept if not (i.path == "metadata.namespace" and i.before is None)]


def compare(before: Any, after: Any, ignore_fields: Iterable[str] = ()) -> list[DiffItem]:
    """The reported differences between the signed document and the resource."""
    return remaining_differences(raw_diff(flatten(before), flatten(after)), ignore_fields)


def diff_json(items: Iterable[DiffItem]) -> str:
    """Go's JSON of the diff: ``{"items":[{"key":…,"values":{"after":…,"before":…}}]}``."""
    parts = [
        '{"key":' + to_json(i.path) + ',"values":{"after":' + to_json(i.after)
        + ',"before":' + to_json(i.before) + "}}"
        for i in items
    ]
    return '{"items":[' + ",".join(parts) + "]}"
