"""Kustomize ``helmCharts``: the charts a kustomization inflates, checked, rendered and located.

Kustomize renders a kustomization's ``helmCharts`` (its HelmChartInflationGenerator) with
``helm template`` and then applies the kustomization's other transformers (namespace, labels,
patches, images, name prefix ...) to their objects, like to its resources. So that this is
exactly what kustomize gives, an overlay using ``helmCharts`` is rendered by the external
renderer with ``--enable-helm``; ``--helm-command`` is a wrapper of the scan's helm that runs it
with a scrubbed environment, refuses anything but ``version`` and ``template`` (``pull`` would
download a chart) and keeps each ``template`` output, whose ``# Source:`` comments locate every
rendered object at its template file and line.

Before that, every chart the overlay's kustomizations name must be in its chart home (as
kustomize looks for it: ``<chartHome>/<name>``, or ``<chartHome>/<name>-<version>/<name>``
when ``version`` and ``repo`` are both given; ``chartHome`` defaults to ``charts`` beside the
kustomization) with its own dependencies vendored; otherwise kustomize would download it and
the overlay is a located error instead.
"""

from __future__ import annotations

import os
import posixpath
import shlex
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from scanner.errors import Location, ManifestError
from scanner.sources.file_tree import FileTree
from scanner.sources.helm.charts import CHART_FILE, read_chart, vendored_charts
from scanner.sources.helm.render import RenderedObject, parse_output
from scanner.yamldoc import iter_documents

HELM_CHARTS = "helmCharts"
GENERATOR = "HelmChartInflationGenerator"
DEFAULT_HOME = "charts"


@dataclass(frozen=True, slots=True)
class KustomizeChart:
    """One ``helmCharts`` entry of a kustomization (tree-relative paths)."""

    kustomization: str  # the kustomization file
    name: str
    folder: str | None  # the chart's folder, None when it lies outside the tree
    release: str
    namespace: str
    values_file: str | None  # tree-relative values file named by valuesFile, if any
    inline: bool  # valuesInline given
    version: str
    repo: str
    location: Location

    @property
    def values_shown(self) -> str:
        parts = [p for p in (self.values_file, "inline values" if self.inline else None) if p]
        return ", ".join(parts)


def kustomization_charts(tree: FileTree, relfile: str) -> list[KustomizeChart]:
    """The ``helmCharts`` entries of one kustomization file (none when it has no such key or
    cannot be read: the renderer reports an unreadable kustomization)."""
    try:
        text = tree.read(os.path.join(tree.root, relfile))
    except OSError:
        return []
    if HELM_CHARTS.encode() not in text:
        return []
    try:
        docs = list(iter_documents(text, relfile, keep_nodes=True))
    except ManifestError:
        return []
    data = docs[0].data if docs else None
    if not isinstance(data, dict) or not isinstance(data.get(HELM_CHARTS), list):
        return []
    directory = posixpath.dirname(relfile)
    globals_ = data.get("helmGlobals")
    home = str((globals_ if isinstance(globals_, dict) else {}).get("chartHome") or DEFAULT_HOME)
    found = []
    for index, entry in enumerate(data[HELM_CHARTS]):
        if not isinstance(entry, dict) or not entry.get("name"):
            continue  # kustomize's own error: chart name cannot be empty
        name, version, repo = str(entry["name"]), str(entry.get("version") or ""), str(entry.get("repo") or "")
        chart_home = _inside(directory, home)
        folder = None
        if chart_home is not None:
            parts = [chart_home, f"{name}-{version}" if version and repo else "", name]
            folder = posixpath.normpath(posixpath.join(*[p for p in parts if p]))
        values = entry.get("valuesFile")
        found.append(KustomizeChart(
            relfile, name, folder, str(entry.get("releaseName") or ""), str(entry.get("namespace") or ""),
            _inside(directory, str(values)) if values else None, bool(entry.get("valuesInline")),
            version, repo, docs[0].locate(f"/{HELM_CHARTS}/{index}")))
    return found


