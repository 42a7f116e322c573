"""Resources as Kyverno's CLI loads them: namespace defaulting and null maps (spec 0.3)."""

from __future__ import annotations

from typing import Any

from scanner.engine.kinds import is_cluster_scoped

NULL_MAP_KEYS = frozenset({"annotations", "labels", "matchLabels", "nodeSelector", "data", "stringData"})


def normalize_null_maps(data: Any) -> None:
    """Turn null values of the spec's map keys into ``{}``, at any depth, in place."""
    stack = [data]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            for key, child in value.items():
                if child is None:
                    if key in NULL_MAP_KEYS:
                        value[key] = {}
                elif isinstance(child, dict | list):
                    stack.append(child)
        elif isinstance(value, list):
            stack.extend(child for child in value if isinstance(child, dict | list))


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
