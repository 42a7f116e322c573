"""YAML/JSON text -> documents as plain JSON-shaped data, with positions kept beside the data.

Documents are read the way Kyverno's loaders read them (sigs.k8s.io/yaml on go-yaml v2):
go-yaml v2's scalar rules (YAML 1.1 booleans with ``y``/``n``, ``0o``/``0x``/``0b`` ints,
timestamps kept as text), map keys turned into text, merge keys applied in order. Positions never
enter the data: a document keeps its start line, and, when asked for, its node tree so
that ``locate("/spec/rules/0/name")`` can give the line and column of any value. Text in the
plain block style most manifests use is read by :mod:`scanner.yamlblock` (same data, faster);
any other by libyaml.

Untrusted input is bounded by :class:`YamlLimits` before any data is constructed:
the byte size of each document, its nesting depth, and the size of its node graph with
every alias expanded (an alias bomb shares nodes, so the graph is small but the data it
describes is not). libyaml's composer recurses on the C stack; text whose nesting could
exceed what that stack holds, or that is large enough to stream, is composed from
libyaml's events in Python by :mod:`scanner.yamlevents` (iteratively, same limits).
"""

from __future__ import annotations

import base64
import binascii
import math
import re
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import yaml

from scanner.engine.gofmt import format_g
from scanner.engine.normalize import normalize_null_maps
from scanner.errors import Location, ManifestError
from scanner.yamlblock import read_block_documents
from scanner.yamlscalar import BINARY as _BINARY
from scanner.yamlscalar import BOOL as _BOOL
from scanner.yamlscalar import FLOAT as _FLOAT
from scanner.yamlscalar import INT as _INT
from scanner.yamlscalar import INT64_MAX as _INT64_MAX
from scanner.yamlscalar import INT64_MIN as _INT64_MIN
from scanner.yamlscalar import MAP as _MAP_TAG
from scanner.yamlscalar import MERGE as _MERGE
from scanner.yamlscalar import NULL as _NULL
from scanner.yamlscalar import SEQ as _SEQ_TAG
from scanner.yamlscalar import STR as _STR
from scanner.yamlscalar import resolved as _resolved

try:  # the C loader where present; same semantics, much faster
    from yaml import CSafeLoader as _BaseLoader
except ImportError:  # pragma: no cover - PyYAML built without libyaml
    from yaml import SafeLoader as _BaseLoader  # type: ignore[assignment]


