"""Render one GitOps entry point as its controller would.

- kustomize: a wrapper kustomization in a temporary folder takes the entry point's folder as
  its one resource (Flux generates a kustomization over every manifest below a folder that has
  none) and adds the object's ``namespace``, name prefix and suffix, ``patches`` and ``images``;
  ``kustomize build`` (or ``kubectl kustomize``) renders it with kustomize's origin annotations,
  which name the file each object comes from; Flux's post-build substitution follows.
- helm: the folder's chart with the release, namespace and values the object gives.
- directory: Argo CD's plain files (only the folder's own, unless ``recurse``).
Every object records the entry point that deployed it.
"""

from __future__ import annotations

import json
import os
import posixpath
import tempfile
from collections.abc import Iterator
from typing import Any

import yaml

from scanner.errors import Location, ManifestError
from scanner.sources.documents import Origin, SourceItem, resource_from_document
from scanner.sources.file_tree import FileTree
from scanner.sources.gitops.entries import EntryPoint
from scanner.sources.gitops.substitute import substitute_object
from scanner.sources.helm.charts import CHART_FILE, read_chart
from scanner.sources.helm.releases import PlannedRelease, in_namespace, rendered_items
from scanner.sources.helm.render import HelmNotFound, Release, find_helm, render_chart
from scanner.sources.kustomize.confine import Confinement, Refusal
from scanner.sources.kustomize.external import run_renderer
from scanner.sources.kustomize.locate import OriginLocator
from scanner.sources.kustomize.origin import take_origin
from scanner.sources.kustomize.plan import KUSTOMIZATION_FILES
from scanner.sources.kustomize.version import external_renderer
from scanner.sources.paths import MANIFEST_SUFFIXES, glob_match, open_regular
from scanner.sources.provenance import ErrorRecord, SourceStats
from scanner.yamldoc import YamlDocument, iter_documents


def render_entry(entry: EntryPoint, tree: FileTree, origin: Origin, stats: SourceStats,
                 timeout: float, locator: OriginLocator | None = None,
                 remote_hosts: tuple[str, ...] = ()) -> Iterator[SourceItem]:
    """The objects ``entry`` deploys from ``tree`` (the source it points into); ``locator``
    finds the line defining each object a kustomization renders. A kustomization naming a
    remote resource (unless its host is in ``remote_hosts``) or a path leading outside the
    source is refused before kustomize runs."""
    disk_root = tree.on_disk()
    root = os.path.realpath(disk_root)
    folder = os.path.realpath(os.path.join(root, entry.path))
    if os.path.commonpath([root, folder]) != root or not os.path.isdir(folder):
        stats.errors += 1
        why = "leaves the source" if os.path.commonpath([root, folder]) != root else "is not a folder of the source"
        yield _error(entry, origin, f"path {entry.path or '.'!r} {why} {origin.source!r}")
        return
    renderer = entry.renderer
    if renderer == "auto":
        renderer = ("helm" if os.path.isfile(os.path.join(folder, CHART_FILE))
                    else "kustomize" if any(os.path.isfile(os.path.join(folder, f)) for f in KUSTOMIZATION_FILES)
                    else "directory")
    if renderer == "directory" and any(f.endswith((".jsonnet", ".libsonnet")) for f in os.listdir(folder)):
        stats.errors += 1
        yield _error(entry, origin, "not supported: Jsonnet (the folder holds .jsonnet files)", "unsupported")
        return
    if renderer == "helm":
        yield from _helm(entry, tree, root, origin, stats, timeout)
    elif renderer == "kustomize":
        refusal = _outside(tree, entry.path, folder, root, remote_hosts)
        if refusal is not None:
            stats.errors += 1
            yield ErrorRecord(origin.source, "read", refusal.message, Location(refusal.kustomization, refusal.line))
            return
        yield from _kustomize(entry, root, folder, origin, stats, timeout, locator)
    else:
        yield from _directory(entry, root, folder, origin, stats)


