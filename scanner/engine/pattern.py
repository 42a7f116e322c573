"""The resource-versus-pattern walk of spec 4: anchors, lists, scalars, skip precedence.

A pattern is compiled once into a tree of nodes; ``match_pattern`` walks a resource
against it and returns ``None`` (pass) or a ``PatternError`` describing the outcome.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from scanner.engine.anchor import Anchor, parse_key
from scanner.engine.golang.fmt import is_number, sprint, type_name
from scanner.engine.metadata_expansion import expand, has_metadata_tags
from scanner.engine.operators import compare_scalar
from scanner.engine.operators import parse_go_float as parse_float

# error kinds
FAIL = "fail"
CONDITIONAL = "conditional"  # raised by a conditional anchor (skip-class, not aggregated)
GLOBAL = "global"  # raised by a global anchor (skip-class, not aggregated)
SKIP = "skip"  # aggregated skip (skip-class)
NEGATION = "negation"

_SKIP_CLASS = (CONDITIONAL, GLOBAL, SKIP)
_ANCHOR_PHASE = (Anchor.CONDITIONAL, Anchor.EQUALITY, Anchor.NEGATION, Anchor.EXISTENCE)
# anchors whose key missing from the resource turns a plain failure into an error (a negation
# key is expected to be missing, so it never counts)
_PRESENCE = (Anchor.CONDITIONAL, Anchor.EXISTENCE)
# anchors that put a key with them somewhere below it first in the plain-keys phase
_NESTED = (Anchor.CONDITIONAL, Anchor.EXISTENCE, Anchor.EQUALITY, Anchor.NEGATION, Anchor.GLOBAL)


@dataclass(slots=True)
class PatternError:
    """Why a pattern did not pass: kind, the path Kyverno reports, and its message."""

    kind: str
    path: str
    message: str

    @property
    def is_skip(self) -> bool:
        return self.kind in _SKIP_CLASS


@dataclass(frozen=True, slots=True)
class PatternOutcome:
    """The result of matching one whole pattern (spec 4.10 before wording)."""

    status: str  # "pass", "skip", "fail" or "error"
    path: str = ""
    message: str = ""


_PASSED = PatternOutcome("pass")


def _wrap(err: PatternError, kind: str, prefix: str) -> PatternError:
    return PatternError(kind, err.path, f"{prefix}: {err.message}")


def _mismatch(value: Any, pattern: Any, path: str) -> PatternError:
    return PatternError(
        FAIL, path, f"resource value '{sprint(value)}' does not match '{sprint(pattern)}' at path {path}"
    )


def _scalar_matches(value: Any, pattern: Any) -> bool:
    """Resource value against a scalar pattern (spec 4.7)."""
    if isinstance(pattern, str):
        if isinstance(value, str) and value == pattern:
            return True
        return compare_scalar(value, pattern)
    if isinstance(pattern, bool):
        return isinstance(value, bool) and value == pattern
    if pattern is None:
        if value is None or value is False or value == "":
            return True
        return is_number(value) and value == 0
    if is_number(pattern):
        if isinstance(value, bool):
            return False
        if is_number(value):
            return float(value) == float(pattern)
        if isinstance(value, str):
            parsed = parse_float(value)
            return parsed is not None and parsed == float(pattern)
        return False
    return False


class Node:
    __slots__ = ()

    def check(self, value: Any, path: str, seen: dict[str, bool]) -> PatternError | None:
        raise NotImplementedError


class ScalarNode(Node):
    __slots__ = ("pattern",)

    def __init__(self, pattern: Any) -> None:
        self.pattern = pattern

    def check(self, value: Any, path: str, seen: dict[str, bool]) -> PatternError | None:
        pattern = self.pattern
        if isinstance(value, list):
            if all(_scalar_matches(item, pattern) for item in value):
                return None
            return _mismatch(value, pattern, path)
        if not _scalar_matches(value, pattern):
            return _mismatch(value, pattern, path)
        return None


class ListNode(Node):
    __slots__ = ("items", "mode")

    def __init__(self, raw: list) -> None:
        if not raw:
            self.mode = "empty"
            self.items: list[Node] = []
        elif isinstance(raw[0], dict):
            self.mode = "maps"
            self.items = [compile_node(raw[0])]
        elif isinstance(raw[0], list):
            self.mode = "positional"
            self.items = [compile_node(item) for item in raw]
        else:
            self.mode = "scalar"
            self.items = [ScalarNode(raw[0])]

    def check(self, value: Any, path: str, seen: dict[str, bool]) -> PatternError | None:
        if not isinstance(value, list):
            return PatternError(
                FAIL,
                path,
                f"validation rule failed at path {path}, resource does not satisfy the expected overlay pattern",
            )
        mode = self.mode
        if mode == "empty":
            return PatternError(FAIL, path, "pattern Array empty")
        if mode == "scalar":
            return self.items[0].check(value, path, seen)
        if mode == "maps":
            return _check_elements(value, path, seen, self.items[0])
        # positional
        if len(value) < len(self.items):
            return PatternError(
                FAIL,
                "",
                "validate Array failed, array length mismatch, resource Array len is "
                f"{len(value)} and pattern Array len is {len(self.items)}",
            )
        return _check_elements(value[:len(self.items)], path, seen, None, self.items)  # (value may be longer)


def _contains_anchor(value: Any) -> bool:
    if isinstance(value, dict):
        return any(parse_key(k)[0] in _NESTED or _contains_anchor(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_contains_anchor(v) for v in value)
    return False


class _Entry:
    __slots__ = ("anchor", "existence", "existence_type_error", "full_key", "key", "node", "star", "step")

    def __init__(self, full_key: str, value: Any) -> None:
        anchor, key = parse_key(full_key)
        if anchor is Anchor.ADD_IF_NOT_PRESENT:  # not an anchor in validate: a literal key
            anchor, key = Anchor.PLAIN, full_key
        self.anchor = anchor
        self.full_key = full_key
        self.key = key
        self.step = f"{key}/"  # what the key adds to the path of its value
        self.star = value == "*" and isinstance(value, str)
        self.node = None if anchor is Anchor.NEGATION else compile_node(value)
        # existence anchors: one node per pattern map, None for an element that is not a map
        self.existence: list[Node | None] = []
        self.existence_type_error = ""
        if anchor is Anchor.EXISTENCE:
            if isinstance(value, list):
                self.existence = [compile_node(item) if isinstance(item, dict) else None for item in value]
            else:
                self.existence_type_error = (
                    f"invalid pattern type {type_name(value)}: Pattern has to be of list to compare against resource"
                )


class MapNode(Node):
    __slots__ = ("anchors", "expandable", "expansions", "plain", "presence", "raw")

    def __init__(self, raw: dict) -> None:
        self.raw = raw
        anchors: list[_Entry] = []
        front: list[_Entry] = []
        back: list[_Entry] = []
        for full_key in sorted(raw):
            entry = _Entry(full_key, raw[full_key])
            if entry.anchor in _ANCHOR_PHASE:
                anchors.append(entry)
            elif entry.anchor is Anchor.GLOBAL or (
                not isinstance(raw[full_key], str) and _contains_anchor(raw[full_key])
            ):
                front.append(entry)
            else:
                back.append(entry)
        self.anchors = anchors
        self.plain = list(reversed(front)) + back
        self.presence = [(e.full_key, e.key) for e in anchors if e.anchor in _PRESENCE]
        self.expandable = has_metadata_tags(raw)
        # this map expanded against resources' metadata keys, by the keys each expansion used
        self.expansions: dict[tuple, MapNode] | None = None

    def check(self, value: Any, path: str, seen: dict[str, bool]) -> PatternError | None:
        if not isinstance(value, dict):
            return PatternError(
                FAIL,
                path,
                f"pattern and resource have different structures. Path: {path}. "
                f"Expected map[string]interface {{}}, found {type_name(value)}",
            )
        if self.expandable:
            return _expanded_node(self, value, seen)._check_map(value, path, seen)
        return self._check_map(value, path, seen)

    def _check_map(self, value: dict, path: str, seen: dict[str, bool]) -> PatternError | None:
        if self.anchors:
            err = self._check_anchors(value, path, seen)
            if err is not None:
                return err
        for entry in self.plain:  # a plain key's value checked here, without a call (most entries)
            key = entry.key
            if entry.anchor is not Anchor.PLAIN:
                err = _check_entry(entry, value, path, seen)
            elif entry.star:
                if value.get(key) is not None:
                    continue
                return PatternError(FAIL, path, f"{path}/{key} not found")
            else:
                err = entry.node.check(value.get(key), path + entry.step, seen)  # type: ignore[union-attr]
            if err is not None:
                return err
        return None

    def _check_anchors(self, value: dict, path: str, seen: dict[str, bool]) -> PatternError | None:
        """The anchored keys' phase: a failure, the skip it amounts to, or None to go on."""
        for full_key, key in self.presence:
            if not seen.get(full_key):
                seen[full_key] = key in value
        applied = 0
        skips: list[PatternError] = []
        has_direct_anchor_skip = False
        for entry in self.anchors:
            err = _check_entry(entry, value, path, seen)
            if err is None:
                applied += 1
            elif err.kind in _SKIP_CLASS:
                skips.append(err)
                if err.kind != SKIP:
                    has_direct_anchor_skip = True
            elif has_direct_anchor_skip:
                continue
            else:
                return err
        if skips and (applied == 0 or has_direct_anchor_skip):
            return PatternError(SKIP, path, "; ".join(e.message for e in skips))
        return None


