"""Scan a directory tree: walk, render Kustomize overlays, read the remaining raw files.

Overlays in the common subset of Kustomize render in process first; the others render in
a background thread (the renderer is a separate process) while the raw files are parsed,
so rendering costs little wall time on a machine with two cores.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace

from scanner.config import HelmConfig
from scanner.errors import Location
from scanner.sources.documents import (
    Origin,
    SourceItem,
    resource_from_document,
    resources_from_text,
)
from scanner.sources.file_tree import DISK, FileTree
from scanner.sources.gitops.entries import EntryPoint
from scanner.sources.gitops.render import render_entry
from scanner.sources.helm.charts import chart_folders, in_folders
from scanner.sources.helm.kustomize import (
    GENERATOR,
    ChartLocator,
    HelmForKustomize,
    KustomizeChart,
    chart_problem,
    inflated_chart_folders,
    reached_charts,
)
from scanner.sources.helm.releases import scan_charts
from scanner.sources.helm.render import HelmNotFound, find_helm
from scanner.sources.kustomize.confine import Confinement
from scanner.sources.kustomize.external import render_overlay
from scanner.sources.kustomize.locate import OriginLocator
from scanner.sources.kustomize.native import NativeResult, render_native
from scanner.sources.kustomize.origin import RenderOrigin, RenderOutput
from scanner.sources.kustomize.plan import KUSTOMIZATION_FILES, KustomizeMode, RenderPlan, plan
from scanner.sources.kustomize.version import ExternalRenderer, external_renderer
from scanner.sources.paths import PathFilter, Shard, TreeFile, UnreadableFolder
from scanner.sources.per_commit import PerCommit
from scanner.sources.provenance import ErrorRecord, SourceStats
from scanner.yamldoc import DEFAULT_LIMITS, YamlDocument, YamlLimits


@dataclass(frozen=True, slots=True)
class TreeOptions:
    """How a tree is read: globs relative to its root, Kustomize, limits."""

    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    kustomize: KustomizeMode = "auto"
    helm: HelmConfig = field(default_factory=HelmConfig)
    gitops: tuple[EntryPoint, ...] = ()  # GitOps objects' entry points into this tree
    kustomize_roots: tuple[str, ...] = ()  # kustomizations rendered as entry points too
    kustomize_remote_hosts: tuple[str, ...] = ()  # hosts remote kustomize resources may come from
    limits: YamlLimits = DEFAULT_LIMITS
    render_timeout: float = 300.0
    shard: Shard = field(default_factory=Shard)

    @property
    def path_filter(self) -> PathFilter:
        return PathFilter(self.include, self.exclude)


def folder_error(source: str, path: str, reason: str, what: str = "folder") -> ErrorRecord:
    """The error record of a folder that cannot be listed, or of a file or folder the walk does
    not read (a link leading outside the source, a FIFO), like ``read_file``'s of a file."""
    return ErrorRecord(source, "read", f"cannot read {what}: {reason}", Location(path))


def read_file(tree_file: TreeFile, origin: Origin, stats: SourceStats,
              limits: YamlLimits, *, tree: FileTree = DISK, items: Callable[[int], bool] | None = None,
              only_split: bool = False) -> Iterator[SourceItem]:
    """The resources of one file, or an error record if it cannot be read.

    ``items``/``only_split`` let several readers share one List dump (see ``resources_from_text``).
    """
    try:
        size = tree.size(tree_file.path)
        if size > limits.max_file_bytes:
            stats.errors += 1
            yield ErrorRecord(origin.source, "limit",
                              f"file too large: {size} bytes (limit {limits.max_file_bytes})",
                              Location(tree_file.relpath))
            return
        data = tree.read(tree_file.path)
    except OSError as exc:
        stats.errors += 1
        yield ErrorRecord(origin.source, "read", f"cannot read file: {exc.strerror}",
                          Location(tree_file.relpath))
        return
    stats.files += 1
    yield from resources_from_text(data, tree_file.relpath, origin, stats, limits,
                                   stream=len(data) > limits.stream_bytes, items=items,
                                   only_split=only_split)