def _outside(tree: FileTree, path: str, folder: str, root: str, remote_hosts: tuple[str, ...]) -> Refusal | None:
    """The first entry of the entry point's kustomizations that leads outside the source; for a
    folder without a kustomization (Flux generates one), those of its subfolders'."""
    confinement = Confinement(tree, remote_hosts)
    if any(os.path.isfile(os.path.join(folder, f)) for f in KUSTOMIZATION_FILES):
        return confinement.check(path)
    for current, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        if any(f in files for f in KUSTOMIZATION_FILES):
            dirs[:] = []
            refusal = confinement.check(os.path.relpath(current, root).replace(os.sep, "/"))
            if refusal is not None:
                return refusal
    return None


def _error(entry: EntryPoint, origin: Origin, message: str, kind: str = "render") -> ErrorRecord:
    declared = entry.declared
    where = "" if declared.source == origin.source else f" (in source {declared.source!r})"
    return ErrorRecord(origin.source, kind, f"{declared.kind} {declared.namespace}/{declared.name}{where}: "
                       f"{message}", Location(declared.path, declared.line))


def _helm(entry: EntryPoint, tree: FileTree, root: str, origin: Origin, stats: SourceStats,
          timeout: float) -> Iterator[SourceItem]:
    try:
        helm = find_helm()
        chart = read_chart(tree, entry.path)
    except HelmNotFound as exc:
        stats.errors += 1
        yield _error(entry, origin, str(exc))
        return
    except ManifestError as exc:
        stats.errors += 1
        yield _error(entry, origin, f"{exc.location}: {exc.message}")
        return
    missing = [f for f in entry.values_files if not os.path.isfile(os.path.join(root, f))]
    if missing:
        stats.errors += 1
        yield _error(entry, origin, f"helm values file not found: {missing[0]}")
        return
    values = json.loads(entry.values)
    release = Release(entry.release or chart.name, entry.namespace or "default",
                      tuple(os.path.join(root, f) for f in entry.values_files), values or None, entry.set_values)
    output = render_chart(helm, chart, os.path.join(root, entry.path), release, timeout)
    planned = PlannedRelease(chart, release, entry.values_files)
    yield from rendered_items(output, planned, origin, stats, via=entry.label)


def _kustomize(entry: EntryPoint, root: str, folder: str, origin: Origin, stats: SourceStats,
               timeout: float, locator: OriginLocator | None) -> Iterator[SourceItem]:
    renderer = external_renderer("auto")
    if renderer.command is None:
        stats.errors += 1
        yield _error(entry, origin, renderer.problem)
        return
    command, label = list(renderer.command), f"{entry.label} ({renderer.label})"
    with tempfile.TemporaryDirectory(prefix="scanner-gitops-") as work:
        wrapper: dict[str, Any] = {"apiVersion": "kustomize.config.k8s.io/v1beta1", "kind": "Kustomization",
                                   "resources": _resources(folder, work),
                                   "buildMetadata": ["originAnnotations"]}
        if entry.set_namespace and entry.namespace:
            wrapper["namespace"] = entry.namespace
        for key, value in (("namePrefix", entry.name_prefix), ("nameSuffix", entry.name_suffix)):
            if value:
                wrapper[key] = value
        for key, text in (("patches", entry.patches), ("images", entry.images)):
            if json.loads(text):
                wrapper[key] = json.loads(text)
        with open(os.path.join(work, "kustomization.yaml"), "w", encoding="utf-8") as f:
            yaml.safe_dump(wrapper, f, sort_keys=False)
        ok, text = run_renderer([*command, "--load-restrictor", "LoadRestrictionsNone", work], timeout)
        if not ok:
            stats.errors += 1
            yield _error(entry, origin, f"kustomize failed: {text}")
            return
        try:
            documents = [d.data for d in iter_documents(text, entry.path or ".")]
        except ManifestError as exc:
            stats.errors += 1
            yield _error(entry, origin, f"renderer output is not valid YAML: {exc}")
            return
        counts: dict[str, int] = {}
        kustomization = next((posixpath.join(entry.path, f) for f in KUSTOMIZATION_FILES
                              if os.path.isfile(os.path.join(folder, f))), entry.path or ".")
        for data in documents:
            stats.documents += 1
            render_origin = take_origin(data, work, root, kustomization)
            if entry.substitute is not None:
                data = substitute_object(data, dict(entry.substitute))
            if locator is None:
                yield from _item(entry, data, render_origin.path, counts, origin, stats, label=label)
                continue
            where = locator.locate(entry.path, kustomization, render_origin, data)
            yield from _item(entry, data, where.path, counts, origin, stats, where.line, where.patches,
                             where.document, label)


