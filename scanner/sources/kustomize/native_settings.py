"""A kustomization file -> the settings the in-process renderer supports, or the signal.

Every field is checked for the shape Kustomize accepts; a field outside the supported
subset, or a value of another type than Kustomize's own (``newTag: 1.10`` is a
number, not text), raises :class:`UnsupportedKustomization`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from scanner.sources.kustomize.native_patches import PatchRule, load_patch_rules
from scanner.sources.kustomize.native_yaml import FileCache, UnsupportedKustomization

_SUPPORTED = frozenset({
    "apiVersion", "kind", "metadata", "resources", "namespace", "labels", "commonLabels",
    "commonAnnotations", "images", "replicas", "patches", "patchesStrategicMerge",
    "namePrefix", "nameSuffix",
})
_IMAGE_KEYS = frozenset({"name", "newName", "newTag", "digest"})
_LABEL_KEYS = frozenset({"pairs", "includeSelectors", "includeTemplates"})


@dataclass(slots=True)
class Settings:
    """A kustomization's settings as the native renderer applies them."""

    resources: list[str] = field(default_factory=list)
    namespace: str = ""
    labels: list[tuple[dict[str, str], bool, bool]] = field(default_factory=list)
    common_labels: dict[str, str] = field(default_factory=dict)
    common_annotations: dict[str, str] = field(default_factory=dict)
    images: list[dict[str, str]] = field(default_factory=list)
    replicas: list[tuple[str, int]] = field(default_factory=list)
    patches: list[PatchRule] = field(default_factory=list)


def read_settings(directory: str, path: str, files: FileCache) -> Settings:
    """The supported settings of the kustomization file ``path`` in ``directory``."""
    documents = files.documents(path)
    if len(documents) != 1 or not isinstance(documents[0], dict):
        raise UnsupportedKustomization("kustomization is not one mapping", path)
    data: dict[str, Any] = documents[0]
    if not any(value not in (None, "", False, 0) for key, value in data.items() if key not in ("apiVersion", "kind")):
        raise UnsupportedKustomization("kustomization.yaml is empty (kustomize refuses it)", path)
    unknown = sorted(set(data) - _SUPPORTED)
    if unknown:
        raise UnsupportedKustomization(f"kustomization field {unknown[0]}", path)
    if data.get("apiVersion", "kustomize.config.k8s.io/v1beta1") != \
            "kustomize.config.k8s.io/v1beta1" or data.get("kind", "Kustomization") != "Kustomization":
        raise UnsupportedKustomization("not a kustomize.config.k8s.io/v1beta1 Kustomization", path)
    if data.get("namePrefix") or data.get("nameSuffix"):
        raise UnsupportedKustomization("namePrefix/nameSuffix", path)
    settings = Settings()
    for entry in _list(data, "resources", path):
        if not isinstance(entry, str) or not entry or "://" in entry or "?" in entry \
                or entry.startswith(("git@", "github.com/", "gitlab.com/", "bitbucket.org/")):
            raise UnsupportedKustomization(f"resource {entry!r}", path)
        settings.resources.append(entry)
    namespace = data.get("namespace")
    if namespace is not None and not isinstance(namespace, str):
        raise UnsupportedKustomization("namespace is not text", path)
    settings.namespace = namespace or ""
    settings.common_labels = _text_map(data.get("commonLabels"), "commonLabels", path)
    settings.common_annotations = _text_map(data.get("commonAnnotations"), "commonAnnotations",
                                            path)
    for entry in _list(data, "labels", path):
        if not isinstance(entry, dict) or set(entry) - _LABEL_KEYS:
            raise UnsupportedKustomization("labels entry", path)
        flags = [entry.get(k, False) for k in ("includeSelectors", "includeTemplates")]
        if not all(isinstance(f, bool) for f in flags):
            raise UnsupportedKustomization("labels flag is not a boolean", path)
        settings.labels.append((_text_map(entry.get("pairs"), "labels", path), *flags))
    for entry in _list(data, "images", path):
        if not isinstance(entry, dict) or set(entry) - _IMAGE_KEYS or \
                not all(isinstance(v, str) for v in entry.values()):
            raise UnsupportedKustomization("images entry", path)
        settings.images.append(entry)
    for entry in _list(data, "replicas", path):
        if not isinstance(entry, dict) or set(entry) != {"name", "count"} or \
                not isinstance(entry["name"], str) or type(entry["count"]) is not int:
            raise UnsupportedKustomization("replicas entry", path)
        settings.replicas.append((entry["name"], entry["count"]))
    for entry in _list(data, "patchesStrategicMerge", path):
        if not isinstance(entry, str):
            raise UnsupportedKustomization("patchesStrategicMerge entry", path)
        inline = "\n" in entry
        settings.patches += load_patch_rules(directory, path, None if inline else entry, None,
                                             files, inline=entry if inline else None,
                                             loaded_as_resource=True)
    for entry in _list(data, "patches", path):
        if not isinstance(entry, dict) or set(entry) - {"path", "patch", "target"} or \
                ("path" in entry) == ("patch" in entry):
            raise UnsupportedKustomization("patches entry", path)
        source = entry.get("path", entry.get("patch"))
        if not isinstance(source, str):
            raise UnsupportedKustomization("patches entry", path)
        inline = "patch" in entry
        settings.patches += load_patch_rules(directory, path, source if not inline else None,
                                             entry.get("target"), files,
                                             inline=source if inline else None)
    return settings


def _list(data: dict[str, Any], key: str, path: str) -> list[Any]:
    value = data.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise UnsupportedKustomization(f"{key} is not a list", path)
    return value


def _text_map(value: Any, key: str, path: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise UnsupportedKustomization(f"{key} is not a map of text", path)
    return value
