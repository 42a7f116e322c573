"""In-process rendering of the common subset of Kustomize, before ``kubectl kustomize``.

Supported: ``resources`` (files, and directories with their own kustomization,
recursively), ``namespace``, ``labels``, ``commonLabels``, ``commonAnnotations``,
``images``, ``replicas``, ``patchesStrategicMerge`` and ``patches`` holding strategic
merge patches (matched by the patch's own id, or by a ``target`` of group, version,
kind, name and namespace). Anything else -- another kustomization field, a remote
resource, a name prefix, a JSON 6902 patch, a list whose merge key is not known, a
Kustomize error -- raises :class:`UnsupportedKustomization` while the overlay is built,
and the overlay is left to the external renderer, which also words the errors. Output
objects are equal to the external renderer's and in its (legacy) order.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from scanner.sources.file_tree import FileTree
from scanner.sources.kustomize.native_fields import (
    COMMON_ANNOTATIONS,
    COMMON_LABELS,
    METADATA_LABELS,
    TEMPLATE_LABELS,
    ImageRule,
    set_map_entries,
    set_namespace,
    set_replicas,
)
from scanner.sources.kustomize.native_ids import (
    NativeResource,
    check_resource,
    check_unique,
    legacy_sort_key,
)
from scanner.sources.kustomize.native_patches import PatchRule
from scanner.sources.kustomize.native_refs import check_subject_namespaces, fix_back_references
from scanner.sources.kustomize.native_settings import Settings, read_settings
from scanner.sources.kustomize.native_yaml import FileCache, UnsupportedKustomization
from scanner.sources.kustomize.origin import RenderOrigin, RenderOutput, tree_relative
from scanner.sources.kustomize.plan import KUSTOMIZATION_FILES
from scanner.sources.per_commit import PerCommit

__all__ = ["NATIVE_RENDERER", "NativeRenderer", "NativeResult", "UnsupportedKustomization", "render_native"]

NATIVE_RENDERER = "in-process"  # how the objects it renders name their renderer


@dataclass(slots=True)
class NativeResult:
    """Overlays rendered in process, and the ones left to the external renderer (why)."""

    outputs: list[RenderOutput] = field(default_factory=list)
    fallback: dict[str, str] = field(default_factory=dict)


def render_native(tree: FileTree, overlays: Sequence[str], commit: str | None = None) -> NativeResult:
    """Render each overlay (tree-relative directory) in process where it is supported (for a
    tree at a ``commit``, with what earlier renderings of that commit in this process read and
    built: the shards of one commit share their bases)."""
    renderer = NativeRenderer(tree)
    if commit:
        renderer.share(_SHARED_AT_COMMIT.get((tree.root, commit), renderer.shared))
    result = NativeResult()
    for overlay in overlays:
        try:
            resources = renderer.render_resources(overlay)
        except UnsupportedKustomization as exc:
            result.fallback[overlay] = str(exc)
        else:
            origins = tuple(renderer.origin_of(r, overlay) for r in resources)
            result.outputs.append(RenderOutput(overlay, tuple(r.data for r in resources), origins=origins,
                                               renderer=NATIVE_RENDERER))
    return result


_Built = dict[str, "list[NativeResource] | UnsupportedKustomization"]
_Kept = tuple[_Built, dict[str, Any], dict[str, str]]  # bases built, files parsed, folders resolved
_SHARED_AT_COMMIT: PerCommit[_Kept] = PerCommit()  # (root, commit) -> what its renderings keep


class NativeRenderer:
    """Renders overlays of one tree; shared bases and files are read once."""

    def __init__(self, tree: FileTree) -> None:
        self.tree = tree
        self.root = tree.realpath(tree.root)
        self.files = FileCache(tree)
        self._built: _Built = {}
        self._relatives: dict[str, str | None] = {}  # (the files of many objects are few)

    def shared(self) -> _Kept:
        """What this renderer keeps of the tree: the bases built, the files parsed, the folders resolved."""
        return self._built, self.files.parsed, self.files.real_folders

    def share(self, kept: _Kept) -> None:
        """Render with what another renderer of the same tree (at one commit) kept."""
        self._built, self.files.parsed, self.files.real_folders = kept

    def render(self, overlay: str) -> list[dict[str, Any]]:
        """The objects ``kubectl kustomize <root>/<overlay>`` prints, in its order."""
        return [r.data for r in self.render_resources(overlay)]

    def origin_of(self, resource: NativeResource, overlay: str) -> RenderOrigin:
        """Where a rendered object was read from, and the patch files that changed it."""
        patches = tuple(dict.fromkeys(p for p in (self._relative(s) for s in resource.patches) if p))
        if resource.origin is None:
            return RenderOrigin(self._relative(self._kustomization_file(
                os.path.join(self.root, overlay or "."))) or overlay, patches=patches)
        path, ordinal = resource.origin
        return RenderOrigin(self._relative(path) or path, ordinal, patches=patches,
                            place=self.files.place(path, ordinal))

    def _relative(self, path: str) -> str | None:
        try:
            return self._relatives[path]
        except KeyError:
            found = self._relatives[path] = tree_relative(path, self.root)
            return found

    def render_resources(self, overlay: str) -> list[NativeResource]:
        """The objects of ``render`` with the files they were read from."""
        directory = os.path.normpath(os.path.join(self.root, overlay or "."))
        # built, not through the cache of bases: no other kustomization refers to an overlay,
        # so its objects need no copy kept
        resources = self._build_uncached(directory, (directory,))
        check_subject_namespaces(resources)
        fix_back_references(resources)
        resources.sort(key=legacy_sort_key)
        for r in resources:  # Kustomize drops an empty (or null) annotations map; labels stay
            metadata = r.data.get("metadata")
            if isinstance(metadata, dict) and "annotations" in metadata and not metadata["annotations"]:
                del metadata["annotations"]
        return resources

    def _build(self, directory: str, stack: tuple[str, ...]) -> list[NativeResource]:
        if directory in stack:
            raise UnsupportedKustomization("kustomization cycle", directory)
        cached = self._built.get(directory)
        if cached is None:
            try:
                cached = self._build_uncached(directory, (*stack, directory))
            except UnsupportedKustomization as exc:
                cached = exc
            self._built[directory] = cached
        if isinstance(cached, UnsupportedKustomization):
            raise cached
        return [r.copy() for r in cached]

    def _build_uncached(self, directory: str, stack: tuple[str, ...]) -> list[NativeResource]:
        if directory != self.root and not directory.startswith(self.root + os.sep):
            raise UnsupportedKustomization("kustomization outside the tree", directory)
        settings = read_settings(directory, self._kustomization_file(directory), self.files)
        resources: list[NativeResource] = []
        for entry in settings.resources:
            path = os.path.normpath(os.path.join(directory, entry))
            if self.tree.isdir(path):
                resources.extend(self._build(self.files.realpath(path), stack))
            elif self.tree.isfile(path):
                real = self.files.realpath(path)
                if not real.startswith(directory + os.sep):
                    raise UnsupportedKustomization("resource file outside its kustomization", path)
                resources.extend(check_resource(d, path, (real, i))
                                 for i, d in enumerate(self.files.documents(real)))
            else:
                raise UnsupportedKustomization(f"resource {entry!r} not found", directory)
        check_unique(resources, directory)
        return self._transform(resources, settings, directory)

    def _kustomization_file(self, directory: str) -> str:
        found = [n for n in KUSTOMIZATION_FILES if self.tree.isfile(os.path.join(directory, n))]
        if len(found) != 1:
            raise UnsupportedKustomization(f"{len(found)} kustomization files", directory)
        return os.path.join(directory, found[0])

    def _transform(self, resources: list[NativeResource], settings: Settings,
                   directory: str) -> list[NativeResource]:
        for rule in settings.patches:
            resources = self._patch(resources, rule, directory)
        if settings.namespace:
            for r in resources:
                set_namespace(r, settings.namespace)
            check_unique(resources, directory)
        for pairs, include_selectors, include_templates in settings.labels:
            specs = COMMON_LABELS if include_selectors else (
                METADATA_LABELS + TEMPLATE_LABELS if include_templates else METADATA_LABELS)
            self._set_maps(resources, specs, pairs)
        self._set_maps(resources, COMMON_LABELS, settings.common_labels)
        self._set_maps(resources, COMMON_ANNOTATIONS, settings.common_annotations)
        for name, count in settings.replicas:
            set_replicas(resources, name, count)
        for entry in settings.images:
            image = ImageRule(entry)
            for r in resources:
                image.apply(r)
        return resources

    @staticmethod
    def _set_maps(resources: list[NativeResource], specs: Any, values: dict[str, str]) -> None:
        if values:
            for r in resources:
                set_map_entries(r, specs, values)

    @staticmethod
    def _patch(resources: list[NativeResource], rule: PatchRule,
               directory: str) -> list[NativeResource]:
        deleted = set()
        for r in rule.targets(resources, directory):
            r.patches.append(rule.source)
            if rule.apply(r):
                r.check_shared()
            else:
                deleted.add(id(r))
        return [r for r in resources if id(r) not in deleted]
