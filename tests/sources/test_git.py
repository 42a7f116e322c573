from __future__ import annotations

import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from scanner.sources.git import GitOptions, GitSource, redact
from scanner.sources.git_tree import BlobReader, check_out, forget_checkout
from scanner.sources.provenance import ErrorRecord, Resource
from scanner.sources.tree import TreeOptions
from scanner.yamldoc import YamlLimits
from tests.sources.conftest import overlay_folder

from .conftest import deployment


def _scan(source: GitSource):
    items = list(source.iter_items())
    resources = {r.provenance.path: r for r in items if isinstance(r, Resource)}
    errors = [e for e in items if isinstance(e, ErrorRecord)]
    return resources, errors


@pytest.fixture
def origin(make_repo):
    repo = make_repo()
    repo.write("apps/a.yaml", deployment("a", "team"))
    repo.write("apps/b.yaml", deployment("b"))
    first = repo.commit("first", "2026-01-01T00:00:00Z")
    repo.git("tag", "v1")
    repo.git("tag", "moving")
    repo.git("checkout", "-q", "-b", "feature")
    repo.write("apps/feature.yaml", deployment("feature"))
    repo.commit("feature", "2026-01-02T00:00:00Z")
    repo.git("checkout", "-q", "main")
    repo.write("apps/c.yaml", deployment("c"))
    repo.write("apps/broken.yaml", "a: [\n")
    repo.write("apps/bomb.yaml", "a: &a [x,x,x,x,x,x,x,x,x,x]\n"
               "b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\n"
               "c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]\n")
    second = repo.commit("second", "2026-01-03T00:00:00Z")
    repo.first, repo.second = first, second
    return repo


def _source(tmp_path, url, ref=None, tree_exclude=(), **kw) -> GitSource:
    tree = TreeOptions(exclude=tree_exclude, limits=YamlLimits(max_nodes=5000))
    return GitSource("gitops", GitOptions(url, ref, cache_dir=str(tmp_path / "cache"),
                                          tree=tree, **kw))


@pytest.mark.parametrize(
    ("ref", "files"),
    [
        pytest.param(None, {"apps/a.yaml", "apps/b.yaml", "apps/c.yaml"}, id="default-branch"),
        pytest.param("main", {"apps/a.yaml", "apps/b.yaml", "apps/c.yaml"}, id="branch"),
        pytest.param("feature", {"apps/a.yaml", "apps/b.yaml", "apps/feature.yaml"},
                     id="other-branch"),
        pytest.param("v1", {"apps/a.yaml", "apps/b.yaml"}, id="tag"),
    ],
)
def test_git_source_checks_out_ref(tmp_path, origin, ref, files):
    resources, _ = _scan(_source(tmp_path, str(origin.path), ref))
    assert set(resources) == files


def test_git_source_checks_out_commit_and_records_it(tmp_path, origin):
    source = _source(tmp_path, f"file://{origin.path}", origin.first[:12])
    resources, errors = _scan(source)
    assert set(resources) == {"apps/a.yaml", "apps/b.yaml"} and errors == []
    assert source.stats.commit is not None and source.stats.commit.sha == origin.first
    assert source.stats.commit.committed_at == datetime(2026, 1, 1, tzinfo=UTC)
    a = resources["apps/a.yaml"]
    assert (a.provenance.source, a.provenance.source_type, a.provenance.commit,
            a.provenance.document, a.provenance.line) == ("gitops", "git", origin.first, 0, 1)
    assert a.identity.namespace == "team" and resources["apps/b.yaml"].namespace_defaulted


def test_git_source_bad_files_become_records_and_keep_others(tmp_path, origin):
    resources, errors = _scan(_source(tmp_path, str(origin.path), "main"))
    assert {(e.location.path, e.kind) for e in errors} == {("apps/broken.yaml", "yaml"),
                                                           ("apps/bomb.yaml", "limit")}
    assert next(e for e in errors if e.kind == "yaml").location.line == 2
    assert "apps/c.yaml" in resources


