"""Git repositories: clone into a cache once, fetch afterwards, check out a branch/tag/commit.

Credentials come from the environment only: an HTTP token from the variable named in the
config (sent as an ``Authorization`` header through ``GIT_CONFIG_*`` variables, so it is
never in a URL, a command line or ``.git/config``), an SSH key path, or git's own
credential helpers. A password written in the URL (``https://user:password@host/...``) is
taken out of it: git is given the URL without it (on its command line and in the clone's
``.git/config``) and the password as that header, in the environment of the git process
only. Every message that leaves this module is redacted (the URL's user info, and the
password and token in every form they are sent in).

The clone cache is locked per clone and heals itself (see ``git_cache``).
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import logging
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import timedelta, timezone
from types import ModuleType
from typing import TYPE_CHECKING
from urllib.parse import quote, unquote

from scanner.errors import GitError, Location
from scanner.sources.documents import WARNING, Origin, SourceItem
from scanner.sources.file_tree import DiskTree, FileTree
from scanner.sources.git_cache import cache_lock, cache_problem, remove_clone, remove_stale_locks
from scanner.sources.git_tree import GitTree, failure_cause, forget_checkout
from scanner.sources.provenance import CommitInfo, ErrorRecord, SourceStats
from scanner.sources.tree import TreeOptions, scan_tree

if TYPE_CHECKING:
    import git

# the user info of a URL: up to the last "@" before the path (a password may hold an "@")
_USERINFO = re.compile(r"(?P<scheme>[a-zA-Z][a-zA-Z0-9+.-]*://)[^/\s]+@")
_HTTP = ("http://", "https://")
log = logging.getLogger("scanner.sources.git")


def redact(text: str, secrets: tuple[str, ...] = ()) -> str:
    """``text`` without URL user info and without any of ``secrets``."""
    text = _USERINFO.sub(r"\g<scheme>***@", text)
    for secret in sorted(secrets, key=len, reverse=True):  # a longer form may hold a shorter one
        if secret:
            text = text.replace(secret, "***")
    return text


@dataclass(frozen=True, slots=True)
class Remote:
    """A Git URL split into what git may see and the credentials it must not store."""

    url: str  # without a password (an HTTP(S) URL without user info at all)
    user: str = ""
    password: str = ""


def split_credentials(url: str) -> Remote:
    """``url`` without the password of its user info (percent-decoded into ``Remote``); a
    user name alone (``ssh://git@host/...``) is no secret and stays."""
    scheme, found, rest = url.partition("://")
    if not found:
        return Remote(url)
    authority, slash, path = rest.partition("/")
    userinfo, at, host = authority.rpartition("@")
    user, colon, password = userinfo.partition(":")
    if not at or not colon:
        return Remote(url)
    plain_user = "" if url.lower().startswith(_HTTP) else (user + "@" if user else "")
    return Remote(f"{scheme}://{plain_user}{host}{slash}{path}", unquote(user), unquote(password))


@dataclass(frozen=True, slots=True)
class GitOptions:
    """How a Git source is fetched: URL, ref, clone cache, depth, credentials, timeout."""

    url: str
    ref: str | None = None  # branch, tag or commit; None: the remote's default branch
    cache_dir: str = os.path.join(os.path.expanduser("~"), ".cache", "scanner", "git")
    shallow: bool = False
    token_env: str | None = None  # name of the variable holding an HTTPS token
    token_user: str = "x-access-token"
    ssh_key: str | None = None
    timeout: float = 300.0  # seconds, per network operation
    submodules: bool = False  # check out submodules (recursively) too
    tree: TreeOptions = field(default_factory=TreeOptions)


class GitSource:
    source_type = "git"

    def __init__(self, name: str, options: GitOptions,
                 prepared: Callable[[], tuple[str, CommitInfo, bool]] | None = None) -> None:
        self.name = name
        self.options = options
        self.stats = SourceStats()
        self._prepared = prepared  # ``prepare`` done elsewhere (by the scan's fetching process)
        self.remote = split_credentials(options.url)
        self.notices: list[str] = []  # what preparing the clone repaired (a broken cache cloned again)

    def iter_items(self) -> Iterator[SourceItem]:
        self.stats = SourceStats()
        try:
            tree, commit = self.open_tree()
        except GitError as exc:
            self.stats.errors += 1
            yield ErrorRecord(self.name, "git", exc.message, exc.location or Location())
            return
        self.stats.commit = commit
        for notice in self.notices:
            yield ErrorRecord(self.name, WARNING, notice, Location(redact(self.remote.url)))
        origin = Origin(self.name, self.source_type, commit.sha)
        yield from scan_tree(tree, origin, self.options.tree, self.stats)

    def prepare(self) -> tuple[str, CommitInfo, bool]:
        """Clone or fetch and resolve the ref: the clone's path, the commit, and whether its
        files are checked out (with ``submodules``) rather than read from the objects."""
        if self._prepared is not None:
            return self._prepared()
        with cache_lock(self.cache_path(), max(60.0, 3 * self.options.timeout)):
            if self.options.submodules:
                return (*self.checkout(), True)
            repo, sha = self._fetch()
            path = str(repo.working_dir)  # GitPython types it as str or PathLike; a clone opened by its path
            forget_checkout(path)
            return path, self._commit_info(repo, sha), False

    def open_tree(self) -> tuple[FileTree, CommitInfo]:
        path, commit, on_disk = self.prepare()
        return (DiskTree(path) if on_disk else GitTree(path, commit.sha)), commit

    # --- repository handling ---------------------------------------------------------
    def _secrets(self) -> tuple[str, ...]:
        """Every secret of the source, in every form it is sent in or may be shown in."""
        found: list[str] = []
        token = os.environ.get(self.options.token_env or "", "")
        if token:
            found += [token, _basic(self.options.token_user, token)]
        password = self.remote.password
        if password:
            found += [password, quote(password, safe=""), _basic(self.remote.user, password)]
        return tuple(found)

    def _auth_header(self) -> tuple[str, str] | None:
        """The ``http.extraHeader`` to send (config key, value): the token's, else the URL's password's
        (only to the host of the URL it was written in, so also to submodules next to it there)."""
        token = os.environ.get(self.options.token_env or "", "")
        if token:
            return "http.extraHeader", f"Authorization: Basic {_basic(self.options.token_user, token)}"
        if self.remote.password and self.remote.url.lower().startswith(_HTTP):
            scheme, _, rest = self.remote.url.partition("://")
            return (f"http.{scheme}://{rest.partition('/')[0]}/.extraHeader",
                    f"Authorization: Basic {_basic(self.remote.user, self.remote.password)}")
        return None

    def redacted(self, text: str) -> str:
        """``text`` without the source's credentials in any form."""
        return redact(text, self._secrets())

    def _env(self) -> dict[str, str]:
        env = {"GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": "", "SSH_ASKPASS": "",
               "GIT_CONFIG_COUNT": "2",
               "GIT_CONFIG_KEY_0": "http.lowSpeedLimit", "GIT_CONFIG_VALUE_0": "1000",
               "GIT_CONFIG_KEY_1": "http.lowSpeedTime",
               "GIT_CONFIG_VALUE_1": str(int(self.options.timeout))}
        header = self._auth_header()
        if header is not None:
            env.update({"GIT_CONFIG_COUNT": "3", "GIT_CONFIG_KEY_2": header[0], "GIT_CONFIG_VALUE_2": header[1]})
        if self.options.ssh_key:
            env["GIT_SSH_COMMAND"] = (
                f"ssh -i '{self.options.ssh_key}' -o IdentitiesOnly=yes -o BatchMode=yes "
                f"-o ConnectTimeout={int(self.options.timeout)}"
            )
        return env

    def _fail(self, action: str, exc: Exception) -> GitError:
        detail = str(getattr(exc, "stderr", None) or exc)
        _, quoted, stderr = detail.rpartition("stderr: '")  # GitPython quotes git's stderr
        if quoted:
            detail = stderr.rstrip().removesuffix("'")
        cause = failure_cause(detail) or type(exc).__name__
        message = f"{action} failed for {redact(self.remote.url)}: {cause}"
        return GitError(self.redacted(message), Location(redact(self.remote.url)))

    def cache_path(self) -> str:
        """This source's own clone: two sources never share one (each checks out its own ref)."""
        key = hashlib.sha256(f"{self.name}\n{redact(self.options.url)}".encode()).hexdigest()[:16]
        safe = re.sub(r"[^A-Za-z0-9_.-]", "_", self.name)[:40]
        return os.path.join(self.options.cache_dir, f"{safe}-{key}")

    def checkout(self) -> tuple[str, CommitInfo]:
        """Clone or fetch, then check out the ref (and, with ``submodules``, its submodules);
        the working tree's path and its commit."""
        repo, sha = self._fetch()
        git = _gitpython()
        path = str(repo.working_dir)
        forget_checkout(path)
        try:
            repo.git.checkout("--force", "--detach", sha)
            repo.git.clean("-ffdx")
        except git.GitCommandError as exc:
            raise self._fail("checkout", exc) from exc
        if self.options.submodules and os.path.exists(os.path.join(path, ".gitmodules")):
            try:
                repo.git.submodule("update", "--init", "--recursive", "--force", *self._depth(),
                                   env=self._env(), kill_after_timeout=self.options.timeout)
            except git.GitCommandError as exc:
                raise self._fail("submodule update", exc) from exc
        return path, self._commit_info(repo, sha)

    def _commit_info(self, repo: git.Repo, sha: str) -> CommitInfo:
        committed = repo.commit(sha).committed_datetime  # its time zone is GitPython's own class:
        committed = committed.replace(tzinfo=timezone(committed.utcoffset() or timedelta()))  # the standard one
        return CommitInfo(sha, committed, self.options.ref or "HEAD")

    def _depth(self) -> list[str]:
        return ["--depth", "1"] if self.options.shallow else []

    def _heal(self, path: str) -> None:
        """Make the clone at ``path`` usable (caller holds its lock): remove git's stale lock
        files; remove a clone git cannot read (it is cloned again) and say so."""
        if os.path.isdir(os.path.join(path, ".git")):
            for stale in remove_stale_locks(path):
                log.info("source %s: removed the stale lock file %s from its Git cache", self.name, stale)
        problem = cache_problem(path)
        if problem is None:
            return
        notice = f"the Git cache {path} was unusable ({self.redacted(problem)}): it is cloned again"
        log.warning("source %s: %s", self.name, notice)
        self.notices.append(notice)
        try:
            remove_clone(path)
        except OSError as exc:
            raise GitError(f"{notice}, but it cannot be removed: {exc.strerror}", Location(path)) from exc

    def _fetch(self) -> tuple[git.Repo, str]:
        """The cached clone, cloned or fetched now, and the commit of the ref (under the clone's lock)."""
        git = _gitpython()

        path, env, timeout = self.cache_path(), self._env(), self.options.timeout
        url = self.remote.url
        depth = self._depth()
        self._heal(path)
        try:
            if os.path.isdir(os.path.join(path, ".git")):
                repo = git.Repo(path)
                repo.git.remote("set-url", "origin", url, env=env)
                repo.git.fetch("origin", "--prune", "--prune-tags", "--tags", "--force",
                               *depth, env=env, kill_after_timeout=timeout)
                if not self.options.ref:  # the remote's default branch may have changed since the clone
                    with contextlib.suppress(git.GitCommandError):  # none known: keep the clone's
                        repo.git.remote("set-head", "origin", "--auto", env=env, kill_after_timeout=timeout)
            else:
                os.makedirs(self.options.cache_dir, exist_ok=True)
                options = ["--no-checkout", *depth]
                if self.options.shallow:
                    options.append("--no-single-branch")
                repo = git.Repo.clone_from(url, path, multi_options=options, env=env,
                                           kill_after_timeout=timeout)
                if self.options.shallow:
                    repo.git.fetch("origin", "--tags", "--force", *depth, env=env,
                                   kill_after_timeout=timeout)
        except (git.GitCommandError, git.exc.GitError, OSError) as exc:
            raise self._fail("clone/fetch", exc) from exc
        return repo, self._resolve(repo, env, depth)

    def _resolve(self, repo: git.Repo, env: dict[str, str], depth: list[str]) -> str:
        import git

        ref = self.options.ref
        candidates = _candidates(ref)
        for candidate in candidates:
            try:
                return repo.git.rev_parse("--verify", "--quiet", f"{candidate}^{{commit}}")
            except git.GitCommandError:
                continue
        if ref and re.fullmatch(r"[0-9a-fA-F]{7,40}", ref):
            try:  # a commit no branch or tag reaches in a shallow or single-branch clone
                repo.git.fetch("origin", ref, *depth, env=env,
                               kill_after_timeout=self.options.timeout)
                return repo.git.rev_parse("--verify", f"{ref}^{{commit}}")
            except git.GitCommandError as exc:
                raise self._fail(f"ref {ref!r} not found; fetch", exc) from exc
        raise GitError(self.redacted(f"ref {ref or 'HEAD'!r} not found in {redact(self.remote.url)}"),
                       Location(redact(self.remote.url)))


def _basic(user: str, password: str) -> str:
    """The credentials of HTTP Basic authentication."""
    return base64.b64encode(f"{user}:{password}".encode()).decode()


def _gitpython() -> ModuleType:
    """GitPython, loaded when a repository is fetched (not with the scan); it needs the git command."""
    try:
        import git
    except ImportError as exc:  # GitPython refuses to load without a git executable
        raise GitError("the git command is not installed or not on PATH (Git sources need it)") from exc
    return git


def _candidates(ref: str | None) -> list[str]:
    """Where ``ref`` is looked up in the cached clone: the remote's branches and the tags, which
    every fetch updates; never the clone's local branches, which no fetch moves."""
    if not ref or ref == "HEAD":
        return ["refs/remotes/origin/HEAD"]
    if ref.startswith("refs/heads/"):
        return ["refs/remotes/origin/" + ref.removeprefix("refs/heads/")]
    if ref.startswith("refs/"):
        return [ref]
    found = [f"refs/remotes/origin/{ref}", f"refs/tags/{ref}"]
    return [*found, ref] if re.fullmatch(r"[0-9a-fA-F]{7,40}", ref) else found