class _Loader(_BaseLoader):  # type: ignore[misc,valid-type]
    """Safe loader that reads scalars and mappings as go-yaml v2 does, into JSON-shaped data.

    Plain scalars resolve by go-yaml v2's rules (see :mod:`scanner.yamlscalar`); tags other
    than bool, int, float and null are not interpreted (a tagged scalar is its text, a
    tagged collection what it would be untagged); map keys become text as
    sigs.k8s.io/yaml writes them into JSON. A repeated key is an error, unless ``repeated``
    is a list: then, as go-yaml v2 decodes (non-strict, as sigs.k8s.io/yaml's ``YAMLToJSON``
    that Kyverno reads manifests with), its last value is kept and the key is noted there.
    """

    repeated: list[tuple[str, yaml.Mark]] | None = None  # (key, where) of each repeated key

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict:  # type: ignore[override]
        if not isinstance(node, yaml.MappingNode):
            raise yaml.constructor.ConstructorError(
                None, None, f"expected a mapping node, but found {node.id}", node.start_mark
            )
        mapping: dict[str, Any] = {}
        self._fill_mapping(mapping, node, deep)
        return mapping

    def _fill_mapping(self, mapping: dict[str, Any], node: yaml.MappingNode, deep: bool) -> None:
        """Set the entries of ``node`` in order, as go-yaml v2 does: a merge key (``<<``)
        sets every key of the merged mapping(s), so it overrides the keys before it and
        is overridden by the keys after it; of several merged mappings the first wins."""
        explicit: set[str] = set()
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE and key_node.value == "<<":
                for merged in _merged_mappings(node, value_node):
                    self._fill_mapping(mapping, merged, deep)
                continue
            key = self.mapping_key(key_node, lambda n: self.construct_object(n, deep=deep))
            if key in explicit:
                self.repeated_key(node, key_node, key)
            explicit.add(key)
            mapping[key] = self.construct_object(value_node, deep=deep)

    def repeated_key(self, node: yaml.Node, key_node: yaml.Node, key: str) -> None:
        """A key set again in one mapping: an error, or noted (the caller sets the last value)."""
        if self.repeated is None:
            raise _duplicate_key(node, key_node, key)
        self.repeated.append((key, key_node.start_mark))

    def mapping_key(self, node: yaml.Node, construct: Callable[[yaml.Node], Any]) -> str:
        """The JSON text of a map key (sigs.k8s.io/yaml): numbers and booleans as text."""
        if node.tag == _FLOAT and node.__class__ is _SCALAR:
            return _float_key(_typed_value(node))  # an infinity is a fine key
        return _key_text(construct(node), node)

    def construct_untyped(self, node: yaml.Node) -> Any:
        """A node whose tag go-yaml v2 does not interpret: a scalar is its text (``!!binary``
        decoded), a mapping or sequence is read as if untagged."""
        cls = node.__class__
        if cls is _MAP:
            return self.construct_mapping(node)
        if cls is _SEQ:
            return self.construct_sequence(node)
        if node.tag == _BINARY:
            return _binary_text(node)
        return node.value

    def construct_typed(self, node: yaml.Node) -> Any:
        """A node tagged bool, int, float or null, implicitly or explicitly."""
        if node.__class__ is not _SCALAR:
            return self.construct_untyped(node)
        return _typed_value(node)

    construct_yaml_bool = construct_yaml_int = construct_yaml_null = construct_typed

    def construct_yaml_float(self, node: yaml.Node) -> Any:
        """A float value; JSON has no infinities or NaN, so sigs.k8s.io/yaml refuses them."""
        value = self.construct_typed(node)
        if value.__class__ is float and not math.isfinite(value):
            raise yaml.constructor.ConstructorError(
                None, None, f"{node.value!r} is not a JSON number", node.start_mark)
        return value

    def construct_tree(self, node: yaml.Node) -> Any:
        """``construct_document`` for a node graph without aliases, several times faster.

        Plain maps, sequences and the core scalar tags are built directly; any other node
        (another tag, a merge key, a complex key) is built by ``construct_document``, so
        the result is the same in every case. Recursive: only for depth-checked nodes.
        """
        cls = node.__class__
        if cls is _SCALAR:
            tag = node.tag
            if tag == _STR:
                return node.value
            if tag == _INT:
                return self.construct_yaml_int(node)
            if tag == _BOOL:
                return self.construct_yaml_bool(node)
            if tag == _NULL:
                return self.construct_yaml_null(node)
            if tag == _FLOAT:
                return self.construct_yaml_float(node)
        elif cls is _MAP and node.tag == _MAP_TAG:
            mapping: dict[str, Any] = {}
            for key_node, value_node in node.value:
                if key_node.__class__ is not _SCALAR or key_node.tag == _MERGE:
                    return self.construct_document(node)
                key = key_node.value if key_node.tag == _STR else self.mapping_key(key_node, self.construct_tree)
                if key in mapping:
                    self.repeated_key(node, key_node, key)
                if value_node.__class__ is _SCALAR and value_node.tag == _STR:
                    mapping[key] = value_node.value
                else:
                    mapping[key] = self.construct_tree(value_node)
            return mapping
        elif cls is _SEQ and node.tag == _SEQ_TAG:
            return [self.construct_tree(child) for child in node.value]
        return self.construct_document(node)

    def constructor(self, aliased: bool, max_depth: int) -> Callable[[yaml.Node], Any]:
        """``construct_tree`` where it applies (no aliases, nodes at most ``max_depth`` deep),
        else ``construct_document``."""
        return self.construct_document if aliased or max_depth > _TREE_DEPTH else self.construct_tree

    def resolve(self, kind: type, value: Any, implicit: tuple[bool, bool]) -> str:
        """The tag of a node: a plain scalar's by go-yaml v2's rules, a quoted one is text."""
        if kind is _SCALAR:
            if implicit[0]:
                return _resolved(value)[0]
            return _STR
        return _SEQ_TAG if kind is _SEQ else _MAP_TAG


