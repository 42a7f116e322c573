"""YAML for the in-process Kustomize renderer: read files as ``kubectl kustomize`` would.

Kustomize reads YAML 1.2 (go-yaml v3), passes objects through JSON and writes them back;
the scanner reads the rendered text with YAML 1.1 rules. Where the two readings differ,
the in-process reader either gives the value kustomize's output is read back as, or
raises :class:`UnsupportedKustomization` so that the overlay goes to the external
renderer (which also words kustomize's errors):

- an integral float (``1.0``, ``1e3``, ``-0.0``) becomes an integer, as JSON writes it;
- a plain ``y``/``yes``/``on``/``off``/``no``/``n`` is a boolean only in 1.1: handed over;
- a plain timestamp (``2001-12-14``) is rewritten by kustomize (``2001-12-14T00:00:00Z``,
  differently by kind and position): handed over;
- an empty value in a flow mapping (``{a: }``) is ``""`` to kustomize: handed over;
- a merge key (``<<``) lets explicit keys win in go-yaml v3 wherever they stand: handed over;
- a mapping key that is not text (``1:``, ``true:``), which kustomize refuses: handed over;
- NEL, LS and PS (raw or escaped, ``"\\N"``) are written back as line breaks: handed over;
- a ``%YAML``/``%TAG`` directive, which kustomize refuses: handed over;
- anchors and very deep nesting: handed over.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import yaml

from scanner.sources.file_tree import FileTree
from scanner.yamldoc import DEFAULT_LIMITS, Loader, nesting_bound, read_block_documents
from scanner.yamldoc.scalars import NULL, STR


class UnsupportedKustomization(Exception):
    """The overlay uses something the in-process renderer does not reproduce exactly."""

    def __init__(self, reason: str, path: str = "") -> None:
        super().__init__(f"{path}: {reason}" if path else reason)
        self.reason = reason
        self.path = path


_YAML12_BOOLS = frozenset({"true", "True", "TRUE", "false", "False", "FALSE"})
_MAX_NESTING = 2_000  # composed inline by the scanner's own reader up to this depth


# text kustomize refuses or writes back changed, found before any parsing: a directive line,
# and NEL/LS/PS as characters or as the escapes of a double-quoted scalar
# (whether the text may hold what the regex finds, the regex for text and for bytes, why)
_REFUSED_TEXT: tuple[tuple[Callable[[Any], bool], re.Pattern[str], re.Pattern[bytes], str], ...] = (
    (lambda text: ("%" in text) if isinstance(text, str) else (b"%" in text),
     re.compile(r"^%", re.M), re.compile(rb"^%", re.M), "YAML directive (%YAML or %TAG)"),
    (lambda text: not text.isascii() or (("\\" in text) if isinstance(text, str) else (b"\\" in text)),
     re.compile(r"[\x85\u2028\u2029]|\\[NLP]|\\x85|\\u(?:0085|202[89])|\\U0000(?:0085|202[89])"),
     re.compile(rb"\xc2\x85|\xe2\x80[\xa8\xa9]|\\[NLP]|\\x85|\\u(?:0085|202[89])|\\U0000(?:0085|202[89])"),
     "NEL, LS or PS line break in a string (kustomize writes it back as a line break)"),
)
# a scalar that may be a timestamp to go-yaml (YYYY-M-D, then a time): the block reader,
# which does not know a scalar's style, is not used for text holding one
# (whether a text holds YYYY-M-D, found from its dashes: a pattern that starts with a literal is
# searched for that literal first, an order of magnitude faster than trying every position)
_DATE_TEXT = re.compile(r"-(?<=[0-9]{4}-)[0-9]{1,2}-[0-9]")
_DATE_BYTES = re.compile(_DATE_TEXT.pattern.encode())
_TIMESTAMP = re.compile(r"[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:[Tt ].*)?", re.S)
_TIMESTAMP_TAG = "tag:yaml.org,2002:timestamp"
_INT_RANGE = (-(2**63), 2**64 - 1)  # integers the scanner reads back as integers


def json_number(value: float) -> float | int:
    """A float as kustomize's JSON round trip gives it back. An integral value is written in
    its shortest decimal digits without a fraction (``1.0`` -> ``1``, ``-0.0`` -> ``0``,
    ``2.0**63`` -> ``9223372036854776000``) and so read back as an integer when that integer
    fits in 64 bits; any other float is written as the same float."""
    if value.is_integer() and abs(value) < 2.0**64:
        number = int(Decimal(repr(value)))
        if _INT_RANGE[0] < number <= _INT_RANGE[1]:
            return number
    return value


class _NativeLoader(Loader):  # type: ignore[misc,valid-type]
    """The scanner's loader, refusing what kustomize reads (or writes back) differently."""

    def resolve(self, kind: type, value: Any, implicit: tuple[bool, bool]) -> str:
        if kind is yaml.ScalarNode and implicit[0]:  # a plain scalar
            if value == "<<":
                raise UnsupportedKustomization("YAML merge key (<<)")
            if _TIMESTAMP.fullmatch(value):
                raise UnsupportedKustomization(f"YAML timestamp {value!r}")
        return str(super().resolve(kind, value, implicit))

    def mapping_key(self, node: yaml.Node, construct: Any) -> str:
        if node.tag != STR:
            raise UnsupportedKustomization("mapping key that is not text (kustomize refuses it)")
        return str(super().mapping_key(node, construct))

    def construct_yaml_bool(self, node: yaml.Node) -> bool:
        if node.value not in _YAML12_BOOLS:
            raise UnsupportedKustomization(f"YAML 1.1 boolean {node.value!r}")
        return bool(super().construct_yaml_bool(node))

    def construct_yaml_float(self, node: yaml.Node) -> Any:
        value = super().construct_yaml_float(node)
        return json_number(value) if value.__class__ is float else value

    def construct_untyped(self, node: yaml.Node) -> Any:
        if node.tag == _TIMESTAMP_TAG:
            raise UnsupportedKustomization(f"YAML timestamp {node.value!r}")
        return super().construct_untyped(node)


