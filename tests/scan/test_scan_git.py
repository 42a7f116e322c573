"""The Git sources of ``scanner scan`` fetched by a forked process while the scan starts."""

from __future__ import annotations

import dataclasses
import datetime
import os
import pathlib
import signal
import subprocess
from collections.abc import Callable

import pytest

from scanner.cli import main
from scanner.config import load_config
from scanner.errors import GitError
from scanner.scan import forked
from scanner.scan import git_prefetch as scan_git
from scanner.scan.git_prefetch import start_git_prefetch
from scanner.sources.git import GitSource
from scanner.sources.git_tree import GitTree

from .conftest import Project, pod


@pytest.fixture(autouse=True)
def alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """No other thread in this process (a thread pool an earlier test left does not count)."""
    monkeypatch.setattr(forked.threading, "active_count", lambda: 1)


def _head(repo: pathlib.Path) -> str:
    return subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True,
                          check=True).stdout.strip()


def test_prefetch_hands_the_scan_the_clone_its_commit_and_listing(project: Project) -> None:
    project.commit({"apps/a.yaml": pod("a", "x"), "apps/b.yaml": pod("b", None)})
    config = load_config(str(project.config()))
    prefetch = start_git_prefetch(config)
    assert prefetch is not None
    try:
        path, commit, on_disk = GitSource("gitops", scan_git.git_options(config.sources[0].git, config),
                                          prefetch.prepared("gitops")).prepare()
    finally:
        prefetch.close()
    assert (commit.sha, commit.ref, on_disk) == (_head(project.repo), "main", False)
    # a standard time zone: the outcome crosses processes without GitPython's classes
    assert type(commit.committed_at.tzinfo) is datetime.timezone
    assert (pathlib.Path(path) / ".git" / "scanner-listing").read_bytes().startswith(commit.sha.encode() + b"\n")
    assert sorted(GitTree(path, commit.sha).blobs) == ["apps/a.yaml", "apps/b.yaml"]


FLUX_KUSTOMIZATION = """apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: apps, namespace: flux-system}
spec: {path: ./apps, sourceRef: {kind: GitRepository, name: flux-system}}
"""


@pytest.mark.parametrize(("files", "marked"), [
    pytest.param({"apps/a.yaml": pod("a", "x")}, False, id="plain-manifests"),
    pytest.param({"apps/a.yaml": pod("a", "x"), "clusters/apps.yaml": FLUX_KUSTOMIZATION}, True, id="a-flux-object"),
])
def test_prefetch_tells_whether_the_commit_names_a_gitops_api_group(project: Project, files: dict[str, str],
                                                                     marked: bool) -> None:
    project.commit(files)
    config = load_config(str(project.config()))
    prefetch = start_git_prefetch(config)
    assert prefetch is not None
    try:
        assert prefetch.names_gitops("gitops") is None  # (nothing reported yet: not known)
        prefetch.result("gitops")
        assert prefetch.names_gitops("gitops") is marked
    finally:
        prefetch.close()


def test_prefetch_does_not_search_a_source_with_gitops_off(project: Project) -> None:
    project.commit({"clusters/apps.yaml": FLUX_KUSTOMIZATION})
    loaded = load_config(str(project.config()))
    config = dataclasses.replace(loaded, sources=type(loaded.sources)([dataclasses.replace(loaded.sources[0],
                                                                                           gitops="off")]))
    prefetch = start_git_prefetch(config)
    assert prefetch is not None
    try:
        prefetch.result("gitops")
        assert prefetch.names_gitops("gitops") is None
    finally:
        prefetch.close()


def test_saved_listing_serves_only_its_own_commit(project: Project) -> None:
    project.commit({"apps/a.yaml": pod("a", "x")})
    first = _head(project.repo)
    project.commit({"apps/b.yaml": pod("b", "x")})
    config = load_config(str(project.config()))
    prefetch = start_git_prefetch(config)
    assert prefetch is not None
    path = prefetch.result("gitops")[0]
    prefetch.close()
    assert sorted(GitTree(path, _head(project.repo)).blobs) == ["apps/a.yaml", "apps/b.yaml"]
    assert sorted(GitTree(path, first).blobs) == ["apps/a.yaml"]  # listed afresh


@pytest.mark.parametrize(("case", "started"), [
    ("unknown-source-named", False),
    ("only-other-sources-named", False),
    ("a-thread-runs", False),
    ("git-source-named", True),
], ids=lambda value: value if isinstance(value, str) else None)
def test_prefetch_starts_only_for_git_sources_and_without_threads(project: Project, tmp_path: pathlib.Path,
                                                                  monkeypatch: pytest.MonkeyPatch,
                                                                  case: str, started: bool) -> None:
    project.commit({"apps/a.yaml": pod("a", "x")})
    (tmp_path / "export.yaml").write_text(pod("e", "x"))
    config = load_config(str(project.config(extra_sources=f"- name: cluster\n  export: {{path: {tmp_path}/export.yaml}}")))
    named = {"unknown-source-named": ["gitops", "nope"], "only-other-sources-named": ["cluster"]}.get(case, [])
    if case == "a-thread-runs":
        monkeypatch.setattr(forked.threading, "active_count", lambda: 2)
    prefetch = start_git_prefetch(config, named)
    assert (prefetch is not None) == started
    if prefetch is not None:
        prefetch.close()