_SCALAR, _MAP, _SEQ = yaml.ScalarNode, yaml.MappingNode, yaml.SequenceNode

_Loader.yaml_constructors = {
    None: _Loader.construct_untyped,
    _MAP_TAG: _Loader.construct_yaml_map,
    _SEQ_TAG: _Loader.construct_yaml_seq,
    _BOOL: _Loader.construct_yaml_bool,
    _INT: _Loader.construct_yaml_int,
    _NULL: _Loader.construct_yaml_null,
    _FLOAT: _Loader.construct_yaml_float,
}
assert not _Loader.yaml_path_resolvers

def _typed_value(node: yaml.ScalarNode) -> Any:
    """The value of a scalar tagged bool, int, float or null. An explicit tag must agree
    with what the text resolves to (go-yaml v2 refuses ``!!int 1.5``), except that an
    integer may be tagged float."""
    tag, value = _resolved(node.value)
    if tag == node.tag:
        return value
    if tag == _INT and node.tag == _FLOAT:
        return float(value)
    raise yaml.constructor.ConstructorError(
        None, None, f"{node.value!r} is not a valid {node.tag.rsplit(':', 1)[-1]}", node.start_mark)


def _merged_mappings(node: yaml.MappingNode, value: yaml.Node) -> list[yaml.MappingNode]:
    """The mappings a merge key merges, in the order go-yaml v2 sets them (first last)."""
    if value.__class__ is _MAP:
        return [value]
    if value.__class__ is _SEQ and all(item.__class__ is _MAP for item in value.value):
        return value.value[::-1]
    raise yaml.constructor.ConstructorError(
        "while constructing a mapping", node.start_mark,
        "a merge key (<<) needs a mapping or a list of mappings", value.start_mark)


def _binary_text(node: yaml.ScalarNode) -> str:
    """``!!binary`` as Go's JSON encoder writes the decoded bytes: each byte that is not
    part of valid UTF-8 becomes U+FFFD."""
    try:
        data = base64.b64decode(node.value.replace("\n", "").replace("\r", ""), validate=True)
    except binascii.Error as exc:
        raise yaml.constructor.ConstructorError(
            None, None, "!!binary value is not valid base64", node.start_mark) from exc
    return _ESCAPED_BYTE.sub("\ufffd", data.decode("utf-8", "surrogateescape"))


_ESCAPED_BYTE = re.compile("[\udc80-\udcff]")


def _duplicate_key(node: yaml.Node, key_node: yaml.Node, key: str) -> yaml.constructor.ConstructorError:
    return yaml.constructor.ConstructorError("while constructing a mapping", node.start_mark,
                                             f'mapping key "{key}" already defined', key_node.start_mark)


def _key_text(key: Any, node: yaml.Node) -> str:
    """sigs.k8s.io/yaml turns int and bool keys into text and refuses any other kind."""
    if key.__class__ is str:
        return key
    if key.__class__ is bool:
        return "true" if key else "false"
    if key.__class__ is int and _INT64_MIN <= key <= _INT64_MAX:
        return str(key)
    what = {type(None): "null", list: "a sequence", dict: "a mapping"}.get(type(key), f"{key} (beyond 64 bits)")
    raise yaml.constructor.ConstructorError(None, None, f"unsupported mapping key: {what}", node.start_mark)


def _float_key(value: float) -> str:
    text = format_g(value)
    return {"+Inf": ".inf", "-Inf": "-.inf", "NaN": ".nan"}.get(text, text)


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
_INLINE_SAFE_DEPTH = 2_000  # ~0.7 MB of C stack: safe in any thread
_WIDE_STACK_BYTES = 512 * 1024 * 1024  # reserved, not committed, by the worker thread
_WIDE_SAFE_DEPTH = 400_000
_LEADING = re.compile(r"^[ \t?-]*", re.MULTILINE)
_LEADING_B = re.compile(rb"^[ \t?-]*", re.MULTILINE)
_wide_lock = threading.Lock()
_wide_pool: ThreadPoolExecutor | None = None