def scan_tree(tree: FileTree, origin: Origin, options: TreeOptions,
              stats: SourceStats) -> Iterator[SourceItem]:
    """Every resource and error record of ``tree``, paths relative to its root."""
    shard = options.shard
    files, skipped, unreadable, render_plan, charts = _walk_and_plan(tree, origin, options)
    deployed = _Deployed.of(options.gitops, render_plan)
    if deployed.folders:  # what GitOps objects deploy is rendered as they deploy it, not on its own
        charts = tuple(c for c in charts if not deployed.covers(c))
        render_plan = replace(render_plan, overlays=tuple(o for o in render_plan.overlays if not deployed.covers(o)))
    if shard.first:
        stats.skipped.update(skipped)
        submodules = sum(not options.path_filter.leaves_out(path) for path in tree.submodules())
        if submodules:
            stats.skipped["submodule"] += submodules
        for folder in unreadable:
            stats.errors += 1
            yield folder_error(origin.source, folder.relpath, folder.reason, folder.what)
        for root in render_plan.missing_roots:
            stats.errors += 1
            yield ErrorRecord(origin.source, "render", "kustomize_roots entry is not a folder with a "
                              "kustomization (kind: Kustomization)", Location(root or "."))
    # the external renderer, its Kustomize version checked (only when there is something to render)
    external = external_renderer(options.kustomize) if render_plan.overlays else ExternalRenderer()
    command = list(external.command) if external.command is not None else None
    rendering = command is not None and bool(render_plan.overlays)
    inflated = _inflated(tree, origin, options, render_plan) if rendering else ()
    if inflated:  # charts a kustomization inflates are rendered by kustomize, in its overlays
        charts = tuple(c for c in charts if not in_folders(c + "/", inflated))
    yield from scan_charts(tree, charts, options.helm, origin, stats, shard)
    planned = render_plan.overlays
    my_overlays = [o for i, o in enumerate(planned) if shard.owns_block(i, len(planned))]
    if rendering:  # nothing that leads outside the source is given to a renderer
        confinement = Confinement(tree, options.kustomize_remote_hosts, origin.commit, render_plan.kustomizations)
        refusals = {overlay: confinement.check(overlay) for overlay in my_overlays}
        for refusal in refusals.values():
            if refusal is not None:
                stats.errors += 1
                yield ErrorRecord(origin.source, "read", refusal.message, Location(refusal.kustomization, refusal.line))
        my_overlays = [o for o in my_overlays if refusals[o] is None]
    helm_charts: dict[str, list[KustomizeChart]] = {}
    if inflated:
        for overlay in my_overlays:
            found = reached_charts(tree, render_plan.kustomizations, overlay)
            if found:
                helm_charts[overlay] = found
        for error in _chart_errors(tree, helm_charts, origin):
            stats.errors += 1
            yield error
        my_overlays = [o for o in my_overlays if o not in helm_charts or helm_charts[o]]
        helm_charts = {o: found for o, found in helm_charts.items() if found}
    if options.kustomize == "auto" and command is None:
        for overlay in my_overlays:
            stats.errors += 1
            yield ErrorRecord(origin.source, "renderer-missing", f"{external.problem}; raw files scanned instead",
                              Location(render_plan.files[overlay]))
    pool = ThreadPoolExecutor(RENDERERS, thread_name_prefix="kustomize") if rendering else None
    futures: list[Future[RenderOutput]] = []
    helm = HelmForKustomize(find_helm()) if helm_charts and pool is not None else None
    try:
        native = NativeResult()
        if pool is not None and command is not None:
            tree.prefetch([posixpath.join(tree.root, f) for f in render_plan.reads(my_overlays)],
                          options.limits.max_file_bytes)
            native = render_native(tree, my_overlays, origin.commit)  # the rest falls back
            if native.fallback:
                root = tree.on_disk()
                futures = [pool.submit(render_overlay, [*command, *helm.flags] if helm and overlay in helm_charts
                                       else command, root, overlay, options.render_timeout,
                                       render_plan.files[overlay], external.label)
                           for overlay in my_overlays if overlay in native.fallback]
        mine = [tree_file for position, tree_file in enumerate(files) if shard.owns(position)]
        reasons = [deployed.reason(f.relpath) or _not_read(f.relpath, charts, render_plan, rendering, inflated)
                   for f in mine]
        tree.prefetch([f.path for f, reason in zip(mine, reasons, strict=True) if reason is None],
                      options.limits.max_file_bytes)
        for tree_file, reason in zip(mine, reasons, strict=True):
            if reason is not None:
                stats.skipped[reason] += 1
            else:
                yield from read_file(tree_file, origin, stats, options.limits, tree=tree)
        outputs = {output.overlay: output for output in native.outputs}
        for future in futures:
            output = future.result()
            outputs[output.overlay] = output
        locator = OriginLocator(tree, render_plan.kustomizations, origin.commit)
        runs = helm.runs() if helm is not None else []
        for overlay in my_overlays:
            if overlay in outputs:
                places = ChartLocator(tree.on_disk(), overlay, helm_charts[overlay], runs) \
                    if overlay in helm_charts else None
                yield from _rendered(outputs[overlay], render_plan.files[overlay], origin, stats, locator, places)
        entries = options.gitops
        for entry in [e for i, e in enumerate(entries) if shard.owns_block(i, len(entries))]:
            yield from render_entry(entry, tree, origin, stats, options.render_timeout, locator,
                                    options.kustomize_remote_hosts)
    finally:
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
        if helm is not None:
            helm.close()
        tree.close()


