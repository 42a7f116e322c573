"""Bounds on untrusted YAML, checked before any data is constructed.

The byte size of each document, its nesting depth, and the size of its node graph with every
alias expanded (an alias bomb shares nodes, so the graph is small but the data it describes is
not). ``nesting_bound`` bounds the depth from the text alone, so that libyaml's recursive
composer is only given text its C stack can hold.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import yaml

from scanner.errors import Location, ManifestError

_MAP, _SEQ = yaml.MappingNode, yaml.SequenceNode


@dataclass(frozen=True, slots=True)
class YamlLimits:
    """Bounds on untrusted YAML; a document beyond any of them is rejected unconstructed."""

    max_file_bytes: int = 256 * 1024 * 1024
    max_document_bytes: int = 16 * 1024 * 1024
    max_depth: int = 200
    max_nodes: int = 2_000_000
    # files above this size are composed event by event, so that a `kind: List` streams
    # its items without the node graph of the whole List in memory
    stream_bytes: int = 32 * 1024 * 1024


DEFAULT_LIMITS = YamlLimits()


def check_node(node: yaml.Node, limits: YamlLimits, path: str, index: int, aliased: bool) -> None:
    """Reject ``node`` if its text, depth or alias-expanded size is beyond ``limits``.

    Without anchors in the text the graph is a tree and a plain walk suffices; with them,
    sizes and depths are memoised per node so a shared node is visited once, and a node
    that contains itself is reported as a recursive alias.
    """
    where = Location(path, node.start_mark.line + 1, node.start_mark.column + 1, None, index)
    if node.end_mark is not None:
        size = node.end_mark.index - node.start_mark.index
        if size > limits.max_document_bytes:
            raise ManifestError(
                f"document too large: {size} characters (limit {limits.max_document_bytes})", where
            )
    if aliased:
        total, depth = _graph_size(node, limits, where)
    else:
        total, depth = _tree_size(node, limits.max_depth)
    if depth > limits.max_depth:
        raise ManifestError(f"document nested too deeply (limit {limits.max_depth})", where)
    if total > limits.max_nodes:
        raise ManifestError(
            f"document too large: {total} values once aliases are expanded "
            f"(limit {limits.max_nodes})",
            where,
        )


def _tree_size(node: yaml.Node, max_depth: int) -> tuple[int, int]:
    stack = [(node, 1)]
    total = deepest = 0
    while stack:
        current, depth = stack.pop()
        total += 1
        if depth > deepest:
            deepest = depth
            if depth > max_depth:
                break
        cls = current.__class__
        if cls is _MAP:
            for key, value in current.value:
                stack.append((key, depth + 1))
                stack.append((value, depth + 1))
        elif cls is _SEQ:
            stack.extend((child, depth + 1) for child in current.value)
    return total, deepest


def _graph_size(node: yaml.Node, limits: YamlLimits, where: Location) -> tuple[int, int]:
    memo: dict[int, tuple[int, int]] = {}
    open_nodes: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(node, False)]
    while stack:
        current, done = stack.pop()
        key = id(current)
        if done:
            total, deepest = 1, 0
            for child in _children(current):
                size, depth = memo[id(child)]
                total += size
                deepest = max(deepest, depth)
            open_nodes.discard(key)
            memo[key] = (total, deepest + 1)
            if total > limits.max_nodes or deepest + 1 > limits.max_depth:
                return total, deepest + 1
            continue
        if key in memo:
            continue
        if key in open_nodes:
            raise ManifestError("recursive alias: a node contains itself", where)
        open_nodes.add(key)
        stack.append((current, True))
        for child in _children(current):
            if id(child) in open_nodes:
                raise ManifestError("recursive alias: a node contains itself", where)
            if id(child) not in memo:
                stack.append((child, False))
    return memo[id(node)]


def _children(node: yaml.Node) -> list[yaml.Node]:
    if node.__class__ is _MAP:
        return [n for pair in node.value for n in pair]
    if node.__class__ is _SEQ:
        return list(node.value)
    return []


# --- guarding libyaml's recursive composer --------------------------------------------
INLINE_SAFE_DEPTH = 2_000  # ~0.7 MB of C stack: safe in any thread
WIDE_SAFE_DEPTH = 400_000  # safe in the composing thread with a wide stack (see the reader)
_LEADING = re.compile(r"^[ \t?-]*", re.MULTILINE)
_LEADING_B = re.compile(rb"^[ \t?-]*", re.MULTILINE)


def nesting_bound(text: str | bytes) -> int:
    """An upper bound on the nesting depth of any document in ``text`` (cheap, C speed).

    Block nesting needs indentation or a compact ``-``/``?`` indicator at the start of a
    line (at most two levels per column); flow nesting needs an unmatched bracket.
    """
    if len(text) <= INLINE_SAFE_DEPTH:
        return len(text)
    return indentation_bound(text)


def indentation_bound(text: str | bytes) -> int:
    """``nesting_bound`` from the text's indentation and unmatched brackets, whatever its length."""
    if isinstance(text, bytes):
        flow = text.count(b"[") + text.count(b"{") - text.count(b"[]") - text.count(b"{}")
        leading = max(map(len, _LEADING_B.findall(text)), default=0)
    else:
        flow = text.count("[") + text.count("{") - text.count("[]") - text.count("{}")
        leading = max(map(len, _LEADING.findall(text)), default=0)
    return flow + 2 * leading + 2


def within_limits(text: str | bytes, bound: int, limits: YamlLimits) -> bool:
    """Whether every document of ``text`` (without aliases) is within ``limits`` by the text
    alone, so that no node graph needs walking: no document is longer than the text, none
    is nested deeper than its indentation and brackets allow, and a node takes at least a
    third of a character (``[:]`` is three nodes)."""
    if not size_within(text, limits):
        return False
    if bound > limits.max_depth:
        bound = indentation_bound(text)
    return bound <= limits.max_depth


def size_within(text: str | bytes, limits: YamlLimits) -> bool:
    """Whether no document of ``text`` (without aliases) can be too long or hold too many nodes."""
    return len(text) <= limits.max_document_bytes and 3 * len(text) + 1 <= limits.max_nodes
