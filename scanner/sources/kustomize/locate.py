"""A rendered object's origin -> the file, document and line that define it, and its patches.

The file is read the way raw files are read (``iter_documents``), so a resource rendered
from a base points at the same document and line as the base file read on its own. An
object whose renderer does not say which document it came from is found by kind and
name: the one document of its kind, else the one whose name the rendered name holds
(a name prefix or suffix added), else the first of its kind. A generated object points at
its generator's entry in the kustomization; an object of a remote resource at the
``resources`` entry that names the remote.

The patch files that changed an object, when its renderer does not know them (``kubectl
kustomize``), are the patches of the kustomizations between the entry point and the
defining file whose target (a ``target`` selector, or the patch's own kind and name)
selects the object.
"""

from __future__ import annotations

import os
import posixpath
import re
from dataclasses import dataclass
from typing import Any

from scanner.errors import ManifestError
from scanner.sources.file_tree import FileTree
from scanner.sources.kustomize.origin import GENERATOR_FIELDS, RenderOrigin
from scanner.sources.per_commit import PerCommit
from scanner.yamldoc import YamlDocument, iter_documents


@dataclass(frozen=True, slots=True)
class Located:
    """Where a rendered object is defined, and which overlay and patches changed it."""

    path: str
    document: int
    line: int | None
    item: int | None
    overlay: str
    patches: tuple[str, ...]


_Documents = dict[tuple[str, bool], list[YamlDocument]]
_READ_AT_COMMIT: PerCommit[_Documents] = PerCommit()  # (tree root, commit) -> its files' documents


