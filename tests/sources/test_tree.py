from __future__ import annotations

import errno
import os
import subprocess

import pytest

from scanner.sources.directory import DirectorySource
from scanner.sources.documents import Origin
from scanner.sources.export import ExportSource
from scanner.sources.file_tree import DiskTree
from scanner.sources.git import GitOptions, GitSource
from scanner.sources.kustomize.plan import plan
from scanner.sources.paths import PathFilter, Shard, glob_match
from scanner.sources.provenance import ErrorRecord, Resource, SourceStats
from scanner.sources.tree import TreeOptions, scan_tree
from scanner.yamldoc import iter_documents
from tests.sources.conftest import overlay_folder

from .conftest import TREE_KINDS, deployment, tree_of

KUSTOMIZATION = "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n"


def _items(source):
    items = list(source.iter_items())
    return ([i for i in items if isinstance(i, Resource)],
            [i for i in items if isinstance(i, ErrorRecord)])


@pytest.fixture
def gitops(make_repo):
    repo = make_repo()
    repo.write("app/base/kustomization.yaml", KUSTOMIZATION + "resources: [deploy.yaml]\n")
    repo.write("app/base/deploy.yaml", deployment("web"))
    repo.write("app/base/stray-old.yaml", "a: [\n")
    for env in ("dev", "prod"):
        repo.write(f"app/overlays/{env}/kustomization.yaml", KUSTOMIZATION +
                   f"namespace: web-{env}\nresources: [../../base]\npatches: [{{path: r.yaml}}]\n")
        repo.write(f"app/overlays/{env}/r.yaml", "apiVersion: apps/v1\nkind: Deployment\n"
                   "metadata: {name: web}\nspec: {replicas: 3}\n")
    repo.write("broken/kustomization.yaml", KUSTOMIZATION + "resources: [missing.yaml]\n")
    repo.write("plain/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata:\n")
    repo.write(".github/workflows/ci.yaml", "on: push\njobs: {}\n")
    repo.commit("init")
    return repo


def test_tree_renders_overlays_once_with_overlay_provenance(tmp_path, gitops):
    source = GitSource("g", GitOptions(str(gitops.path), "main", cache_dir=str(tmp_path / "c")))
    resources, errors = _items(source)
    found = {(r.provenance.path, r.provenance.line, overlay_folder(r), r.provenance.patches,
              r.provenance.rendered_by, r.identity.namespace, r.identity.name) for r in resources}
    assert found == {("app/base/deploy.yaml", 1, "app/overlays/dev", ("app/overlays/dev/r.yaml",),
                      "kustomize", "web-dev", "web"),
                     ("app/base/deploy.yaml", 1, "app/overlays/prod", ("app/overlays/prod/r.yaml",),
                      "kustomize", "web-prod", "web"),
                     ("plain/cm.yaml", 1, None, (), None, "default", "c")}
    assert all("scanner.kyverno-batch/overlay" not in str(r.data) for r in resources)
    assert {(e.kind, e.location.path) for e in errors} == {
        ("render", "broken/kustomization.yaml"), ("yaml", "app/base/stray-old.yaml")}
    cm = next(r for r in resources if r.identity.kind == "ConfigMap")
    assert cm.data["data"] == {} and source.stats.skipped["not-kubernetes"] == 1


@pytest.mark.parametrize("count", [1, 2, 3, 5])
def test_tree_shards_read_every_resource_and_error_once(tmp_path, gitops, count):
    whole = GitSource("g", GitOptions(str(gitops.path), "main", cache_dir=str(tmp_path / "c")))
    root, _ = whole.checkout()
    expected = _items(whole)
    parts = ([], [])
    for index in range(count):
        tree = TreeOptions(shard=Shard(index, count))
        for found, part in zip(_items(DirectorySource("g", root, tree)), parts, strict=True):
            part.extend(found)

    def key(item):
        return (item.provenance.path, item.identity.name) if isinstance(item, Resource) else item.location.path

    for found, part in zip(expected, parts, strict=True):
        assert sorted(map(key, part)) == sorted(map(key, found))


