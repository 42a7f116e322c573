"""Kustomize ``helmCharts``: inflated by kustomize with the scan's helm, located at the chart's
templates, equal to ``kubectl kustomize --enable-helm``; charts that would be downloaded are
located errors."""

from __future__ import annotations

import shutil
import subprocess
import textwrap
from pathlib import Path

import pytest

from scanner.sources.documents import Origin
from scanner.sources.file_tree import DiskTree
from scanner.sources.helm.kustomize import kustomization_charts
from scanner.sources.kustomize.version import external_renderer
from scanner.sources.provenance import ErrorRecord, Resource, SourceStats
from scanner.sources.tree import TreeOptions, scan_tree
from tests.programs import need_program

CHARTS = Path(__file__).parent / "data" / "helm"
ORIGIN = Origin("k", "directory")

BASE = """\
helmCharts:
- name: web
  releaseName: shop
  namespace: apps
  valuesFile: charts/web/values-debug.yaml
  valuesInline:
    replicas: 3
"""
OVERLAY = """\
resources: [../base]
namePrefix: prod-
namespace: prod
commonLabels: {team: shop}
images:
- name: registry.example/web
  newTag: "2.0"
"""


@pytest.fixture
def layout(tmp_path: Path) -> Path:
    need_program("helm", "scripts/install-test-deps.sh installs helm 3")
    need_program("kubectl", "scripts/install-test-deps.sh installs kubectl")
    root = tmp_path / "repo"
    web = root / "app" / "base" / "charts" / "web"
    shutil.copytree(CHARTS / "web", web)
    shutil.copytree(CHARTS / "lib", web / "charts" / "labels")  # vendored, as helm template needs it
    (root / "app" / "base" / "kustomization.yaml").write_text(BASE)
    (root / "app" / "prod").mkdir()
    (root / "app" / "prod" / "kustomization.yaml").write_text(OVERLAY)
    return root


def _scan(root: Path) -> tuple[list[Resource], list[ErrorRecord], SourceStats]:
    stats = SourceStats()
    items = list(scan_tree(DiskTree(str(root)), ORIGIN, TreeOptions(), stats))
    return ([i for i in items if isinstance(i, Resource)], [i for i in items if isinstance(i, ErrorRecord)], stats)


def _kubectl(folder: Path) -> list[dict]:
    import yaml

    out = subprocess.run(["kubectl", "kustomize", "--enable-helm", "--helm-command", shutil.which("helm") or "helm",
                          str(folder)], capture_output=True, text=True, check=True).stdout
    return [d for d in yaml.safe_load_all(out) if d]


def test_kustomize_helm_charts_rendered_as_kustomize_does_and_located_at_templates(layout: Path):
    resources, errors, stats = _scan(layout)
    assert errors == []
    got = {(r.identity.kind, r.identity.namespace, r.identity.name): r for r in resources}
    expected = _kubectl(layout / "app" / "prod")
    assert sorted(got) == sorted((d["kind"], d["metadata"].get("namespace"), d["metadata"]["name"]) for d in expected)
    for data in expected:
        resource = got[(data["kind"], data["metadata"].get("namespace"), data["metadata"]["name"])]
        assert resource.data == data
    deployment = got[("Deployment", "prod", "prod-shop-web")]
    assert deployment.data["spec"]["replicas"] == 3  # valuesInline over valuesFile
    assert deployment.data["spec"]["template"]["spec"]["containers"][0]["securityContext"] == {"privileged": True}
    assert deployment.data["spec"]["template"]["spec"]["containers"][0]["image"] == "registry.example/web:2.0"
    assert (deployment.provenance.path, deployment.provenance.line) == (
        "app/base/charts/web/templates/deployment.yaml", 1)
    assert deployment.provenance.overlay == ("overlay app/prod: chart app/base/charts/web (release shop in apps, "
                                             "values app/base/charts/web/values-debug.yaml, inline values) "
                                             f"({external_renderer('auto').label})")
    cache = got[("StatefulSet", "prod", "prod-shop-cache")]
    assert cache.provenance.path == "app/base/charts/web/charts/cache/templates/statefulset.yaml"
    assert stats.skipped["kustomize-helm-chart-file"] > 0  # the chart's files are not read raw
    assert stats.skipped["helm-chart-file"] == 0  # nor rendered as a chart of their own


@pytest.mark.parametrize(("entry", "message"), [
    pytest.param("- name: redis\n  repo: https://charts.example/stable\n  version: 1.0.0\n",
                 "helm chart 'redis' (repo https://charts.example/stable, version 1.0.0) is not vendored at "
                 "app/base/charts/redis-1.0.0/redis: kustomize would download it", id="repository-chart"),
    pytest.param("- name: nowhere\n", "helm chart 'nowhere' is not vendored at app/base/charts/nowhere",
                 id="no-repository-no-folder"),
])
def test_kustomize_helm_chart_needing_a_download_is_a_located_error(layout: Path, entry: str, message: str):
    (layout / "app" / "base" / "kustomization.yaml").write_text(BASE + entry)
    resources, errors, _ = _scan(layout)
    assert [(e.kind, e.location.path, e.location.line) for e in errors] == [
        ("render", "app/base/kustomization.yaml", 8)]
    assert message in errors[0].message
    assert not [r for r in resources if r.provenance.path.startswith("app/")]  # no partial overlay


def test_kustomize_helm_chart_with_a_dependency_not_vendored_is_a_located_error(layout: Path):
    shutil.rmtree(layout / "app" / "base" / "charts" / "web" / "charts" / "labels")
    _, errors, _ = _scan(layout)
    assert len(errors) == 1
    assert "chart dependency 'labels' (file://../lib) is not vendored" in errors[0].message
    assert errors[0].location.path == "app/base/kustomization.yaml"


@pytest.mark.parametrize(("text", "expected"), [
    pytest.param("helmCharts:\n- name: a\n", [("a", "charts/a", "", "")], id="default-chart-home"),
    pytest.param("helmCharts:\n- {name: a, version: '1', repo: 'https://r'}\n",
                 [("a", "charts/a-1/a", "", "")], id="versioned-folder-with-repo"),
    pytest.param("helmCharts:\n- {name: a, version: '1'}\n", [("a", "charts/a", "", "")],
                 id="version-without-repo"),
    pytest.param("helmGlobals: {chartHome: ../vendor}\nhelmCharts:\n- {name: a, releaseName: r, namespace: ns}\n",
                 [("a", "vendor/a", "r", "ns")], id="chart-home-configured"),
    pytest.param("helmGlobals: {chartHome: /abs}\nhelmCharts:\n- {name: a}\n", [("a", None, "", "")],
                 id="absolute-chart-home-is-outside"),
    pytest.param("resources: []\n", [], id="no-helm-charts"),
])
def test_kustomization_charts_folders_as_kustomize_finds_them(tmp_path: Path, text, expected):
    (tmp_path / "k").mkdir()
    (tmp_path / "k" / "kustomization.yaml").write_text(textwrap.dedent(text))
    found = kustomization_charts(DiskTree(str(tmp_path)), "k/kustomization.yaml")
    folders = [(c.name, c.folder if c.folder is None else c.folder.removeprefix("k/"), c.release, c.namespace)
               for c in found]
    assert folders == expected
