"""YAML documents composed from libyaml's events in Python, for text the C composer must not take.

libyaml's composer recurses on the C stack, and composes a whole document before any of it
can be constructed. This composer is iterative (nesting is bounded by
``YamlLimits.max_depth`` as events arrive, with the deep part consumed and reported) and
composes the ``items`` of a top-level ``kind: *List`` mapping one at a time, so a large
cluster export streams item by item. Used by :func:`scanner.yamldoc.reader.iter_documents`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import yaml

from scanner.errors import Location, ManifestError
from scanner.yamldoc.document import ErrorHandler, YamlDocument, list_items, syntax_error
from scanner.yamldoc.limits import YamlLimits, check_node
from scanner.yamldoc.loader import Loader, report_repeated

if TYPE_CHECKING:
    from yaml._yaml import Mark as _CMark

# The stubs let nodes hold only Python marks, while libyaml's events (and the nodes its own
# composer builds) carry C marks: node constructions below ignore that arg-type mismatch.

# --- event-driven composition: deep or very large text ----------------------------------
_LIST_KIND_LINE = re.compile(r"^kind:[ \t]*[\"']?[A-Za-z0-9]*List[\"']?[ \t]*(#.*)?$", re.MULTILINE)
_KIND_LINE = re.compile(r"^kind:", re.MULTILINE)


def _announces_list(text: str | bytes) -> bool:
    """True if the text's only top-level ``kind:`` line names a ``*List`` kind."""
    head = text if isinstance(text, str) else text.decode("utf-8", "replace")
    return len(_KIND_LINE.findall(head)) == 1 and _LIST_KIND_LINE.search(head) is not None


class _Composer:
    """Builds nodes from libyaml's events without recursion, bounding depth as it goes."""

    def __init__(self, loader: Loader, limits: YamlLimits, path: str) -> None:
        self.loader = loader
        self.limits = limits
        self.path = path
        self.anchors: dict[str, yaml.Node] = {}

    def node(self, index: int) -> yaml.Node:
        """Compose the next node; too deep -> its events are consumed, then an error."""
        loader, resolve = self.loader, self.loader.resolve
        stack: list[list[Any]] = []
        too_deep: yaml.Mark | _CMark | None = None
        skipped = 0
        while True:
            event = loader.get_event()
            cls = type(event)
            if skipped:  # inside a subtree beyond the depth limit: consume, build nothing
                if cls is yaml.MappingStartEvent or cls is yaml.SequenceStartEvent:
                    skipped += 1
                elif cls is yaml.MappingEndEvent or cls is yaml.SequenceEndEvent:
                    skipped -= 1
                continue
            if type(event) is yaml.ScalarEvent:
                tag = event.tag
                if tag is None or tag == "!":
                    tag = resolve(yaml.ScalarNode, event.value, event.implicit)
                node: yaml.Node = yaml.ScalarNode(
                    tag, event.value, event.start_mark, event.end_mark, style=event.style  # type: ignore[arg-type]
                )
                self._anchor(event, node)
            elif type(event) is yaml.MappingStartEvent or type(event) is yaml.SequenceStartEvent:
                if len(stack) >= self.limits.max_depth:
                    too_deep = too_deep or event.start_mark
                    skipped = 1
                    continue
                node_cls = yaml.MappingNode if cls is yaml.MappingStartEvent else yaml.SequenceNode
                tag = event.tag
                if tag is None or tag == "!":
                    # a collection's implicit is one bool (PyYAML's composer passes it alike);
                    # the stubs type it as a scalar's pair
                    tag = resolve(node_cls, None, event.implicit)  # type: ignore[arg-type]
                node = node_cls(tag, [], event.start_mark, None, flow_style=event.flow_style)  # type: ignore[arg-type]
                self._anchor(event, node)
                stack.append([node, None])
                continue
            elif type(event) is yaml.MappingEndEvent or type(event) is yaml.SequenceEndEvent:
                node = stack.pop()[0]
                node.end_mark = event.end_mark
            elif type(event) is yaml.AliasEvent:
                if event.anchor not in self.anchors:
                    mark = event.start_mark
                    raise yaml.composer.ComposerError(
                        None, None, f"found undefined alias {event.anchor!r}", mark  # type: ignore[arg-type]
                    )
                node = self.anchors[event.anchor]
            else:  # pragma: no cover - libyaml never sends other events inside a node
                mark = event.start_mark if event is not None else None
                raise yaml.composer.ComposerError(
                    None, None, f"unexpected {event.__class__.__name__}", mark  # type: ignore[arg-type]
                )
            if not stack:
                if too_deep is not None:  # the whole node was consumed; report it
                    raise ManifestError(
                        f"document nested too deeply (limit {self.limits.max_depth})",
                        Location(self.path, too_deep.line + 1, too_deep.column + 1, None, index),
                    )
                return node
            top = stack[-1]
            if top[0].__class__ is yaml.MappingNode:
                if top[1] is None:
                    top[1] = node
                else:
                    top[0].value.append((top[1], node))
                    top[1] = None
            else:
                top[0].value.append(node)

    def _anchor(self, event: yaml.NodeEvent, node: yaml.Node) -> None:
        if event.anchor is not None:
            self.anchors[event.anchor] = node


