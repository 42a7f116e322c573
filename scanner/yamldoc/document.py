"""A document read from YAML text (data, index, line, node tree for locating values) and
the located errors of unreadable text."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import yaml

from scanner.errors import Location, ManifestError
from scanner.yamldoc.limits import YamlLimits

ErrorHandler = Callable[[ManifestError], None]
_MAP, _SEQ = yaml.MappingNode, yaml.SequenceNode


@dataclass(slots=True)
class YamlDocument:
    """One document of a file: its data, index in the file and starting line (1-based).

    ``item`` is set when the document is one item of a ``kind: *List`` document that was
    split (``split_lists=True``); ``index`` is then the index of the List document.
    """

    data: Any
    path: str
    index: int
    line: int
    node: yaml.Node | None = None
    item: int | None = None
    null_maps: frozenset[str] = frozenset()  # the keys whose null values were read as ``{}``

    def locate(self, pointer: str) -> Location:
        """Location of the value at JSON ``pointer`` (the nearest existing ancestor)."""
        node = self.node
        line, column = self.line, None
        if node is not None:
            line, column = node.start_mark.line + 1, node.start_mark.column + 1
            for raw in [p for p in pointer.split("/")[1:] if p != ""]:
                seg = raw.replace("~1", "/").replace("~0", "~")
                child = None
                if isinstance(node, yaml.MappingNode):
                    for k, v in node.value:
                        if isinstance(k, yaml.ScalarNode) and k.value == seg:
                            child = v
                            break
                elif isinstance(node, yaml.SequenceNode) and seg.isdigit():
                    idx = int(seg)
                    if idx < len(node.value):
                        child = node.value[idx]
                if child is None:
                    break
                node = child
                line, column = node.start_mark.line + 1, node.start_mark.column + 1
        return Location(self.path, line, column, pointer or None, self.index)


def _error_location(path: str, exc: yaml.YAMLError, index: int, text: str | bytes) -> Location:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    if mark is not None:
        return Location(path, mark.line + 1, mark.column + 1, None, index)
    if isinstance(exc, yaml.reader.ReaderError) and 0 <= exc.position <= len(text):
        before = text[:exc.position]
        newline = b"\n" if isinstance(text, bytes) else "\n"
        return Location(path, before.count(newline) + 1, None, None, index)  # type: ignore[arg-type]
    return Location(path, None, None, None, index)


def syntax_error(exc: yaml.YAMLError, path: str, index: int, limits: YamlLimits,
                 on_error: ErrorHandler | None, text: str | bytes = "") -> ManifestError | None:
    """The error to raise for a parser error; ``None`` when it was handed to ``on_error``.

    libyaml refuses nesting beyond its own depth limit (1000 levels, since 0.2.6) while
    scanning, before any node exists for the depth check: that is the same limit error,
    and the parser cannot go on after it, so the rest of the text is not read.
    """
    location = _error_location(path, exc, index, text)
    if "exceeded maximum nesting depth" in str(getattr(exc, "problem", "")):
        error = ManifestError(f"document nested too deeply (limit {limits.max_depth})", location)
        if on_error is not None:
            on_error(error)
            return None
        return error
    return ManifestError(_problem(exc), location)


def _problem(exc: yaml.YAMLError) -> str:
    if isinstance(exc, yaml.reader.ReaderError):  # a byte or character no YAML text may hold
        hint = " (the file must be UTF-8 text)" if "octet" in str(exc.reason) else ""
        return f"invalid YAML: {exc.reason}{hint}"
    problem = getattr(exc, "problem", None)
    context = getattr(exc, "context", None)
    if problem:
        return f"invalid YAML: {problem}" + (f" ({context})" if context else "")
    return f"invalid YAML: {exc}"


def list_items(node: yaml.Node) -> list[yaml.Node] | None:
    """The item nodes of a ``kind: *List`` mapping node with an ``items`` sequence."""
    if node.__class__ is not _MAP:
        return None
    kind = items = None
    for key, value in node.value:
        if key.__class__ is yaml.ScalarNode:
            if key.value == "kind" and value.__class__ is yaml.ScalarNode:
                kind = value.value
            elif key.value == "items" and value.__class__ is _SEQ:
                items = value.value
    if items is None or not isinstance(kind, str) or not kind.endswith("List"):
        return None
    return items