def nesting_bound(text: str | bytes) -> int:
    """An upper bound on the nesting depth of any document in ``text`` (cheap, C speed).

    Block nesting needs indentation or a compact ``-``/``?`` indicator at the start of a
    line (at most two levels per column); flow nesting needs an unmatched bracket.
    """
    if len(text) <= _INLINE_SAFE_DEPTH:
        return len(text)
    return _indentation_bound(text)


def _indentation_bound(text: str | bytes) -> int:
    if isinstance(text, bytes):
        flow = text.count(b"[") + text.count(b"{") - text.count(b"[]") - text.count(b"{}")
        leading = max(map(len, _LEADING_B.findall(text)), default=0)
    else:
        flow = text.count("[") + text.count("{") - text.count("[]") - text.count("{}")
        leading = max(map(len, _LEADING.findall(text)), default=0)
    return flow + 2 * leading + 2


def _wide_executor() -> ThreadPoolExecutor:
    global _wide_pool
    with _wide_lock:
        if _wide_pool is None:
            previous = threading.stack_size(_WIDE_STACK_BYTES)
            try:
                pool = ThreadPoolExecutor(1, thread_name_prefix="yaml-compose")
                pool.submit(int).result()  # start the thread while the size is set
            finally:
                threading.stack_size(previous)
            _wide_pool = pool
        return _wide_pool


ErrorHandler = Callable[[ManifestError], None]


def new_loader(text: str | bytes, on_warning: ErrorHandler | None) -> _Loader:
    """A loader of ``text``; with ``on_warning``, a repeated key keeps its last value (and is
    reported by ``report_repeated``) rather than being an error."""
    loader = _Loader(text)
    if on_warning is not None:
        loader.repeated = []
    return loader


def report_repeated(loader: _Loader, path: str, index: int, on_warning: ErrorHandler | None) -> None:
    """Hand the keys repeated in what ``loader`` last constructed (document ``index``) to ``on_warning``."""
    if not loader.repeated or on_warning is None:
        return
    for key, mark in loader.repeated:
        on_warning(ManifestError(f'mapping key "{key}" already defined: its last value is used',
                                 Location(path, mark.line + 1, mark.column + 1, None, index)))
    loader.repeated.clear()


def iter_documents(
    text: str | bytes,
    path: str = "<input>",
    keep_nodes: bool = False,
    *,
    limits: YamlLimits = DEFAULT_LIMITS,
    split_lists: bool = False,
    on_error: ErrorHandler | None = None,
    items: Callable[[int], bool] | None = None,
    only_split: bool = False,
    null_maps: frozenset[str] = frozenset(),
    on_warning: ErrorHandler | None = None,
) -> Iterator[YamlDocument]:
    """Yield the non-empty documents of ``text``; a syntax error raises ``ManifestError``.

    Documents before the error are yielded first, so callers keep what was readable.
    With ``split_lists`` a document whose ``kind`` ends in ``List`` and that has an
    ``items`` list is yielded as its items (``YamlDocument.item`` set). A document beyond
    ``limits`` raises ``ManifestError``, or, when ``on_error`` is given, is reported to it
    and skipped while the rest of the text is still read.

    A kubectl-style List dump is read item by item (see ``scanner.yamllist``); then
    ``items`` selects which items to read (processes can share a file), and ``only_split``
    yields nothing for a text that is not such a dump.

    A null value of a key in ``null_maps`` (at any depth) is read as an empty mapping.

    A key repeated in a mapping is an error (the document is not read), unless ``on_warning``
    is given: then the key keeps its last value, as Kyverno reads manifests, and a located
    warning is handed to ``on_warning`` before the document is yielded.
    """
    if len(text) > limits.max_file_bytes:
        raise ManifestError(
            f"file too large: {len(text)} bytes (limit {limits.max_file_bytes})",
            Location(path),
        )
    if split_lists and not keep_nodes and len(text) > _SPLIT_MIN_BYTES:
        from scanner.yamllist import split_list_items

        pieces = split_list_items(text, items)
        if pieces is not None:
            yield from _iter_items(pieces, path, limits, on_error, null_maps, on_warning)
            return
    if only_split:
        return
    if not keep_nodes and len(text) <= limits.stream_bytes and _size_within(text, limits):
        documents = _block_documents(text, split_lists, limits.max_depth, null_maps)
        if documents is not None:
            for index, (data, line) in enumerate(documents):
                if data is not None:
                    yield YamlDocument(data, path, index, line)
            return
    composed = _composed_documents(text, path, keep_nodes, limits, split_lists, on_error, on_warning)
    if not null_maps:
        yield from composed
        return
    for doc in composed:
        normalize_null_maps(doc.data, null_maps)
        yield doc


