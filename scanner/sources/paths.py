"""Which files of a tree a source reads: include/exclude globs (``**``), extensions, symlinks."""

from __future__ import annotations

import errno
import os
import re
import stat
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import BinaryIO

MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")
SKIPPED_DIRS = frozenset({".git"})


def glob_source(pattern: str) -> str:
    """The regular expression of a glob over ``/``-separated relative paths: ``*`` and ``?``
    stay within one segment, ``**`` spans any number of segments (``a/**/b`` matches
    ``a/b``), ``[...]`` is a class."""
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
    return "".join(out)


def _clean(pattern: str) -> tuple[str, bool]:
    """The glob of a pattern without a leading ``/`` or ``./`` and a trailing ``/``, and
    whether it ended in ``/``."""
    while pattern.startswith(("/", "./")):
        pattern = pattern.removeprefix(".").removeprefix("/")
    return pattern.rstrip("/"), pattern.endswith("/")


def _has_glob(pattern: str) -> bool:
    return any(c in pattern for c in "*?[")


@lru_cache(maxsize=256)
def pattern_regex(pattern: str) -> re.Pattern[str]:
    """An include/exclude pattern: a glob relative to the tree root, a leading ``/`` or ``./``
    ignored. Like in ``.gitignore``, a pattern ending in ``/`` names folders and matches
    everything under them, and a pattern without glob characters (``apps/a``) matches that
    path and, if it is a folder, everything under it; other globs match whole paths only
    (``*.yaml`` the top level, ``**/*.yaml`` every level)."""
    glob, folder = _clean(pattern)
    if not glob:  # "/" or "./": the root folder, so everything
        return re.compile(".*")
    under = "/.*" if folder else "" if _has_glob(glob) else "(?:/.*)?"
    return re.compile(glob_source(glob) + under + r"\Z")


@lru_cache(maxsize=256)
def folder_regex(pattern: str) -> re.Pattern[str] | None:
    """The folders whose every file ``pattern`` matches (``apps/a``, ``apps/a/``,
    ``apps/a/**``), or None when it names no whole folder (``apps/*.yaml``)."""
    glob, folder = _clean(pattern)
    if glob in ("", "**"):
        return re.compile(".*")
    if glob.endswith("/**"):
        glob = glob.removesuffix("/**")
    elif not folder and _has_glob(glob):
        return None
    return re.compile(glob_source(glob) + r"\Z")


def glob_match(pattern: str, relpath: str) -> bool:
    return pattern_regex(pattern).match(relpath) is not None


@dataclass(frozen=True, slots=True)
class PathFilter:
    """Include and exclude patterns (see ``pattern_regex``), relative to the tree root; no
    include means everything."""

    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()

    def accepts(self, relpath: str) -> bool:
        if self.include and not any(glob_match(p, relpath) for p in self.include):
            return False
        return not any(glob_match(p, relpath) for p in self.exclude)

    def excludes_folder(self, relpath: str) -> bool:
        """Whether no file under the folder ``relpath`` can be accepted: an exclude pattern
        takes every file under it, or no include pattern reaches into it. A walk need not
        enter it (nor report it unreadable or linked)."""
        regexes = (folder_regex(p) for p in self.exclude)
        if any(r is not None and r.match(relpath) for r in regexes):
            return True
        return bool(self.include) and not any(_may_reach(p, relpath) for p in self.include)

    def leaves_out(self, folder: str) -> bool:
        """Whether a walk never reaches ``folder``: it or a folder above it is excluded."""
        parts = folder.split("/")
        return any(self.excludes_folder("/".join(parts[:i])) for i in range(1, len(parts) + 1))


def _may_reach(pattern: str, folder: str) -> bool:
    """Whether ``pattern`` could match a file under ``folder``: its literal leading folders
    (those before the first glob) lead into ``folder``, or ``folder`` into them."""
    literal = []
    for segment in _clean(pattern)[0].split("/"):
        if _has_glob(segment):
            break
        literal.append(segment)
    prefix = "/".join(literal)
    return not prefix or folder == prefix or folder.startswith(prefix + "/") or prefix.startswith(folder + "/")


@dataclass(frozen=True, slots=True)
class TreeFile:
    """A file of a tree: the path results show and the path to read."""

    relpath: str  # "/"-separated, relative to the root, as shown (see ``printable``)
    path: str  # absolute path to read


def printable(relpath: str) -> str:
    """``relpath`` as results show it: the bytes of a name that is not valid UTF-8 (which the
    OS's decoding keeps as surrogates, unfit for a report or a database) become U+FFFD."""
    try:
        relpath.encode()
    except UnicodeEncodeError:
        return relpath.encode(errors="surrogateescape").decode(errors="replace")
    return relpath


@dataclass(frozen=True, slots=True)
class UnreadableFolder:
    """A folder of a tree that could not be listed, or a file or folder that is not read, and why."""

    relpath: str  # "/"-separated, relative to the root ("." for the root itself)
    reason: str  # the OS's words: "Permission denied"
    what: str = "folder"  # or "file"