@dataclass(frozen=True, slots=True)
class _Deployed:
    """The folders GitOps entry points deploy, and the files their kustomizations read."""

    folders: tuple[str, ...] = ()
    files: frozenset[str] = frozenset()

    @classmethod
    def of(cls, entries: tuple[EntryPoint, ...], render_plan: RenderPlan) -> _Deployed:
        if not entries:
            return cls()
        folders = tuple(sorted({e.path for e in entries}))
        return cls(folders, frozenset(render_plan.reads(f for f in folders if f in render_plan.kustomizations)))

    def covers(self, folder: str) -> bool:
        return any(not f or folder == f or folder.startswith(f + "/") for f in self.folders)

    def reason(self, relpath: str) -> str | None:
        if self.folders and (relpath in self.files or in_folders(relpath, self.folders)):
            return "gitops-rendered"
        return None


def _not_read(relpath: str, charts: tuple[str, ...], render_plan: RenderPlan, rendering: bool,
              inflated: tuple[str, ...] = ()) -> str | None:
    """Why a file of the tree is not read as manifests (the skip count it adds to), or None."""
    if charts and in_folders(relpath, charts):
        return "helm-chart-file"
    if inflated and in_folders(relpath, inflated):
        return "kustomize-helm-chart-file"
    if posixpath.basename(relpath) in KUSTOMIZATION_FILES:
        return "kustomize-config"
    if rendering and relpath in render_plan.covered:
        return "rendered-overlay-file"
    if relpath in render_plan.patches:
        return "kustomize-patch"
    return None


RENDERERS = 2  # renderer processes at once per reader: they start slowly, and mostly wait

_Walk = tuple[list[TreeFile], dict[str, int], list[UnreadableFolder], RenderPlan, tuple[str, ...]]
_PLANS: PerCommit[_Walk] = PerCommit()