def _composed_documents(text: str | bytes, path: str, keep_nodes: bool, limits: YamlLimits, split_lists: bool,
                        on_error: ErrorHandler | None,
                        on_warning: ErrorHandler | None = None) -> Iterator[YamlDocument]:
    """The documents of ``text`` composed by libyaml (or, where it cannot, by the event composer)."""
    bound = nesting_bound(text)
    if bound > _WIDE_SAFE_DEPTH or len(text) > limits.stream_bytes:
        yield from _event_documents(text, path, keep_nodes, limits, split_lists, on_error, on_warning=on_warning)
        return
    compose = None if bound <= _INLINE_SAFE_DEPTH else _wide_executor()
    aliased = ("&" in text) if isinstance(text, str) else (b"&" in text)
    checked = not aliased and _within_limits(text, bound, limits)
    loader = new_loader(text, on_warning)
    construct = loader.constructor(aliased, limits.max_depth)
    index = 0
    try:
        while True:
            try:
                if not loader.check_node():
                    break
                if compose is None:
                    node = loader.get_node()
                else:
                    node = compose.submit(loader.get_node).result()
                if node is None:
                    index += 1
                    continue
                for item, unit in _units(node, limits, path, index, aliased, split_lists, on_error, checked):
                    data = construct(unit)
                    report_repeated(loader, path, index, on_warning)
                    if data is not None or item is not None:
                        yield YamlDocument(
                            data, path, index, unit.start_mark.line + 1,
                            unit if keep_nodes else None, item,
                        )
            except yaml.YAMLError as exc:
                if "duplicate anchor" in str(getattr(exc, "context", "")):
                    # go-yaml v2 lets an anchor be defined again (an alias means the latest
                    # definition); libyaml's composer refuses it, the event composer does not
                    yield from _event_documents(text, path, keep_nodes, limits, split_lists, on_error, index,
                                                on_warning)
                    return
                error = syntax_error(exc, path, index, limits, on_error, text)
                if error is None:
                    return
                raise error from exc
            except RecursionError as exc:
                raise ManifestError(
                    "document nested too deeply", Location(path, None, None, None, index)
                ) from exc
            index += 1
    finally:
        loader.dispose()


def _block_documents(text: str | bytes, split_lists: bool, max_depth: int,
                     null_maps: frozenset[str]) -> list[tuple[Any, int]] | None:
    """The documents of ``text`` by the block reader (see :mod:`scanner.yamlblock`), or None
    where libyaml must read it: text beyond the reader's subset, or a List to be split."""
    documents = read_block_documents(text, max_depth=max_depth, null_maps=null_maps)
    if documents is not None and split_lists and any(_is_list(data) for data, _ in documents):
        return None
    return documents


def _is_list(data: Any) -> bool:
    """Whether a document is a ``kind: *List`` with an ``items`` list (as ``list_items`` reads)."""
    if data.__class__ is not dict:
        return False
    kind = data.get("kind")
    return kind.__class__ is str and kind.endswith("List") and data.get("items").__class__ is list


def _event_documents(text: str | bytes, path: str, keep_nodes: bool, limits: YamlLimits, split: bool,
                     on_error: ErrorHandler | None, first: int = 0,
                     on_warning: ErrorHandler | None = None) -> Iterator[YamlDocument]:
    """The documents of ``text`` from index ``first`` on, composed by :mod:`scanner.yamlevents`."""
    from scanner.yamlevents import iter_event_documents

    def from_first(exc: ManifestError) -> None:  # earlier documents were reported already
        if on_error is not None and (exc.location is None or (exc.location.document or 0) >= first):
            on_error(exc)

    def warned_from_first(exc: ManifestError) -> None:
        if on_warning is not None and (exc.location is None or (exc.location.document or 0) >= first):
            on_warning(exc)

    for doc in iter_event_documents(new_loader(text, on_warning), text, path, keep_nodes, limits, split,
                                    from_first if on_error is not None else None,
                                    warned_from_first if on_warning is not None else None):
        if doc.index >= first:
            yield doc