@pytest.mark.parametrize("count", [2, 3])
def test_tree_shards_of_one_commit_in_one_process_read_as_a_whole_scan_does(tmp_path, gitops, count):
    """The shards of a commit read in one process share the files parsed, the bases built and
    the overlays checked: every shard still gives exactly what a whole scan gives, and a shard
    changing what it was given changes nothing of the next one's."""
    import dataclasses

    def options(shard: Shard) -> GitOptions:
        return GitOptions(str(gitops.path), "main", cache_dir=str(tmp_path / "c"),
                          tree=TreeOptions(shard=shard))

    whole = _items(GitSource("g", options(Shard(0, 1))))
    for resource in whole[0]:  # what a consumer may do to what it is given
        resource.data.setdefault("metadata", {})["labels"] = {"changed": "by a consumer"}
    again = _items(GitSource("g", options(Shard(0, 1))))
    parts = [_items(GitSource("g", options(Shard(index, count)))) for index in range(count)]

    def key(item):
        if isinstance(item, Resource):
            return (str(item.provenance), item.identity.name, repr(item.data))
        return repr(dataclasses.astuple(item))

    assert "by a consumer" not in repr([r.data for r in again[0]])
    for position in (0, 1):
        assert sorted(key(i) for part in parts for i in part[position]) == sorted(map(key, again[position]))


@pytest.mark.parametrize(("total", "count"), [(0, 3), (1, 3), (7, 3), (180, 6), (5, 5), (4, 7)])
def test_shard_blocks_partition_positions_in_order(total, count):
    owners = [[i for i in range(count) if Shard(i, count).owns_block(p, total)] for p in range(total)]
    assert all(len(o) == 1 for o in owners)
    assert [o[0] for o in owners] == sorted(o[0] for o in owners)  # contiguous blocks