def _walk_and_plan(tree: FileTree, origin: Origin, options: TreeOptions) -> _Walk:
    """The tree's files (kustomization files included, whatever their extension), skip
    counts, unreadable folders, Kustomize plan and Helm charts, reused by the shards of one
    commit in one process."""
    def walk() -> _Walk:
        skipped: dict[str, int] = {}
        unreadable: list[UnreadableFolder] = []
        files = list(tree.walk(options.path_filter, skipped, KUSTOMIZATION_FILES, unreadable))
        tree.prefetch([f.path for f in files if posixpath.basename(f.relpath) in KUSTOMIZATION_FILES],
                      options.limits.max_file_bytes)
        return (files, skipped, unreadable, plan(tree, [f.relpath for f in files], options.kustomize_roots),
                chart_folders(f.relpath for f in files))

    if not origin.commit:
        return walk()
    return _PLANS.get(_plan_key(tree, origin, options), walk)


_INFLATED: PerCommit[tuple[str, ...]] = PerCommit()


def _inflated(tree: FileTree, origin: Origin, options: TreeOptions, render_plan: RenderPlan) -> tuple[str, ...]:
    """``inflated_chart_folders`` of the tree's kustomizations, once per commit and process."""
    def find() -> tuple[str, ...]:
        return inflated_chart_folders(tree, render_plan.kustomizations)

    return _INFLATED.get(_plan_key(tree, origin, options), find) if origin.commit else find()


def _plan_key(tree: FileTree, origin: Origin, options: TreeOptions) -> tuple:
    """What decides a commit's walk and plan (and what is read of its kustomizations)."""
    return (type(tree), tree.root, origin.commit, options.include, options.exclude, options.kustomize_roots)


def _chart_errors(tree: FileTree, helm_charts: dict[str, list[KustomizeChart]],
                  origin: Origin) -> Iterator[ErrorRecord]:
    """One located error per ``helmCharts`` entry kustomize could not inflate offline (no helm,
    a chart not vendored); an overlay with one is not rendered (``helm_charts[overlay]`` emptied)."""
    try:
        find_helm()
        missing_helm = None
    except HelmNotFound as exc:
        missing_helm = str(exc)
    reported: set[tuple[str, int | None]] = set()
    for overlay, found in helm_charts.items():
        problems = [(c, missing_helm or chart_problem(tree, c)) for c in found]
        problems = [(c, p) for c, p in problems if p is not None]
        if not problems:
            continue
        helm_charts[overlay] = []
        for chart, problem in problems:
            key = (chart.location.path or "", chart.location.line)
            if key not in reported:
                reported.add(key)
                yield ErrorRecord(origin.source, "renderer-missing" if missing_helm else "render",
                                  f"kustomize helmCharts: {problem}", chart.location)


def _rendered(output: RenderOutput, kustomization: str, origin: Origin, stats: SourceStats,
              locator: OriginLocator, charts: ChartLocator | None = None) -> Iterator[SourceItem]:
    """The objects of one rendered overlay, each located at the file and line defining it."""
    if output.error is not None:
        stats.errors += 1
        yield ErrorRecord(origin.source, "render", f"kustomize failed: {output.error}",
                          Location(kustomization, locator.error_line(kustomization, output.error)))
        return
    label = output.label()  # the overlay and what rendered it
    in_template: dict[str, int] = {}
    for index, data in enumerate(output.documents):
        stats.documents += 1
        render_origin = output.origins[index] if index < len(output.origins) else RenderOrigin(kustomization)
        where = locator.locate(output.overlay, kustomization, render_origin, data)
        place = charts.place(render_origin.path, data) if charts and render_origin.generator == GENERATOR else None
        if place is not None:  # inflated from a chart: at its template, the chart named
            document = in_template[place.path] = in_template.get(place.path, -1) + 1
            where = replace(where, path=place.path, document=document, line=place.line, item=None,
                            overlay=place.label)
        overlay = label if place is None else f"{place.label} ({output.renderer})" if output.renderer else place.label
        doc = YamlDocument(data, where.path, where.document, where.line or 0, None, where.item)
        item = resource_from_document(doc, where.path, origin, stats, "kustomize",
                                      overlay=overlay, patches=where.patches)
        if item is not None:
            yield item
