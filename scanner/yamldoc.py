"""YAML/JSON text -> documents as plain JSON-shaped data, with positions kept beside the data.

Documents are read the way Kyverno's loaders read them (sigs.k8s.io/yaml): YAML 1.1
booleans, timestamps kept as strings, map keys turned into strings. Positions never
enter the data: a document keeps its start line, and, when asked for, its node tree so
that ``locate("/spec/rules/0/name")`` can give the line and column of any value.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import yaml

from scanner.errors import Location, ManifestError

try:  # the C loader where present; same semantics, much faster
    from yaml import CSafeLoader as _BaseLoader
except ImportError:  # pragma: no cover - PyYAML built without libyaml
    from yaml import SafeLoader as _BaseLoader  # type: ignore[assignment]


class _Loader(_BaseLoader):  # type: ignore[misc,valid-type]
    """Safe loader with JSON-compatible output: no timestamps, string keys, no duplicates."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict:  # type: ignore[override]
        if not isinstance(node, yaml.MappingNode):
            raise yaml.constructor.ConstructorError(
                None, None, f"expected a mapping node, but found {node.id}", node.start_mark
            )
        self.flatten_mapping(node)
        mapping: dict[str, Any] = {}
        for key_node, value_node in node.value:
            key = self.construct_object(key_node, deep=deep)
            if not isinstance(key, str):
                key = _key_text(key)
            if key in mapping:
                raise yaml.constructor.ConstructorError(
                    "while constructing a mapping",
                    node.start_mark,
                    f'mapping key "{key}" already defined',
                    key_node.start_mark,
                )
            mapping[key] = self.construct_object(value_node, deep=deep)
        return mapping


_DROPPED_TAGS = {"tag:yaml.org,2002:timestamp", "tag:yaml.org,2002:value"}
_Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag not in _DROPPED_TAGS]
    for first, resolvers in _BaseLoader.yaml_implicit_resolvers.items()
}


def _key_text(key: Any) -> str:
    if key is None:
        return "null"
    if isinstance(key, bool):
        return "true" if key else "false"
    return str(key)


@dataclass(slots=True)
class YamlDocument:
    """One document of a file: its data, index in the file and starting line (1-based)."""

    data: Any
    path: str
    index: int
    line: int
    node: yaml.Node | None = None

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


def _error_location(path: str, exc: yaml.YAMLError, index: int) -> Location:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    if mark is not None:
        return Location(path, mark.line + 1, mark.column + 1, None, index)
    return Location(path, None, None, None, index)


def _problem(exc: yaml.YAMLError) -> str:
    problem = getattr(exc, "problem", None)
    context = getattr(exc, "context", None)
    if problem:
        return f"invalid YAML: {problem}" + (f" ({context})" if context else "")
    return f"invalid YAML: {exc}"


def iter_documents(
    text: str | bytes, path: str = "<input>", keep_nodes: bool = False
) -> Iterator[YamlDocument]:
    """Yield the non-empty documents of ``text``; a syntax error raises ``ManifestError``.

    Documents before the error are yielded first, so callers keep what was readable.
    """
    loader = _Loader(text)
    index = 0
    try:
        while True:
            try:
                if not loader.check_node():
                    break
                node = loader.get_node()
                if node is None:
                    index += 1
                    continue
                data = loader.construct_document(node)
            except yaml.YAMLError as exc:
                raise ManifestError(_problem(exc), _error_location(path, exc, index)) from exc
            except RecursionError as exc:
                raise ManifestError(
                    "document nested too deeply", Location(path, None, None, None, index)
                ) from exc
            if data is not None:
                yield YamlDocument(
                    data, path, index, node.start_mark.line + 1, node if keep_nodes else None
                )
            index += 1
    finally:
        loader.dispose()


def load_documents(text: str | bytes, path: str = "<input>", keep_nodes: bool = False) -> list[YamlDocument]:
    return list(iter_documents(text, path, keep_nodes))