def test_git_source_fetches_changes_and_moved_tag(tmp_path, origin):
    cache = tmp_path / "cache"
    _scan(_source(tmp_path, str(origin.path), "moving"))
    clone = next(cache.iterdir())
    origin.remove("apps/b.yaml")
    origin.write("apps/d.yaml", deployment("d"))
    third = origin.commit("third")
    origin.git("tag", "-f", "moving")
    source = _source(tmp_path, str(origin.path), "moving")
    resources, _ = _scan(source)
    assert set(resources) == {"apps/a.yaml", "apps/c.yaml", "apps/d.yaml"}
    assert source.stats.commit.sha == third
    assert next(cache.iterdir()) == clone  # fetched into the same clone


def test_git_source_shallow_clone(tmp_path, origin):
    source = _source(tmp_path, f"file://{origin.path}", "v1", shallow=True)
    resources, _ = _scan(source)
    assert set(resources) == {"apps/a.yaml", "apps/b.yaml"}
    assert source.stats.commit.sha == origin.first


@pytest.mark.parametrize(
    ("url", "ref", "message"),
    [
        pytest.param("missing", "main", "clone/fetch failed for missing: fatal: repository 'missing' does not exist",
                     id="unreachable-repository"),
        pytest.param(None, "no-such-ref", "ref 'no-such-ref' not found", id="missing-ref"),
    ],
)
def test_git_source_failure_is_one_record(tmp_path, origin, url, ref, message):
    resources, errors = _scan(_source(tmp_path, url or str(origin.path), ref))
    assert resources == {} and len(errors) == 1 and errors[0].kind == "git"
    assert message in errors[0].message


def test_git_source_never_leaks_credentials(tmp_path, monkeypatch):
    monkeypatch.setenv("SCANNER_TEST_TOKEN", "s3cr3t-token")
    url = "https://user:hunter2@127.0.0.1:9/org/repo.git"
    source = _source(tmp_path, url, "main", token_env="SCANNER_TEST_TOKEN", timeout=10)
    _, errors = _scan(source)
    text = str(errors[0]) + repr(errors[0])
    assert "hunter2" not in text and "s3cr3t" not in text and "https://127.0.0.1:9/org/repo.git" in text
    assert not any("hunter2" in p for p in os.listdir(tmp_path / "cache"))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("https://u:p@h/x", "https://***@h/x", id="userinfo"),
        pytest.param("ssh://git@h/x", "ssh://***@h/x", id="ssh-user"),
        pytest.param("token abc in text", "token *** in text", id="secret-value"),
    ],
)
def test_redact_hides_userinfo_and_secrets(text, expected):
    assert redact(text, ("abc",)) == expected


def test_git_sources_of_one_repository_keep_their_own_clones(tmp_path, origin):
    """Two sources of one URL whose names share their first 40 characters, at different refs,
    both checked out before either is read (as a scan does)."""
    prefix = "kubernetes-manifests-monorepo-environment-"
    old = GitSource(prefix + "production", GitOptions(str(origin.path), "v1", cache_dir=str(tmp_path / "cache")))
    new = GitSource(prefix + "staging", GitOptions(str(origin.path), "main", cache_dir=str(tmp_path / "cache")))
    old_tree, _ = old.checkout()
    new_tree, _ = new.checkout()
    assert old_tree != new_tree
    assert sorted(os.listdir(os.path.join(old_tree, "apps"))) == ["a.yaml", "b.yaml"]


@pytest.mark.parametrize(("ref", "follows"), [
    pytest.param(None, True, id="default-branch"),
    pytest.param("refs/heads/main", True, id="full-branch-ref"),
    pytest.param("main", True, id="branch"),
])
def test_git_source_follows_the_remote_branch_not_the_clone_s(tmp_path, origin, ref, follows):
    _scan(_source(tmp_path, str(origin.path), ref))
    origin.write("apps/e.yaml", deployment("e"))
    third = origin.commit("third")
    source = _source(tmp_path, str(origin.path), ref)
    resources, errors = _scan(source)
    assert errors == [] or all(e.kind != "git" for e in errors)
    assert ("apps/e.yaml" in resources) is follows and source.stats.commit.sha == third


def test_git_source_renamed_branch_is_not_found_nor_read_stale(tmp_path, origin):
    _scan(_source(tmp_path, str(origin.path), "main"))
    origin.git("branch", "-m", "main", "trunk")
    resources, errors = _scan(_source(tmp_path, str(origin.path), "main"))
    assert resources == {} and [e.kind for e in errors] == ["git"]
    assert "ref 'main' not found" in errors[0].message
    default, _ = _scan(_source(tmp_path, str(origin.path)))  # the default branch is now trunk
    assert "apps/c.yaml" in default


