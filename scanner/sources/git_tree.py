"""A Git commit's files, read from the clone's object store without checking them out.

Writing thousands of files to a working tree costs more than reading them back from the
objects (loose ones directly, packed ones through ``git cat-file --batch``), so a scan
reads a commit this way. The working
tree is checked out only when a program needs files on disk (``kubectl kustomize``) or
when the commit holds symbolic links, whose resolution is left to the file system; once
per scan, under a lock, whichever worker needs it first.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import posixpath
import subprocess
import zlib
from collections.abc import Collection, Iterator
from dataclasses import dataclass

from scanner.errors import GitError, Location
from scanner.sources.file_tree import DiskTree
from scanner.sources.paths import MANIFEST_SUFFIXES, PathFilter, TreeFile, UnreadableFolder

_MARKER = "scanner-checkout"  # in the clone's .git: the commit its working tree holds, this scan
_LOCK = "scanner-checkout.lock"
_SYMLINK, _GITLINK = b"120000", b"160000"


@dataclass(frozen=True, slots=True)
class _Blob:
    oid: str
    size: int


def _git(path: str, *args: str) -> bytes:
    """The output of a git command in the clone at ``path``; ``GitError`` when it fails."""
    proc = subprocess.run(["git", "-C", path, *args], capture_output=True, check=False)
    if proc.returncode != 0:
        lines = proc.stderr.decode(errors="replace").strip().splitlines()
        raise GitError(f"git {args[0]} failed: {lines[-1] if lines else f'exit {proc.returncode}'}",
                       Location(path))
    return proc.stdout


def forget_checkout(path: str) -> None:
    """A new scan begins: the working tree is checked out again before its files are used."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(os.path.join(path, ".git", _MARKER))


