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
from collections import Counter, OrderedDict
from collections.abc import Collection, Iterator
from dataclasses import dataclass

from scanner.errors import GitError, Location
from scanner.sources.file_tree import DiskTree
from scanner.sources.paths import MANIFEST_SUFFIXES, PathFilter, TreeFile, UnreadableFolder, printable

_MARKER = "scanner-checkout"  # in the clone's .git: the commit its working tree holds, this scan
_LOCK = "scanner-checkout.lock"
_LISTING = "scanner-listing"  # in the clone's .git: a commit's sha and its ``ls-tree`` listing
_SYMLINK, _GITLINK = b"120000", b"160000"


RECENT_BYTES = 8 * 1024 * 1024  # the blobs kept after their last announced read


@dataclass(frozen=True, slots=True)
class _Blob:
    """A file of a commit's listing: its object id and size."""

    oid: str
    size: int


def failure_cause(stderr: str) -> str | None:
    """What git's error output says went wrong: its ``fatal:``/``error:`` lines (the last line
    alone may be the end of an advice, "and the repository exists."), else its last line."""
    lines = [line.strip() for line in stderr.strip().splitlines() if line.strip()]
    causes = [line for line in lines if line.startswith(("fatal:", "error:"))]
    if causes:
        return "; ".join(dict.fromkeys(causes))
    return lines[-1] if lines else None


def _git(path: str, *args: str) -> bytes:
    """The output of a git command in the clone at ``path``; ``GitError`` when it fails."""
    proc = subprocess.run(["git", "-C", path, *args], capture_output=True, check=False)
    if proc.returncode != 0:
        cause = failure_cause(proc.stderr.decode(errors="replace")) or f"exit {proc.returncode}"
        raise GitError(f"git {args[0]} failed: {cause}", Location(path))
    return proc.stdout


def _list(path: str, sha: str) -> bytes:
    return _git(path, "ls-tree", "-r", "-z", "--long", "--full-tree", sha)


def save_listing(path: str, sha: str) -> None:
    """List commit ``sha`` once for every process of the scan (a listing never changes)."""
    listing = os.path.join(path, ".git", _LISTING)
    partial = f"{listing}.{os.getpid()}"
    try:
        with open(partial, "wb") as f:
            f.write(sha.encode() + b"\n" + _list(path, sha))
        os.replace(partial, listing)  # whole or not at all
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(partial)


def _saved_listing(path: str, sha: str) -> bytes | None:
    with contextlib.suppress(OSError), open(os.path.join(path, ".git", _LISTING), "rb") as f:
        saved, _, listing = f.read().partition(b"\n")
        return listing if saved == sha.encode() else None
    return None


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


