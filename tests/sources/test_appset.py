"""Argo CD ApplicationSets: list and git generators expanded into Applications, the rest a
located "not supported" record."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest
import yaml

from scanner.sources.documents import Origin
from scanner.sources.file_tree import DiskTree
from scanner.sources.gitops.appset import Unsupported, expand
from scanner.sources.gitops.discover import SearchedSource, discover
from scanner.sources.gitops.urls import repository_key
from scanner.sources.provenance import Resource, SourceStats
from scanner.sources.tree import TreeOptions, scan_tree

URL = "https://git.example/team/platform.git"
FILES = ("apps/guestbook/ui.yaml", "apps/shop/web.yaml", "apps/shop/db/db.yaml", "apps/legacy/old.yaml",
         "clusters/dev/config.json", "clusters/prod/config.json", "README.yaml")
CONTENT = {"clusters/dev/config.json": b'{"cluster": {"name": "dev", "address": "https://dev"}}',
           "clusters/prod/config.json": b'{"cluster": {"name": "prod", "address": "https://prod"}}'}


def _expand(text: str) -> list[tuple[str, str, str]]:
    data = yaml.safe_load(textwrap.dedent(text))
    found = expand(data, lambda url: "platform" if repository_key(url) == repository_key(URL) else None,
                   lambda source: FILES, lambda source, path: CONTENT[path])
    return [(g.name, g.data["spec"]["source"]["path"], g.data["spec"]["destination"].get("namespace", ""))
            for g in found]


def _set(generators: str, template: str, go: bool = False) -> str:
    return (f"apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata: {{name: set, namespace: argocd}}\n"
            f"spec:\n  goTemplate: {str(go).lower()}\n  generators:\n{textwrap.indent(generators, '  ')}"
            f"  template:\n{textwrap.indent(template, '    ')}")


FAST = ("metadata: {name: '{{path.basename}}'}\n"
        f"spec:\n  source: {{repoURL: '{URL}', path: '{{{{path}}}}'}}\n  destination: {{namespace: '{{{{ path[1] }}}}'}}\n")
GO = ("metadata: {name: '{{.path.basenameNormalized}}'}\n"
      f"spec:\n  source: {{repoURL: '{URL}', path: '{{{{.path.path}}}}'}}\n"
      "  destination: {namespace: '{{index .path.segments 1}}'}\n")


@pytest.mark.parametrize(("generators", "template", "go", "expected"), [
    pytest.param("- list:\n    elements:\n    - {app: web, ns: shop}\n    - {app: ui, ns: guests}\n",
                 f"metadata: {{name: '{{{{app}}}}'}}\nspec:\n  source: {{repoURL: '{URL}', path: 'apps/{{{{app}}}}'}}\n"
                 "  destination: {namespace: '{{ns}}'}\n", False,
                 [("web", "apps/web", "shop"), ("ui", "apps/ui", "guests")], id="list-elements"),
    pytest.param(f"- git:\n    repoURL: {URL}\n    directories:\n    - path: apps/*\n    - {{path: apps/legacy, "
                 "exclude: true}\n", FAST, False,
                 [("guestbook", "apps/guestbook", "guestbook"), ("shop", "apps/shop", "shop")],
                 id="git-directories-one-level-exclude"),
    pytest.param(f"- git:\n    repoURL: {URL}\n    directories:\n    - path: apps/*/*\n", GO, True,
                 [("db", "apps/shop/db", "shop")], id="git-directories-go-template"),
    pytest.param(f"- git:\n    repoURL: {URL}\n    files:\n    - path: clusters/**/config.json\n",
                 f"metadata: {{name: 'web-{{{{cluster.name}}}}'}}\nspec:\n  source: {{repoURL: '{URL}', "
                 "path: 'apps/shop'}\n  destination: {namespace: '{{path.basename}}'}\n", False,
                 [("web-dev", "apps/shop", "dev"), ("web-prod", "apps/shop", "prod")], id="git-files-flattened"),
    pytest.param(f"- git:\n    repoURL: {URL}\n    files:\n    - path: clusters/*/config.json\n",
                 f"metadata: {{name: 'web-{{{{.cluster.name}}}}'}}\nspec:\n  source: {{repoURL: '{URL}', "
                 "path: 'apps/shop'}\n  destination: {namespace: '{{.path.basename}}'}\n", True,
                 [("web-dev", "apps/shop", "dev"), ("web-prod", "apps/shop", "prod")], id="git-files-go-template"),
    pytest.param("- list:\n    elements: [{app: web}]\n    template:\n      spec: {destination: {namespace: own}}\n",
                 f"metadata: {{name: '{{{{app}}}}'}}\nspec:\n  source: {{repoURL: '{URL}', path: x}}\n"
                 "  destination: {namespace: base}\n", False, [("web", "x", "own")],
                 id="generator-template-merged-over-the-set-template"),
])
def test_appset_generators_expand_into_applications(generators, template, go, expected):
    assert _expand(_set(generators, template, go)) == expected


@pytest.mark.parametrize(("generators", "template", "go", "message"), [
    pytest.param("- clusters: {}\n", FAST, False, "not supported: ApplicationSet generator clusters", id="clusters"),
    pytest.param("- matrix: {generators: []}\n", FAST, False, "generator matrix", id="matrix"),
    pytest.param("- list: {elements: [{app: a}]}\n",
                 "metadata: {name: '{{.app | upper}}'}\nspec: {source: {path: x}, destination: {}}\n", True,
                 "not supported: ApplicationSet Go template action {{.app | upper}}", id="go-template-pipeline"),
    pytest.param("- list: {elements: [{app: a}]}\n  selector: {matchLabels: {a: b}}\n", FAST, False,
                 "generator selector", id="selector"),
])
def test_appset_what_is_not_expanded_says_so(generators, template, go, message):
    with pytest.raises(Unsupported, match=re.escape(message)):
        _expand(_set(generators, template, go))


def test_appset_git_generator_of_another_repository_is_a_lookup_error():
    with pytest.raises(LookupError, match=re.escape("https://github.example/other")):
        _expand(_set("- git:\n    repoURL: https://github.example/other\n    directories: [{path: '*'}]\n", FAST))


def test_appset_applications_are_entry_points_rendered_and_named_with_their_set(tmp_path: Path):
    root = tmp_path / "platform"
    for app in ("web", "api"):
        (root / "apps" / app).mkdir(parents=True)
        (root / "apps" / app / "deploy.yaml").write_text(
            f"apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: {app}}}\nspec: {{replicas: 1}}\n")
    (root / "argo").mkdir()
    (root / "argo" / "apps.yaml").write_text(_set(
        f"- git:\n    repoURL: {URL}\n    directories: [{{path: 'apps/*'}}]\n",
        "metadata: {name: 'app-{{path.basename}}'}\n"
        f"spec:\n  source: {{repoURL: '{URL}', path: '{{{{path}}}}'}}\n  destination: {{namespace: '{{{{path[1]}}}}'}}\n")
        + "---\n" + _set("- clusters: {}\n", FAST).replace("name: set", "name: fleet"))
    sources = {"platform": SearchedSource(DiskTree(str(root)), Origin("platform", "directory"), TreeOptions())}
    plan = discover(sources, {repository_key(URL): "platform"})
    assert sorted((str(e.declared), e.path, e.namespace) for e in plan.entries["platform"]) == [
        ("Application argocd/app-api (ApplicationSet argocd/set, argo/apps.yaml:1)", "apps/api", "api"),
        ("Application argocd/app-web (ApplicationSet argocd/set, argo/apps.yaml:1)", "apps/web", "web")]
    assert [(n.declared.name, n.declared.line, n.reason) for n in plan.not_scanned] == [
        ("fleet", 16, "not supported: ApplicationSet generator clusters")]
    items = list(scan_tree(DiskTree(str(root)), Origin("platform", "directory"),
                           TreeOptions(gitops=tuple(plan.entries["platform"])), SourceStats()))
    rendered = {(str(r.identity), r.provenance.overlay) for r in items if isinstance(r, Resource)}
    assert ("Deployment/web/web", "Application argocd/app-web (ApplicationSet argocd/set, argo/apps.yaml:1)") \
        in rendered