class OriginLocator:
    """Locates the objects of the overlays of one tree; files are read once (for a tree at a
    ``commit``, once per process: the shards of one commit share what they read)."""

    def __init__(self, tree: FileTree, kustomizations: dict[str, Any], commit: str | None = None) -> None:
        self.tree = tree
        self.kustomizations = kustomizations  # directory -> kustomize.Kustomization
        self._documents: _Documents = {}
        if commit:
            self._documents = _READ_AT_COMMIT.get((tree.root, commit), dict)
        self._reach: dict[str, frozenset[str]] = {}

    def locate(self, overlay: str, kustomization: str, origin: RenderOrigin, data: Any) -> Located:
        """``kustomization`` is the overlay's kustomization file (tree-relative)."""
        path = origin.path
        located: tuple[str, int, int | None, int | None]
        if origin.repo is not None:
            document, line = self._resource_entry(kustomization, origin.repo)
            located = (path, document, line, None)
        elif origin.generator is not None:
            located = self._generated(path, origin.generator, data)
        elif origin.place is not None:  # read there by the renderer: not read again
            located = (path, origin.place[0], origin.place[1], None)
        else:
            located = self._defined(path, origin.ordinal, data)
        patches = origin.patches if origin.patches is not None else self._patches(overlay, located[0], data)
        return Located(*located, overlay or ".", patches)

    def error_line(self, kustomization: str, message: str) -> int:
        """The line of ``kustomization`` holding the entry a kustomize error names (``... from
        'entry'``, ``... file 'entry'``), else 1."""
        try:
            text = self.tree.read(os.path.join(self.tree.root, kustomization)).decode("utf-8", "replace")
        except OSError:
            return 1
        for quoted, in_parentheses in re.findall(r"(?:from|file|path) '([^']+)'|from path\(([^)]+)\)", message):
            name = (quoted or in_parentheses).rstrip("/")
            for number, line in enumerate(text.splitlines(), 1):
                if name and name in line and not line.lstrip().startswith("#"):
                    return number
        return 1

    def documents(self, path: str, keep_nodes: bool = False) -> list[YamlDocument]:
        key = (path, keep_nodes)
        cached = self._documents.get(key)
        if cached is None:
            try:
                text = self.tree.read(os.path.join(self.tree.root, path))
                cached = [d for d in iter_documents(text, path, keep_nodes, split_lists=not keep_nodes)
                          if d.data is not None]
            except (OSError, ManifestError):
                cached = []
            self._documents[key] = cached
        return cached

    def _defined(self, path: str, ordinal: int | None, data: Any) -> tuple[str, int, int | None, int | None]:
        documents = self.documents(path)
        if ordinal is not None:
            whole = [d for d in documents if d.item is None]
            if ordinal < len(whole):
                return path, whole[ordinal].index, whole[ordinal].line, None
        found = _by_kind_and_name(documents, data)
        if found is None:
            return path, 0, documents[0].line if documents else 1, None
        return path, found.index, found.line, found.item

    def _generated(self, path: str, generator: str, data: Any) -> tuple[str, int, int | None, int | None]:
        documents = self.documents(path, keep_nodes=True)
        if not documents or not isinstance(documents[0].data, dict):
            return path, 0, 1, None
        doc = documents[0]
        key = GENERATOR_FIELDS.get(generator, "generators")
        entries = doc.data.get(key)
        name = _name(data)
        if isinstance(entries, list):
            names = [(i, e.get("name") or e.get("releaseName")) for i, e in enumerate(entries) if isinstance(e, dict)]
            matching = [(len(n), i) for i, n in names if isinstance(n, str) and n and n in name]
            best = max(matching)[1] if matching else None
            pointer = f"/{key}/{best}" if best is not None else f"/{key}"
            return path, doc.index, doc.locate(pointer).line, None
        return path, doc.index, doc.line, None

    def _resource_entry(self, kustomization: str, repo: str) -> tuple[int, int | None]:
        documents = self.documents(kustomization, keep_nodes=True)
        if not documents or not isinstance(documents[0].data, dict):
            return 0, 1
        doc = documents[0]
        tail = repo.rstrip("/").removesuffix(".git").rsplit("/", 1)[-1]
        for key in ("resources", "bases"):
            entries = doc.data.get(key)
            for i, entry in enumerate(entries if isinstance(entries, list) else []):
                if isinstance(entry, str) and tail and tail in entry:
                    return doc.index, doc.locate(f"/{key}/{i}").line
        return doc.index, doc.line

    # -- patches --------------------------------------------------------------------------------

    def _patches(self, overlay: str, path: str, data: Any) -> tuple[str, ...]:
        """The patch files of the kustomizations from ``overlay`` down to ``path`` that select
        the object (by its rendered name or by the name it has in ``path``)."""
        names = {_name(data)}
        defined = _by_kind_and_name(self.documents(path), data)
        if defined is not None:
            names.add(_name(defined.data))
        found: list[str] = []
        for directory in self._chain(overlay, path):
            k = self.kustomizations[directory]
            for patch_file, target, inline in _patch_entries(self.documents(k.file), directory, k.file):
                if patch_file not in found and self._selects(patch_file, target, inline, data, names):
                    found.append(patch_file)
        return tuple(found)

    def _chain(self, overlay: str, path: str) -> list[str]:
        """The kustomization folders reachable from ``overlay`` that accumulate ``path``, and the
        components of those (a component transforms what the kustomization including it holds)."""
        chain, todo, seen = [], [(overlay, False)], set()
        while todo:
            directory, included = todo.pop()
            k = self.kustomizations.get(directory)
            if k is None or directory in seen:
                continue
            seen.add(directory)
            if path in self._reached(directory) or (included and k.component):
                chain.append(directory)
                todo.extend((reference, True) for reference in sorted(k.references, reverse=True))
        return chain

    def _reached(self, directory: str) -> frozenset[str]:
        cached = self._reach.get(directory)
        if cached is None:
            self._reach[directory] = frozenset()  # a cycle reaches nothing more
            k = self.kustomizations[directory]
            files = {k.file, *k.resources}
            for reference in k.references:
                if reference in self.kustomizations:
                    files |= self._reached(reference)
            cached = self._reach[directory] = frozenset(files)
        return cached

    def _selects(self, patch_file: str, target: dict[str, Any] | None, inline: list[Any] | None,
                 data: Any, names: set[str]) -> bool:
        kind = data.get("kind") if isinstance(data, dict) else None
        api_version = str(data.get("apiVersion") or "") if isinstance(data, dict) else ""
        if target is not None:
            group, _, version = api_version.rpartition("/")
            values: dict[str, set[Any]] = {"kind": {kind}, "name": names, "group": {group},
                                           "version": {version}, "namespace": {_namespace(data)}}
            for key, values_of_key in values.items():
                wanted = target.get(key)
                if isinstance(wanted, str) and wanted and not any(
                        _full_match(wanted, str(v or "")) for v in values_of_key):
                    return False
            return True
        documents = inline if inline is not None else [d.data for d in self.documents(patch_file)]
        patches = [d for d in documents if isinstance(d, dict)]
        return any(p.get("kind") == kind and _name(p) in names for p in patches)


