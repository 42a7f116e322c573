"""Replaying a shard's stored output when nothing it was made from changed: no file is read,
parsed or rendered, and no rule evaluated.

A shard task's **shard key** is the digest of everything its output depends on:

- what the shard reads: a Git commit's root tree id (an unchanged tree has the same id whatever
  the commit), or the names and bytes of an export's files;
- how it reads them: the source's name and type, its tree options (globs, Kustomize and Helm
  settings, GitOps entry points, limits, the shard), the Helm values files outside the tree and
  the renderer programs found on the ``PATH`` (their paths, sizes and times);
- how it is evaluated: the evaluation keys of every policy for the source's cluster
  (``scanner.scan.result_reuse``); a shard under a policy that has no key (it reads the time)
  is never replayed, nor is a directory source (its files would have to be read to know them
  unchanged).

The scan gives each task its key (``ShardTask.key``); the worker reads the output stored under
it and, when there is one, sends it again (the current commit in place of the recorded one)
instead of reading the shard. A task that read its shard without failing sends its output with
its ``done`` message, to be stored under its key.

A shard's output also leaves a **footprint** in the run that stores it (``ShardFootprint``,
stored beside the output under ``footprint_key``): the observations its resources became (by
their content digest), their results as the audit chain hashes them, their tallies and what
the scan counts of them. A worker that finds a shard's footprint sends it instead of the
output, and the scan makes those observations the run's without a row of them read or
written, when the source's last completed run has each of them under its digest (as the
output's rows would be matched to them); otherwise it sends the task again, to be replayed
from its output or read.

The shards of a source depend on the scan's worker count (``scan.jobs``): a scan with another
count reads every shard again.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import shutil
import subprocess
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from scanner.scan.result_reuse import FORMAT
from scanner.sources.paths import PathFilter, Shard, walk_tree
from scanner.sources.provenance import ErrorRecord, SourceStats
from scanner.sources.tree import TreeOptions
from scanner.store.records import StoredFootprint


class Task(Protocol):
    """What the key of a shard task (``scanner.scan.workers.ShardTask``) is made of."""

    @property
    def source(self) -> str: ...
    @property
    def source_type(self) -> str: ...
    @property
    def root(self) -> str: ...
    @property
    def paths(self) -> tuple[str, ...]: ...
    @property
    def commit(self) -> str | None: ...
    @property
    def tree(self) -> TreeOptions: ...
    @property
    def shard(self) -> Shard: ...


RENDERERS = ("kustomize", "kubectl", "helm", "git")
COMMIT_COLUMN = 9
"""The commit's place in a resource row (``scanner.scan.workers.evaluate_chunk``)."""

Chunk = tuple[list[tuple], list[tuple], list[ErrorRecord], list[str]]
"""A stored chunk: resource rows, result rows, error records and the document digests reused."""


@dataclass(slots=True)
class ShardOutput:
    """What one shard task sent: its chunks, its counts and the commit it read (if any)."""

    commit: str
    chunks: list[Chunk] = field(default_factory=list)
    stats: SourceStats | None = None

    def encode(self) -> bytes:
        return _encoded(self)

    @staticmethod
    def decode(blob: bytes) -> ShardOutput:
        """The output ``encode`` gave; ValueError when ``blob`` is not one."""
        return _decoded(blob, ShardOutput, "shard output")

    def replayed(self, commit: str) -> list[Chunk]:
        """The chunks as read from ``commit`` (the recorded commit's resources moved to it)."""
        if commit == self.commit:
            return self.chunks
        recorded = self.commit
        return [([(*row[:COMMIT_COLUMN], commit, *row[COMMIT_COLUMN + 1:]) if row[COMMIT_COLUMN] == recorded
                  else row for row in resources], results, errors, digests)
                for resources, results, errors, digests in self.chunks]


@dataclass(slots=True)
class ShardFootprint:
    """What a shard's output became in the run that stored it (``stored``), and what the scan
    counts of it: results by status, enforced failures, resources (those with results), the
    errors and the result cache digests its chunks carry, its source counts."""

    stored: StoredFootprint
    counts: dict[str, int]
    enforce_failures: int
    resources: int
    with_results: int
    errors: list[ErrorRecord]
    digests: list[str]
    stats: SourceStats

    def encode(self) -> bytes:
        return _encoded(self)

    @staticmethod
    def decode(blob: bytes) -> ShardFootprint:
        """The footprint ``encode`` gave; ValueError when ``blob`` is not one."""
        return _decoded(blob, ShardFootprint, "shard footprint")


