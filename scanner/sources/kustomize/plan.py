"""Kustomize overlays: which directories to render, and which raw files their rendering covers.

An overlay is a directory with a ``kustomization.yaml`` that no other kustomization of
the tree refers to and that is not a ``kind: Component`` (a component is only ever part of
another build); a kustomization the config lists as a root is rendered as an entry point
too, even when another overlay refers to it. Its rendered output replaces the raw files it reads (resources and
patches of the overlay and of every kustomization it refers to, transitively); other
files in those directories are not part of any render and are still read raw.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from scanner.errors import ManifestError
from scanner.sources.file_tree import FileTree
from scanner.yamldoc import iter_documents

KUSTOMIZATION_FILES = ("kustomization.yaml", "kustomization.yml", "Kustomization")
KustomizeMode = Literal["auto", "off"]


@dataclass(slots=True)
class Kustomization:
    """A kustomization file of a tree and the directories and files it refers to."""

    directory: str  # relative to the tree root, "" for the root itself
    file: str
    references: set[str] = field(default_factory=set)  # directories, tree-relative
    resources: set[str] = field(default_factory=set)  # resource files, tree-relative
    patches: set[str] = field(default_factory=set)  # patch files, tree-relative
    component: bool = False  # kind: Component
    data: dict[str, Any] | None = None  # its first document that is not null, when a mapping


@dataclass(frozen=True, slots=True)
class RenderPlan:
    """Which overlays of a tree to render, and which files their rendering covers."""

    overlays: tuple[str, ...]  # directories to render
    covered: frozenset[str]  # files the rendered overlays read: not read raw again
    patches: frozenset[str]  # patch files (not resources when read raw)
    files: dict[str, str]  # directory -> its kustomization file (tree-relative)
    kustomizations: dict[str, Kustomization] = field(default_factory=dict)  # by directory
    missing_roots: tuple[str, ...] = ()  # configured roots with no kustomization

    def reads(self, overlays: Iterable[str]) -> list[str]:
        """The files rendering ``overlays`` reads, roughly in the order it reads them: each
        kustomization file, its resources and patches, then the kustomizations it refers to."""
        found: list[str] = []
        seen: set[str] = set()

        def visit(directory: str) -> None:
            k = self.kustomizations.get(directory)
            if k is None or directory in seen:
                return
            seen.add(directory)
            found.extend([k.file, *sorted(k.resources), *sorted(k.patches)])
            for reference in sorted(k.references):
                visit(reference)

        for overlay in overlays:
            visit(overlay)
        return found


def _local(base: str, ref: Any) -> str | None:
    if not isinstance(ref, str) or "://" in ref or ref.startswith(("git@", "github.com/")):
        return None
    joined = posixpath.normpath(posixpath.join(base, ref))
    return None if joined.startswith("..") else ("" if joined == "." else joined)


def _entries(data: dict[str, Any], key: str) -> list[Any]:
    """The list a kustomization field holds (none when it holds anything else: the renderer
    reports the field)."""
    value = data.get(key)
    return value if isinstance(value, list) else []


def read_kustomization(tree: FileTree, relfile: str) -> Kustomization:
    directory = posixpath.dirname(relfile)
    k = Kustomization(directory, relfile)
    try:
        docs = [d.data for d in iter_documents(tree.read(os.path.join(tree.root, relfile)), relfile)]
    except (OSError, ValueError, ManifestError):
        return k  # the renderer will report it
    first = next((d for d in docs if d is not None), None)
    k.data = first if isinstance(first, dict) else None
    data = docs[0] if docs and isinstance(docs[0], dict) else {}
    k.component = data.get("kind") == "Component"
    for ref in [*_entries(data, "resources"), *_entries(data, "bases"), *_entries(data, "components")]:
        local = _local(directory, ref)
        if local is None:
            continue
        if local.endswith((".yaml", ".yml", ".json")):
            k.resources.add(local)
        else:
            k.references.add(local)
    # files kustomize reads as its own configuration, never as manifests: patches, and the
    # configs of transformer, generator and validator plugins and of replacements
    patch_refs: list[Any] = list(_entries(data, "patchesStrategicMerge"))
    for key in ("transformers", "generators", "validators"):
        patch_refs += [p for p in _entries(data, key) if isinstance(p, str)]
    for key in ("patches", "patchesJson6902", "replacements"):
        patch_refs += [p.get("path") for p in _entries(data, key) if isinstance(p, dict)]
    for ref in patch_refs:
        local = _local(directory, ref)
        if local is not None and local.endswith((".yaml", ".yml", ".json")):
            k.patches.add(local)
    return k


def _reached(kustomizations: dict[str, Kustomization], starts: Iterable[str]) -> set[str]:
    """The kustomizations ``starts`` are and refer to, transitively."""
    seen: set[str] = set()
    todo = list(starts)
    while todo:
        d = todo.pop()
        if d in seen or d not in kustomizations:
            continue
        seen.add(d)
        todo.extend(kustomizations[d].references)
    return seen


def plan(tree: FileTree, relfiles: Iterable[str], roots: Iterable[str] = ()) -> RenderPlan:
    """The overlays of the tree's kustomizations (``relfiles`` lists the tree's files): those no
    other kustomization refers to, ``roots`` (tree-relative folders) listed as entry points, and
    the first of each circle of kustomizations no other overlay reaches."""
    kustomizations: dict[str, Kustomization] = {}
    for rel in relfiles:
        if posixpath.basename(rel) in KUSTOMIZATION_FILES:
            k = read_kustomization(tree, rel)
            kustomizations.setdefault(k.directory, k)
    referenced = set().union(*(k.references for k in kustomizations.values()))
    wanted = {"" if r in (".", "") else posixpath.normpath(r.strip("/")) for r in roots}
    entries = sorted(d for d, k in kustomizations.items()
                     if not k.component and (d not in referenced or d in wanted))
    missing = tuple(sorted(r for r in wanted if r not in kustomizations or kustomizations[r].component))
    seen = _reached(kustomizations, entries)
    # kustomizations that refer to each other in a circle (or to themselves), reached from no
    # overlay: the circle is rendered from its first member, so that its error is reported as
    # kustomize reports it (a cycle), and its files are not read raw as if no overlay used them
    for d in sorted(kustomizations):
        if (d not in seen and not kustomizations[d].component
                and d in _reached(kustomizations, kustomizations[d].references)):
            entries.append(d)
            seen |= _reached(kustomizations, [d])
    overlays = tuple(sorted(entries))
    covered: set[str] = set().union(*(kustomizations[d].resources | kustomizations[d].patches for d in seen))
    patches = frozenset().union(*(k.patches for k in kustomizations.values()))
    files = {d: k.file for d, k in kustomizations.items()}
    return RenderPlan(overlays, frozenset(covered), patches, files, kustomizations, missing)