def _inside(directory: str, path: str) -> str | None:
    if os.path.isabs(path):
        return None
    joined = posixpath.normpath(posixpath.join(directory, path))
    return None if joined == ".." or joined.startswith("../") else ("" if joined == "." else joined)


def reached_charts(tree: FileTree, kustomizations: Mapping[str, Any], overlay: str) -> list[KustomizeChart]:
    """The ``helmCharts`` of the kustomizations a build of ``overlay`` reads (it and every
    kustomization it refers to, transitively); ``kustomizations``: folder -> Kustomization."""
    found: list[KustomizeChart] = []
    seen: set[str] = set()
    todo = [overlay]
    while todo:
        directory = todo.pop()
        k = kustomizations.get(directory)
        if k is None or directory in seen:
            continue
        seen.add(directory)
        found += kustomization_charts(tree, k.file)
        todo.extend(sorted(k.references, reverse=True))
    return found


def inflated_chart_folders(tree: FileTree, kustomizations: Mapping[str, Any]) -> tuple[str, ...]:
    """The folders of the charts that kustomizations inflate: rendered by kustomize only, never
    as charts of their own nor read as raw files."""
    return tuple(sorted({c.folder for k in kustomizations.values() for c in kustomization_charts(tree, k.file)
                         if c.folder is not None}))


def chart_problem(tree: FileTree, chart: KustomizeChart) -> str | None:
    """Why kustomize could not inflate ``chart`` offline, or None."""
    what = f"helm chart {chart.name!r}"
    if chart.repo:
        what += f" (repo {chart.repo}" + (f", version {chart.version})" if chart.version else ")")
    if chart.folder is None:
        return f"{what}: its chartHome is outside the source; not rendered"
    on_disk = os.path.join(tree.on_disk(), chart.folder)
    if not os.path.isfile(os.path.join(on_disk, CHART_FILE)):
        return (f"{what} is not vendored at {chart.folder}: kustomize would download it, and charts are "
                "rendered without network access (vendor it with helm pull --untar)")
    try:
        dependencies = read_chart(tree, chart.folder).dependencies
    except ManifestError as exc:
        return f"{what}: {exc.location}: {exc.message}"
    vendored = vendored_charts(os.path.join(on_disk, "charts"))
    missing = [d for d in dependencies if d.name not in vendored]  # helm template builds no file:// ones
    if missing:
        d = missing[0]
        return (f"{what}: chart dependency {d.name!r} ({d.repository or 'no repository'}) is not vendored in "
                f"{chart.folder}/charts ({d.location}): run helm dependency build and commit charts/")
    return None


_WRAPPER = """#!/bin/sh
# helm as kustomize runs it for a scan: scrubbed environment, no download, outputs kept
run() {{
  env -i PATH={path} HOME={home} KUBECONFIG=/dev/null HELM_CONFIG_HOME={home}/config \\
    HELM_CACHE_HOME={home}/cache HELM_DATA_HOME={home}/data HELM_PLUGINS={home}/plugins GOGC=400 \\
    {helm} "$@"
}}
case "$1" in
  version) run "$@" ;;
  template)
    out=$(mktemp {record}/template.XXXXXX) || exit 1
    printf '%s\\n' "$@" > "$out.args"
    run "$@" > "$out"
    status=$?
    cat "$out"
    exit $status ;;
  *) echo "helm $1 is not run: charts are rendered without network access" >&2; exit 1 ;;
esac
"""


@dataclass(frozen=True, slots=True)
class ChartRun:
    """One ``helm template`` kustomize ran: the chart folder on disk and the objects."""

    chart_dir: str
    objects: tuple[RenderedObject, ...]