def _within_limits(text: str | bytes, bound: int, limits: YamlLimits) -> bool:
    """Whether every document of ``text`` (without aliases) is within ``limits`` by the text
    alone, so that no node graph needs walking: no document is longer than the text, none
    is nested deeper than its indentation and brackets allow, and a node takes at least a
    third of a character (``[:]`` is three nodes)."""
    if not _size_within(text, limits):
        return False
    if bound > limits.max_depth:
        bound = _indentation_bound(text)
    return bound <= limits.max_depth


def _size_within(text: str | bytes, limits: YamlLimits) -> bool:
    """Whether no document of ``text`` (without aliases) can be too long or hold too many nodes."""
    return len(text) <= limits.max_document_bytes and 3 * len(text) + 1 <= limits.max_nodes


_SPLIT_MIN_BYTES = 256 * 1024
_TREE_DEPTH = 500  # construct_tree recurses once per level


def _iter_items(pieces: list, path: str, limits: YamlLimits, on_error: ErrorHandler | None,
                null_maps: frozenset[str], on_warning: ErrorHandler | None = None) -> Iterator[YamlDocument]:
    for piece in pieces:
        def in_file(exc: ManifestError, piece: Any = piece) -> ManifestError:
            """``exc`` located in the file rather than in the item's text, whose lines are the
            file's without their first two columns (an empty line has none)."""
            loc = exc.location
            if loc is None or loc.line is None:
                return ManifestError(exc.message, Location(path, None, None, None, 0))
            column = loc.column
            if column is not None:
                lines = piece.text.split("\n")
                column += 2 if loc.line <= len(lines) and lines[loc.line - 1] else 0
            return ManifestError(exc.message, Location(path, piece.line + loc.line - 1, column, None, 0))

        read = False

        def errors(exc: ManifestError, handler: ErrorHandler | None = on_error, move: Any = in_file) -> None:
            nonlocal read
            read = True  # the item was read, and left out
            assert handler is not None
            handler(move(exc))

        warnings = None if on_warning is None else lambda exc, handler=on_warning, move=in_file: handler(move(exc))
        try:
            for doc in iter_documents(piece.text, path, limits=limits, null_maps=null_maps, on_warning=warnings,
                                      on_error=None if on_error is None else errors):
                read = True
                yield YamlDocument(doc.data, path, 0, piece.line + doc.line - 1, None, piece.index)
        except ManifestError as exc:
            raise in_file(exc) from exc
        if not read:  # an empty item ("- " alone): null, as in the whole List
            yield YamlDocument(None, path, 0, piece.line, None, piece.index)


def _units(
    node: yaml.Node,
    limits: YamlLimits,
    path: str,
    index: int,
    aliased: bool,
    split: bool,
    on_error: ErrorHandler | None,
    checked: bool = False,
) -> Iterator[tuple[int | None, yaml.Node]]:
    """The nodes to construct for one document: the document, or its List items (each
    checked against ``limits`` unless the text was already found ``checked``)."""
    items = list_items(node) if split else None
    units = [(None, node)] if items is None else list(enumerate(items))
    if checked:
        yield from units
        return
    for item, unit in units:
        try:
            check_node(unit, limits, path, index, aliased)
        except ManifestError as exc:
            if on_error is None:
                raise
            on_error(exc)
            continue
        yield item, unit


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


def load_documents(
    text: str | bytes, path: str = "<input>", keep_nodes: bool = False
) -> list[YamlDocument]:
    return list(iter_documents(text, path, keep_nodes))


def load_yaml_value(text: str) -> Any:
    """The first document of ``text`` as data (the loader behind JMESPath ``parse_yaml``)."""
    docs = load_documents(text, "<parse_yaml>")
    return docs[0].data if docs else None


def load_yaml_values(text: str | bytes) -> list[Any]:
    """Every document of ``text`` as data (the loader behind signed YAML manifests)."""
    return [doc.data for doc in iter_documents(text)]