_PatchEntry = tuple[str, dict[str, Any] | None, list[Any] | None]


def _patch_entries(documents: list[YamlDocument], directory: str, kustomization: str) -> list[_PatchEntry]:
    """(patch file, target selector or None, inline documents or None) of each patch of a
    kustomization; an inline patch is named by its kustomization file."""
    data = documents[0].data if documents and isinstance(documents[0].data, dict) else {}
    entries: list[_PatchEntry] = []
    for entry in data.get("patchesStrategicMerge") or []:
        if isinstance(entry, str):
            inline = "\n" in entry  # a patch written in the list itself
            entries.append((kustomization if inline else _local(directory, entry, kustomization), None,
                            _inline(entry) if inline else None))
    for key in ("patches", "patchesJson6902"):
        for entry in data.get(key) or []:
            if not isinstance(entry, dict):
                continue
            target = entry.get("target") if isinstance(entry.get("target"), dict) else None
            path, text = entry.get("path"), entry.get("patch")
            if isinstance(path, str):
                entries.append((_local(directory, path, kustomization), target, None))
            elif isinstance(text, str):
                entries.append((kustomization, target, _inline(text)))
    return entries


def _inline(text: str) -> list[Any]:
    """The documents of a patch written inline (none when it is not valid YAML)."""
    try:
        return [d.data for d in iter_documents(text, "<patch>")]
    except ManifestError:
        return []


def _local(directory: str, ref: str, fallback: str) -> str:
    joined = posixpath.normpath(posixpath.join(directory, ref))
    return fallback if joined.startswith("..") or "://" in ref else joined


def _full_match(pattern: str, value: str) -> bool:
    try:
        return re.fullmatch(f"(?:{pattern})", value) is not None
    except re.error:
        return pattern == value


def _name(data: Any) -> str:
    metadata = data.get("metadata") if isinstance(data, dict) else None
    name = metadata.get("name") if isinstance(metadata, dict) else None
    return name if isinstance(name, str) else ""


def _namespace(data: Any) -> str:
    metadata = data.get("metadata") if isinstance(data, dict) else None
    namespace = metadata.get("namespace") if isinstance(metadata, dict) else None
    return namespace if isinstance(namespace, str) else ""


def _by_kind_and_name(documents: list[YamlDocument], data: Any) -> YamlDocument | None:
    """The document of ``documents`` that an object rendered from them is: same kind, and the
    longest name the rendered name holds (a prefix or suffix added), or the one of its kind."""
    kind, name = (data.get("kind") if isinstance(data, dict) else None), _name(data)
    same_kind = [d for d in documents if isinstance(d.data, dict) and d.data.get("kind") == kind]
    exact = [d for d in same_kind if _name(d.data) == name]
    if exact:
        return exact[0]
    held = [d for d in same_kind if _name(d.data) and _name(d.data) in name]
    if held:
        return max(held, key=lambda d: len(_name(d.data)))
    return same_kind[0] if same_kind else None
