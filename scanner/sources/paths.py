"""Which files of a tree a source reads: include/exclude globs (``**``), extensions, symlinks."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache

MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")
SKIPPED_DIRS = frozenset({".git"})


@lru_cache(maxsize=256)
def glob_regex(pattern: str) -> re.Pattern[str]:
    """A glob over ``/``-separated relative paths: ``*`` and ``?`` stay within one segment,
    ``**`` spans any number of segments (``a/**/b`` matches ``a/b``), ``[...]`` is a class."""
    out, i, n = [], 0, len(pattern)
    while i < n:
        c = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if pattern.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            end = pattern.find("]", i + 1)
            if end == -1:
                out.append(re.escape(c))
            else:
                body = pattern[i + 1:end]
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append("[" + body.replace("\\", "\\\\") + "]")
                i = end
        else:
            out.append(re.escape(c))
        i += 1
    return re.compile("".join(out) + r"\Z")


def glob_match(pattern: str, relpath: str) -> bool:
    return glob_regex(pattern.lstrip("/")).match(relpath) is not None


@dataclass(frozen=True, slots=True)
class PathFilter:
    """Include and exclude globs, relative to the tree root; no include means everything."""

    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()

    def accepts(self, relpath: str) -> bool:
        if self.include and not any(glob_match(p, relpath) for p in self.include):
            return False
        return not any(glob_match(p, relpath) for p in self.exclude)


@dataclass(frozen=True, slots=True)
class TreeFile:
    relpath: str  # "/"-separated, relative to the root
    path: str  # absolute path to read


def walk_tree(
    root: str, path_filter: PathFilter, skipped: dict[str, int] | None = None,
    suffixes: Sequence[str] = MANIFEST_SUFFIXES,
) -> Iterator[TreeFile]:
    """Manifest files under ``root`` in sorted order; symlinks are followed only when they
    stay inside ``root`` (linked directories are never entered: no loops, no duplicates)."""
    real_root = os.path.realpath(root)
    counts = skipped if skipped is not None else {}
    for dirpath, dirnames, filenames in os.walk(root):
        keep = []
        for d in sorted(dirnames):
            full = os.path.join(dirpath, d)
            if d in SKIPPED_DIRS:
                continue
            if os.path.islink(full):
                counts["symlinked-directory"] = counts.get("symlinked-directory", 0) + 1
                continue
            keep.append(d)
        dirnames[:] = keep
        rel_dir = os.path.relpath(dirpath, root).replace(os.sep, "/")
        for name in sorted(filenames):
            if not name.endswith(tuple(suffixes)):
                continue
            relpath = name if rel_dir == "." else f"{rel_dir}/{name}"
            full = os.path.join(dirpath, name)
            if os.path.islink(full):
                target = os.path.realpath(full)
                outside = os.path.commonpath([real_root, target]) != real_root
                if outside or not os.path.isfile(target):
                    counts["symlink-outside"] = counts.get("symlink-outside", 0) + 1
                    continue
            if path_filter.accepts(relpath):
                yield TreeFile(relpath, full)


@dataclass(frozen=True, slots=True)
class Shard:
    """One of ``count`` disjoint parts of a source, so several processes can read it together.

    Files are dealt out by their position in the sorted walk; Kustomize overlays in
    contiguous blocks, so that overlays of one base (neighbours in the walk) share a shard
    and the base is read once.
    """

    index: int = 0
    count: int = 1

    def owns(self, position: int) -> bool:
        return position % self.count == self.index

    def owns_block(self, position: int, total: int) -> bool:
        """Whether the shard owns ``position`` of ``total`` items dealt out in blocks."""
        return position * self.count // total == self.index

    @property
    def first(self) -> bool:
        return self.index == 0
