"""Where a tree's files are read from: a folder on disk, or a Git commit's objects
(``git_tree.GitTree``). Paths given to a tree are absolute, under its ``root``."""

from __future__ import annotations

import os
from collections.abc import Collection, Iterator
from typing import Protocol

from scanner.sources.paths import PathFilter, TreeFile, UnreadableFolder, walk_tree


class FileTree(Protocol):
    root: str  # absolute, symlinks resolved

    def walk(self, path_filter: PathFilter, skipped: dict[str, int], names: Collection[str],
             unreadable: list[UnreadableFolder]) -> Iterator[TreeFile]:
        """The tree's manifest files (and those named ``names``) in ``walk_tree``'s order."""
        ...

    def size(self, path: str) -> int: ...

    def read(self, path: str) -> bytes:
        """The file's bytes; ``OSError`` when it cannot be read."""
        ...

    def prefetch(self, paths: list[str], max_bytes: int) -> None:
        """``paths`` (files of at most ``max_bytes``) are about to be read, in this order."""
        ...

    def isfile(self, path: str) -> bool: ...

    def isdir(self, path: str) -> bool: ...

    def islink(self, path: str) -> bool: ...

    def realpath(self, path: str) -> str: ...

    def on_disk(self) -> str:
        """A folder holding the tree's files, for programs that read them (``kubectl kustomize``)."""
        ...

    def submodules(self) -> list[str]:
        """The paths of the tree's submodules that are not part of it (not checked out)."""
        ...

    def close(self) -> None:
        """Release what reading holds (a ``git cat-file`` process); the tree can be read again."""
        ...


class DiskTree:
    """The files under a folder."""

    def __init__(self, root: str) -> None:
        self.root = os.path.realpath(root)
        self.given = root  # as configured: the walk reports errors relative to it

    def walk(self, path_filter: PathFilter, skipped: dict[str, int], names: Collection[str],
             unreadable: list[UnreadableFolder]) -> Iterator[TreeFile]:
        return walk_tree(self.given, path_filter, skipped, names=names, unreadable=unreadable)

    @staticmethod
    def size(path: str) -> int:
        return os.stat(path).st_size

    @staticmethod
    def read(path: str) -> bytes:
        with open(path, "rb") as f:
            return f.read()

    def prefetch(self, paths: list[str], max_bytes: int) -> None:
        pass  # the file system reads ahead by itself

    isfile = staticmethod(os.path.isfile)
    isdir = staticmethod(os.path.isdir)
    islink = staticmethod(os.path.islink)
    realpath = staticmethod(os.path.realpath)

    def on_disk(self) -> str:
        return self.given

    def submodules(self) -> list[str]:
        return []  # checked out (or not a Git tree)

    def close(self) -> None:
        pass


DISK = DiskTree(os.sep)  # for files read by their absolute paths
