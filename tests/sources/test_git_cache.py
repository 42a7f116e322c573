"""The Git clone cache heals itself, is locked per clone, and never holds or shows a credential."""

from __future__ import annotations

import multiprocessing
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from scanner.sources.git import GitOptions, GitSource, redact, split_credentials
from scanner.sources.git_cache import cache_lock
from scanner.sources.provenance import ErrorRecord, Resource

from .conftest import deployment
from .git_http import git_http_server


def _source(cache: Path, url: str, name: str = "gitops", **kw) -> GitSource:
    return GitSource(name, GitOptions(url, "main", cache_dir=str(cache), timeout=30, **kw))


def _scan(source: GitSource) -> tuple[list[str], list[ErrorRecord]]:
    items = list(source.iter_items())
    return (sorted(i.provenance.path for i in items if isinstance(i, Resource)),
            [i for i in items if isinstance(i, ErrorRecord)])


@pytest.fixture
def origin(make_repo):
    repo = make_repo()
    repo.write("apps/a.yaml", deployment("a"))
    repo.commit("first")
    return repo


def _garbage_head(clone: Path) -> None:
    (clone / ".git" / "HEAD").write_text("garbage\n")


def _empty_git(clone: Path) -> None:
    shutil.rmtree(clone / ".git")
    (clone / ".git").mkdir()


def _bad_packed_refs(clone: Path) -> None:
    subprocess.run(["git", "-C", str(clone), "pack-refs", "--all"], check=True)
    with open(clone / ".git" / "packed-refs", "a") as f:
        f.write("not a ref line\n")


def _bad_config(clone: Path) -> None:
    (clone / ".git" / "config").write_text("[[[ not config\n")


def _a_file(clone: Path) -> None:
    shutil.rmtree(clone)
    clone.write_text("not a clone\n")


def _config_lock(clone: Path) -> None:
    (clone / ".git" / "config.lock").write_text("")


def _ref_lock(clone: Path) -> None:
    ref = clone / ".git" / "refs" / "remotes" / "origin"
    ref.mkdir(parents=True, exist_ok=True)
    (ref / "main.lock").write_text("")


@pytest.mark.parametrize(("damage", "recloned"), [
    pytest.param(_garbage_head, True, id="garbage-head"),
    pytest.param(_empty_git, True, id="empty-git-folder"),
    pytest.param(_bad_packed_refs, True, id="bad-packed-refs"),
    pytest.param(_bad_config, True, id="bad-config"),
    pytest.param(_a_file, True, id="cache-path-is-a-file"),
    pytest.param(_config_lock, False, id="stale-config-lock"),
    pytest.param(_ref_lock, False, id="stale-ref-lock"),
])
def test_a_broken_cache_is_repaired_and_the_source_read(tmp_path, origin, damage, recloned):
    cache = tmp_path / "cache"
    assert _scan(_source(cache, str(origin.path)))[0] == ["apps/a.yaml"]
    clone = Path(_source(cache, str(origin.path)).cache_path())
    damage(clone)
    origin.write("apps/b.yaml", deployment("b"))
    origin.commit("second")  # the fetch must update the ref a stale lock would block
    source = _source(cache, str(origin.path))
    resources, records = _scan(source)
    assert resources == ["apps/a.yaml", "apps/b.yaml"]
    notices = [(r.kind, r.message) for r in records]
    if recloned:
        assert len(notices) == 1 and notices[0][0] == "warning", notices
        assert notices[0][1].startswith(f"the Git cache {clone} was unusable (") and "cloned again" in notices[0][1]
    else:
        assert notices == []
    assert _scan(_source(cache, str(origin.path))) == (["apps/a.yaml", "apps/b.yaml"], [])  # and stays well


def _prepare(cache: str, url: str, name: str, results: multiprocessing.Queue) -> None:
    try:
        _, commit, _ = GitSource(name, GitOptions(url, "main", cache_dir=cache, timeout=30)).prepare()
        results.put(("ok", commit.sha))
    except Exception as exc:  # reported to the test
        results.put(("error", str(exc)))


def test_scans_sharing_a_cache_take_turns_on_a_clone(tmp_path, origin):
    """Several processes fetching one clone at once (two scans sharing ``cache_dir``) all succeed."""
    for i in range(30):
        origin.write(f"apps/x{i}.yaml", deployment(f"x{i}"))
        origin.commit(f"c{i}")
    context = multiprocessing.get_context("fork")
    results = context.Queue()
    for _round in range(2):  # a first clone, then fetches into it
        workers = [context.Process(target=_prepare, args=(str(tmp_path / "cache"), str(origin.path), "same", results))
                   for _ in range(4)]
        for w in workers:
            w.start()
        for w in workers:
            w.join(120)
        outcomes = [results.get(timeout=5) for _ in workers]
        assert outcomes == [("ok", origin.git("rev-parse", "HEAD"))] * 4
        origin.write(f"apps/next{_round}.yaml", deployment(f"next{_round}"))
        origin.commit("next")


def test_a_held_cache_lock_is_waited_for_then_reported(tmp_path, origin):
    source = _source(tmp_path / "cache", str(origin.path))
    context = multiprocessing.get_context("fork")
    ready, release = context.Event(), context.Event()

    def hold() -> None:
        with cache_lock(source.cache_path(), 5):
            ready.set()
            release.wait(30)

    holder = context.Process(target=hold)
    holder.start()
    try:
        assert ready.wait(10)
        with pytest.raises(Exception, match="is in use by another scan"), cache_lock(source.cache_path(), 0.5):
            pass
    finally:
        release.set()
        holder.join(10)
    with cache_lock(source.cache_path(), 0.5):  # released with its process
        pass