def iter_event_documents(
    loader: Loader,
    text: str | bytes,
    path: str,
    keep_nodes: bool,
    limits: YamlLimits,
    split: bool,
    on_error: ErrorHandler | None,
    on_warning: ErrorHandler | None = None,
) -> Iterator[YamlDocument]:
    aliased = ("&" in text) if isinstance(text, str) else (b"&" in text)
    construct = loader.constructor(aliased, limits.max_depth)
    early = split and _announces_list(text)
    index = 0

    def rejected(exc: ManifestError) -> None:
        if on_error is None:
            raise exc
        on_error(exc)

    def unit(node: yaml.Node, item: int | None) -> YamlDocument | None:
        try:
            check_node(node, limits, path, index, aliased)
        except ManifestError as exc:
            rejected(exc)
            return None
        data = construct(node)
        report_repeated(loader, path, index, on_warning)
        if data is None and item is None:
            return None
        return YamlDocument(data, path, index, node.start_mark.line + 1,
                            node if keep_nodes else None, item)

    try:
        loader.get_event()  # stream start
        while not loader.check_event(yaml.StreamEndEvent):
            loader.get_event()  # document start
            composer = _Composer(loader, limits, path)
            try:
                if split and loader.check_event(yaml.MappingStartEvent):
                    yield from _split_mapping(composer, loader, index, early, unit, rejected)
                else:
                    doc = unit(composer.node(index), None)
                    if doc is not None:
                        yield doc
            except ManifestError as exc:  # too deep: the node's events were consumed
                rejected(exc)
            loader.get_event()  # document end
            index += 1
    except yaml.YAMLError as exc:
        error = syntax_error(exc, path, index, limits, on_error, text)
        if error is not None:
            raise error from exc
    finally:
        loader.dispose()


def _split_mapping(
    composer: _Composer,
    loader: Loader,
    index: int,
    early: bool,
    unit: Callable[[yaml.Node, int | None], YamlDocument | None],
    rejected: ErrorHandler,
) -> Iterator[YamlDocument]:
    """A top-level mapping, its ``items`` composed (and, if announced, yielded) one by one."""
    start = loader.get_event()
    assert isinstance(start, yaml.MappingStartEvent)  # the caller checked the next event
    tag = start.tag if start.tag not in (None, "!") else loader.resolve(
        yaml.MappingNode, None, start.implicit  # type: ignore[arg-type]  # one bool, as above
    )
    pairs: list[tuple[yaml.Node, yaml.Node]] = []
    stream = early and not start.flow_style
    items_node: yaml.SequenceNode | None = None
    streamed = 0
    while not loader.check_event(yaml.MappingEndEvent):
        key = composer.node(index)
        if key.__class__ is yaml.ScalarNode and key.value == "items" and items_node is None \
                and loader.check_event(yaml.SequenceStartEvent):
            seq = loader.get_event()
            assert isinstance(seq, yaml.SequenceStartEvent)  # checked just above
            items_node = yaml.SequenceNode(
                loader.resolve(yaml.SequenceNode, None, seq.implicit),  # type: ignore[arg-type]
                [], seq.start_mark, None,  # type: ignore[arg-type]
            )
            while not loader.check_event(yaml.SequenceEndEvent):
                try:
                    item = composer.node(index)
                except ManifestError as exc:
                    rejected(exc)
                    items_node.value.append(None)  # keeps item numbering
                    continue
                if stream:
                    doc = unit(item, len(items_node.value))
                    items_node.value.append(None)
                    streamed += 1
                    if doc is not None:
                        yield doc
                else:
                    items_node.value.append(item)
            seq_end = loader.get_event()
            assert seq_end is not None  # checked by the loop
            items_node.end_mark = seq_end.end_mark
            pairs.append((key, items_node))
        else:
            pairs.append((key, composer.node(index)))
    end = loader.get_event()
    assert end is not None  # checked by the loop
    mapping = yaml.MappingNode(tag, pairs, start.start_mark, end.end_mark,  # type: ignore[arg-type]
                               flow_style=start.flow_style)
    if items_node is not None and list_items(mapping) is not None:
        for number, item in enumerate(items_node.value):
            if item is not None and not stream:
                doc = unit(item, number)
                if doc is not None:
                    yield doc
        return
    if streamed:
        line = start.start_mark.line + 1 if start.start_mark is not None else None  # libyaml marks every event
        raise ManifestError(
            "the items of this document were read as a List, but its kind is not a List",
            Location(composer.path, line, None, None, index),
        )
    items_node_value = items_node.value if items_node is not None else []
    if any(item is None for item in items_node_value):
        return  # an item was rejected; the document cannot be whole
    doc = unit(mapping, None)
    if doc is not None:
        yield doc