def _check_entry(entry: _Entry, resource: dict, path: str, seen: dict[str, bool]) -> PatternError | None:
    """An anchored key (plain keys are checked in ``MapNode._check_map``)."""
    anchor = entry.anchor
    key = entry.key
    present = key in resource
    child_path = path + entry.step
    if anchor is Anchor.CONDITIONAL:
        if not present:
            return PatternError(
                CONDITIONAL, child_path,
                "conditional anchor mismatch: conditional anchor key doesn't exist in the resource",
            )
        err = entry.node.check(resource[key], child_path, seen)  # type: ignore[union-attr]
        if err is not None:
            return PatternError(CONDITIONAL, err.path, f"conditional anchor mismatch: {err.message}")
        return None
    if anchor is Anchor.EQUALITY:
        if not present:
            return None
        return entry.node.check(resource[key], child_path, seen)  # type: ignore[union-attr]
    if anchor is Anchor.NEGATION:
        if present:
            return PatternError(
                NEGATION, child_path,
                f"negation anchor matched in resource: {child_path} is not allowed",
            )
        return None
    if anchor is Anchor.GLOBAL:
        if not present:
            return None
        err = entry.node.check(resource[key], child_path, seen)  # type: ignore[union-attr]
        if err is not None:
            return PatternError(GLOBAL, err.path, f"global anchor mismatch: {err.message}")
        return None
    # existence
    if not present:
        return None
    items = resource[key]
    if not isinstance(items, list):
        return PatternError(
            FAIL, child_path,
            f"invalid resource type {type_name(items)}: Existence ^ () anchor can be used only "
            "on list/array type resource",
        )
    if entry.existence_type_error:
        return PatternError(FAIL, child_path, entry.existence_type_error)
    for pattern_map in entry.existence:
        if pattern_map is None:
            return PatternError(
                FAIL, child_path,
                "invalid pattern type []interface {}: Pattern has to be of type map to compare against items "
                "in resource",
            )
        if not any(pattern_map.check(element, f"{child_path}{i}/", seen) is None for i, element in enumerate(items)):
            return PatternError(
                FAIL, child_path, f"existence anchor validation failed at path {child_path}"
            )
    return None


