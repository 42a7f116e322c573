"""The clone cache of Git sources: one lock per clone, and a clone that heals itself.

Two scans sharing a ``cache_dir`` (two schedulers, a scan started by hand during a nightly
one) must not fetch into one clone at once: git then fails to update refs the other is
writing. A lock file beside each clone (``<clone>.lock``, ``fcntl.flock``) is held while the
clone is fetched and its ref resolved; the lock goes with the process that holds it, so a
killed scan never leaves it taken.

A clone left broken (a scan killed mid-clone, a full disk, a hand edit: a garbage ``HEAD``,
an empty ``.git``, a bad ``packed-refs`` or config, a file where the clone should be) would
fail its source on every later run. Under the lock, git's own lock files in a clone are
stale (git leaves them when killed) and are removed; a clone git cannot read is removed and
cloned again, and the caller says so.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import subprocess
import time
from collections.abc import Iterator

from scanner.errors import GitError, Location

_OWN_LOCKS = ("scanner-",)  # the scanner's own lock files in a clone (``git_tree``): not git's
_POLL = 0.2


@contextlib.contextmanager
def cache_lock(path: str, timeout: float) -> Iterator[None]:
    """Hold the lock of the clone at ``path`` (waiting at most ``timeout`` seconds for it)."""
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(f"{path}.lock", "a") as lock:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise GitError(f"the Git cache {path} is in use by another scan (waited {timeout:.0f} s)",
                                   Location(path)) from None
                time.sleep(_POLL)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def remove_stale_locks(path: str) -> list[str]:
    """Remove git's lock files (``config.lock``, ``HEAD.lock``, ``refs/.../x.lock`` ...) from the
    clone at ``path``; only for a caller holding ``cache_lock``, when no git runs in it. Returns
    their paths relative to the clone."""
    git_dir = os.path.join(path, ".git")
    removed = []
    for folder, _, files in os.walk(git_dir):
        if os.path.relpath(folder, git_dir).split(os.sep)[0] == "objects":
            continue  # no lock files there; many files to list
        for name in files:
            if name.endswith(".lock") and not name.startswith(_OWN_LOCKS):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(os.path.join(folder, name))
                    removed.append(os.path.relpath(os.path.join(folder, name), path))
    return sorted(removed)


def cache_problem(path: str) -> str | None:
    """Why the clone at ``path`` cannot be fetched into (it must be cloned again), or None: it
    is fine, or there is none yet."""
    if not os.path.lexists(path):
        return None
    if os.path.islink(path) or not os.path.isdir(path):
        return "it is not a folder"
    git_dir = os.path.join(path, ".git")
    if not os.path.isdir(git_dir):
        return "it has no .git folder"
    env = {**os.environ, "GIT_DIR": git_dir, "GIT_CEILING_DIRECTORIES": path}  # never a folder above
    for args in (["config", "--get", "remote.origin.url"], ["for-each-ref", "--format=%(refname)"]):
        proc = subprocess.run(["git", *args], env=env, capture_output=True, check=False, cwd=path)
        if proc.returncode != 0:
            lines = proc.stderr.decode(errors="replace").strip().splitlines()
            return f"git {args[0]}: {lines[-1] if lines else f'exit status {proc.returncode}'}"
    return None


def remove_clone(path: str) -> None:
    """Remove whatever is at ``path`` (a broken clone, or a file where the clone belongs)."""
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path)
    else:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
