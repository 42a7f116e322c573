"""The Git sources of a scan: their options from the config, and their fetch in a forked
process while the scan starts.

A scan's first steps (loading the engine and the policies, starting the workers) keep one
core busy and leave the other idle. Cloning or fetching the Git sources, listing the files
of their commits and searching them for the GitOps API groups needs none of that, so
``scanner scan`` hands it to a child process first thing; the scan takes each source's
outcome (the clone, its commit, or the error) when it prepares the source. Where threads
run (the scheduler), forking is unsafe: the scan fetches in its own process instead.
"""

from __future__ import annotations

import contextlib
import os
import pickle
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, BinaryIO

from scanner.config import Config
from scanner.errors import GitError, Location, ScannerError
from scanner.scan import forked

if TYPE_CHECKING:  # loaded by the child (and the scan) only: the fork comes first
    from scanner.sources.git import GitOptions
    from scanner.sources.provenance import CommitInfo
    from scanner.sources.tree import TreeOptions

Prepared = tuple[str, "CommitInfo", bool]  # the clone's path, its commit, whether its files are checked out


def git_options(ref: Any, config: Config, tree: TreeOptions | None = None) -> GitOptions:
    """The options of a Git reference of the config (a source's or a policy location's)."""
    from scanner.sources.git import GitOptions
    from scanner.sources.tree import TreeOptions

    return GitOptions(url=ref.url, ref=ref.ref, cache_dir=os.path.join(config.scan.cache_dir, "git"),
                      shallow=ref.shallow, token_env=ref.token_env, ssh_key=ref.ssh_key, timeout=ref.timeout,
                      submodules=ref.submodules, tree=tree or TreeOptions())


class GitPrefetch:
    """The child process fetching the Git sources, and what it reported so far."""

    def __init__(self, pid: int, reader: BinaryIO, names: set[str]) -> None:
        self.pid, self.names = pid, names
        self._reader: BinaryIO | None = reader
        self._outcomes: dict[str, tuple[Any, ...]] = {}
        self._ended = ""  # how the child ended, once reaped

    def prepared(self, name: str) -> Callable[[], Prepared] | None:
        """What ``GitSource.prepare`` of source ``name`` returns, or None when not fetched here."""
        return (lambda: self.result(name)) if name in self.names else None

    def result(self, name: str) -> Prepared:
        """Source ``name`` as prepared by the child (waiting for it); its ``GitError`` if it failed."""
        while name not in self._outcomes and self._reader is not None:
            try:
                outcome = pickle.load(self._reader)
            except (EOFError, pickle.UnpicklingError, OSError):
                self.close()
                break
            self._outcomes[outcome[0]] = outcome[1:]
        found = self._outcomes.get(name)
        if found is None:
            raise GitError(f"clone/fetch of source {name} failed: the process fetching it {self._ended}")
        if found[0] == "error":
            raise GitError(found[1], Location(found[2]) if found[2] is not None else None)
        return found[1]

    def names_gitops(self, name: str) -> bool | None:
        """Whether the commit of source ``name`` names a Flux or Argo CD API group, as the child
        found right after fetching it; None where it did not look (a source with ``gitops: off``
        or checked out on disk) or failed to."""
        found = self._outcomes.get(name)
        return found[2] if found is not None and found[0] == "ok" else None

    def close(self) -> None:
        """Wait for the child: it ends once every source is fetched (no clone is left half made)."""
        if self._reader is not None:
            self._reader.close()
            self._reader = None
        if not self._ended:
            _, status = os.waitpid(self.pid, 0)
            code = os.waitstatus_to_exitcode(status)
            self._ended = f"ended with exit status {code}" if code >= 0 else f"was killed by signal {-code}"


def start_git_prefetch(config: Config, only_sources: Iterable[str] = ()) -> GitPrefetch | None:
    """Fork the child fetching the scan's Git sources; None when there are none, a named source
    is unknown (the scan fails without fetching), or threads run."""
    wanted = set(only_sources)
    if wanted - {s.name for s in config.sources} or not forked.can_fork():
        return None
    sources = [s for s in config.sources if s.type == "git" and (not wanted or s.name in wanted)]
    if not sources:
        return None
    refs = [(s.name, s.git, s.gitops != "off") for s in sources]
    pid, reader = forked.spawn(lambda writer: _fetch_all(writer, refs, config))
    return GitPrefetch(pid, os.fdopen(reader, "rb"), {s.name for s in sources})


def _fetch_all(writer: int, refs: list[tuple[str, Any, bool]], config: Config) -> int:
    """In the child: prepare each source and report it (or its error) to the scan; the child's
    exit code."""
    try:
        with os.fdopen(writer, "wb") as out:
            for name, ref, gitops in refs:
                pickle.dump((name, *_fetch(name, git_options(ref, config), gitops)), out)
                out.flush()
    except BaseException:  # the scan is gone (a closed pipe) or interrupted: nothing to report to
        return 1
    return 0


def _fetch(name: str, options: GitOptions, gitops: bool) -> tuple[Any, ...]:
    """The outcome of one source: ``("ok", prepared, names GitOps or None)`` or ``("error",
    message, path)``. A commit read from the clone's objects is listed for the workers and,
    with ``gitops``, searched for the GitOps API groups (the scan's next step asks)."""
    from scanner.sources.git import GitSource, redact
    from scanner.sources.git_tree import save_listing
    from scanner.sources.gitops.discover import commit_names_gitops

    source = GitSource(name, options)
    try:
        workdir, commit, on_disk = source.prepare()
        marked = None
        if not on_disk:  # the workers read it instead of listing the commit each (or do, without it)
            with contextlib.suppress(ScannerError, OSError):
                save_listing(workdir, commit.sha)
            if gitops:
                with contextlib.suppress(ScannerError, OSError):
                    marked = commit_names_gitops(workdir, commit.sha)
        return "ok", (workdir, commit, on_disk), marked
    except ScannerError as exc:
        return "error", exc.message, exc.location.path if exc.location else None
    except Exception as exc:  # reported as the source's failure, like any error of its fetch
        message = f"clone/fetch failed for {redact(options.url)}: {type(exc).__name__}: {exc}"
        return "error", source.redacted(message), None
