"""What a kustomization may make a renderer read: files and folders of its own source only.

A kustomization names other files and folders: resources, bases, components, patches,
generator inputs, configurations, replacements, plugin configs. Before any renderer runs
(in process or ``kustomize build``), every name an overlay reaches, transitively, is
checked:

- a remote name (a URL such as ``https://host/x.yaml``, ``git::...``, ``ssh://...``,
  ``git@host:org/repo``, ``github.com/org/repo?ref=v1``) is refused unless its host is one
  the source allows (``kustomize_remote_hosts``); ``file://`` is never allowed;
- a local name whose path, every ``..`` and symbolic link resolved, leads out of the source
  root is refused.

A refused overlay is one located error (the kustomization file and the line of the entry);
nothing of it is rendered, so no renderer fetches a URL or reads a file of the host.
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from scanner.errors import ManifestError
from scanner.sources.file_tree import FileTree
from scanner.sources.kustomize.plan import KUSTOMIZATION_FILES, Kustomization
from scanner.sources.paths import within
from scanner.sources.per_commit import PerCommit
from scanner.yamldoc import iter_documents

# kustomization fields holding names of files or folders: (field, key of a mapping entry)
_NAME_LISTS = ("resources", "bases", "components", "crds", "configurations", "transformers",
               "generators", "validators", "patchesStrategicMerge")
_PATH_LISTS = ("patches", "patchesJson6902", "replacements")
_GENERATORS = ("configMapGenerator", "secretGenerator")
_FOLDER_FIELDS = frozenset({"resources", "bases", "components"})  # may name a kustomization folder
# a host-like first segment (github.com/org/repo): kustomize reads it as a Git repository
_HOST_PATH = re.compile(r"(?:[a-z0-9-]+\.)+[a-z]{2,}(?::[0-9]+)?/", re.I)


@dataclass(frozen=True, slots=True)
class Refusal:
    """A name of a kustomization that leads outside the source, and where it is written."""

    kustomization: str  # tree-relative file
    line: int | None
    entry: str
    reason: str

    @property
    def message(self) -> str:
        return f"kustomization entry {self.entry!r} refused: {self.reason}"


def remote_host(entry: str) -> str | None:
    """The host a kustomization entry would be fetched from ("" for ``file://``), or None
    for a local path."""
    text = entry.removeprefix("git::")
    if "://" in text:
        parts = urlsplit(text)
        return "" if parts.scheme == "file" else (parts.hostname or "")
    match = re.match(r"[\w.-]+@([\w.-]+):", text)  # git@github.com:org/repo
    if match:
        return match[1].lower()
    if _HOST_PATH.match(text) and not text.startswith(("./", "../")):
        return text.split("/", 1)[0].split(":", 1)[0].lower()
    return None


_Checked = dict[str, tuple["Refusal | None", list[str]]]
_CHECKED_AT_COMMIT: PerCommit[_Checked] = PerCommit()  # (root, commit, hosts) -> folders checked


class Confinement:
    """Checks the overlays of one tree; each kustomization is read and checked once (for a tree
    at a ``commit``, once per process: the shards of one commit share the checks). ``read``: the
    kustomizations the tree's plan read already, by folder (not parsed again)."""

    def __init__(self, tree: FileTree, remote_hosts: tuple[str, ...] = (), commit: str | None = None,
                 read: Mapping[str, Kustomization] | None = None) -> None:
        self.tree = tree
        self.read = read or {}
        self.root = tree.realpath(tree.root)
        self.allowed = {h.lower() for h in remote_hosts}
        self._folders: _Checked = {}
        if commit:
            self._folders = _CHECKED_AT_COMMIT.get((tree.root, commit, frozenset(self.allowed)), dict)

    def check(self, overlay: str) -> Refusal | None:
        """The first name reachable from the kustomization of ``overlay`` (a tree-relative
        folder) that leads outside the source, or None when every one stays inside."""
        todo, seen = [overlay], set()
        while todo:
            folder = todo.pop()
            if folder in seen:
                continue
            seen.add(folder)
            refusal, children = self._folder(folder)
            if refusal is not None:
                return refusal
            todo.extend(reversed(children))
        return None

    def _folder(self, folder: str) -> tuple[Refusal | None, list[str]]:
        cached = self._folders.get(folder)
        if cached is None:
            cached = self._folders[folder] = self._read(folder)
        return cached

    def _read(self, folder: str) -> tuple[Refusal | None, list[str]]:
        tree = self.tree
        found = _kustomization(tree, folder, self.read.get(folder))
        if found is None:
            return None, []
        relfile, data = found
        children = []
        for field, index, entry in _names(data):
            host = _remote(tree, folder, entry)
            refusal = _check(tree, self.root, folder, entry, host, self.allowed)
            if refusal is not None:
                return Refusal(relfile, _line(tree, relfile, f"/{field}/{index}"), entry, refusal), []
            if field in _FOLDER_FIELDS and host is None:
                target = posixpath.normpath(posixpath.join(folder, entry))
                if tree.isdir(os.path.join(tree.root, target)):
                    children.append("" if target == "." else target)
        return None, children


def check_overlay(tree: FileTree, overlay: str, remote_hosts: tuple[str, ...] = ()) -> Refusal | None:
    """``Confinement(tree, remote_hosts).check(overlay)``."""
    return Confinement(tree, remote_hosts).check(overlay)


def _remote(tree: FileTree, folder: str, entry: str) -> str | None:
    """``remote_host``, except that a name without a scheme that is a path of the tree is local
    (a folder named ``my.app``), as kustomize tries a local path first."""
    host = remote_host(entry)
    if host is not None and "://" not in entry and not entry.startswith("git@"):
        path = os.path.join(tree.root, folder, entry)
        if tree.isdir(path) or tree.isfile(path):
            return None
    return host


def _check(tree: FileTree, root: str, folder: str, entry: str, host: str | None, allowed: set[str]) -> str | None:
    if host is not None:
        if host and host in allowed:
            return None
        if not host:
            return "a file:// URL reads outside the source"
        return f"remote resource on host {host!r} (not fetched; allow the host in kustomize_remote_hosts)"
    path = os.path.join(tree.root, folder, entry)
    if not within(root, tree.realpath(os.path.normpath(path))) or not within(root, tree.realpath(path)):
        return "it leads outside the source (through .. or a symbolic link)"
    return None


def _kustomization(tree: FileTree, folder: str, read: Kustomization | None) -> tuple[str, dict[str, Any]] | None:
    """The kustomization file of ``folder`` and its data (None when there is none, or it cannot
    be read: the renderer reports it); ``read``: that folder's kustomization as the plan read it."""
    for name in KUSTOMIZATION_FILES:
        relfile = posixpath.join(folder, name) if folder else name
        path = os.path.join(tree.root, relfile)
        if tree.isfile(path):
            if read is not None and read.file == relfile:  # (a file the plan could not read has no data)
                return None if read.data is None else (relfile, read.data)
            try:
                documents = [d for d in iter_documents(tree.read(path), relfile) if d.data is not None]
            except (OSError, ManifestError):
                return None
            if documents and isinstance(documents[0].data, dict):
                return relfile, documents[0].data
            return None
    return None


def _line(tree: FileTree, relfile: str, pointer: str) -> int | None:
    """The line of the entry at ``pointer`` in kustomization ``relfile`` (read again, with its
    nodes: only for an entry refused)."""
    try:
        documents = [d for d in iter_documents(tree.read(os.path.join(tree.root, relfile)), relfile, True)
                     if d.data is not None]
    except (OSError, ManifestError):
        return None
    return documents[0].locate(pointer).line if documents else None


def _names(data: dict[str, Any]) -> Iterator[tuple[str, int | str, str]]:
    """(field, index or sub-pointer, name) of every file or folder a kustomization names."""
    for field in _NAME_LISTS:
        entries = data.get(field)
        for i, entry in enumerate(entries if isinstance(entries, list) else []):
            if isinstance(entry, str) and entry and "\n" not in entry:  # not an inline patch
                yield field, i, entry
    for field in _PATH_LISTS:
        entries = data.get(field)
        for i, entry in enumerate(entries if isinstance(entries, list) else []):
            if isinstance(entry, dict) and isinstance(entry.get("path"), str) and entry["path"]:
                yield field, f"{i}/path", entry["path"]
    for field in _GENERATORS:
        entries = data.get(field)
        for i, entry in enumerate(entries if isinstance(entries, list) else []):
            if not isinstance(entry, dict):
                continue
            for key in ("files", "envs"):
                values = entry.get(key)
                for j, value in enumerate(values if isinstance(values, list) else []):
                    if isinstance(value, str) and value:
                        yield field, f"{i}/{key}/{j}", value.split("=", 1)[-1] if key == "files" else value
            if isinstance(entry.get("env"), str) and entry["env"]:
                yield field, f"{i}/env", entry["env"]
    openapi = data.get("openapi")
    if isinstance(openapi, dict) and isinstance(openapi.get("path"), str) and openapi["path"]:
        yield "openapi", "path", openapi["path"]