def check_out(path: str, sha: str) -> None:
    """Check ``sha`` out into the clone's working tree (forced, untracked files removed) unless
    this scan already did; processes wait for each other."""
    git_dir = os.path.join(path, ".git")
    marker = os.path.join(git_dir, _MARKER)
    with open(os.path.join(git_dir, _LOCK), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        with contextlib.suppress(FileNotFoundError), open(marker) as f:
            if f.read() == sha:
                return
        _git(path, "checkout", "--quiet", "--force", "--detach", sha)
        _git(path, "clean", "-ffdxq")
        with open(marker, "w") as f:
            f.write(sha)


class _BlobReader:
    """One ``git cat-file --batch`` process: blobs by object id."""

    def __init__(self, path: str) -> None:
        self.proc = subprocess.Popen(["git", "-C", path, "cat-file", "--batch"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)

    def read(self, oid: str) -> bytes:
        stdin, stdout = self.proc.stdin, self.proc.stdout
        assert stdin is not None and stdout is not None
        try:
            stdin.write(oid.encode() + b"\n")
            stdin.flush()
            header = stdout.readline().split()
        except OSError as exc:
            raise OSError(errno.EIO, f"git cat-file failed: {exc}") from exc
        if len(header) != 3 or header[1] != b"blob":
            raise OSError(errno.EIO, f"Git object {oid} missing from the clone")
        data = stdout.read(int(header[2]))
        stdout.read(1)  # the newline after each object
        return data

    def close(self) -> None:
        if self.proc.stdin is not None:
            with contextlib.suppress(OSError):  # it may have died
                self.proc.stdin.close()
        self.proc.wait()
        if self.proc.stdout is not None:
            self.proc.stdout.close()


class GitTree:
    """The files of commit ``sha`` in the clone at ``path``, as a ``FileTree``."""

    def __init__(self, path: str, sha: str) -> None:
        self.root = os.path.realpath(path)
        self.sha = sha
        self.blobs: dict[str, _Blob] = {}  # relpath -> blob
        self.folders: set[str] = {""}
        self.gitlinks: list[str] = []
        symlinks = False
        listing = _git(self.root, "ls-tree", "-r", "-z", "--long", "--full-tree", sha)
        for entry in listing.split(b"\0"):
            if not entry:
                continue
            info, _, raw_path = entry.partition(b"\t")
            mode, _, oid, size = info.split()
            relpath = os.fsdecode(raw_path)
            if mode == _GITLINK:
                self.gitlinks.append(relpath)
                continue
            symlinks = symlinks or mode == _SYMLINK
            self.blobs[relpath] = _Blob(oid.decode(), int(size))
            folder = posixpath.dirname(relpath)
            while folder not in self.folders:
                self.folders.add(folder)
                folder = posixpath.dirname(folder)
        # symbolic links are resolved by the file system: such a commit is read from a checkout
        self.disk: DiskTree | None = None
        if symlinks:
            check_out(self.root, sha)
            self.disk = DiskTree(self.root)
        self._reader: _BlobReader | None = None
        self.objects = os.path.join(self.root, ".git", "objects")

    def _relpath(self, path: str) -> str | None:
        if path == self.root:
            return ""
        return path[len(self.root) + 1:] if path.startswith(self.root + os.sep) else None

    def walk(self, path_filter: PathFilter, skipped: dict[str, int], names: Collection[str],
             unreadable: list[UnreadableFolder]) -> Iterator[TreeFile]:
        if self.disk is not None:
            yield from self.disk.walk(path_filter, skipped, names, unreadable)
            return
        left_out: dict[str, bool] = {"": False}
        for relpath in sorted(self.blobs, key=_walk_order):
            name = posixpath.basename(relpath)
            if not name.endswith(MANIFEST_SUFFIXES) and name not in names:
                continue
            folder = posixpath.dirname(relpath)
            if folder not in left_out:
                left_out[folder] = path_filter.leaves_out(folder)
            if left_out[folder] or not path_filter.accepts(relpath):
                continue
            yield TreeFile(relpath, os.path.join(self.root, relpath))

    def submodules(self) -> list[str]:
        return self.gitlinks

    def _blob(self, path: str) -> _Blob:
        relpath = self._relpath(path)
        blob = self.blobs.get(relpath) if relpath is not None else None
        if blob is None:
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), path)
        return blob

    def size(self, path: str) -> int:
        return self.disk.size(path) if self.disk is not None else self._blob(path).size

    def read(self, path: str) -> bytes:
        if self.disk is not None:
            return self.disk.read(path)
        blob = self._blob(path)
        data = _loose_blob(self.objects, blob)
        if data is None:  # packed
            if self._reader is None:
                self._reader = _BlobReader(self.root)
            data = self._reader.read(blob.oid)
        return data

    def isfile(self, path: str) -> bool:
        if self.disk is not None:
            return self.disk.isfile(path)
        relpath = self._relpath(path)
        return relpath is not None and relpath in self.blobs

    def isdir(self, path: str) -> bool:
        if self.disk is not None:
            return self.disk.isdir(path)
        relpath = self._relpath(path)
        return relpath is not None and relpath in self.folders

    def islink(self, path: str) -> bool:
        return self.disk is not None and self.disk.islink(path)

    def realpath(self, path: str) -> str:
        return self.disk.realpath(path) if self.disk is not None else os.path.normpath(path)

    def on_disk(self) -> str:
        check_out(self.root, self.sha)
        return self.root

    def close(self) -> None:
        if self._reader is not None:
            self._reader.close()
            self._reader = None


def _loose_blob(objects: str, blob: _Blob) -> bytes | None:
    """The blob's bytes from its loose object file (a zlib stream of ``blob <size>\\0`` and the
    bytes: faster to read here than through ``git cat-file``), or None when it is packed."""
    try:
        with open(os.path.join(objects, blob.oid[:2], blob.oid[2:]), "rb") as f:
            raw = zlib.decompress(f.read())
    except (OSError, zlib.error):
        return None
    header, _, data = raw.partition(b"\0")
    return data if header == b"blob %d" % blob.size and len(data) == blob.size else None


def _walk_order(relpath: str) -> list[tuple[int, str]]:
    """``os.walk``'s order with sorted names: a folder's files, then its sub-folders one by one."""
    *folders, name = relpath.split("/")
    return [*((1, folder) for folder in folders), (0, name)]
