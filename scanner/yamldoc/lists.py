"""Fast reading of ``kubectl get -o yaml`` List dumps: the items are split at the text level.

PyYAML composes one huge document far more slowly than many small ones (a 12 MB List of
2,000 objects: 7 s to compose whole, under 2 s item by item), and a whole List cannot be
shared between worker processes. kubectl prints a List in one fixed block layout
(``items:`` at column 0, each item starting with ``- `` at column 0, its lines indented by
two). When a text has exactly that layout, no anchors and a single document, each item is
cut out, dedented by two columns and parsed on its own; anything else returns None and the
caller parses the text as a whole.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

import yaml

try:
    from yaml import CSafeLoader as _Loader
except ImportError:  # pragma: no cover - PyYAML built without libyaml
    from yaml import SafeLoader as _Loader  # type: ignore[assignment]


@dataclass(frozen=True, slots=True)
class ItemText:
    index: int  # position in ``items``
    line: int  # 1-based line of the item's ``- ``
    text: str  # the item, dedented by two columns


_ITEMS_KEY = re.compile(r"^items:$", re.MULTILINE)
_PAST_ITEMS = re.compile(r"\n(?!- |  |\n|\Z)")  # the break before a line that is no part of an item
# what libyaml reads differently at column 0, where an item's line is once dedented: a document
# marker or a directive there, text (or an error) at column 2
_OTHER_BREAKS = ("\r", "\x85", "\u2028", "\u2029")  # line breaks to libyaml besides "\n"
_COLUMN_ZERO_MARKS = ("---", "...", "%")


SPLIT_MIN_BYTES = 256 * 1024  # below this size, a List is read whole: splitting would not pay


def large_list_items(text: str | bytes, wanted: Callable[[int], bool] | None = None) -> list[ItemText] | None:
    """``split_list_items`` of a text larger than ``SPLIT_MIN_BYTES``; None for a smaller one."""
    if len(text) <= SPLIT_MIN_BYTES:
        return None
    return split_list_items(text, wanted)


def _column_zero_mark(text: str, start: int, end: int) -> bool:
    """Whether a line of ``text[start:end]`` (``start`` a line's start) begins with ``- `` or two
    spaces and then a document marker or a directive: the marks are rare, their lines' starts
    are checked where they occur (no pass over every line)."""
    for mark in _COLUMN_ZERO_MARKS:
        at = text.find(mark, start + 2, end)
        while at >= 0:
            line = at - 2
            if text[line:at] in ("- ", "  ") and (line == start or text[line - 1] == "\n"):
                return True
            at = text.find(mark, at + 1, end)
    return False


def split_list_items(text: str | bytes, wanted: Callable[[int], bool] | None = None) -> list[ItemText] | None:
    """The items of a single-document ``kind: *List`` in kubectl's block layout (those whose
    index is ``wanted``, when given), or None."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError:
            return None
    if "&" in text or "\n---" in text or text.startswith(("---", "%")) or "\n..." in text or "\t" in text:
        return None
    if any(brk in text for brk in _OTHER_BREAKS):
        return None  # lines are counted and cut at "\n" only
    key = _ITEMS_KEY.search(text)
    if key is None:
        return None
    past = _PAST_ITEMS.search(text, key.end())
    end = len(text) if past is None else past.start() + 1
    starts = []
    at = text.find("\n- ", key.end(), end)
    while at >= 0:
        starts.append(at + 1)
        at = text.find("\n- ", at + 1, end)
    if not starts or text[key.end():starts[0]].strip("\n"):
        return None  # no items, or indented lines before the first
    if _column_zero_mark(text, starts[0], end):
        return None
    rest = text[end:].split("\n")
    if any(line.startswith(("- ", "-\t", " ")) and not line.startswith("  ") for line in rest):
        return None
    try:
        header = yaml.load(text[:key.start()] + text[end:], Loader=_Loader)
    except yaml.YAMLError:
        return None
    if not isinstance(header, dict) or "items" in header:
        return None
    kind = header.get("kind")
    if not isinstance(kind, str) or not kind.endswith("List"):
        return None
    items = []
    line = text.count("\n", 0, starts[0]) + 1
    for n, (first, last) in enumerate(zip(starts, [*starts[1:], end], strict=True)):
        if wanted is None or wanted(n):
            # the item's lines without their first two columns ("- " or "  "; an empty line has
            # none), each with its line break: a block scalar that ends the item keeps its last
            # break ("|" clips to it, "|+" keeps it and the empty lines before the next item)
            chunk = text[first + 2:last]
            items.append(ItemText(n, line, chunk.replace("\n  ", "\n")))
        line += text.count("\n", first, last)
    return items
