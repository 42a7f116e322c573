"""What the shards of one Git commit read in one process keep for each other: a tree at a
commit never changes, so a worker reading several of its shards parses and builds the shared
files (bases, kustomizations) once. A few commits are kept at a time."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

T = TypeVar("T")


class PerCommit(Generic[T]):
    """Values kept per key (a tree's root and commit, and what else decides them)."""

    def __init__(self, commits: int = 4) -> None:
        self.commits = commits
        self._kept: dict[Hashable, T] = {}

    def get(self, key: Hashable, make: Callable[[], T]) -> T:
        """The value kept for ``key``, made by ``make`` the first time."""
        found = self._kept.get(key)
        if found is None:
            if len(self._kept) >= self.commits:
                self._kept.clear()
            found = self._kept[key] = make()
        return found