def test_tree_without_renderer_reports_each_overlay_and_reads_raw(tmp_path, gitops, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    resources, errors = _items(DirectorySource("d", str(gitops.path)))
    missing = sorted(e.location.path for e in errors if e.kind == "renderer-missing")
    assert missing == ["app/overlays/dev/kustomization.yaml",
                       "app/overlays/prod/kustomization.yaml", "broken/kustomization.yaml"]
    assert sorted(r.provenance.path for r in resources) == ["app/base/deploy.yaml",
                                                            "plain/cm.yaml"]


def test_tree_kustomize_off_is_silent(gitops):
    resources, errors = _items(DirectorySource("d", str(gitops.path),
                                               TreeOptions(kustomize="off")))
    assert [e.kind for e in errors] == ["yaml"] and len(resources) == 2


@pytest.mark.parametrize(
    ("include", "exclude", "expected"),
    [
        pytest.param((), (), {"a.yaml", "x/b.yml", "x/y/c.json"}, id="everything"),
        pytest.param(("x/**",), (), {"x/b.yml", "x/y/c.json"}, id="include-subtree"),
        pytest.param(("**/*.json",), (), {"x/y/c.json"}, id="double-star-any-depth"),
        pytest.param((), ("x/**/*.json",), {"a.yaml", "x/b.yml"}, id="exclude-nested"),
        pytest.param(("./x/**",), (), {"x/b.yml", "x/y/c.json"}, id="include-dot-slash"),
        pytest.param(("x",), (), {"x/b.yml", "x/y/c.json"}, id="include-folder-name"),
        pytest.param((), ("x/y",), {"a.yaml", "x/b.yml"}, id="exclude-folder-name"),
        pytest.param((), ("./x/y/",), {"a.yaml", "x/b.yml"}, id="exclude-folder-slash"),
        pytest.param((), ("x/*",), {"a.yaml", "x/y/c.json"}, id="star-is-no-folder"),
    ],
)
def test_tree_globs_select_files(tmp_path, include, exclude, expected):
    for rel in ("a.yaml", "x/b.yml", "x/y/c.json", "x/notes.txt"):
        p = tmp_path / "t" / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text('{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "n"}}')
    resources, _ = _items(DirectorySource("d", str(tmp_path / "t"),
                                          TreeOptions(include=include, exclude=exclude)))
    assert {r.provenance.path for r in resources} == expected


@pytest.mark.parametrize(
    ("pattern", "path", "matches"),
    [
        pytest.param("a/**/b.yaml", "a/b.yaml", True, id="double-star-zero-dirs"),
        pytest.param("a/*.yaml", "a/x/b.yaml", False, id="star-stays-in-segment"),
        pytest.param("**", "deep/er/f.json", True, id="double-star-alone"),
        pytest.param("./apps/**", "apps/a/x.yaml", True, id="dot-slash-stripped"),
        pytest.param("/apps/x.yaml", "apps/x.yaml", True, id="slash-stripped"),
        pytest.param("./", "apps/x.yaml", True, id="root-folder"),
        pytest.param("apps/a", "apps/a/b/x.yaml", True, id="literal-folder"),
        pytest.param("apps/a", "apps/ab/x.yaml", False, id="literal-folder-whole-segment"),
        pytest.param("apps/a.yaml", "apps/a.yaml", True, id="literal-file"),
        pytest.param("apps/a/", "apps/a/x.yaml", True, id="trailing-slash-folder"),
        pytest.param("apps/a/", "apps/a", False, id="trailing-slash-not-a-file"),
        pytest.param("apps/*/", "apps/a/b/x.yaml", True, id="glob-folder"),
        pytest.param("apps/*/", "apps/x.yaml", False, id="glob-folder-not-its-files"),
        pytest.param("*.yaml", "a/x.yaml", False, id="star-top-level-only"),
        pytest.param("**/*.yaml", "a/b/x.yaml", True, id="double-star-every-level"),
    ],
)
def test_glob_match(pattern, path, matches):
    assert glob_match(pattern, path) is matches


def test_tree_symlinks_leaving_the_root_are_not_followed(tmp_path):
    outside = tmp_path / "secret.yaml"
    outside.write_text(deployment("outside"))
    root = tmp_path / "root"
    root.mkdir()
    (root / "in.yaml").write_text(deployment("in"))
    os.symlink(outside, root / "link.yaml")
    os.symlink(tmp_path, root / "dirlink")
    os.symlink(root / "in.yaml", root / "inside-link.yaml")
    source = DirectorySource("d", str(root))
    resources, errors = _items(source)
    assert sorted(r.provenance.path for r in resources) == ["in.yaml", "inside-link.yaml"]
    assert sorted((e.location.path, e.message) for e in errors) == [
        ("dirlink", "cannot read folder: a symbolic link leading outside the source"),
        ("link.yaml", "cannot read file: a symbolic link leading outside the source")]


@pytest.mark.parametrize("special", [
    pytest.param("fifo", id="fifo-named-yaml"),
    pytest.param("link-to-fifo", id="link-to-fifo-named-yaml"),
    pytest.param("socket", id="socket-named-yaml"),
])
def test_tree_reads_only_regular_files_and_records_the_others(tmp_path, special):
    """A FIFO named *.yaml would block the scan forever when opened: it is not read, and said so."""
    import socket

    root = tmp_path / "root"
    root.mkdir()
    (root / "a.yaml").write_text(deployment("a"))
    (root / "z.yaml").write_text(deployment("z"))
    if special == "socket":
        server = socket.socket(socket.AF_UNIX)
        server.bind(str(root / "odd.yaml"))
        kind = "a socket"
    else:
        os.mkfifo(root / ("odd.yaml" if special == "fifo" else "fifo"))
        if special == "link-to-fifo":
            os.symlink(root / "fifo", root / "odd.yaml")
        kind = "a FIFO"
    source = DirectorySource("d", str(root))
    resources, errors = _items(source)
    assert sorted(r.provenance.path for r in resources) == ["a.yaml", "z.yaml"]
    assert [(e.kind, e.location.path, e.message) for e in errors] == [
        ("read", "odd.yaml", f"cannot read file: not a regular file ({kind})")]


@pytest.mark.parametrize(("relpath", "message"), [
    pytest.param("../outside.yaml", "leads outside the source", id="dot-dot-leaves-the-root"),
    pytest.param("linked/outside.yaml", "leads outside the source", id="linked-folder-leaves-the-root"),
    pytest.param("link.yaml", "leads outside the source", id="linked-file-leaves-the-root"),
    pytest.param("fifo.yaml", "not a regular file", id="fifo-is-not-opened-for-reading"),
])
def test_disk_tree_reads_only_regular_files_inside_its_root(tmp_path, relpath, message):
    (tmp_path / "outside.yaml").write_text("secret: 1\n")
    root = tmp_path / "root"
    root.mkdir()
    os.symlink(tmp_path, root / "linked")
    os.symlink(tmp_path / "outside.yaml", root / "link.yaml")
    os.mkfifo(root / "fifo.yaml")
    tree = DiskTree(str(root))
    with pytest.raises(OSError, match=message):
        tree.read(os.path.join(str(root), relpath))


def _kubectl(*args: str) -> str:
    return subprocess.run(["kubectl", *args, "--dry-run=client", "-o", "yaml"], check=True,
                          capture_output=True, text=True).stdout


def test_export_source_reads_kubectl_output_and_lists(tmp_path):
    (tmp_path / "deploy.yaml").write_text(_kubectl("create", "deployment", "x", "--image=nginx"))
    (tmp_path / "ns.yaml").write_text(_kubectl("create", "namespace", "team"))
    (tmp_path / "list.yaml").write_text(
        "apiVersion: v1\nitems:\n- apiVersion: v1\n  kind: Pod\n  metadata:\n    name: p\n"
        "    namespace: prod\n    uid: u-1\n    labels:\n  status: {phase: Running}\n"
        "- just-a-string\nkind: List\nmetadata:\n  resourceVersion: ''\n")
    resources, errors = _items(ExportSource("cluster", [str(tmp_path)]))
    by_name = {r.identity.name: r for r in resources}
    assert set(by_name) == {"x", "team", "p"}
    assert by_name["x"].identity.namespace == "default"
    assert by_name["team"].identity.namespace is None
    pod = by_name["p"]
    assert (pod.provenance.item, pod.provenance.line, pod.identity.uid) == (0, 3, "u-1")
    assert pod.data["status"] == {"phase": "Running"} and pod.data["metadata"]["labels"] == {}
    assert [(e.kind, e.location.line) for e in errors] == [("manifest", 11)]


def _tree(root, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


@pytest.mark.parametrize(
    ("exclude", "excluded"),
    [
        pytest.param(("a",), True, id="folder-name"),
        pytest.param(("./a/",), True, id="trailing-slash"),
        pytest.param(("**/a/**",), True, id="double-star"),
        pytest.param(("a/*",), False, id="star-keeps-subfolders"),
        pytest.param(("a/**/*.yaml",), False, id="files-only"),
        pytest.param(("b",), False, id="other-folder"),
    ],
)
def test_path_filter_excludes_whole_folders(exclude, excluded):
    assert PathFilter((), exclude).excludes_folder("a") is excluded


@pytest.mark.parametrize(("include", "folder", "excluded"), [
    pytest.param(("examples/gitops/**",), "scanner", True, id="elsewhere"),
    pytest.param(("examples/gitops/**",), "examples", False, id="on-the-way"),
    pytest.param(("examples/gitops/**",), "examples/gitops/apps", False, id="inside"),
    pytest.param(("examples/*/x.yaml",), "examples/any", False, id="glob-segment"),
    pytest.param(("**/*.yaml",), "anything", False, id="leading-double-star"),
    pytest.param(("apps/a.yaml", "./lib/"), "lib/x", False, id="second-pattern"),
    pytest.param(("apps/a.yaml",), "apps", False, id="file-in-folder"),
])
def test_path_filter_skips_folders_no_include_reaches(include, folder, excluded):
    assert PathFilter(include, ()).excludes_folder(folder) is excluded


def test_export_source_honours_include_and_exclude(tmp_path):
    """A folder's files are matched by their path inside it, an exported file by its base name."""
    cm = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s}\n"
    _tree(tmp_path, {"dump/a.yaml": cm % "a", "dump/sub/skipme.yaml": cm % "skip",
                     "dump/sub/b.yaml": cm % "b", "one.yaml": cm % "one", "two.yaml": cm % "two"})
    paths = [str(tmp_path / "dump"), str(tmp_path / "one.yaml"), str(tmp_path / "two.yaml")]
    resources, errors = _items(ExportSource("e", paths, path_filter=PathFilter((), ("**/skipme.yaml", "two.yaml"))))
    assert sorted(r.provenance.path for r in resources) == ["dump/a.yaml", "dump/sub/b.yaml", "one.yaml"]
    resources, _ = _items(ExportSource("e", paths, path_filter=PathFilter(("./sub/", "one.yaml"), ())))
    assert sorted(r.provenance.path for r in resources) == ["dump/sub/b.yaml", "dump/sub/skipme.yaml", "one.yaml"]
    assert errors == []


def test_tree_renders_overlay_with_extensionless_kustomization_like_kubectl(tmp_path):
    _tree(tmp_path, {
        "base/kustomization.yaml": KUSTOMIZATION + "resources: [deploy.yaml]\n",
        "base/deploy.yaml": deployment("web"),
        "prod/Kustomization": KUSTOMIZATION + "namespace: prod\nresources: [../base]\n"
                              "patches: [{path: replicas.yaml}]\n",
        "prod/replicas.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n"
                              "spec: {replicas: 3}\n",
    })
    rendered = subprocess.run(["kubectl", "kustomize", str(tmp_path / "prod")], check=True, capture_output=True,
                              text=True).stdout
    expected = [d.data for d in iter_documents(rendered)]
    source = DirectorySource("d", str(tmp_path))
    resources, errors = _items(source)
    assert errors == []
    assert [(r.provenance.path, overlay_folder(r), r.provenance.patches) for r in resources] == [
        ("base/deploy.yaml", "prod", ("prod/replicas.yaml",))]
    assert [r.data for r in resources] == expected
    assert source.stats.skipped["kustomize-config"] == 2


@pytest.mark.parametrize("kind", ["git", "directory"])
@pytest.mark.parametrize(("kustomization", "read"), [
    pytest.param("resources:\n  - cm.yaml\n bad: [\n", ["beside", "other"], id="not-yaml"),
    pytest.param("resources: 5\n", ["beside", "other"], id="resources-a-number"),
    pytest.param("resources: [cm.yaml]\ncomponents: true\n", ["other"], id="components-a-boolean"),
    pytest.param("resources: [cm.yaml]\npatchesStrategicMerge: 5\n", ["other"], id="patches-a-number"),
    pytest.param("resources: [cm.yaml]\ntransformers: {a: b}\n", ["other"], id="transformers-a-map"),
    pytest.param("resources: [cm.yaml, .]\n", ["other"], id="refers-to-itself"),
])
def test_tree_with_an_invalid_kustomization_reports_it_and_reads_the_rest(tmp_path, make_repo, kind,
                                                                         kustomization, read):
    """A kustomization kustomize refuses is one located error of its overlay; the source's other
    files are still read (the file beside it too, unless the kustomization names it)."""
    files = {"app/kustomization.yaml": KUSTOMIZATION + kustomization,
             "app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: beside}\n",
             "other.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: other}\n"}
    if kind == "git":
        repo = make_repo()
        for rel, text in files.items():
            repo.write(rel, text)
        repo.commit("init")
        source = GitSource("g", GitOptions(str(repo.path), "main", cache_dir=str(tmp_path / "c")))
    else:
        _tree(tmp_path / "d", files)
        source = DirectorySource("d", str(tmp_path / "d"))
    resources, errors = _items(source)
    assert sorted(r.identity.name for r in resources) == read
    assert [(e.kind, e.location.path) for e in errors] == [("render", "app/kustomization.yaml")]


@pytest.fixture
def locked_folders(monkeypatch):
    """Folders named ``locked`` cannot be listed, as without read permission (the tests run as
    root, for whom ``chmod 000`` changes nothing)."""
    scandir = os.scandir

    def fake(path="."):
        if os.path.basename(os.fspath(path)) == "locked":
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), path)
        return scandir(path)

    monkeypatch.setattr(os, "scandir", fake)


