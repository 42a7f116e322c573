"""The charts of a tree: their folders, ``Chart.yaml`` metadata and dependencies.

A chart's dependencies must be vendored (a folder or ``.tgz`` archive in its ``charts/``
folder) or local (``repository: file://...``, copied in before rendering); one that would be
downloaded from a chart repository is an error located at its ``Chart.yaml`` entry, since
rendering without it would give a partial chart.
"""

from __future__ import annotations

import os
import posixpath
import tarfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from scanner.errors import Location, ManifestError
from scanner.sources.file_tree import FileTree
from scanner.sources.paths import open_regular
from scanner.yamldoc import iter_documents

CHART_FILE = "Chart.yaml"


@dataclass(frozen=True, slots=True)
class Dependency:
    """One entry of a chart's ``dependencies``: how it is found, and where it is declared."""

    name: str
    repository: str
    alias: str | None
    location: Location

    @property
    def local_path(self) -> str | None:
        """The folder of a ``file://`` dependency, relative to its chart's folder."""
        return self.repository.removeprefix("file://") if self.repository.startswith("file://") else None


@dataclass(frozen=True, slots=True)
class Chart:
    """A chart folder (tree-relative, ``""`` for the root) and what its ``Chart.yaml`` says."""

    folder: str
    name: str
    dependencies: tuple[Dependency, ...] = ()
    library: bool = False  # type: library: templates for other charts, never installed itself

    @property
    def chart_file(self) -> str:
        return posixpath.join(self.folder, CHART_FILE)


def chart_folders(relpaths: Iterable[str]) -> tuple[str, ...]:
    """The folders holding a ``Chart.yaml``, outermost only (subcharts belong to their chart)."""
    found = sorted(posixpath.dirname(p) for p in relpaths if posixpath.basename(p) == CHART_FILE)
    outer: list[str] = []
    for folder in found:
        if not in_folders(folder + "/" + CHART_FILE, outer):
            outer.append(folder)
    return tuple(outer)


def in_folders(relpath: str, folders: Sequence[str]) -> bool:
    """Whether ``relpath`` lies under one of ``folders`` (``""`` is the root and holds all)."""
    return any(not folder or relpath.startswith(folder + "/") for folder in folders)


def read_chart(tree: FileTree, folder: str) -> Chart:
    """The chart in ``folder``; ``ManifestError`` (located) when its ``Chart.yaml`` is unusable."""
    relfile = posixpath.join(folder, CHART_FILE)
    try:
        text = tree.read(posixpath.join(tree.root, relfile))
    except OSError as exc:
        raise ManifestError(f"cannot read {CHART_FILE}: {exc.strerror}", Location(relfile)) from exc
    docs = list(iter_documents(text, relfile, keep_nodes=True))
    data = docs[0].data if docs else None
    if not isinstance(data, dict) or not isinstance(data.get("name"), str) or not data["name"]:
        raise ManifestError(f"{CHART_FILE} has no chart name (the name key)", Location(relfile, 1))
    dependencies = data.get("dependencies") or []
    if data.get("apiVersion") == "v1" and not dependencies:
        dependencies = _requirements(tree, folder)
    if not isinstance(dependencies, list):
        raise ManifestError(f"{CHART_FILE}: dependencies must be a list", docs[0].locate("/dependencies"))
    found = []
    for index, entry in enumerate(dependencies):
        where = docs[0].locate(f"/dependencies/{index}") if docs else Location(relfile)
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            raise ManifestError(f"{CHART_FILE}: dependency {index} has no name", where)
        alias = entry.get("alias")
        found.append(Dependency(entry["name"], str(entry.get("repository") or ""),
                                alias if isinstance(alias, str) and alias else None, where))
    return Chart(folder, data["name"], tuple(found), data.get("type") == "library")


def local_dependency_folders(charts: Iterable[Chart]) -> set[str]:
    """The tree-relative folders that charts use as ``file://`` dependencies."""
    found = set()
    for chart in charts:
        for dependency in chart.dependencies:
            if dependency.local_path is not None:
                folder = posixpath.normpath(posixpath.join(chart.folder, dependency.local_path))
                found.add("" if folder == "." else folder)
    return found


def _requirements(tree: FileTree, folder: str) -> list:
    """A ``apiVersion: v1`` chart's dependencies, from its ``requirements.yaml``."""
    relfile = posixpath.join(folder, "requirements.yaml")
    path = posixpath.join(tree.root, relfile)
    if not tree.isfile(path):
        return []
    docs = list(iter_documents(tree.read(path), relfile))
    data = docs[0].data if docs else None
    found = data.get("dependencies") if isinstance(data, dict) else None
    return found if isinstance(found, list) else []


def missing_dependencies(chart: Chart, chart_dir: str) -> list[Dependency]:
    """The dependencies neither vendored in the chart's ``charts/`` folder (``chart_dir`` is the
    chart's folder on disk) nor local (``file://``)."""
    vendored = vendored_charts(os.path.join(chart_dir, "charts"))
    return [d for d in chart.dependencies if d.local_path is None and d.name not in vendored]


def vendored_charts(charts_dir: str) -> set[str]:
    """The names (from their ``Chart.yaml``) of the charts in a ``charts/`` folder: subfolders
    and ``.tgz`` archives, as helm finds them."""
    try:
        entries = sorted(os.listdir(charts_dir))
    except OSError:
        return set()
    names: set[str] = set()
    for entry in entries:
        path = os.path.join(charts_dir, entry)
        name = _archived_name(path) if entry.endswith(".tgz") else _folder_name(path)
        if name:
            names.add(name)
    return names


def _folder_name(folder: str) -> str | None:
    try:
        with open_regular(os.path.join(folder, CHART_FILE)) as f:
            return _name_of(f.read())
    except OSError:
        return None


def _archived_name(archive: str) -> str | None:
    """The chart name in a packaged chart (``NAME/Chart.yaml`` at the top of the archive)."""
    try:
        with tarfile.open(archive, "r:gz") as tar:
            for member in tar:
                parts = member.name.split("/")
                if len(parts) == 2 and parts[1] == CHART_FILE and member.isfile():
                    extracted = tar.extractfile(member)
                    return _name_of(extracted.read(1 << 20)) if extracted else None
    except (OSError, tarfile.TarError, EOFError):
        return None
    return None


def _name_of(text: bytes) -> str | None:
    try:
        docs = list(iter_documents(text, CHART_FILE))
    except ManifestError:
        return None
    data = docs[0].data if docs else None
    name = data.get("name") if isinstance(data, dict) else None
    return name if isinstance(name, str) and name else None
