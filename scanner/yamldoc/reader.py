"""YAML/JSON text -> documents as plain JSON-shaped data, with positions kept beside the data.

Documents are read the way Kyverno's loaders read them (sigs.k8s.io/yaml on go-yaml v2; see
:mod:`scanner.yamldoc.loader`). Positions never enter the data: a document keeps its start
line, and, when asked for, its node tree so that ``locate("/spec/rules/0/name")`` can give the
line and column of any value. Text in the plain block style most manifests use is read by
:mod:`scanner.yamldoc.block` (same data, faster); a large kubectl List dump item by item
(:mod:`scanner.yamldoc.lists`); any other text by libyaml.

Untrusted input is bounded by :class:`~scanner.yamldoc.limits.YamlLimits` before any data is
constructed. libyaml's composer recurses on the C stack: text whose nesting could exceed what
the stack holds is composed in a thread with a wide stack, and text deeper still, or large
enough to stream, from libyaml's events in Python by :mod:`scanner.yamldoc.events`
(iteratively, same limits).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import yaml

from scanner.errors import Location, ManifestError
from scanner.yamldoc.block import read_block_documents
from scanner.yamldoc.document import ErrorHandler, YamlDocument, list_items, syntax_error
from scanner.yamldoc.events import iter_event_documents
from scanner.yamldoc.limits import (
    DEFAULT_LIMITS,
    INLINE_SAFE_DEPTH,
    WIDE_SAFE_DEPTH,
    YamlLimits,
    check_node,
    nesting_bound,
    size_within,
    within_limits,
)
from scanner.yamldoc.lists import ItemText, large_list_items
from scanner.yamldoc.loader import new_loader, report_repeated

_WIDE_STACK_BYTES = 512 * 1024 * 1024  # reserved, not committed, by the composing thread
_wide_lock = threading.Lock()
_wide_pool: ThreadPoolExecutor | None = None


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


def iter_documents(
    text: str | bytes,
    path: str = "<input>",
    keep_nodes: bool = False,
    *,
    limits: YamlLimits = DEFAULT_LIMITS,
    split_lists: bool = False,
    on_error: ErrorHandler | None = None,
    on_warning: ErrorHandler | None = None,
    null_maps: frozenset[str] = frozenset(),
) -> Iterator[YamlDocument]:
    """Yield the non-empty documents of ``text``; a syntax error raises ``ManifestError``.

    Documents before the error are yielded first, so callers keep what was readable.
    With ``split_lists`` a document whose ``kind`` ends in ``List`` and that has an
    ``items`` list is yielded as its items (``YamlDocument.item`` set). A document beyond
    ``limits`` raises ``ManifestError``, or, when ``on_error`` is given, is reported to it
    and skipped while the rest of the text is still read.

    A key repeated in a mapping is an error (the document is not read), unless ``on_warning``
    is given: then the key keeps its last value, as Kyverno reads manifests, and a located
    warning is handed to ``on_warning`` before the document is yielded.

    Where the block reader reads a document, the null values of the keys in ``null_maps`` are
    read as ``{}`` (``YamlDocument.null_maps`` says which keys a document had so read).
    """
    check_file_size(text, path, limits)
    if split_lists and not keep_nodes:
        pieces = large_list_items(text)
        if pieces is not None:
            try:
                yield from iter_list_items(pieces, path, limits=limits, on_error=on_error, on_warning=on_warning,
                                           null_maps=null_maps)
            except ManifestError:
                # libyaml parses the whole List before it constructs an item: where the text
                # has an error the items do not show first (a syntax error after a bad value),
                # the file's error is the one reading it whole gives
                for _ in _composed_documents(text, path, False, limits, True, None, _ignore):
                    pass
                raise
            return
    if not keep_nodes and len(text) <= limits.stream_bytes and size_within(text, limits):
        documents = _block_documents(text, split_lists, limits.max_depth, null_maps)
        if documents is not None:
            for index, (data, line) in enumerate(documents):
                if data is not None:
                    yield YamlDocument(data, path, index, line, null_maps=null_maps)
            return
    yield from _composed_documents(text, path, keep_nodes, limits, split_lists, on_error, on_warning)


def _ignore(_: ManifestError) -> None:
    """A warning handler that drops the warning (already reported once)."""


def check_file_size(text: str | bytes, path: str, limits: YamlLimits = DEFAULT_LIMITS) -> None:
    """Refuse a whole text beyond ``limits.max_file_bytes`` before reading any of it."""
    if len(text) > limits.max_file_bytes:
        raise ManifestError(f"file too large: {len(text)} bytes (limit {limits.max_file_bytes})", Location(path))


def _composed_documents(text: str | bytes, path: str, keep_nodes: bool, limits: YamlLimits, split_lists: bool,
                        on_error: ErrorHandler | None,
                        on_warning: ErrorHandler | None = None) -> Iterator[YamlDocument]:
    """The documents of ``text`` composed by libyaml (or, where it cannot, by the event composer)."""
    bound = nesting_bound(text)
    if bound > WIDE_SAFE_DEPTH or len(text) > limits.stream_bytes:
        yield from _event_documents(text, path, keep_nodes, limits, split_lists, on_error, on_warning=on_warning)
        return
    compose = None if bound <= INLINE_SAFE_DEPTH else _wide_executor()
    aliased = ("&" in text) if isinstance(text, str) else (b"&" in text)
    checked = not aliased and within_limits(text, bound, limits)
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
                     null_maps: frozenset[str] = frozenset()) -> list[tuple[Any, int]] | None:
    """The documents of ``text`` by the block reader (see :mod:`scanner.yamldoc.block`), or None
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
    """The documents of ``text`` from index ``first`` on, composed by :mod:`scanner.yamldoc.events`."""
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


def iter_list_items(pieces: list[ItemText], path: str, *, limits: YamlLimits = DEFAULT_LIMITS,
                    on_error: ErrorHandler | None = None,
                    on_warning: ErrorHandler | None = None,
                    null_maps: frozenset[str] = frozenset()) -> Iterator[YamlDocument]:
    """The documents of the items cut out of one List dump (see :mod:`scanner.yamldoc.lists`),
    located in the dump's file: ``index`` 0, ``item`` the item's index in the List
    (``null_maps``: as ``iter_documents``)."""
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
            for doc in iter_documents(piece.text, path, limits=limits, on_warning=warnings,
                                      on_error=None if on_error is None else errors, null_maps=null_maps):
                read = True
                yield YamlDocument(doc.data, path, 0, piece.line + doc.line - 1, None, piece.index, doc.null_maps)
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