def test_tree_unreadable_folder_is_a_read_error_and_the_rest_is_read(tmp_path, locked_folders):
    _tree(tmp_path, {"a.yaml": deployment("a"), "locked/b.yaml": deployment("b"),
                     "x/locked/c.yaml": deployment("c"), "z/d.yaml": deployment("d")})
    source = DirectorySource("d", str(tmp_path))
    resources, errors = _items(source)
    assert sorted(r.provenance.path for r in resources) == ["a.yaml", "z/d.yaml"]
    assert sorted((e.kind, e.location.path, e.message) for e in errors) == [
        ("read", "locked", "cannot read folder: Permission denied"),
        ("read", "x/locked", "cannot read folder: Permission denied")]
    assert source.stats.errors == 2
    _, errors = _items(DirectorySource("d", str(tmp_path), TreeOptions(exclude=("locked/", "x/locked"))))
    assert errors == []  # an excluded folder is not entered


@pytest.mark.parametrize("count", [1, 2])
def test_export_unreadable_folder_is_a_read_error(tmp_path, locked_folders, count):
    _tree(tmp_path, {"dump/a.yaml": deployment("a"), "dump/locked/b.yaml": deployment("b")})
    errors = []
    for index in range(count):
        errors += _items(ExportSource("e", [str(tmp_path / "dump")], shard=Shard(index, count)))[1]
    assert [(e.kind, e.location.path, e.message) for e in errors] == [
        ("read", "dump/locked", "cannot read folder: Permission denied")]