class BlobReader:
    """One ``git cat-file --batch`` process: blobs by object id, several per round trip."""

    BATCH = 256  # object ids per request: it fits in a pipe's buffer, so writing it never blocks
    BATCH_BYTES = 32 * 1024 * 1024  # and the blobs read ahead stay small

    def __init__(self, path: str) -> None:
        self.proc = subprocess.Popen(["git", "-C", path, "cat-file", "--batch"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)

    def read(self, oids: list[str]) -> list[bytes | None]:
        """The blobs of ``oids`` (at most ``BATCH``) in order, None for one missing from the clone."""
        stdin, stdout = self.proc.stdin, self.proc.stdout
        assert stdin is not None and stdout is not None
        blobs: list[bytes | None] = []
        try:
            stdin.write("".join(f"{oid}\n" for oid in oids).encode())
            stdin.flush()
            for _ in oids:
                header = stdout.readline().split()
                if len(header) == 2 and header[1] == b"missing":
                    blobs.append(None)
                    continue
                if len(header) != 3:
                    raise OSError(errno.EIO, "git cat-file stopped")
                blobs.append(stdout.read(int(header[2])))
                stdout.read(1)  # the newline after each object
        except OSError as exc:
            self.close()  # answers may be left unread: this process is done
            raise OSError(errno.EIO, exc.strerror or f"git cat-file failed: {exc}") from exc
        return blobs

    def close(self) -> None:
        if self.proc.stdin is not None:
            with contextlib.suppress(OSError):  # it may have died
                self.proc.stdin.close()
        self.proc.kill()
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
        listing = _saved_listing(self.root, sha)
        if listing is None:
            listing = _list(self.root, sha)
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
            # a blob missing from the clone is listed with size "-": it fails when read (a located
            # error of its file), not the whole commit
            self.blobs[relpath] = _Blob(oid.decode(), int(size) if size.isdigit() else 0)
            folder = posixpath.dirname(relpath)
            while folder not in self.folders:
                self.folders.add(folder)
                folder = posixpath.dirname(folder)
        # symbolic links are resolved by the file system: such a commit is read from a checkout
        self.disk: DiskTree | None = None
        if symlinks:
            check_out(self.root, sha)
            self.disk = DiskTree(self.root)
        self._reader: BlobReader | None = None
        # packed blobs announced by ``prefetch``: in order, their positions, the reads still to come
        self._order: list[_Blob] = []
        self._position: dict[str, int] = {}
        self._wanted: Counter[str] = Counter()
        self._fetched: dict[str, bytes | None] = {}  # read (None: missing), still wanted
        # read and no longer announced: a file read again soon after (a kustomization, then its
        # charts; an overlay's resources, then their lines) needs no request to git
        self._recent: OrderedDict[str, bytes] = OrderedDict()
        self._recent_bytes = 0
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
            yield TreeFile(printable(relpath), os.path.join(self.root, relpath))

    def submodules(self) -> list[str]:
        return self.gitlinks

    def _lookup(self, path: str) -> _Blob | None:
        relpath = self._relpath(path)
        return self.blobs.get(relpath) if relpath is not None else None

    def _blob(self, path: str) -> _Blob:
        blob = self._lookup(path)
        if blob is None:
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), path)
        return blob

    def size(self, path: str) -> int:
        return self.disk.size(path) if self.disk is not None else self._blob(path).size

    def prefetch(self, paths: list[str], max_bytes: int) -> None:
        """``paths`` are about to be read, in this order: their packed blobs (of at most
        ``max_bytes``) are then read from ``git cat-file`` in batches rather than one by one."""
        if self.disk is not None:
            return
        for path in paths:
            blob = self._lookup(path)  # a missing file fails when read
            if blob is not None and blob.size <= max_bytes and not os.path.exists(_loose_path(self.objects, blob)):
                if blob.oid not in self._position:
                    self._position[blob.oid] = len(self._order)
                    self._order.append(blob)
                self._wanted[blob.oid] += 1

    def read(self, path: str) -> bytes:
        if self.disk is not None:
            return self.disk.read(path)
        blob = self._blob(path)
        oid = blob.oid
        data = self._fetched.get(oid)
        if oid not in self._fetched:
            data = self._recent.get(oid)
            if data is None:
                data = _loose_blob(self.objects, blob)
            if data is None:  # packed
                self._fetch(blob)
                data = self._fetched[oid]
        if self._wanted.get(oid, 0) > 1:
            self._wanted[oid] -= 1
        else:  # its last announced read
            self._wanted.pop(oid, None)
            self._fetched.pop(oid, None)
            if data is not None and len(data) <= RECENT_BYTES:
                self._remember(oid, data)
        if data is None:
            raise OSError(errno.EIO, f"Git object {oid} missing from the clone")
        return data

    def _remember(self, oid: str, data: bytes) -> None:
        if oid in self._recent:
            self._recent.move_to_end(oid)
            return
        self._recent[oid] = data
        self._recent_bytes += len(data)
        while self._recent_bytes > RECENT_BYTES:
            self._recent_bytes -= len(self._recent.popitem(last=False)[1])

    def _fetch(self, blob: _Blob) -> None:
        """Read ``blob``, and the blobs announced after it up to a batch, into ``_fetched``."""
        batch, size = [blob.oid], blob.size
        start = self._position.get(blob.oid)
        if start is not None:
            for ahead in self._order[start + 1:start + BlobReader.BATCH]:
                if size + ahead.size > BlobReader.BATCH_BYTES:
                    break
                if self._wanted.get(ahead.oid) and ahead.oid not in self._fetched:
                    batch.append(ahead.oid)
                    size += ahead.size
        if self._reader is None:
            self._reader = BlobReader(self.root)
        self._fetched.update(zip(batch, self._reader.read(batch), strict=True))

    def isfile(self, path: str) -> bool:
        return self.disk.isfile(path) if self.disk is not None else self._lookup(path) is not None

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
        self._order.clear()
        self._position.clear()
        self._wanted.clear()
        self._fetched.clear()


def _loose_path(objects: str, blob: _Blob) -> str:
    return os.path.join(objects, blob.oid[:2], blob.oid[2:])


def _loose_blob(objects: str, blob: _Blob) -> bytes | None:
    """The blob's bytes from its loose object file (a zlib stream of ``blob <size>\\0`` and the
    bytes: faster to read here than through ``git cat-file``), or None when it is packed."""
    try:
        with open(_loose_path(objects, blob), "rb") as f:
            raw = zlib.decompress(f.read())
    except (OSError, zlib.error):
        return None
    header, _, data = raw.partition(b"\0")
    return data if header == b"blob %d" % blob.size and len(data) == blob.size else None


def _walk_order(relpath: str) -> list[tuple[int, str]]:
    """``os.walk``'s order with sorted names: a folder's files, then its sub-folders one by one."""
    *folders, name = relpath.split("/")
    return [*((1, folder) for folder in folders), (0, name)]
