"""Cluster exports: files or directories of ``kubectl get -o yaml|json`` output.

Server-set fields (status, managedFields, resourceVersion ...) stay in the data, since
policies may read them; the identity adds the uid when the object has one. A large
export List streams: its items are yielded as they are read.

The source's include/exclude patterns match a folder's files by their paths inside the
folder, as in a tree source (``dump/apps/a.yaml`` as ``apps/a.yaml``), and an exported
file by its base name, the path it is shown under (``exports/live.yaml`` as ``live.yaml``).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence

from scanner.errors import Location
from scanner.sources.documents import Origin, SourceItem
from scanner.sources.paths import PathFilter, Shard, TreeFile, UnreadableFolder, file_type, walk_tree
from scanner.sources.provenance import ErrorRecord, SourceStats
from scanner.sources.tree import folder_error, read_file
from scanner.yamldoc import DEFAULT_LIMITS, YamlLimits


class ExportSource:
    source_type = "export"

    def __init__(self, name: str, paths: Sequence[str], limits: YamlLimits = DEFAULT_LIMITS,
                 path_filter: PathFilter | None = None, shard: Shard | None = None) -> None:
        self.name = name
        self.paths = list(paths)
        self.limits = limits
        self.path_filter = path_filter or PathFilter()
        self.shard = shard or Shard()
        self.stats = SourceStats()

    def iter_items(self) -> Iterator[SourceItem]:
        self.stats = SourceStats()
        origin = Origin(self.name, self.source_type)
        position = 0
        for path in self.paths:
            if os.path.isdir(path):
                folder = os.path.basename(os.path.normpath(path))
                skipped: dict[str, int] = {}
                unreadable: list[UnreadableFolder] = []
                for tree_file in walk_tree(path, self.path_filter, skipped, unreadable=unreadable):
                    position += 1
                    shown = TreeFile(f"{folder}/{tree_file.relpath}", tree_file.path)
                    yield from self._read(shown, origin, position - 1)
                if self.shard.first:
                    self.stats.skipped.update(skipped)
                    for problem in unreadable:
                        self.stats.errors += 1
                        where = folder if problem.relpath == "." else f"{folder}/{problem.relpath}"
                        yield folder_error(self.name, where, problem.reason, problem.what)
            elif os.path.isfile(path):
                if not self.path_filter.accepts(os.path.basename(path)):
                    continue
                position += 1
                yield from self._read(TreeFile(os.path.basename(path), path), origin, position - 1)
            elif os.path.exists(path):  # a FIFO, socket or device: opening it could block the scan
                if self.shard.first:
                    self.stats.errors += 1
                    yield ErrorRecord(self.name, "read", f"cannot read file: not a regular file "
                                      f"({file_type(os.stat(path).st_mode)})", Location(path))
            elif self.shard.first:  # the source as a whole fails (its other paths are still read)
                self.stats.errors += 1
                yield ErrorRecord(self.name, "source", f"source path not found: {path}", Location(path))

    def _read(self, tree_file: TreeFile, origin: Origin, position: int) -> Iterator[SourceItem]:
        """A List dump's items are dealt out among the shards; other files go whole to one."""
        if self.shard.count == 1:
            yield from read_file(tree_file, origin, self.stats, self.limits)
            return
        yield from read_file(tree_file, origin, self.stats, self.limits, items=self.shard.owns,
                             only_split=not self.shard.owns(position))
