"""A fast reader for the plain block YAML that manifests are mostly written in.

Kubernetes manifests, kubectl dumps and Kustomize files are almost always block mappings
and sequences of one-line scalars: plain, quoted (with escapes), ``{}``, ``[]``, a flow
sequence of scalars, or a ``|``/``|-`` literal block. This module reads that subset line
by line, about twice as fast as libyaml's node graph composed and constructed in Python,
and gives the same data as :mod:`scanner.yamldoc.loader` (go-yaml v2's scalar rules,
:mod:`scanner.yamldoc.scalars`). Anything beyond it (anchors, aliases, tags, flow mappings,
nested flow collections, multi-line plain or quoted scalars, folded or kept block scalars,
tabs, CR line breaks, complex or non-text keys, a repeated key, any syntax error) makes it
give up, and the caller reads the text with libyaml instead: it never guesses.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

from scanner.yamldoc.scalars import BOOL, INT, MERGE, NULL, PLAIN, STR, resolved

# characters libyaml accepts in a stream, but for the line breaks it knows besides "\n"
# (CR, NEL, LS, PS), tabs and the byte-order mark: text with any other stays with libyaml
_PRINTABLE_BYTES = b"\n" + bytes(range(0x20, 0x7F))
_HIGH_BYTES = bytes(range(0x80, 0x100))  # the bytes of UTF-8 sequences beyond ASCII
_OUTSIDE_PATTERN = "[^\n\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]"
# a plain scalar cannot start with these (some may with a following non-space; not here)
_INDICATORS = frozenset("-?:,[]{}#&*!|>'\"%@`")
# libyaml refuses a key that runs more than 1024 characters before its ":" (with some margin here)
_KEY_LIMIT = 1000
# plain keys known to be text (most keys of a corpus repeat): no resolving, no checks
_TEXT_KEYS: set[str] = set()
_TEXT_KEYS_LIMIT = 65_536
_BLOCK_HEADERS = {"|": True, "|-": False}  # literal block scalar -> keeps its final line break

Document = tuple[Any, int]  # data (None for an empty document) and its first line (1-based)


class _Unsupported(Exception):
    """The text uses something beyond the subset."""


def read_block_documents(text: str | bytes, booleans: frozenset[str] | None = None,
                         max_depth: int = 200,
                         float_value: Callable[[float], Any] | None = None,
                         null_maps: frozenset[str] = frozenset()) -> list[Document] | None:
    """Each document of ``text`` (bytes in UTF-8) in order, or None where the text is beyond
    the subset, nests values close to ``max_depth`` deep (counting the document as 1 and
    each level below it), or (given ``booleans``) holds a plain boolean not among them.

    A plain float is given to ``float_value`` when set (its result is the value read). A null
    value of a key in ``null_maps`` (at any depth) is read as an empty mapping."""
    if max_depth < 3:
        return None
    if isinstance(text, bytes):
        outside = text.translate(None, _PRINTABLE_BYTES)  # bytes neither "\n" nor printable ASCII
        if outside.translate(None, _HIGH_BYTES):
            return None  # an ASCII control character (tab, CR, ...)
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError:
            return None
        wide = bool(outside)
    else:
        wide = not text.isascii()
        if not wide and text.encode("ascii").translate(None, _PRINTABLE_BYTES):
            return None  # an ASCII control character
    if wide and re.compile(_OUTSIDE_PATTERN).search(text):
        return None  # (the wide pattern takes milliseconds to compile: only when needed, once)
    try:
        return _Reader(text.split("\n"), booleans, max_depth, float_value, null_maps).documents()
    except _Unsupported:
        return None


class _Reader:
    """One text's documents, read line by line with a stack of the open collections."""

    __slots__ = ("booleans", "docs", "float_value", "line", "lines", "max_depth", "null_maps", "pending", "root",
                 "root_open", "stack")

    def __init__(self, lines: list[str], booleans: frozenset[str] | None, max_depth: int,
                 float_value: Callable[[float], Any] | None = None, null_maps: frozenset[str] = frozenset()) -> None:
        self.lines, self.booleans, self.max_depth = lines, booleans, max_depth
        self.float_value, self.null_maps = float_value, null_maps
        self.docs: list[Document] = []
        self.stack: list[list[Any]] = []  # [indent, container, is mapping], innermost last
        self.pending: tuple[Any, Any, int] | None = None  # (container, key or None, owner's indent)
        self.root_open, self.line = False, 0
        self.root: list | dict | None = None

    def documents(self) -> list[Document]:
        lines, stack, plain, keys = self.lines, self.stack, PLAIN, _TEXT_KEYS
        count = len(lines)
        i = 0
        while i < count:
            line = lines[i]
            i += 1
            content = line.lstrip(" ")
            if not content or content[0] == "#":
                continue
            indent = len(line) - len(content)
            if indent == 0 and content[0] in "-.%" and _is_marker(content):
                self._close(open_next=True)
                continue
            if " #" in content:
                cut = content.index(" #")
                if "'" in content[:cut] or '"' in content[:cut]:
                    raise _Unsupported
                content = content[:cut]
            if content[-1] == " ":
                content = content.rstrip(" ")
            entry = content[0] == "-" and (len(content) == 1 or content[1] == " ")
            pending = self.pending
            if pending is not None:  # the line after "key:" or "-": it may open the value
                self.pending = None
                container, key, owner = pending
                if indent > owner or (indent == owner and entry and key is not None):
                    if len(stack) >= self.max_depth - 2:
                        raise _Unsupported  # near the depth limit, which the loader words
                    child: Any = [] if entry else {}
                    container[-1 if key is None else key] = child
                    stack.append([indent, child, not entry])
                elif key in self.null_maps:
                    container[key] = {}
            elif self.root is None:
                self.root_open, self.line = True, i
                self.root = [] if entry else {}
                stack.append([indent, self.root, not entry])
            top = stack[-1]  # [indent, container, is mapping]
            if top[0] > indent:
                while stack and stack[-1][0] > indent:
                    stack.pop()
                if not stack:
                    raise _Unsupported
                top = stack[-1]
            if not entry and not top[2] and top[0] == indent:
                stack.pop()  # a sequence written at its key's indentation has ended
                if not stack:
                    raise _Unsupported
                top = stack[-1]
            if top[0] != indent or top[2] == entry:
                raise _Unsupported
            if entry:
                i = self._entry(top[1], indent, content, i)
                continue
            # a mapping's line: the common forms are read here, without a call
            mapping = top[1]
            if content[0] == '"':
                match = _QUOTED_KEY.match(content)
                if match is None or "\\" in match.group(1) or match.end() > _KEY_LIMIT:
                    i = self._pair(mapping, indent, content, i)
                    continue
                key, value = match.group(1), content[match.end():]
            else:
                key, separator, value = content.partition(": ")
                if not separator:
                    key = content[:-1]
                    if content[-1] != ":" or key not in keys:
                        i = self._pair(mapping, indent, content, i)
                        continue
                elif key not in keys:
                    i = self._pair(mapping, indent, content, i)
                    continue
            if key in mapping:
                raise _Unsupported  # the loader words the error
            if not value:
                mapping[key] = None
                self.pending = (mapping, key, indent)
                continue
            if value[0] == " ":
                value = value.lstrip(" ")
            if value[0] not in _INDICATORS and value[-1] != ":" and ": " not in value:
                known = plain.get(value)  # (tag, value) of a plain scalar seen before
                if known is not None:
                    tag = known[0]
                    if tag is STR:
                        mapping[key] = value
                        continue
                    if tag is INT or tag is NULL or (tag is BOOL and (self.booleans is None or value in self.booleans)):
                        mapping[key] = {} if tag is NULL and key in self.null_maps else known[1]
                        continue
            elif value == "{}":
                mapping[key] = {}
                continue
            i = self._pair(mapping, indent, content, i)
        self._close(open_next=False)
        return self.docs

    def _close(self, open_next: bool) -> None:
        """End the current document (if any) and, after ``---``, open an explicit one."""
        if self.pending is not None:
            container, key, _ = self.pending
            if key in self.null_maps:
                container[key] = {}
        if self.root_open:
            self.docs.append((self.root, self.line))
        self.stack.clear()
        self.pending = None
        self.root_open, self.root, self.line = open_next, None, 0

    def _entry(self, sequence: list, indent: int, content: str, next_index: int) -> int:
        rest = content[1:].lstrip(" ")
        if not rest:
            sequence.append(None)
            self.pending = (sequence, None, indent)
            return next_index
        if rest[0] == "-" and (len(rest) == 1 or rest[1] == " "):
            raise _Unsupported  # a compact nested sequence
        if rest.endswith(":") or ": " in rest:
            if len(self.stack) >= self.max_depth - 2:
                raise _Unsupported
            mapping: dict[str, Any] = {}
            sequence.append(mapping)
            column = indent + len(content) - len(rest)
            self.stack.append([column, mapping, True])
            return self._pair(mapping, column, rest, next_index)
        if rest in _BLOCK_HEADERS:
            value, next_index = self._literal(rest, indent, next_index)
            sequence.append(value)
            return next_index
        sequence.append(self._scalar(rest))
        return next_index

    def _pair(self, mapping: dict, indent: int, content: str, next_index: int) -> int:
        if content[0] in "'\"":
            key, end = _quoted(content)
            if end > _KEY_LIMIT:
                raise _Unsupported
            if content[end:end + 2] == ": ":
                value = content[end + 2:]
            elif content[end:] == ":":
                value = ""
            else:
                raise _Unsupported
        else:
            key, separator, value = content.partition(": ")
            if not separator:
                if content[-1] != ":":
                    raise _Unsupported  # a plain scalar where a key belongs
                key = content[:-1]
            if len(key) > _KEY_LIMIT:
                raise _Unsupported
            key = key.rstrip(" ")
            if not key or key[0] in _INDICATORS or key[-1] == ":":
                raise _Unsupported
            if key not in _TEXT_KEYS:
                if resolved(key)[0] != STR:
                    raise _Unsupported  # a key that is not text (true, 1, ~, <<): the loader converts it
                if len(_TEXT_KEYS) >= _TEXT_KEYS_LIMIT:
                    _TEXT_KEYS.clear()
                _TEXT_KEYS.add(key)
        if key in mapping:
            raise _Unsupported  # the loader words the error
        value = value.lstrip(" ")
        if not value:
            mapping[key] = None
            self.pending = (mapping, key, indent)
        elif value in _BLOCK_HEADERS:
            mapping[key], next_index = self._literal(value, indent, next_index)
        else:
            scalar = self._scalar(value)
            mapping[key] = {} if scalar is None and key in self.null_maps else scalar
        return next_index

    def _scalar(self, text: str) -> Any:
        first = text[0]
        if first in "'\"":
            value, end = _quoted(text)
            if end != len(text):
                raise _Unsupported
            return value
        if first == "[":
            return self._flow_sequence(text)
        if first == "{" and text == "{}":
            return {}
        return self._plain(text)

    def _plain(self, text: str) -> Any:
        if text[0] in _INDICATORS and (text[0] != "-" or text[1:2] in ("", " ")):
            raise _Unsupported
        if text[-1] == ":" or ": " in text:
            raise _Unsupported
        tag, value = resolved(text)
        if tag == STR:
            return text
        if tag == MERGE or (tag == BOOL and self.booleans is not None and text not in self.booleans):
            raise _Unsupported
        if value.__class__ is float:
            if not math.isfinite(value):
                raise _Unsupported  # an error the loader words
            if self.float_value is not None:
                return self.float_value(value)
        return value

    def _flow_sequence(self, text: str) -> list:
        """``[a, "b", 'c']``: a one-line flow sequence of scalars."""
        if text[-1] != "]":
            raise _Unsupported
        inner = text[1:-1]
        items: list[Any] = []
        if not inner.strip(" "):
            return items
        position, size = 0, len(inner)
        while True:
            while position < size and inner[position] == " ":
                position += 1
            if position < size and inner[position] in "'\"":
                value, end = _quoted(inner, position)
                items.append(value)
                position = end
                while position < size and inner[position] == " ":
                    position += 1
                if position < size and inner[position] != ",":
                    raise _Unsupported
            else:
                end = inner.find(",", position)
                if end < 0:
                    end = size
                piece = inner[position:end].rstrip(" ")
                if not piece or any(c in piece for c in "[]{}:"):
                    raise _Unsupported
                items.append(self._plain(piece))
                position = end
            if position >= size:
                return items
            position += 1  # the comma

    def _literal(self, header: str, owner: int, index: int) -> tuple[str, int]:
        """A ``|`` or ``|-`` block scalar whose owner (key or ``-``) is at column ``owner``,
        from line ``index``; returns its text and the index of the line after it."""
        lines, count = self.lines, len(self.lines)
        if index >= count - 1:
            raise _Unsupported
        first = lines[index]
        body = first.lstrip(" ")
        width = len(first) - len(body)
        if not body or width <= owner:
            raise _Unsupported  # leading empty lines or an empty scalar
        margin = " " * width
        kept: list[str] = []
        trailing = 0
        while index < count - 1:  # the last element follows the final line break: not a line
            line = lines[index]
            if not line:
                trailing += 1
            elif line[0] == " " and not line.strip(" "):
                raise _Unsupported  # a line of spaces only
            elif line.startswith(margin):
                if trailing:
                    kept.extend([""] * trailing)
                    trailing = 0
                kept.append(line[width:])
            else:
                break
            index += 1
        if index == count - 1 and lines[index]:
            raise _Unsupported  # the text ends without a line break inside the scalar
        text = "\n".join(kept)
        return (text + "\n" if _BLOCK_HEADERS[header] else text), index - trailing


