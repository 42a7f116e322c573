"""Resources as Kyverno's CLI loads them: namespace defaulting and null maps (spec 0.3), and the
shape every loader checks first."""

from __future__ import annotations

from typing import Any

from scanner.engine.kinds import is_cluster_scoped

_META_STRINGS = ("name", "namespace", "generateName")
NULL_MAP_KEYS = frozenset({"annotations", "labels", "matchLabels", "nodeSelector", "data", "stringData"})


def normalize_null_maps(data: Any, keys: frozenset[str] = NULL_MAP_KEYS) -> None:
    """Turn null values of the spec's map keys (``keys``) into ``{}``, at any depth, in place."""
    if data.__class__ is not dict and data.__class__ is not list:
        return
    stack = [data]
    push, pop = stack.append, stack.pop
    while stack:
        value = pop()  # loaded data: plain dicts and lists, no subclasses
        if value.__class__ is dict:
            for key, child in value.items():
                if child is None:
                    if key in keys:
                        value[key] = {}
                elif child.__class__ is dict or child.__class__ is list:
                    push(child)
        else:
            for child in value:
                if child.__class__ is dict or child.__class__ is list:
                    push(child)


def normalize_resource(resource: dict) -> dict:
    """Default the namespace of namespaced kinds to ``default`` and turn null maps into ``{}``.

    Works in place on a freshly loaded document and returns it.
    """
    normalize_null_maps(resource)
    kind = resource.get("kind")
    if isinstance(kind, str) and not is_cluster_scoped(kind):
        meta = resource.get("metadata")
        if meta is None:
            meta = resource["metadata"] = {}
        if isinstance(meta, dict) and not meta.get("namespace"):
            meta["namespace"] = "default"
    return resource


def describe_type(value: Any) -> str:
    """``value``'s YAML type in words: "a mapping", "a list", "a number", ..."""
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    names = {dict: "a mapping", list: "a list", str: "a string", type(None): "null"}
    return names.get(type(value), type(value).__name__)


def object_problem(data: dict) -> str | None:
    """Why a document with ``apiVersion`` and ``kind`` cannot be a Kubernetes object (the API
    server could not decode it), or None: both must be strings, ``metadata`` a mapping, and its
    ``name``, ``namespace`` and ``generateName`` strings."""
    for key in ("apiVersion", "kind"):
        if not isinstance(data[key], str):
            return f"{key} must be a string, not {describe_type(data[key])}"
    meta = data.get("metadata")
    if meta is None:
        return None
    if not isinstance(meta, dict):
        return f"metadata must be a mapping, not {describe_type(meta)}"
    for key in _META_STRINGS:
        value = meta.get(key)
        if value is not None and not isinstance(value, str):
            return f"metadata.{key} must be a string, not {describe_type(value)}"
    return None
