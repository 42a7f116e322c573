"""Resources as Kyverno's CLI loads them: namespace defaulting and null maps (spec 0.3)."""

from __future__ import annotations

from typing import Any

_NULL_MAPS = frozenset({"annotations", "labels", "matchLabels", "nodeSelector", "data", "stringData"})


def _cluster_scoped(kind: str) -> bool:
    try:
        from scanner.engine.kinds import is_cluster_scoped
    except ImportError:  # pragma: no cover - kinds module is part of the package
        return kind in ("Namespace", "ClusterRole", "ClusterRoleBinding", "Node")
    return is_cluster_scoped(kind)


def _fill_null_maps(value: Any) -> None:
    if isinstance(value, dict):
        for k, v in value.items():
            if v is None:
                if k in _NULL_MAPS:
                    value[k] = {}
            elif isinstance(v, (dict, list)):
                _fill_null_maps(v)
    elif isinstance(value, list):
        for v in value:
            if isinstance(v, (dict, list)):
                _fill_null_maps(v)


def normalize_resource(resource: dict) -> dict:
    """Default the namespace of namespaced kinds to ``default`` and turn null maps into ``{}``.

    Works in place on a freshly loaded document and returns it.
    """
    _fill_null_maps(resource)
    kind = resource.get("kind")
    if isinstance(kind, str) and not _cluster_scoped(kind):
        meta = resource.get("metadata")
        if meta is None:
            meta = resource["metadata"] = {}
        if isinstance(meta, dict) and not meta.get("namespace"):
            meta["namespace"] = "default"
    return resource