@pytest.mark.parametrize("count", [1, 2])
def test_tree_helm_charts_are_rendered_once_and_their_files_not_read_raw(tmp_path, count):
    files = {
        "apps/web.yaml": deployment("web"),
        "charts/app/Chart.yaml": "apiVersion: v2\nname: app\nversion: 1.0.0\n",
        "charts/app/values.yaml": "replicas: 1\n",
        "charts/app/templates/deploy.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n"
                                            "  name: {{ .Release.Name }}\n",
        "charts/app/charts/sub/Chart.yaml": "apiVersion: v2\nname: sub\nversion: 1.0.0\n",
        "charts/app/charts/sub/templates/svc.yaml": "apiVersion: v1\nkind: Service\n"
                                                    "metadata: {name: '{{ .Release.Name }}-sub'}\n",
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    resources, errors = [], []
    for index in range(count):
        source = DirectorySource("d", str(tmp_path), TreeOptions(shard=Shard(index, count)))
        found, failed = _items(source)
        resources += found
        errors += failed
    assert errors == []
    assert sorted((r.provenance.path, r.provenance.rendered_by, str(r.identity)) for r in resources) == [
        ("apps/web.yaml", None, "Deployment/default/web"),
        ("charts/app/charts/sub/templates/svc.yaml", "helm", "Service/default/app-sub"),
        ("charts/app/templates/deploy.yaml", "helm", "Deployment/default/app"),
    ]


WALKED = ["a.yaml", "a/b.yaml", "a-b.yaml", "a-b/c.yml", "a/Kustomization", "a/README.md", "b/.hidden/x.json",
          "b/a.yaml", "b/z/y/x.yaml", "b/Z.yaml", "c d/e.yaml", "ü/f.yaml"]


@pytest.mark.parametrize(("include", "exclude"), [
    pytest.param((), (), id="everything"),
    pytest.param(("b/**",), ("b/z/",), id="include-and-exclude-folders"),
    pytest.param(("**/*.yaml",), ("a",), id="globs"),
])
def test_git_objects_are_walked_like_the_same_files_on_disk(tmp_path, include, exclude):
    for kind in TREE_KINDS:
        for rel in WALKED:
            (tmp_path / kind / rel).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / kind / rel).write_text(deployment("x"))
    walks = []
    for kind in TREE_KINDS:
        skipped: dict[str, int] = {}
        tree = tree_of(tmp_path / kind, kind)
        walks.append([f.relpath for f in tree.walk(PathFilter(include, exclude), skipped, ("Kustomization",), [])])
    assert walks[0] == walks[1] and len(walks[0]) >= 3