class HelmForKustomize:
    """A temporary folder with the helm wrapper kustomize is given, and the outputs it kept."""

    def __init__(self, helm: str) -> None:
        self._work = tempfile.TemporaryDirectory(prefix="scanner-kustomize-helm-")
        root = self._work.name
        record = os.path.join(root, "record")
        home = os.path.join(root, "home")
        os.mkdir(record)
        os.mkdir(home)
        self.command = os.path.join(root, "helm")
        with open(self.command, "w", encoding="utf-8") as f:
            f.write(_WRAPPER.format(path=shlex.quote(os.environ.get("PATH", "/usr/bin:/bin")),
                                    home=shlex.quote(home), helm=shlex.quote(helm), record=shlex.quote(record)))
        os.chmod(self.command, 0o700)
        self._record = record

    @property
    def flags(self) -> list[str]:
        return ["--enable-helm", "--helm-command", self.command]

    def runs(self) -> list[ChartRun]:
        found = []
        for name in sorted(os.listdir(self._record)):
            if name.endswith(".args"):
                continue
            path = os.path.join(self._record, name)
            with open(path + ".args", encoding="utf-8") as f:
                args = f.read().splitlines()
            folders = [a for a in args[1:] if os.path.isfile(os.path.join(a, CHART_FILE))]
            with open(path, encoding="utf-8") as f:
                text = f.read()
            try:
                objects = tuple(parse_output(text))
            except ManifestError:
                objects = ()
            if folders:
                found.append(ChartRun(os.path.realpath(folders[0]), objects))
        return found

    def close(self) -> None:
        self._work.cleanup()

    def __enter__(self) -> HelmForKustomize:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass(frozen=True, slots=True)
class ChartPlace:
    """Where an inflated object is defined: its chart's template, and what rendered it."""

    path: str  # tree-relative template file
    line: int
    label: str


class ChartLocator:
    """Finds the template of each object kustomize inflated from a chart of one overlay."""

    def __init__(self, root: str, overlay: str, charts: Iterable[KustomizeChart], runs: Iterable[ChartRun]) -> None:
        real_root = os.path.realpath(root)
        self._charts = {os.path.realpath(os.path.join(real_root, c.folder)): c for c in charts if c.folder is not None}
        self._left: dict[str, list[RenderedObject]] = {}
        for run in runs:
            if run.chart_dir in self._charts:
                self._left.setdefault(run.chart_dir, []).extend(run.objects)
        self._overlay = overlay or "."

    def place(self, kustomization: str, data: Any) -> ChartPlace | None:
        """The template of an object generated by ``kustomization``'s helmCharts, by kind and
        name (the rendered name holds the chart's: a prefix or suffix may be added)."""
        if not isinstance(data, dict):
            return None
        kind, name = data.get("kind"), str((data.get("metadata") or {}).get("name") or "")
        best: tuple[int, str, int] | None = None
        for chart_dir, objects in self._left.items():
            chart = self._charts[chart_dir]
            if chart.kustomization != kustomization:
                continue
            for position, obj in enumerate(objects):
                if not isinstance(obj.data, dict) or obj.data.get("kind") != kind:
                    continue
                original = str((obj.data.get("metadata") or {}).get("name") or "")
                score = 2 * len(original) + 1 if original == name else 2 * len(original) if original in name else -1
                if score >= 0 and (best is None or score > best[0]):
                    best = (score, chart_dir, position)
        if best is None:
            return None
        _, chart_dir, position = best
        obj = self._left[chart_dir].pop(position)
        chart = self._charts[chart_dir]
        assert chart.folder is not None
        return ChartPlace(posixpath.join(chart.folder, obj.template), obj.line, self.label(chart))

    def label(self, chart: KustomizeChart) -> str:
        """``overlay apps/web: chart apps/web/charts/web (release web in shop, values ...)``."""
        release = chart.release or "(generated name)"
        namespace = f" in {chart.namespace}" if chart.namespace else ""
        values = f", values {chart.values_shown}" if chart.values_shown else ""
        return f"overlay {self._overlay}: chart {chart.folder} (release {release}{namespace}{values})"