@pytest.fixture
def with_submodules(make_repo, tmp_path, monkeypatch):
    """A repository with two submodules (local paths: file transport allowed for the test)."""
    config = tmp_path / "gitconfig"
    config.write_text('[protocol "file"]\n\tallow = always\n')
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    shared = make_repo("shared")
    shared.write("base/shared.yaml", deployment("shared"))
    shared.commit("shared")
    vendor = make_repo("vendor")
    vendor.write("chart.yaml", deployment("vendor"))
    vendor.commit("vendor")
    repo = make_repo()
    repo.write("apps/a.yaml", deployment("a"))
    repo.git("-c", "protocol.file.allow=always", "submodule", "add", "-q", str(shared.path), "apps/shared")
    repo.git("-c", "protocol.file.allow=always", "submodule", "add", "-q", str(vendor.path), "third-party/vendor")
    repo.commit("with submodules")
    return repo


def test_git_source_counts_submodules_it_does_not_check_out(tmp_path, with_submodules):
    source = _source(tmp_path, str(with_submodules.path), tree_exclude=("third-party/**",))
    resources, errors = _scan(source)
    assert set(resources) == {"apps/a.yaml"} and errors == []
    assert source.stats.skipped["submodule"] == 1  # third-party/vendor is outside the globs


def test_git_source_checks_out_submodules_when_asked(tmp_path, with_submodules):
    source = _source(tmp_path, str(with_submodules.path), submodules=True)
    for _ in range(2):  # a cached clone gets them again after its clean
        resources, errors = _scan(source)
        assert set(resources) == {"apps/a.yaml", "apps/shared/base/shared.yaml", "third-party/vendor/chart.yaml"}
        assert errors == [] and source.stats.skipped["submodule"] == 0


def _working_files(source: GitSource) -> set[str]:
    root = source.cache_path()
    return {os.path.relpath(os.path.join(d, f), root) for d, dirs, files in os.walk(root)
            for f in files if ".git" not in os.path.relpath(d, root).split(os.sep)}


def test_git_source_reads_the_commit_from_its_objects_without_a_checkout(tmp_path, origin):
    """A commit is read from the clone's objects; a stale working tree (an earlier commit's
    checkout, a stray file) is never read."""
    source = _source(tmp_path, str(origin.path), "v1")
    resources, _ = _scan(source)
    assert set(resources) == {"apps/a.yaml", "apps/b.yaml"} and _working_files(source) == set()
    source.checkout()  # the working tree now holds v1, plus a stray file
    Path(source.cache_path(), "apps", "x.yaml").write_text(deployment("stray"))
    main = _source(tmp_path, str(origin.path), "main")
    resources, errors = _scan(main)
    assert set(resources) == {"apps/a.yaml", "apps/b.yaml", "apps/c.yaml"}
    assert {e.location.path for e in errors} == {"apps/broken.yaml", "apps/bomb.yaml"}
    assert resources["apps/a.yaml"].data["metadata"] == {"name": "a", "namespace": "team"}


GENERATOR = "configMapGenerator: [{name: settings, literals: [mode=%s]}]\n"


def test_git_source_checks_out_the_commit_for_an_overlay_kubectl_renders(tmp_path, make_repo):
    """An overlay left to kubectl needs files on disk: the commit is checked out then, once per
    scan, and again in the next scan for a new commit."""
    repo = make_repo()
    repo.write("apps/a.yaml", deployment("a"))
    repo.write("gen/kustomization.yaml", GENERATOR % "one")
    repo.commit("first")
    for mode in ("one", "two"):
        if mode == "two":
            repo.write("gen/kustomization.yaml", GENERATOR % "two")
            repo.commit("second")
        source = _source(tmp_path, str(repo.path))
        items = list(source.iter_items())
        generated = [i for i in items if isinstance(i, Resource) and overlay_folder(i) == "gen"]
        assert [i.data["data"] for i in generated] == [{"mode": mode}], items
        assert [(i.provenance.path, i.provenance.line) for i in generated] == [("gen/kustomization.yaml", 1)]
        assert {"apps/a.yaml", "gen/kustomization.yaml"} <= _working_files(source)