def test_render_plan_lists_what_rendering_its_overlays_reads(tmp_path):
    files = {"base/kustomization.yaml": "resources: [web.yaml, svc.yaml]\n", "base/web.yaml": "", "base/svc.yaml": "",
             "mid/kustomization.yaml": "resources: [../base]\npatches: [{path: p.yaml}]\n", "mid/p.yaml": "",
             "prod/kustomization.yaml": "resources: [../mid, ../base, cm.yaml]\n", "prod/cm.yaml": "",
             "dev/kustomization.yaml": "resources: [../base]\n"}
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    render_plan = plan(DiskTree(str(tmp_path)), list(files))
    assert render_plan.overlays == ("dev", "prod")
    assert render_plan.reads(["prod"]) == [
        "prod/kustomization.yaml", "prod/cm.yaml", "base/kustomization.yaml", "base/svc.yaml", "base/web.yaml",
        "mid/kustomization.yaml", "mid/p.yaml"]
    assert render_plan.reads(["dev", "prod"])[:5] == [
        "dev/kustomization.yaml", "base/kustomization.yaml", "base/svc.yaml", "base/web.yaml", "prod/kustomization.yaml"]


@pytest.mark.parametrize(("files", "overlays", "covered"), [
    pytest.param({"app/kustomization.yaml": "resources: [.]\n"}, ("app",), set(), id="refers-to-itself"),
    pytest.param({"a/kustomization.yaml": "resources: [cm.yaml, ../b]\n",
                  "b/kustomization.yaml": "resources: [cm.yaml, ../a]\n"},
                 ("a",), {"a/cm.yaml", "b/cm.yaml"}, id="circle-of-two"),
    pytest.param({"a/kustomization.yaml": "resources: [../b]\n", "b/kustomization.yaml": "resources: [../a]\n",
                  "prod/kustomization.yaml": "resources: [../a]\n"}, ("prod",), set(), id="circle-an-overlay-reaches"),
    pytest.param({"c/kustomization.yaml": "kind: Component\nresources: [../base]\n",
                  "base/kustomization.yaml": "resources: [cm.yaml]\n"}, (), set(), id="base-of-a-component-only"),
])
def test_render_plan_renders_a_circle_of_kustomizations_no_overlay_reaches(tmp_path, files, overlays, covered):
    """kustomize fails on a circle of kustomizations: one member is an overlay, so that the
    failure is reported, and the files of the circle are not read raw as if nothing used them."""
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    render_plan = plan(DiskTree(str(tmp_path)), list(files))
    assert render_plan.overlays == overlays
    assert render_plan.covered == covered


@pytest.mark.parametrize("kind", TREE_KINDS)
def test_file_names_that_are_not_utf8_are_read_and_shown_with_a_replacement_character(tmp_path, kind):
    root = tmp_path / "t"
    folder = os.path.join(os.fsencode(root), b"caf\xe9")
    os.makedirs(folder)
    with open(os.path.join(folder, b"d\xff.yaml"), "wb") as f:
        f.write(deployment("web").encode())
    items = list(scan_tree(tree_of(root, kind), Origin("s", "directory"), TreeOptions(), SourceStats()))
    assert [(type(i).__name__, i.provenance.path, i.identity.name) for i in items] == [
        ("Resource", "caf\ufffd/d\ufffd.yaml", "web")]


def test_export_of_a_fifo_is_recorded_not_read(tmp_path):
    os.mkfifo(tmp_path / "live.yaml")
    (tmp_path / "other.yaml").write_text(deployment("other"))
    source = ExportSource("e", [str(tmp_path / "live.yaml"), str(tmp_path / "other.yaml")])
    resources, errors = _items(source)
    assert [r.identity.name for r in resources] == ["other"]
    assert [(e.kind, e.message) for e in errors] == [("read", "cannot read file: not a regular file (a FIFO)")]