def _resources(folder: str, work: str) -> list[str]:
    """The wrapper's resources: the folder when it has a kustomization; otherwise, as Flux
    generates one, every manifest file below it (a subfolder with a kustomization as a whole)."""
    if any(os.path.isfile(os.path.join(folder, f)) for f in KUSTOMIZATION_FILES):
        return [os.path.relpath(folder, work)]
    found: list[str] = []
    for current, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        if current != folder and any(f in files for f in KUSTOMIZATION_FILES):
            found.append(os.path.relpath(current, work))
            dirs[:] = []
            continue
        found += [os.path.relpath(os.path.join(current, f), work) for f in sorted(files)
                  if f.endswith(MANIFEST_SUFFIXES) and not f.startswith(".") and _is_manifest(os.path.join(current, f))]
    return found


def _is_manifest(path: str) -> bool:
    """Whether a file holds Kubernetes objects (Flux leaves other YAML files out)."""
    try:
        with open_regular(path) as f:
            docs = [d.data for d in iter_documents(f.read(), path)]
    except (OSError, ManifestError):
        return True  # kustomize reports it
    return any(isinstance(d, dict) and d.get("apiVersion") and d.get("kind") for d in docs)


def _directory(entry: EntryPoint, root: str, folder: str, origin: Origin,
               stats: SourceStats) -> Iterator[SourceItem]:
    counts: dict[str, int] = {}
    for current, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".")) if entry.recurse else []
        for name in sorted(files):
            path = os.path.join(current, name)
            rel = os.path.relpath(path, folder).replace(os.sep, "/")
            if not name.endswith(MANIFEST_SUFFIXES) or name.startswith("."):
                continue
            if entry.include and not _argo_glob(entry.include, rel):
                continue
            if entry.exclude and _argo_glob(entry.exclude, rel):
                continue
            relpath = os.path.relpath(path, root).replace(os.sep, "/")
            try:
                with open_regular(path) as f:
                    docs = list(iter_documents(f.read(), relpath, split_lists=True))
            except (OSError, ManifestError) as exc:
                stats.errors += 1
                yield ErrorRecord(origin.source, "yaml", str(exc), Location(relpath))
                continue
            for doc in docs:
                stats.documents += 1
                yield from _item(entry, doc.data, relpath, counts, origin, stats, doc.line)


def _argo_glob(patterns: str, relpath: str) -> bool:
    """Argo CD's ``include``/``exclude``: one glob or ``{a,b}`` of several."""
    text = patterns.strip()
    options = text[1:-1].split(",") if text.startswith("{") and text.endswith("}") else [text]
    return any(glob_match(p.strip(), relpath) for p in options if p.strip())


def _item(entry: EntryPoint, data: Any, path: str, counts: dict[str, int], origin: Origin, stats: SourceStats,
          line: int | None = None, patches: tuple[str, ...] = (), document: int | None = None,
          label: str | None = None) -> Iterator[SourceItem]:
    """One object ``entry`` deploys; ``label`` names the entry point (and what rendered it) in its provenance."""
    if isinstance(data, dict) and entry.namespace:
        in_namespace(data, entry.namespace)
    index = counts[path] = counts.get(path, -1) + 1
    item = resource_from_document(YamlDocument(data, path, index if document is None else document, line or 0), path,
                                  origin, stats, entry.declared.kind, overlay=label or entry.label, patches=patches)
    if item is not None:
        yield item

