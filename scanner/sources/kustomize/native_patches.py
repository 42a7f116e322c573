"""Strategic merge patches of a kustomization: loading, choosing targets, applying.

A patch without ``target`` applies to the one resource whose id (group, version,
kind, name, namespace -- current or earlier) equals the patch's; a patch with a
``target`` applies to every resource the selector picks, its own id ignored.
Selector fields are anchored regular expressions, as in Kustomize; only plain names
and the ``. * |`` operators are accepted here.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any

from scanner.sources.kustomize.native_ids import (
    NativeResource,
    effective_namespace,
    split_api_version,
)
from scanner.sources.kustomize.native_merge import apply_patch
from scanner.sources.kustomize.native_yaml import (
    FileCache,
    UnsupportedKustomization,
    clone,
    parse_documents,
)

_TARGET_KEYS = ("group", "version", "kind", "name", "namespace")
_SIMPLE_REGEX = re.compile(r"^[A-Za-z0-9._*|-]*$")


@dataclass(frozen=True, slots=True)
class PatchRule:
    """One strategic merge patch document and how its targets are chosen."""

    patch: dict[str, Any]
    source: str
    target: dict[str, re.Pattern[str]] | None = None

    def targets(self, resources: list[NativeResource], directory: str) -> list[NativeResource]:
        if self.target is None:
            found = [r for r in resources if self._is_patch_id(r)]
            if len(found) != 1:
                raise UnsupportedKustomization(f"patch matches {len(found)} resources",
                                               self.source)
            namespace = (self.patch.get("metadata") or {}).get("namespace")
            if namespace is not None and namespace != found[0].namespace:
                raise UnsupportedKustomization("patch namespace differs from its target",
                                               self.source)
            return found
        return [r for r in resources if self._is_selected(r)]

    def apply(self, target: NativeResource) -> bool:
        patch = clone(self.patch)
        if self.target is not None:
            patch.pop("apiVersion", None)
            patch.pop("kind", None)
            metadata = patch.get("metadata")
            if isinstance(metadata, dict):
                metadata.pop("name", None)
                metadata.pop("namespace", None)
        return apply_patch(target, patch)

    def _is_patch_id(self, r: NativeResource) -> bool:
        patch, metadata = self.patch, self.patch["metadata"]
        if patch["apiVersion"] != r.api_version or patch["kind"] != r.kind:
            return False
        wanted = effective_namespace(r.api_version, r.kind, metadata.get("namespace") or "")
        return any(name == metadata["name"]
                   and effective_namespace(r.api_version, r.kind, ns) == wanted
                   for name, ns in r.ids())

    def _is_selected(self, r: NativeResource) -> bool:
        assert self.target is not None
        group, version = split_api_version(r.api_version)
        (org_name, org_ns), cur = r.original(), (r.name, r.namespace)
        values = {"group": [group], "version": [version], "kind": [r.kind],
                  "name": [org_name, cur[0]],
                  "namespace": [effective_namespace(r.api_version, r.kind, org_ns),
                                effective_namespace(r.api_version, r.kind, cur[1])]}
        return all(any(pattern.fullmatch(v) for v in values[key])
                   for key, pattern in self.target.items())


def load_patch_rules(directory: str, kustomization: str, file: str | None, target: Any,
                     files: FileCache, inline: str | None = None,
                     loaded_as_resource: bool = False) -> list[PatchRule]:
    """The patch documents of one ``patches``/``patchesStrategicMerge`` entry.

    ``loaded_as_resource``: a ``patchesStrategicMerge`` entry, which Kustomize reads
    as a resource, turning null label and annotation values into the text ``null``.
    """
    if inline is not None:
        source = kustomization
        documents = parse_documents(inline, kustomization)
    else:
        assert file is not None
        source = os.path.normpath(os.path.join(directory, file))
        real = files.realpath(source)
        if not files.tree.isfile(source) or not real.startswith(directory + os.sep):
            raise UnsupportedKustomization(f"patch file {file!r}", kustomization)
        documents = files.documents(real)
    selector = _selector(target, kustomization)
    if not documents or (selector is not None and len(documents) != 1):
        raise UnsupportedKustomization("patch entry with no or several documents", source)
    if any(isinstance(d, dict) and d.get("$patch") == "delete" for d in documents[:-1]):
        # kubectl's Kustomize fails (it panics) on a deleting document before another one
        raise UnsupportedKustomization("$patch: delete before another document of the patch", source)
    rules = []
    for patch in documents:
        if not isinstance(patch, dict):
            raise UnsupportedKustomization("not a strategic merge patch", source)
        # a targeted patch is read as a resource too: null label and annotation values become text
        _check_metadata_maps(patch, source, loaded_as_resource or selector is not None)
        metadata = patch.get("metadata")
        # even a targeted patch needs a kind and a name (which it then ignores) to parse in Kustomize
        if not (isinstance(patch.get("kind"), str) and isinstance(metadata, dict)
                and isinstance(metadata.get("name"), str)):
            raise UnsupportedKustomization("patch without kind/name", source)
        if selector is None and not (isinstance(patch.get("apiVersion"), str)
                                     and isinstance(metadata.get("namespace"), str | None)):
            raise UnsupportedKustomization("patch without apiVersion", source)
        rules.append(PatchRule(patch, source, selector))
    return rules


def _check_metadata_maps(patch: Any, source: str, loaded_as_resource: bool) -> None:
    """Raise the fallback signal for label or annotation values Kustomize turns into text."""
    metadata = patch.get("metadata") if isinstance(patch, dict) else None
    if not isinstance(metadata, dict):
        return
    for key in ("labels", "annotations"):
        values = metadata.get(key)
        if isinstance(values, dict) and not all(
                isinstance(v, str) or (v is None and not loaded_as_resource)
                for v in values.values()):
            raise UnsupportedKustomization(f"patch metadata.{key} value that is not text", source)


def _selector(target: Any, kustomization: str) -> dict[str, re.Pattern[str]] | None:
    if target is None:
        return None
    if not isinstance(target, dict) or set(target) - set(_TARGET_KEYS):
        raise UnsupportedKustomization("patch target selector", kustomization)
    selector = {}
    for key, value in target.items():
        if not isinstance(value, str) or not _SIMPLE_REGEX.match(value):
            raise UnsupportedKustomization(f"patch target {key} {value!r}", kustomization)
        if value:
            try:
                selector[key] = re.compile(f"(?:{value})")
            except re.error as exc:
                raise UnsupportedKustomization(f"patch target {key} {value!r}",
                                               kustomization) from exc
    return selector
