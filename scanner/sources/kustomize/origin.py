"""Where a rendered object was defined: kustomize's origin annotations, read and removed.

``kubectl kustomize`` is run on a wrapper kustomization holding the entry point and
``buildMetadata: [originAnnotations]``; each object it prints then carries
``config.kubernetes.io/origin``: the ``path`` of the file it was read from (relative to the
wrapper) or, for a generated object, the kustomization it is ``configuredIn`` and the
generator it is ``configuredBy``. The annotation is taken off before the object is
evaluated (the objects are those of a build without the wrapper), and the origin is
turned into a path relative to the rendered tree. The in-process renderer knows the file
and document of each object itself.
"""

from __future__ import annotations

import os
import posixpath
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import yaml

ORIGIN_ANNOTATION = "config.kubernetes.io/origin"
BUILD_ANNOTATIONS = (ORIGIN_ANNOTATION, "alpha.config.kubernetes.io/transformations")

# the kustomization field of each built-in generator (configuredBy.kind)
GENERATOR_FIELDS = {
    "ConfigMapGenerator": "configMapGenerator",
    "SecretGenerator": "secretGenerator",
    "HelmChartInflationGenerator": "helmCharts",
}


@dataclass(frozen=True, slots=True)
class RenderOrigin:
    """Where one rendered object comes from, before it is located in its file.

    ``path`` is tree-relative: the file the object was read from, or the kustomization
    whose generator made it (``generator`` then names the generator's kind). ``ordinal``
    is the object's position among the documents of ``path`` when the renderer knows it;
    otherwise the object is found there by kind and name. ``repo`` is set for an object
    of a remote resource (``path`` is then the entry point's kustomization). ``patches``
    are the tree-relative patch files that changed the object, when the renderer knows.
    ``place`` is the document's index in ``path`` and its first line, when the renderer read
    them (as ``iter_documents`` places the file's documents).
    """

    path: str
    ordinal: int | None = None
    generator: str | None = None
    repo: str | None = None
    patches: tuple[str, ...] | None = None
    place: tuple[int, int] | None = None


@dataclass(frozen=True, slots=True)
class RenderOutput:
    """One overlay rendered: its objects, or why it could not be rendered."""

    overlay: str
    documents: tuple[Any, ...] = ()  # rendered objects, build annotations removed
    error: str | None = None
    origins: tuple[RenderOrigin, ...] = ()  # one per document (none when unknown)
    renderer: str = ""  # what rendered it: "in-process", "kubectl kustomize v5.5.0"

    def label(self) -> str:
        """The overlay as its rendered objects name it: ``apps/prod (kubectl kustomize v5.5.0)``."""
        overlay = self.overlay or "."
        return f"{overlay} ({self.renderer})" if self.renderer else overlay


def take_origin(data: Any, wrapper: str, root: str, fallback: str) -> RenderOrigin:
    """The origin of one object printed by a build of ``wrapper`` (a folder), its build
    annotations removed; ``root`` is the folder tree paths are relative to, ``fallback``
    the tree-relative kustomization file named when the object has no usable origin."""
    if not isinstance(data, dict):
        return RenderOrigin(fallback)
    metadata = data.get("metadata")
    annotations = metadata.get("annotations") if isinstance(metadata, dict) else None
    if not isinstance(metadata, dict) or not isinstance(annotations, dict):
        return RenderOrigin(fallback)
    text = annotations.get(ORIGIN_ANNOTATION)
    for key in BUILD_ANNOTATIONS:
        annotations.pop(key, None)
    if not annotations:
        del metadata["annotations"]  # kustomize prints no empty annotations map
    try:
        origin = yaml.safe_load(text) if isinstance(text, str) else None
    except yaml.YAMLError:
        origin = None
    if not isinstance(origin, dict):
        return RenderOrigin(fallback)
    if origin.get("repo"):
        return RenderOrigin(fallback, repo=str(origin["repo"]))
    path = origin.get("path")
    generator = None
    if not isinstance(path, str):
        path = origin.get("configuredIn")
        configured_by = origin.get("configuredBy")
        if isinstance(configured_by, dict):
            generator = str(configured_by.get("kind") or "")
    if not isinstance(path, str) or not path:
        return RenderOrigin(fallback)
    relative = tree_relative(os.path.join(wrapper, path), root)
    return RenderOrigin(relative, generator=generator) if relative is not None else RenderOrigin(fallback)


def tree_relative(path: str, root: str) -> str | None:
    """``path`` (absolute) relative to ``root``, in ``/`` form; None when outside it."""
    real_root = _real_root(root)
    normal = os.path.normpath(path)
    if normal.startswith(real_root) and normal[len(real_root):len(real_root) + 1] == os.sep:
        return normal[len(real_root) + 1:].replace(os.sep, "/")  # (most paths: plainly below the root)
    relative = os.path.relpath(normal, real_root)
    if relative == os.pardir or relative.startswith(os.pardir + os.sep):
        relative = os.path.relpath(os.path.realpath(path), real_root)
        if relative == os.pardir or relative.startswith(os.pardir + os.sep):
            return None
    return posixpath.normpath(relative.replace(os.sep, "/"))


@lru_cache(maxsize=64)
def _real_root(root: str) -> str:
    """``os.path.realpath`` of a tree's root, once per root (its objects are located one by one)."""
    return os.path.realpath(root)
