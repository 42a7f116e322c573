"""The libyaml loader that reads scalars, keys and merges as go-yaml v2 does, into JSON-shaped data.

Plain scalars resolve by go-yaml v2's rules (:mod:`scanner.yamldoc.scalars`); tags other than
bool, int, float and null are not interpreted; map keys become text as sigs.k8s.io/yaml writes
them into JSON; merge keys apply in order. ``construct_tree`` builds alias-free node graphs
several times faster than PyYAML's generic constructor, with the same result.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from collections.abc import Callable
from typing import Any

import yaml

from scanner.engine.golang.fmt import format_g
from scanner.errors import Location, ManifestError
from scanner.yamldoc.document import ErrorHandler
from scanner.yamldoc.scalars import BINARY as _BINARY
from scanner.yamldoc.scalars import BOOL as _BOOL
from scanner.yamldoc.scalars import FLOAT as _FLOAT
from scanner.yamldoc.scalars import INT as _INT
from scanner.yamldoc.scalars import INT64_MAX as _INT64_MAX
from scanner.yamldoc.scalars import INT64_MIN as _INT64_MIN
from scanner.yamldoc.scalars import MAP as _MAP_TAG
from scanner.yamldoc.scalars import MERGE as _MERGE
from scanner.yamldoc.scalars import NULL as _NULL
from scanner.yamldoc.scalars import SEQ as _SEQ_TAG
from scanner.yamldoc.scalars import STR as _STR
from scanner.yamldoc.scalars import resolved as _resolved

try:  # the C loader where present; same semantics, much faster
    from yaml import CSafeLoader as _BaseLoader
except ImportError:  # pragma: no cover - PyYAML built without libyaml
    from yaml import SafeLoader as _BaseLoader  # type: ignore[assignment]

_TREE_DEPTH = 500  # construct_tree recurses once per level


class Loader(_BaseLoader):
    """Safe loader that reads scalars and mappings as go-yaml v2 does, into JSON-shaped data.

    Plain scalars resolve by go-yaml v2's rules (see :mod:`scanner.yamldoc.scalars`); tags other
    than bool, int, float and null are not interpreted (a tagged scalar is its text, a
    tagged collection what it would be untagged); map keys become text as
    sigs.k8s.io/yaml writes them into JSON. A repeated key is an error, unless ``repeated``
    is a list: then, as go-yaml v2 decodes (non-strict, as sigs.k8s.io/yaml's ``YAMLToJSON``
    that Kyverno reads manifests with), its last value is kept and the key is noted there.
    """

    repeated: list[tuple[str, yaml.Mark]] | None = None  # (key, where) of each repeated key

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict:
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
        if type(node) is yaml.MappingNode:
            return self.construct_mapping(node)
        if type(node) is yaml.SequenceNode:
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

Loader.yaml_constructors = {
    None: Loader.construct_untyped,
    _MAP_TAG: Loader.construct_yaml_map,
    _SEQ_TAG: Loader.construct_yaml_seq,
    _BOOL: Loader.construct_yaml_bool,
    _INT: Loader.construct_yaml_int,
    _NULL: Loader.construct_yaml_null,
    _FLOAT: Loader.construct_yaml_float,
}
assert not Loader.yaml_path_resolvers

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


def _binary_text(node: yaml.Node) -> str:
    """A scalar tagged ``!!binary`` as Go's JSON encoder writes the decoded bytes: each byte
    that is not part of valid UTF-8 becomes U+FFFD."""
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



def new_loader(text: str | bytes, on_warning: ErrorHandler | None) -> Loader:
    """A loader of ``text``; with ``on_warning``, a repeated key keeps its last value (and is
    reported by ``report_repeated``) rather than being an error."""
    loader = Loader(text)
    if on_warning is not None:
        loader.repeated = []
    return loader


def report_repeated(loader: Loader, path: str, index: int, on_warning: ErrorHandler | None) -> None:
    """Hand the keys repeated in what ``loader`` last constructed (document ``index``) to ``on_warning``."""
    if not loader.repeated or on_warning is None:
        return
    for key, mark in loader.repeated:
        on_warning(ManifestError(f'mapping key "{key}" already defined: its last value is used',
                                 Location(path, mark.line + 1, mark.column + 1, None, index)))
    loader.repeated.clear()
