"""The scan's GitOps step: find the entry points of the prepared sources and hand each source's
shards the entry points into it; what points outside the scanned sources becomes a record."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace

from scanner.config import SourceConfig
from scanner.errors import Location, ScannerError
from scanner.scan.workers import ShardTask
from scanner.sources.documents import Origin
from scanner.sources.file_tree import DiskTree, FileTree
from scanner.sources.git_tree import GitTree
from scanner.sources.gitops.discover import SearchedSource, discover
from scanner.sources.gitops.urls import repository_key
from scanner.sources.paths import Shard
from scanner.sources.provenance import ErrorRecord

NOT_SCANNED = "not-scanned"


def repositories(sources: Iterable[SourceConfig]) -> dict[str, str]:
    """Repository key -> source name: a Git source's URL and every source's ``repository_urls``."""
    found: dict[str, str] = {}
    for cfg in sources:
        urls = [*((cfg.git.url,) if cfg.git else ()), *cfg.repository_urls]
        for url in urls:
            found.setdefault(repository_key(url), cfg.name)
    return found


def with_entry_points(sources: list[SourceConfig], tasks: dict[str, list[ShardTask]],
                      all_sources: Iterable[SourceConfig], names_gitops: Callable[[str], bool | None] | None = None,
                      ) -> tuple[dict[str, list[ShardTask]], list[ErrorRecord]]:
    """The shards of each source with the GitOps entry points into it, and a record of each
    thing the GitOps objects deploy from outside the scanned sources. ``names_gitops`` tells of
    a source already searched for the GitOps API groups (``GitPrefetch.names_gitops``): one that
    names none has no entry point and deploys nothing."""
    searched: dict[str, SearchedSource] = {}
    for cfg in sources:
        first = tasks.get(cfg.name) or []
        if cfg.gitops == "off" or not first or first[0].paths:
            continue
        if names_gitops is not None and names_gitops(cfg.name) is False:
            continue
        task = first[0]
        try:
            tree: FileTree = GitTree(task.root, task.commit or "HEAD") if task.objects else DiskTree(task.root)
        except ScannerError:  # (a checkout that fails: the source's shards meet it and fail the source)
            continue
        searched[cfg.name] = SearchedSource(tree, Origin(cfg.name, cfg.type, task.commit),
                                            replace(task.tree, shard=Shard()))
    if not searched:
        return tasks, []
    plan = discover(searched, repositories(all_sources))
    for source in searched.values():
        source.tree.close()
    updated = dict(tasks)
    for name, entries in plan.entries.items():
        if name in searched:
            updated[name] = [replace(t, tree=replace(t.tree, gitops=tuple(entries))) for t in tasks[name]]
    records = [ErrorRecord(n.declared.source, NOT_SCANNED, f"not scanned: {n.target} ({n.reason}; deployed by "
                           f"{n.declared.kind} {n.declared.namespace}/{n.declared.name})",
                           Location(n.declared.path, n.declared.line)) for n in plan.not_scanned]
    return updated, records