def test_git_source_with_symbolic_links_reads_them_as_the_file_system_does(tmp_path, make_repo):
    repo = make_repo()
    repo.write("apps/a.yaml", deployment("a"))
    (repo.path / "apps" / "linked.yaml").symlink_to("a.yaml")
    (repo.path / "apps" / "outside.yaml").symlink_to("/etc/hostname")
    (repo.path / "linked-apps").symlink_to("apps")
    repo.commit("links")
    source = _source(tmp_path, str(repo.path))
    resources, errors = _scan(source)
    assert set(resources) == {"apps/a.yaml", "apps/linked.yaml"}
    assert [(e.kind, e.message, e.location.path) for e in errors] == [
        ("read", "cannot read file: a symbolic link leading outside the source", "apps/outside.yaml")]
    assert source.stats.skipped == {"symlinked-directory": 1}


def test_working_tree_is_checked_out_once_per_scan(tmp_path, origin):
    path, commit, on_disk = _source(tmp_path, str(origin.path), "v1").prepare()
    assert not on_disk and not os.path.exists(os.path.join(path, "apps"))
    check_out(path, commit.sha)
    stray = Path(path, "apps", "stray.yaml")
    stray.write_text(deployment("stray"))
    check_out(path, commit.sha)  # another worker of the same scan: the tree is ready
    assert stray.exists()
    forget_checkout(path)  # the next scan
    check_out(path, commit.sha)
    assert not stray.exists() and sorted(os.listdir(os.path.join(path, "apps"))) == ["a.yaml", "b.yaml"]


def test_git_source_reads_packed_objects_in_batches(tmp_path, make_repo):
    """More files than one batch, files of equal content, and a file over the size limit (never read)."""
    repo = make_repo()
    for i in range(300):
        repo.write(f"apps/d{i:03}.yaml", deployment(f"d{i}"))
        repo.write(f"copies/d{i:03}.yaml", deployment("same"))
    repo.write("apps/huge.yaml", deployment("huge") + "# " + "x" * 5000 + "\n")
    repo.write("base/kustomization.yaml", "resources: [web.yaml]\n")
    repo.write("base/web.yaml", deployment("web"))
    repo.write("prod/kustomization.yaml", "namespace: prod\nresources: [../base]\n")
    repo.commit("many")
    repo.git("repack", "-a", "-d", "-q")
    repo.git("prune-packed")
    tree = TreeOptions(limits=YamlLimits(max_file_bytes=4000))
    source = GitSource("gitops", GitOptions(str(repo.path), cache_dir=str(tmp_path / "cache"), tree=tree))
    resources, errors = _scan(source)
    assert len(resources) == 601 and resources["apps/d299.yaml"].data["metadata"]["name"] == "d299"
    prod = resources["base/web.yaml"]  # rendered from the overlay prod, defined in the base
    assert prod.data["metadata"] == {"name": "web", "namespace": "prod"}
    assert (overlay_folder(prod), prod.provenance.line) == ("prod", 1)
    assert {r.data["metadata"]["name"] for p, r in resources.items() if p.startswith("copies/")} == {"same"}
    assert [(e.kind, e.location.path) for e in errors] == [("limit", "apps/huge.yaml")]


def test_blob_reader_answers_a_missing_object_and_goes_on(make_repo):
    repo = make_repo()
    repo.write("a.yaml", "a: 1\n")
    repo.commit("one")
    oid = repo.git("rev-parse", "HEAD:a.yaml")
    reader = BlobReader(str(repo.path))
    try:
        assert reader.read(["0" * 40, oid, oid]) == [None, b"a: 1\n", b"a: 1\n"]
    finally:
        reader.close()


def test_git_source_without_the_git_command_is_a_source_error(tmp_path, origin):
    code = ("from scanner.sources.git import GitOptions, GitSource\n"
            f"source = GitSource('g', GitOptions({str(origin.path)!r}, cache_dir={str(tmp_path / 'cache')!r}))\n"
            "print([(item.kind, item.message) for item in source.iter_items()])\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_PYTHON")}
    env["PATH"] = str(tmp_path / "nothing-here")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[('git', 'the git command is not installed or not on PATH (Git sources need it)')]"
