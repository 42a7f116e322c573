"""GitOps entry points: Flux and Argo CD objects of a tree decide what is rendered, and how."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from scanner.sources.documents import Origin
from scanner.sources.file_tree import DiskTree
from scanner.sources.gitops.discover import SearchedSource, discover, names_gitops
from scanner.sources.gitops.entries import Catalog, Declared, NotScanned
from scanner.sources.gitops.objects import entry_points
from scanner.sources.gitops.substitute import substitute_object, substitute_text
from scanner.sources.gitops.urls import repository_key
from scanner.sources.kustomize.version import external_renderer
from scanner.sources.provenance import ErrorRecord, Resource, SourceStats
from scanner.sources.tree import TreeOptions, scan_tree
from tests.programs import need_program

DATA = Path(__file__).parent / "data" / "gitops"
REPOSITORIES = {repository_key("https://git.example/team/platform.git"): "platform"}


@pytest.mark.parametrize(("url", "key"), [
    pytest.param("https://git.example/team/platform.git", "git.example/team/platform", id="https-with-dot-git"),
    pytest.param("ssh://git@git.example/team/platform", "git.example/team/platform", id="ssh-url-with-user"),
    pytest.param("git@git.example:team/platform.git", "git.example/team/platform", id="scp-like"),
    pytest.param("https://user@GIT.example/team/platform/", "git.example/team/platform", id="host-case-and-slash"),
])
def test_gitops_repository_urls_of_one_repository_agree(url, key):
    assert repository_key(url) == key


@pytest.mark.parametrize(("text", "variables", "expected"), [
    pytest.param("a: ${x}", {"x": "1"}, "a: 1", id="set-variable"),
    pytest.param("a: ${x}", {}, "a: ", id="unset-variable-is-empty"),
    pytest.param("a: ${x:=d}", {"x": ""}, "a: d", id="colon-default-for-empty"),
    pytest.param("a: ${x=d}", {"x": ""}, "a: ", id="plain-default-only-for-unset"),
    pytest.param("a: ${x:-d}", {}, "a: d", id="dash-default"),
    pytest.param("a: $${x}", {"x": "1"}, "a: ${x}", id="escaped"),
    pytest.param("a: $x", {"x": "1"}, "a: $x", id="unbraced-left-alone"),
])
def test_gitops_post_build_substitution(text, variables, expected):
    assert substitute_text(text, variables) == expected


def test_gitops_substitution_reads_the_text_again_and_honours_disabled():
    obj = {"kind": "Deployment", "metadata": {"name": "w"}, "spec": {"replicas": "${n}"}}
    assert substitute_object(obj, {"n": "3"})["spec"]["replicas"] == 3
    disabled = {"kind": "A", "metadata": {"annotations": {"kustomize.toolkit.fluxcd.io/substitute": "disabled"}},
                "x": "${n}"}
    assert substitute_object(disabled, {"n": "3"})["x"] == "${n}"


def _declared(kind: str) -> Declared:
    return Declared(kind, "argocd", "app", "platform", "apps/app.yaml", 1)


@pytest.mark.parametrize(("spec", "expected"), [
    pytest.param({"source": {"repoURL": "https://git.example/team/platform", "path": "./apps/"},
                  "destination": {"namespace": "web"}},
                 ("platform", "apps", "auto", "web"), id="plain-path-renderer-decided-by-files"),
    pytest.param({"source": {"repoURL": "https://git.example/team/platform", "path": "c", "helm": {}},
                  "destination": {"namespace": "web"}},
                 ("platform", "c", "helm", "web"), id="helm-source"),
    pytest.param({"source": {"repoURL": "https://charts.example", "chart": "redis"}},
                 "the chart repository is not one of the scanned sources", id="chart-from-a-repository"),
    pytest.param({"source": {"repoURL": "https://elsewhere.example/x", "path": "p"}},
                 "the repository is not one of the scanned sources", id="other-repository"),
    pytest.param({"source": {"repoURL": "https://git.example/team/platform", "path": "p", "plugin": {}}},
                 "not supported: config management plugins", id="plugin"),
])
def test_gitops_argo_application_entry_points(spec, expected):
    [found] = entry_points({"spec": spec}, _declared("Application"), Catalog(REPOSITORIES, {}))
    if isinstance(expected, str):
        assert isinstance(found, NotScanned) and found.reason == expected
    else:
        assert (found.source, found.path, found.renderer, found.namespace) == expected


def _searched(root: Path) -> dict[str, SearchedSource]:
    return {"platform": SearchedSource(DiskTree(str(root)), Origin("platform", "directory"), TreeOptions())}


@pytest.fixture
def platform(tmp_path: Path) -> Path:
    need_program("helm", "scripts/install-test-deps.sh installs helm 3")
    root = tmp_path / "platform"
    shutil.copytree(DATA, root)
    return root


def test_gitops_source_without_flux_or_argo_objects_is_not_searched(tmp_path: Path):
    (tmp_path / "a.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n")
    assert not names_gitops(DiskTree(str(tmp_path)))
    assert discover(_searched(tmp_path), REPOSITORIES).entries == {}


@pytest.mark.parametrize("pcre", [True, False], ids=["pcre", "git-without-pcre"])
def test_a_commit_is_searched_for_entry_point_groups_with_git_grep(tmp_path: Path, pcre: bool,
                                                                    monkeypatch: pytest.MonkeyPatch):
    from scanner.sources import git_tree
    from scanner.sources.gitops import discover as module

    if not pcre:  # a git without PCRE fails -P with a fatal error: the extended expression is used
        monkeypatch.setitem(module._PATTERNS, "-P", "(")
    repo = tmp_path / "repo"
    (repo / "apps").mkdir(parents=True)
    (repo / "apps" / "cm.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  annotations:\n"
                                           "    argocd.argoproj.io/sync-wave: '1'\n")
    (repo / "flux").mkdir()
    (repo / "flux" / "ks.json").write_text('{"apiVersion" : "kustomize.toolkit.fluxcd.io/v1", "kind": "Kustomization"}')
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@e",
           "HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "c"]):
        subprocess.run(["git", "-C", str(repo), *args], check=True, env=env, capture_output=True)
    sha = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], check=True, capture_output=True,
                         text=True).stdout.strip()
    tree = git_tree.GitTree(str(repo), sha)
    assert names_gitops(tree) and names_gitops(tree, "flux")
    assert not names_gitops(tree, "apps")  # an annotation names the group, not an apiVersion
    tree.close()


def test_gitops_entry_points_render_what_the_controllers_deploy(platform: Path):
    plan = discover(_searched(platform), REPOSITORIES)
    assert sorted((e.declared.kind, e.declared.name, e.path, e.renderer) for e in plan.entries["platform"]) == [
        ("Application", "guestbook", "guestbook", "auto"),
        ("Application", "shop-debug", "charts/web", "helm"),
        ("HelmRelease", "web", "charts/web", "helm"),
        ("Kustomization", "apps", "apps/prod", "kustomize"),
    ]
    assert sorted((n.declared.name, n.target) for n in plan.not_scanned) == [
        ("cache", "https://charts.example/stable chart redis"),
        ("elsewhere", "https://github.example/other/repo.git"),
    ]
    stats = SourceStats()
    items = list(scan_tree(DiskTree(str(platform)), Origin("platform", "directory"),
                           TreeOptions(gitops=tuple(plan.entries["platform"])), stats))
    errors = [i for i in items if isinstance(i, ErrorRecord)]
    assert errors == []
    resources = {(str(r.identity), r.provenance.path): r for r in items if isinstance(r, Resource)}
    web = resources[("Deployment/shop/prod-web", "apps/base/web.yaml")]  # Flux: prefix, namespace, patch, image
    assert web.data["spec"]["replicas"] == 3  # inline substitute wins over the ConfigMap's
    assert web.data["metadata"]["annotations"] == {"region": "eu-west", "escaped": "${region}"}
    assert web.data["metadata"]["labels"]["tier"] == "frontend"
    assert web.data["spec"]["template"]["spec"]["containers"][0]["image"] == "registry.example/web:2.0"
    assert web.provenance.overlay == ("Kustomization flux-system/apps (clusters/prod/apps.yaml:1) "
                                      f"({external_renderer('auto').label})")
    release = resources[("Deployment/shop/shop-web-web", "charts/web/templates/deployment.yaml")]
    assert release.data["spec"]["replicas"] == 4  # values over valuesFrom
    assert release.data["spec"]["template"]["spec"]["containers"][0]["securityContext"] == {"privileged": True}
    assert release.provenance.overlay == ("HelmRelease flux-system/web (clusters/prod/releases.yaml:1): "
                                          "chart charts/web (release shop-web in shop)")
    debug = resources[("Deployment/debug/debug-web", "charts/web/templates/deployment.yaml")]
    assert debug.data["spec"]["replicas"] == 5  # an Argo CD parameter over the values file
    assert debug.provenance.overlay.endswith("chart charts/web (release debug in debug, values "
                                             "charts/web/values-debug.yaml)")
    assert web.provenance.line == 1 and web.provenance.patches == ()
    assert ("Service/guests/guestbook-ui", "guestbook/ui.yaml") in resources  # destination namespace
    assert not any(name.startswith("ConfigMap/guests/not-deployed") for name, _ in resources)  # no recurse
    # the deployed folders are not read raw or rendered on their own as well
    assert not any(path.startswith("apps/") and r.provenance.overlay is None for (_, path), r in resources.items())
    assert stats.skipped["gitops-rendered"] > 0


def test_gitops_entry_point_to_a_missing_folder_is_located_at_its_object(platform: Path):
    text = (platform / "argo" / "guestbook.yaml").read_text().replace("path: guestbook", "path: gone")
    (platform / "argo" / "guestbook.yaml").write_text(text)
    plan = discover(_searched(platform), REPOSITORIES)
    items = list(scan_tree(DiskTree(str(platform)), Origin("platform", "directory"),
                           TreeOptions(gitops=tuple(plan.entries["platform"])), SourceStats()))
    [error] = [i for i in items if isinstance(i, ErrorRecord)]
    assert (error.location.path, error.location.line) == ("argo/guestbook.yaml", 1)
    assert error.message == "Application argocd/guestbook: path 'gone' is not a folder of the source 'platform'"


GOOD_APPLICATION = """\
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: good, namespace: argocd}
spec:
  source: {repoURL: https://git.example/team/platform.git, path: apps}
  destination: {namespace: apps}
"""


ARGO_APPLICATION = "argoproj.io/v1alpha1\nkind: Application"
FLUX_KUSTOMIZATION = "kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization"


@pytest.mark.parametrize(("kind", "spec"), [
    pytest.param(ARGO_APPLICATION, "{source: {repoURL: https://git.example/team/platform.git, path: apps, "
                 "kustomize: {images: 3}}}", id="argo-kustomize-images-a-number"),
    pytest.param(ARGO_APPLICATION, "{source: {repoURL: https://git.example/team/platform.git, path: apps, "
                 "helm: {valueFiles: 5}}}", id="argo-helm-value-files-a-number"),
    pytest.param(ARGO_APPLICATION, "{sources: [7, {repoURL: [1]}], destination: {namespace: [1]}}",
                 id="argo-sources-of-numbers"),
    pytest.param(ARGO_APPLICATION, '"a string"', id="argo-spec-a-string"),
    pytest.param(FLUX_KUSTOMIZATION, '"a string"', id="flux-spec-a-string"),
    pytest.param(FLUX_KUSTOMIZATION, "{path: [apps], sourceRef: {kind: GitRepository, name: [1]}}",
                 id="flux-fields-of-lists"),
])
def test_gitops_object_of_the_wrong_shape_is_not_scanned_and_the_others_are(tmp_path: Path, kind: str, spec: str):
    (tmp_path / "apps").mkdir()
    (tmp_path / "apps" / "pod.yaml").write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n")
    (tmp_path / "argo.yaml").write_text(f"{GOOD_APPLICATION}---\napiVersion: {kind}\n"
                                        f"metadata: {{name: bad, namespace: argocd}}\nspec: {spec}\n")
    plan = discover(_searched(tmp_path), REPOSITORIES)
    assert [(e.declared.name, e.path) for e in plan.entries["platform"]] == [("good", "apps")]
    bad = [n for n in plan.not_scanned if n.declared.name == "bad"]
    assert bad and all((n.declared.path, n.declared.line) == ("argo.yaml", 8) for n in bad)