def test_prefetch_reports_a_fetch_error_as_the_scan_would(project: Project) -> None:
    config = load_config(str(project.config(extra_sources="- name: broken\n  git: {url: does-not-exist}")))
    options = scan_git.git_options(config.sources[1].git, config)
    with pytest.raises(GitError) as here:
        GitSource("broken", options).prepare()
    prefetch = start_git_prefetch(config, ["broken"])
    assert prefetch is not None
    try:
        with pytest.raises(GitError) as there:
            prefetch.result("broken")
    finally:
        prefetch.close()
    assert (there.value.message, there.value.location) == (here.value.message, here.value.location)
    assert "does not exist" in there.value.message


def test_prefetch_whose_process_dies_fails_the_source_clearly(project: Project,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    project.commit({"apps/a.yaml": pod("a", "x")})
    config = load_config(str(project.config()))
    monkeypatch.setattr(scan_git, "_fetch", lambda name, options, gitops: os.kill(os.getpid(), signal.SIGKILL))
    prefetch = start_git_prefetch(config)
    assert prefetch is not None
    try:
        with pytest.raises(GitError, match="clone/fetch of source gitops failed: the process fetching it "
                                           "was killed by signal 9"):
            prefetch.result("gitops")
    finally:
        prefetch.close()


@pytest.fixture
def fetchers(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> Callable[[], list[int]]:
    """The processes that fetched a Git source, one per fetch (read after the scan)."""
    fetched_by = tmp_path / "fetched-by"
    fetch = GitSource._fetch

    def recording(self: GitSource) -> object:
        with fetched_by.open("a") as f:
            f.write(f"{os.getpid()}\n")
        return fetch(self)

    monkeypatch.setattr(GitSource, "_fetch", recording)
    return lambda: [int(pid) for pid in fetched_by.read_text().split()]


def test_scan_command_fetches_in_the_child_and_scans_its_commit(project: Project, fetchers: Callable[[], list[int]],
                                                               capsys) -> None:
    project.commit({"apps/a.yaml": pod("a", "x"), "apps/b.yaml": pod("b", None)})
    assert main(["scan", "--config", str(project.config()), "-q"]) == 1
    assert "resources: 2 distinct" in capsys.readouterr().out
    pids = fetchers()
    assert len(pids) == 1 and pids[0] != os.getpid()


def test_prefetch_whose_listing_cannot_be_saved_still_hands_over_the_clone(project: Project,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    project.commit({"apps/a.yaml": pod("a", "x")})
    config = load_config(str(project.config()))

    def full_disk(path: str, sha: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("scanner.sources.git_tree.save_listing", full_disk)
    prefetch = start_git_prefetch(config)
    assert prefetch is not None
    try:
        path, commit, _ = prefetch.result("gitops")
    finally:
        prefetch.close()
    assert not (pathlib.Path(path) / ".git" / "scanner-listing").exists()
    assert sorted(GitTree(path, commit.sha).blobs) == ["apps/a.yaml"]  # listed by the reader itself


SELECTOR_POLICY = """\
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: team-namespaces}
spec:
  validationFailureAction: Audit
  rules:
  - name: team
    match: {any: [{resources: {kinds: [Pod], namespaceSelector: {matchLabels: {tier: apps}}}}]}
    validate:
      message: team label required
      pattern: {metadata: {labels: {team: "?*"}}}
"""


def test_scan_reading_the_sources_twice_fetches_once(project: Project, fetchers: Callable[[], list[int]],
                                                     capsys) -> None:
    """A policy with a namespaceSelector makes the scan read every source for look-ups first:
    both reads take the one fetch of the Git source."""
    namespace = "apiVersion: v1\nkind: Namespace\nmetadata: {name: apps, labels: {tier: apps}}\n"
    project.commit({"ns.yaml": namespace, "apps/a.yaml": pod("a", "x"), "apps/b.yaml": pod("b", None)})
    (project.base / "policies" / "team-namespaces.yaml").write_text(SELECTOR_POLICY)
    assert main(["scan", "--config", str(project.config()), "-q"]) == 1
    out = capsys.readouterr().out
    assert "resources: 3 distinct" in out and "pass 2, fail 2" in out  # both policies select the two pods
    assert len(fetchers()) == 1