@pytest.mark.parametrize(("url", "clean", "user", "password"), [
    pytest.param("https://u:p%40ss@h/x.git", "https://h/x.git", "u", "p@ss", id="https-password-percent-encoded"),
    pytest.param("https://u:p@ss@h:8443/x", "https://h:8443/x", "u", "p@ss", id="https-password-with-at-sign"),
    pytest.param("http://:tok@h/x", "http://h/x", "", "tok", id="http-password-without-user"),
    pytest.param("ssh://git:pw@h/x", "ssh://git@h/x", "git", "pw", id="ssh-keeps-its-user"),
    pytest.param("https://u@h/x", "https://u@h/x", "", "", id="user-alone-is-no-secret"),
    pytest.param("git@h:org/x.git", "git@h:org/x.git", "", "", id="scp-like-untouched"),
    pytest.param("/srv/repo", "/srv/repo", "", "", id="local-path-untouched"),
])
def test_split_credentials_takes_the_password_out_of_the_url(url, clean, user, password):
    remote = split_credentials(url)
    assert (remote.url, remote.user, remote.password) == (clean, user, password)


@pytest.mark.parametrize(("text", "expected"), [
    pytest.param("https://u:p@ss@h/x", "https://***@h/x", id="password-with-at-sign"),
    pytest.param("see 'http://u:p@h:1/x' and ssh://g@h/y", "see 'http://***@h:1/x' and ssh://***@h/y",
                 id="every-url-in-a-message"),
])
def test_redact_hides_every_user_info(text, expected):
    assert redact(text) == expected


def test_a_password_in_the_url_is_never_stored_or_on_a_command_line(tmp_path, origin, monkeypatch):
    """Cloned over HTTP with Basic authentication: the password reaches the server as a header,
    and neither the clone's config, any git command line (GIT_TRACE) nor a message holds it."""
    secret = "pa:ss@w0rd/+"
    bare = tmp_path / "served" / "repo.git"
    bare.parent.mkdir()
    subprocess.run(["git", "clone", "-q", "--bare", str(origin.path), str(bare)], check=True)
    trace = tmp_path / "trace.log"
    monkeypatch.setenv("GIT_TRACE", str(trace))
    with git_http_server(bare.parent, "alice", secret) as server:
        from urllib.parse import quote
        url = server.url("repo.git").replace("http://", f"http://alice:{quote(secret, safe='')}@")
        source = _source(tmp_path / "cache", url)
        resources, records = _scan(source)
        assert resources == ["apps/a.yaml"] and records == []
        assert server.expected in server.authorizations  # the password was sent, as a header
        wrong = _source(tmp_path / "cache2", url.replace(quote(secret, safe=""), "wrong%2Fpass"))
        _, failed = _scan(wrong)
    clone = Path(source.cache_path())
    config = (clone / ".git" / "config").read_text()
    assert f"url = {server.url('repo.git')}" in config
    encoded = quote(secret, safe="")
    for text in (config, trace.read_text(), str(failed), "".join(os.listdir(tmp_path / "cache"))):
        assert secret not in text and encoded not in text and "wrong" not in text
    assert [r.kind for r in failed] == ["git"] and "http://127.0.0.1" in failed[0].message


def test_git_tree_blob_missing_from_the_clone_fails_its_file_only(tmp_path):
    import subprocess

    from scanner.sources.documents import Origin
    from scanner.sources.git_tree import GitTree
    from scanner.sources.provenance import ErrorRecord, Resource, SourceStats
    from scanner.sources.tree import TreeOptions, scan_tree

    repo = tmp_path / "repo"
    repo.mkdir()
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@e",
           "HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}

    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True,
                              env=env).stdout.strip()

    git("init", "-q")
    (repo / "a.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: x}\n")
    (repo / "b.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b, namespace: x}\n")
    git("add", "-A")
    git("commit", "-q", "-m", "two files")
    oid = git("rev-parse", "HEAD:b.yaml")
    (repo / ".git" / "objects" / oid[:2] / oid[2:]).unlink()  # a damaged or partial clone
    items = list(scan_tree(GitTree(str(repo), git("rev-parse", "HEAD")), Origin("s", "git"), TreeOptions(),
                           SourceStats()))
    assert [r.identity.name for r in items if isinstance(r, Resource)] == ["a"]
    [error] = [e for e in items if isinstance(e, ErrorRecord)]
    assert error.location.path == "b.yaml" and "missing from the clone" in error.message


def test_a_file_read_again_after_its_announced_reads_needs_no_request_to_git(tmp_path: Path) -> None:
    from scanner.sources import git_tree

    repo = tmp_path / "repo"
    repo.mkdir()
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@e",
           "HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}

    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True,
                              env=env).stdout.strip()

    git("init", "-q")
    for name in "abc":
        (repo / f"{name}.yaml").write_text(f"kind: ConfigMap\nmetadata: {{name: {name}}}\n")
    git("add", "-A")
    git("commit", "-q", "-m", "three files")
    git("gc", "-q")  # packed: read through git cat-file
    tree = git_tree.GitTree(str(repo), git("rev-parse", "HEAD"))
    requests: list[list[str]] = []
    real = git_tree.BlobReader.read

    def counted(self: git_tree.BlobReader, oids: list[str]) -> list[bytes | None]:
        requests.append(list(oids))
        return real(self, oids)

    paths = [str(repo / f"{name}.yaml") for name in "abc"]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(git_tree.BlobReader, "read", counted)
        tree.prefetch(paths, 1 << 20)
        first = [tree.read(p) for p in paths]
        again = [tree.read(p) for p in reversed(paths)]
    tree.close()
    assert first == again[::-1] and first[0].startswith(b"kind: ConfigMap")
    assert len(requests) == 1 and len(requests[0]) == 3  # one batch; the second reads come from memory
