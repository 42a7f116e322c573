"""A local directory of manifests (a working copy, a build output, a mounted volume)."""

from __future__ import annotations

import os
from collections.abc import Iterator

from scanner.errors import Location
from scanner.sources.documents import Origin, SourceItem
from scanner.sources.file_tree import DiskTree
from scanner.sources.provenance import ErrorRecord, SourceStats
from scanner.sources.tree import TreeOptions, scan_tree


class DirectorySource:
    source_type = "directory"

    def __init__(self, name: str, root: str, options: TreeOptions | None = None) -> None:
        self.name = name
        self.root = root
        self.options = options or TreeOptions()
        self.stats = SourceStats()

    def iter_items(self) -> Iterator[SourceItem]:
        self.stats = SourceStats()
        problem = root_problem(self.root)
        if problem:
            self.stats.errors += 1
            yield ErrorRecord(self.name, "source", problem, Location(self.root))
            return
        yield from scan_tree(DiskTree(self.root), Origin(self.name, self.source_type), self.options,
                             self.stats)


def root_problem(root: str) -> str | None:
    """Why ``root`` cannot be a directory source (the source as a whole fails), or None."""
    if not os.path.exists(root):
        return f"source path not found: {root}"
    return None if os.path.isdir(root) else f"source path is not a directory: {root}"