_Stored = TypeVar("_Stored", ShardOutput, ShardFootprint)


def _encoded(value: ShardOutput | ShardFootprint) -> bytes:
    return zlib.compress(pickle.dumps(value, 5), 1)


def _decoded(blob: bytes, kind: type[_Stored], what: str) -> _Stored:
    """The ``kind`` ``_encoded`` gave as ``blob``; ValueError when it is not one."""
    try:
        value = pickle.loads(zlib.decompress(blob))
    except (pickle.UnpicklingError, zlib.error, EOFError, AttributeError, ImportError, TypeError,
            IndexError) as exc:
        raise ValueError(f"unreadable shard cache row ({what}): {exc}") from exc
    if not isinstance(value, kind):
        raise ValueError(f"a shard cache row is not a {what}")
    return value


def footprint_key(key: str) -> str:
    """The key a shard's footprint is stored under, beside its output's ``key`` (and the slot
    it takes, beside its output's slot)."""
    return _sha("footprint", key)


def _sha(*parts: object) -> str:
    return hashlib.sha256("\n".join(map(str, parts)).encode("utf-8")).hexdigest()


def git_tree_id(clone: str, commit: str) -> str | None:
    """The root tree id of ``commit`` in the clone at ``clone``; None when git cannot tell."""
    try:
        done = subprocess.run(["git", "-C", clone, "rev-parse", f"{commit}^{{tree}}"], capture_output=True,
                              text=True, check=False, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() or None if done.returncode == 0 else None


def files_digest(paths: Sequence[str], path_filter: PathFilter) -> str | None:
    """The digest of the names and bytes of the files an export of ``paths`` reads; None when one
    cannot be read (the shard then reads them, and records why)."""
    digest = hashlib.sha256()
    try:
        for path in paths:
            digest.update(f"\0path {path}\0".encode())
            if os.path.isdir(path):
                skipped: dict[str, int] = {}
                unreadable: list[Any] = []
                for tree_file in walk_tree(path, path_filter, skipped, unreadable=unreadable):
                    with open(tree_file.path, "rb") as handle:
                        digest.update(f"\0file {tree_file.relpath}\0".encode())
                        digest.update(handle.read())
                if unreadable:
                    return None
                digest.update(repr(sorted(skipped.items())).encode())
            elif os.path.isfile(path):
                with open(path, "rb") as handle:
                    digest.update(handle.read())
            else:
                return None
    except OSError:
        return None
    return digest.hexdigest()


def renderers_stamp() -> str:
    """The renderer programs on the ``PATH``: their paths, sizes and modification times."""
    found = []
    for name in RENDERERS:
        where = shutil.which(name)
        if where is not None:
            status = os.stat(where)
            found.append(f"{name}={os.path.realpath(where)}:{status.st_size}:{status.st_mtime_ns}")
    return ";".join(found)


def helm_values_digest(files: Sequence[str]) -> str:
    """The bytes of the Helm values files that exist as given (those in the tree are in its id)."""
    parts = []
    for path in files:
        try:
            with open(path, "rb") as handle:
                parts.append(f"{path}:{hashlib.sha256(handle.read()).hexdigest()}")
        except OSError:
            parts.append(f"{path}:-")
    return _sha(*parts)


def source_content(task: Task) -> str | None:
    """The digest of what a source's shards read (the same for each shard); None: not known
    without reading it (a directory, a commit git cannot name the tree of, an unreadable file)."""
    if task.source_type == "git" and task.commit:
        tree = git_tree_id(task.root, task.commit)
        return f"git-tree {tree}" if tree else None
    if task.source_type == "export":
        files = files_digest(task.paths, task.tree.path_filter)
        return f"files {files}" if files else None
    return None


def shard_keys(tasks: Sequence[Task], evaluation: Mapping[str, str], policies: int) -> list[str | None]:
    """The shard key of each of ``tasks`` (of one source); None when their policies, or what they
    read, cannot be keyed."""
    if not tasks or len(evaluation) < policies:
        return [None] * len(tasks)
    content = source_content(tasks[0])
    if content is None:
        return [None] * len(tasks)
    helm = tasks[0].tree.helm
    common = _sha(FORMAT, "shard", content, renderers_stamp(), helm_values_digest(helm.values),
                  *sorted(evaluation.values()))
    return [_sha(common, task.source, task.source_type, repr(task.tree), repr(task.shard)) for task in tasks]