OUTSIDE = "a symbolic link leading outside the source"


class OutsideSourceError(OSError):
    """A path that leads outside its source's root (through ``..`` or a symbolic link)."""

    def __init__(self, path: str) -> None:
        super().__init__(errno.EACCES, "it leads outside the source (through .. or a symbolic link)", path)


class NotRegularFileError(OSError):
    """A path that is no regular file (a FIFO, socket or device would block or never end)."""

    def __init__(self, path: str, mode: int) -> None:
        super().__init__(errno.EINVAL, f"not a regular file ({file_type(mode)})", path)


def file_type(mode: int) -> str:
    """What a file of ``mode`` is, in words."""
    for test, name in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISDIR, "a folder")):
        if test(mode):
            return name
    return "not a file"


def open_regular(path: str, follow: bool = True) -> BinaryIO:
    """``path`` opened for reading when it is a regular file; ``NotRegularFileError`` when it is a
    FIFO, socket, device or folder (opened without blocking, so a FIFO with no writer is no hang).
    Without ``follow``, a symbolic link is not followed (``OSError`` ELOOP)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | (0 if follow else os.O_NOFOLLOW))
    f = open(fd, "rb")  # noqa: SIM115 - the caller closes it
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        f.close()
        raise NotRegularFileError(path, mode)
    return f


def within(real_root: str, real_path: str) -> bool:
    """Whether ``real_path`` is ``real_root`` or under it (both with every symbolic link resolved)."""
    return real_path == real_root or real_path.startswith(real_root.rstrip(os.sep) + os.sep)


def confine(root: str, path: str) -> str:
    """The real path of ``path`` (absolute, or relative to ``root``), every ``..`` and symbolic
    link resolved, when it stays inside ``root``; ``OutsideSourceError`` when it leads out.

    A source reads only what is under its root: a link or a ``../..`` in a file the source
    holds must not make the scanner read (or render) a file of the host."""
    real_root = os.path.realpath(root)
    real = os.path.realpath(os.path.join(real_root, path))
    if not within(real_root, real):
        raise OutsideSourceError(path)
    return real


def walk_tree(
    root: str, path_filter: PathFilter, skipped: dict[str, int] | None = None,
    suffixes: Sequence[str] = MANIFEST_SUFFIXES, names: Collection[str] = (),
    unreadable: list[UnreadableFolder] | None = None,
) -> Iterator[TreeFile]:
    """Manifest files under ``root`` in sorted order; symlinks are followed only when they
    stay inside ``root`` (linked directories are never entered: no loops, no duplicates).

    Files end in one of ``suffixes`` or are named one of ``names`` (``Kustomization``). Only
    regular files are read. Folders that cannot be listed, links leading outside ``root`` and
    files that are not regular files (a FIFO would block the scan) are appended to
    ``unreadable``, with why; the walk goes on.
    """
    real_root = os.path.realpath(root)
    counts = skipped if skipped is not None else {}

    def failed(exc: OSError) -> None:
        if unreadable is not None:
            where = os.path.relpath(exc.filename or root, root).replace(os.sep, "/")
            unreadable.append(UnreadableFolder(printable(where), exc.strerror or str(exc)))

    def refused(relpath: str, reason: str, what: str) -> None:
        if unreadable is not None:
            unreadable.append(UnreadableFolder(printable(relpath), reason, what))

    for dirpath, dirnames, filenames in os.walk(root, onerror=failed):
        rel_dir = os.path.relpath(dirpath, root).replace(os.sep, "/")
        prefix = "" if rel_dir == "." else f"{rel_dir}/"
        keep = []
        for d in sorted(dirnames):
            full = os.path.join(dirpath, d)
            if d in SKIPPED_DIRS or path_filter.excludes_folder(prefix + d):
                continue
            if os.path.islink(full):
                if within(real_root, os.path.realpath(full)):
                    counts["symlinked-directory"] = counts.get("symlinked-directory", 0) + 1
                else:
                    refused(prefix + d, OUTSIDE, "folder")
                continue
            keep.append(d)
        dirnames[:] = keep
        for name in sorted(filenames):
            if not name.endswith(tuple(suffixes)) and name not in names:
                continue
            relpath = prefix + name
            if not path_filter.accepts(relpath):
                continue
            full = os.path.join(dirpath, name)
            try:
                mode = os.lstat(full).st_mode
                if stat.S_ISLNK(mode):
                    if not within(real_root, os.path.realpath(full)):
                        refused(relpath, OUTSIDE, "file")
                        continue
                    mode = os.stat(full).st_mode
            except OSError:  # gone, or a link to nothing: reading it reports why
                yield TreeFile(printable(relpath), full)
                continue
            if not stat.S_ISREG(mode):
                refused(relpath, f"not a regular file ({file_type(mode)})", "file")
                continue
            yield TreeFile(printable(relpath), full)


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
