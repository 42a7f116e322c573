"""Where a tree's files are read from: a folder on disk, or a Git commit's objects
(``git_tree.GitTree``). Paths given to a tree are absolute, under its ``root``."""

from __future__ import annotations

import errno
import os
from collections.abc import Collection, Iterator
from typing import Protocol

from scanner.sources.paths import (
    OutsideSourceError,
    PathFilter,
    TreeFile,
    UnreadableFolder,
    open_regular,
    walk_tree,
    within,
)


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
    """The files under a folder. Only regular files under it are read: a path that leads
    outside it (``..``, a symbolic link) or to a FIFO, socket or device raises ``OSError``."""

    def __init__(self, root: str) -> None:
        self.root = os.path.realpath(root)
        self.given = root  # as configured: the walk reports errors relative to it
        self._folders: dict[str, str | None] = {}  # folder -> its real path when inside the root

    def walk(self, path_filter: PathFilter, skipped: dict[str, int], names: Collection[str],
             unreadable: list[UnreadableFolder]) -> Iterator[TreeFile]:
        return walk_tree(self.given, path_filter, skipped, names=names, unreadable=unreadable)

    @staticmethod
    def size(path: str) -> int:
        return os.stat(path).st_size

    def read(self, path: str) -> bytes:
        folder, name = os.path.split(path)
        real_folder = self._folders.get(folder, "")
        if real_folder == "":
            real = os.path.realpath(folder)
            real_folder = self._folders[folder] = real if within(self.root, real) else None
        if real_folder is None or name in ("", ".", ".."):
            raise OutsideSourceError(path)
        try:  # the last part is opened without following a link (checked first when it is one)
            f = open_regular(os.path.join(real_folder, name), follow=False)
        except OSError as exc:
            if exc.errno != errno.ELOOP:
                raise
            target = os.path.realpath(path)
            if not within(self.root, target):
                raise OutsideSourceError(path) from None
            f = open_regular(target)
        with f:
            return f.read()

    def prefetch(self, paths: list[str], max_bytes: int) -> None:
        pass  # the file system reads ahead by itself

    isfile = staticmethod(os.path.isfile)
    isdir = staticmethod(os.path.isdir)
    islink = staticmethod(os.path.islink)
    @staticmethod
    def realpath(path: str) -> str:
        return os.path.realpath(path)

    def on_disk(self) -> str:
        return self.given

    def submodules(self) -> list[str]:
        return []  # checked out (or not a Git tree)

    def close(self) -> None:
        pass


DISK = DiskTree(os.sep)  # for files read by their absolute paths