# -- metadata wildcard expansion (spec 4.3 step 1, Kyverno's wildcards.ExpandInMetadata) ---------

# the prefix Kyverno's anchor.String writes in front of "(key)" for each anchor type


class _Seen(dict):
    """The per-evaluation anchor presence table, plus the metadata expansions made so far.

    Kyverno's validateMap rewrites the pattern map in place, so a key expanded for one list
    element stays expanded for the following elements of the same evaluation.
    """

    # ``expanded``: keyed by the id of the pattern map as written (expanded copies share their
    # sub-maps with it, as Kyverno's rewritten map shares them); made by the evaluation's first
    # expansion, as most evaluations have none
    __slots__ = ("expanded",)
    expanded: dict[int, MapNode]


_EXPANSIONS_KEPT = 64  # expansions kept per pattern map (resources repeat a few sets of metadata keys)


def _expanded_node(node: MapNode, resource: dict, seen: dict[str, bool]) -> MapNode:
    """``node`` as the current evaluation has rewritten it, expanded against ``resource``."""
    walk = None
    if isinstance(seen, _Seen):
        walk = getattr(seen, "expanded", None)
        if walk is None:
            walk = seen.expanded = {}
    current = walk.get(id(node.raw), node) if walk is not None else node
    expanded = expand(current.raw, resource)
    if expanded is None:
        return current
    raw, signature = expanded
    known = current.expansions
    if known is None:
        known = current.expansions = {}
    result = known.get(signature)
    if result is None:
        if len(known) >= _EXPANSIONS_KEPT:
            known.clear()
        result = known[signature] = MapNode(raw)
    if walk is not None:
        walk[id(node.raw)] = result
    return result


def compile_node(raw: Any) -> Node:
    if isinstance(raw, dict):
        return MapNode(raw)
    if isinstance(raw, list):
        node = ListNode(raw)
        return node
    return ScalarNode(raw)


class CompiledPattern:
    """A pattern compiled once; ``match`` evaluates it against one document."""

    __slots__ = ("node", "raw")

    def __init__(self, raw: Any) -> None:
        self.raw = raw
        self.node = compile_node(raw)

    def match(self, document: Any) -> PatternOutcome:
        seen = _Seen()
        err = self.node.check(document, "/", seen)
        if err is None:
            return _PASSED
        if err.kind in _SKIP_CLASS:
            return PatternOutcome("skip", "", err.message)
        if err.kind == NEGATION:
            return PatternOutcome("fail", err.path, err.message)
        if not all(seen.values()) or err.path == "":
            return PatternOutcome("error", "", err.message)
        return PatternOutcome("fail", err.path, err.message)


def _check_elements(values: list[Any], path: str, seen: Any, node: Node | None = None,
                    nodes: Sequence[Node] = ()) -> PatternError | None:
    """Each element against its pattern node (``node`` for every one, else ``nodes`` by
    position), in order: the first failure; a skip when every element was skipped (none
    applied); else None."""
    applied = 0
    skips: list[PatternError] = []
    for i, element in enumerate(values):
        err = (node if node is not None else nodes[i]).check(element, f"{path}{i}/", seen)
        if err is None:
            applied += 1
        elif err.kind in _SKIP_CLASS:
            skips.append(err)
        else:
            return err
    if skips and applied == 0:
        return PatternError(SKIP, path, "; ".join(e.message for e in skips))
    return None