_NativeLoader.add_constructor("tag:yaml.org,2002:bool", _NativeLoader.construct_yaml_bool)
_NativeLoader.add_constructor("tag:yaml.org,2002:float", _NativeLoader.construct_yaml_float)
_NativeLoader.add_constructor(None, _NativeLoader.construct_untyped)


def _check_flow_empties(node: yaml.Node) -> None:
    """Refuse an empty plain scalar in a flow mapping (``{a: }``): go-yaml v3 reads it as
    ``""``, the scanner as null."""
    todo = [node]
    while todo:
        current = todo.pop()
        if isinstance(current, yaml.MappingNode):
            for key, value in current.value:
                for child in (key, value):
                    if current.flow_style and isinstance(child, yaml.ScalarNode) and child.tag == NULL \
                            and child.value == "" and not child.style:
                        raise UnsupportedKustomization("empty value in a flow mapping")
                    todo.append(child)
        elif isinstance(current, yaml.SequenceNode):
            todo.extend(current.value)


def parse_documents(text: bytes | str, path: str) -> list[Any]:
    """The non-empty documents of ``text``; anything unusual raises the fallback signal."""
    return [data for data, _, _ in parse_placed(text, path)]


Placed = tuple[Any, int, int]  # a document's data, its index in the file (empty ones counted) and its line


def parse_placed(text: bytes | str, path: str) -> list[Placed]:
    """``parse_documents`` with where each document is: its index among the file's documents
    and its first line, as the scanner's YAML reader places them (``iter_documents``)."""
    if len(text) > DEFAULT_LIMITS.max_file_bytes:
        raise UnsupportedKustomization("file too large", path)
    binary = isinstance(text, bytes)
    if (b"&" in text) if binary else ("&" in text):  # type: ignore[operator]
        raise UnsupportedKustomization("YAML anchors", path)  # kustomize expands them
    for needles, pattern, byte_pattern, reason in _REFUSED_TEXT:
        if (needles(text) and  # (most texts: the regex's pass is not needed)
                (byte_pattern if binary else pattern).search(text)):  # type: ignore[arg-type]
            raise UnsupportedKustomization(reason, path)
    dated = (_DATE_BYTES if binary else _DATE_TEXT).search(text) is not None  # type: ignore[arg-type]
    read = None if dated else read_block_documents(text, _YAML12_BOOLS, _MAX_NESTING, float_value=json_number)
    if read is not None:
        return [(data, index, line) for index, (data, line) in enumerate(read) if data is not None]
    bound = nesting_bound(text)
    if bound > _MAX_NESTING:
        raise UnsupportedKustomization("deeply nested YAML", path)
    loader = _NativeLoader(text)
    construct = loader.constructor(False, bound)
    documents: list[Placed] = []
    try:
        index = 0
        while loader.check_node():
            node = loader.get_node()
            assert node is not None  # check_node said there is one
            _check_flow_empties(node)
            data = construct(node)
            if data is not None:
                documents.append((data, index, node.start_mark.line + 1))
            index += 1
    except UnsupportedKustomization as exc:
        raise UnsupportedKustomization(exc.reason, path) from None
    except (yaml.YAMLError, RecursionError) as exc:
        raise UnsupportedKustomization(f"not valid YAML: {exc}", path) from exc
    finally:
        loader.dispose()
    return documents


class FileCache:
    """Parsed files by absolute path; callers get fresh copies they may change."""

    def __init__(self, tree: FileTree) -> None:
        self.tree = tree
        self.parsed: dict[str, list[Placed] | UnsupportedKustomization] = {}
        self.real_folders: dict[str, str] = {}

    def realpath(self, path: str) -> str:
        """``os.path.realpath`` of a normalized absolute path, its folder's resolved once: a
        tree's files share a few folders, and resolving a path checks every folder on the way."""
        folder, name = os.path.split(path)
        real = self.real_folders.get(folder)
        if real is None:
            real = self.real_folders[folder] = self.tree.realpath(folder)
        joined = os.path.join(real, name)
        return self.tree.realpath(joined) if self.tree.islink(joined) else joined

    def documents(self, path: str) -> list[Any]:
        cached = self.parsed.get(path)
        if cached is None:
            try:
                cached = parse_placed(self.tree.read(path), path)
            except OSError as exc:
                cached = UnsupportedKustomization(f"cannot read: {exc.strerror}", path)
            except UnsupportedKustomization as exc:
                cached = exc
            self.parsed[path] = cached
        if isinstance(cached, UnsupportedKustomization):
            raise cached
        return [clone(d) for d, _, _ in cached]

    def place(self, path: str, ordinal: int) -> tuple[int, int] | None:
        """The document index and line of the ``ordinal``-th document ``documents`` gave of
        ``path`` (None for a file not read)."""
        cached = self.parsed.get(path)
        if not isinstance(cached, list) or ordinal >= len(cached):
            return None
        return cached[ordinal][1], cached[ordinal][2]


def clone(value: Any) -> Any:
    """A deep copy of JSON-shaped data (dicts, lists, scalars), faster than ``copy``."""
    if type(value) is dict:
        return {k: clone(v) for k, v in value.items()}
    if type(value) is list:
        return [clone(v) for v in value]
    return value