_QUOTED_KEY = re.compile(r'"((?:[^"\\]|\\.)*)":(?: +|$)')
_DOUBLE = re.compile(r'"((?:[^"\\]|\\.)*)"')
_SINGLE = re.compile(r"'((?:[^']|'')*)'")
_ESCAPE = re.compile(r"\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|.)")
_ESCAPES = {"0": "\0", "a": "\a", "b": "\b", "t": "\t", "\t": "\t", "n": "\n", "v": "\v", "f": "\f",
            "r": "\r", "e": "\x1b", " ": " ", '"': '"', "/": "/", "\\": "\\", "N": "\x85", "_": "\xa0",
            "L": "\u2028", "P": "\u2029"}


def _quoted(text: str, start: int = 0) -> tuple[str, int]:
    """The value of the one-line quoted scalar at ``start`` and the index after it."""
    if text[start] == "'":
        match = _SINGLE.match(text, start)
        if match is None:
            raise _Unsupported  # it goes on past the line
        return match.group(1).replace("''", "'"), match.end()
    match = _DOUBLE.match(text, start)
    if match is None:
        raise _Unsupported
    value = match.group(1)
    if "\\" in value:
        value = _ESCAPE.sub(_unescape, value)
    return value, match.end()


def _unescape(match: re.Match) -> str:
    code = match.group(1)
    if len(code) == 1:
        try:
            return _ESCAPES[code]
        except KeyError:
            raise _Unsupported from None
    number = int(code[1:], 16)
    if 0xD800 <= number <= 0xDFFF or number > 0x10FFFF:
        raise _Unsupported
    return chr(number)


def _is_marker(content: str) -> bool:
    """Whether a line at column 0 is a document marker; ``---`` alone (or with a comment)
    is read here, any other marker, a directive or content after ``---`` is not."""
    if content.startswith("---"):
        rest = content[3:]
        if not rest.strip(" ") or (rest.lstrip(" ").startswith("#") and rest[0] == " "):
            return True
        if rest[0] == " ":
            raise _Unsupported
        return False  # "---x" is a plain scalar
    if content.startswith("...") or content[0] == "%":
        raise _Unsupported
    return False
