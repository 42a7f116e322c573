"""The charts of a source rendered as their releases: settings from the config, objects with
provenance (the template file that defines each, the chart, the values files that applied)."""

from __future__ import annotations

import os
import posixpath
from collections.abc import Iterator
from dataclasses import dataclass

from scanner.config import HelmChartConfig, HelmConfig
from scanner.engine.kinds import is_cluster_scoped
from scanner.errors import Location, ManifestError
from scanner.sources.documents import Origin, SourceItem, resource_from_document
from scanner.sources.file_tree import FileTree
from scanner.sources.helm.charts import Chart, local_dependency_folders, read_chart
from scanner.sources.helm.render import ChartOutput, HelmNotFound, Release, error_template, find_helm, render_chart
from scanner.sources.paths import Shard
from scanner.sources.provenance import ErrorRecord, SourceStats
from scanner.yamldoc import YamlDocument


@dataclass(frozen=True, slots=True)
class PlannedRelease:
    """A chart and the release it is rendered as, with the values files named for provenance."""

    chart: Chart
    release: Release
    values_shown: tuple[str, ...]  # tree-relative values files, in the order they apply


def plan_release(chart: Chart, options: HelmConfig, disk_root: str) -> PlannedRelease:
    """The release a chart is rendered as: the chart's name and ``default`` unless configured."""
    settings = options.charts.get(chart.folder or ".", HelmChartConfig())
    shown = (*options.values, *settings.values)
    release = Release(settings.release or chart.name, settings.namespace or "default",
                      tuple(os.path.join(disk_root, p) for p in shown),
                      dict(settings.set) or None)
    return PlannedRelease(chart, release, shown)


def scan_charts(tree: FileTree, folders: tuple[str, ...], options: HelmConfig, origin: Origin,
                stats: SourceStats, shard: Shard | None = None) -> Iterator[SourceItem]:
    """The rendered objects of the charts in ``folders``, or one located error per chart that
    cannot be rendered (no helm, a bad ``Chart.yaml``, a missing dependency, a template error).
    Of several shards of a tree, each renders its block of the charts; the first reports the rest."""
    shard = shard or Shard()
    if not folders:
        return
    if options.mode == "off":
        if shard.first:
            stats.skipped["helm-off"] += len(folders)
        return
    try:
        helm = find_helm()
    except HelmNotFound as exc:
        if shard.first:
            for folder in folders:
                stats.errors += 1
                yield ErrorRecord(origin.source, "renderer-missing", str(exc),
                                  Location(posixpath.join(folder, "Chart.yaml")))
        return
    charts: list[Chart] = []
    for folder in folders:
        try:
            charts.append(read_chart(tree, folder))
        except ManifestError as exc:
            if shard.first:
                stats.errors += 1
                yield ErrorRecord(origin.source, "render", exc.message, exc.location or Location(folder))
    dependencies = local_dependency_folders(charts)
    releases: list[Chart] = []
    for chart in charts:
        configured = (chart.folder or ".") in options.charts
        if chart.library or (chart.folder in dependencies and not configured):
            # a library chart is never installed; a chart another chart depends on is rendered
            # as part of it, and as a release of its own only when the config names it
            if shard.first:
                stats.skipped["helm-library-chart" if chart.library else "helm-dependency-chart"] += 1
            continue
        releases.append(chart)
    mine = [c for i, c in enumerate(releases) if shard.owns_block(i, len(releases))]
    disk_root = tree.on_disk() if mine else ""
    for chart in mine:
        planned = plan_release(chart, options, disk_root)
        missing = [p for p in planned.values_shown if not os.path.isfile(os.path.join(disk_root, p))]
        if missing:
            stats.errors += 1
            yield ErrorRecord(origin.source, "render", f"helm values file not found: {missing[0]}",
                              Location(chart.chart_file))
            continue
        output = render_chart(helm, chart, os.path.join(disk_root, chart.folder), planned.release, options.timeout)
        yield from rendered_items(output, planned, origin, stats)


def rendered_items(output: ChartOutput, planned: PlannedRelease, origin: Origin,
                   stats: SourceStats, via: str | None = None) -> Iterator[SourceItem]:
    """One chart's rendered objects as resources located at their template files; ``via`` names
    what deployed the chart (a GitOps object), the chart's folder otherwise."""
    chart = planned.chart
    if output.error is not None:
        stats.errors += 1
        at = error_template(output.error)
        where = Location(posixpath.join(chart.folder, at[0]), at[1]) if at else Location(chart.chart_file, 1)
        yield ErrorRecord(origin.source, "render", f"helm template failed: {output.error}", where)
        return
    label = release_label(planned, via)
    counts: dict[str, int] = {}
    for obj in output.objects:
        stats.documents += 1
        data = obj.data
        if isinstance(data, dict):
            in_namespace(data, planned.release.namespace)
        path = posixpath.join(chart.folder, obj.template)
        index = counts[path] = counts.get(path, -1) + 1
        item = resource_from_document(YamlDocument(data, path, index, obj.line), path, origin, stats, "helm",
                                      overlay=label)
        if item is not None:
            yield item


def release_label(planned: PlannedRelease, via: str | None = None) -> str:
    """What rendered a chart's objects, as reports show it: ``chart web (release shop in apps,
    values web/values-prod.yaml)``, after the GitOps object that deployed it if one did."""
    release = planned.release
    values = f", values {', '.join(planned.values_shown)}" if planned.values_shown else ""
    chart = f"chart {planned.chart.folder or '.'} (release {release.name} in {release.namespace}{values})"
    return f"{via}: {chart}" if via else chart


def in_namespace(data: dict, namespace: str) -> None:
    """A namespaced object without a namespace is created in ``namespace`` (a release's, or a
    GitOps destination's)."""
    kind = data.get("kind")
    metadata = data.get("metadata")
    if isinstance(kind, str) and isinstance(metadata, dict) and not metadata.get("namespace") \
            and not is_cluster_scoped(kind):
        metadata["namespace"] = namespace
