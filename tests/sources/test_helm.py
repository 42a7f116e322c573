"""Helm charts rendered with the real ``helm template``: provenance, releases, errors."""

from __future__ import annotations

import dataclasses
import os
import shutil
import textwrap
from pathlib import Path

import pytest

from scanner.config import HelmChartConfig, HelmConfig
from scanner.errors import ManifestError
from scanner.sources.documents import Origin
from scanner.sources.file_tree import DiskTree
from scanner.sources.helm import render
from scanner.sources.helm.charts import chart_folders, read_chart
from scanner.sources.helm.releases import scan_charts
from scanner.sources.helm.render import parse_output
from scanner.sources.provenance import ErrorRecord, Resource, SourceStats
from tests.programs import need_program

DATA = Path(__file__).parent / "data" / "helm"
ORIGIN = Origin("charts", "directory")

@pytest.fixture
def charts(tmp_path: Path) -> Path:
    need_program("helm", "scripts/install-test-deps.sh installs helm 3")
    root = tmp_path / "repo"
    shutil.copytree(DATA, root)
    return root


def _scan(root: Path, options: HelmConfig, folders: tuple[str, ...] = ("web",)):
    stats = SourceStats()
    items = list(scan_charts(DiskTree(str(root)), folders, options, ORIGIN, stats))
    return ([i for i in items if isinstance(i, Resource)], [i for i in items if isinstance(i, ErrorRecord)], stats)


@pytest.mark.parametrize(("text", "expected"), [
    pytest.param("---\n# Source: web/templates/a.yaml\nkind: A\n", [("templates/a.yaml", 1, "A")],
                 id="one-document-first-line"),
    pytest.param("---\n# Source: web/templates/a.yaml\nkind: A\nx: 1\n---\n# Source: web/templates/a.yaml\nkind: B\n",
                 [("templates/a.yaml", 1, "A"), ("templates/a.yaml", 4, "B")],
                 id="second-document-of-a-template-numbered-on"),
    pytest.param("---\n# Source: web/charts/db/templates/s.yaml\n\n# a comment\nkind: S\n",
                 [("charts/db/templates/s.yaml", 3, "S")], id="subchart-template-and-leading-comment"),
    pytest.param("---\n# Source: web/templates/empty.yaml\n\n---\n# Source: web/templates/b.yaml\nkind: B\n",
                 [("templates/b.yaml", 1, "B")], id="empty-template-yields-nothing"),
])
def test_helm_parse_output_maps_objects_to_templates(text, expected):
    assert [(o.template, o.line, o.data["kind"]) for o in parse_output(text)] == expected


def test_helm_parse_output_refuses_a_document_without_source():
    with pytest.raises(ManifestError, match="no '# Source:' comment"):
        parse_output("---\nkind: A\n")


def test_helm_chart_folders_are_outermost_only():
    assert chart_folders(["a/Chart.yaml", "a/charts/b/Chart.yaml", "c/d/Chart.yaml", "x.yaml"]) == ("a", "c/d")


def test_helm_release_renders_templates_with_provenance(charts: Path):
    options = HelmConfig(charts={"web": HelmChartConfig("prod", "apps", ("web/values-debug.yaml",),
                                                        {"replicas": 3})})
    resources, errors, stats = _scan(charts, options)
    assert errors == []
    found = {(str(r.identity), r.provenance.path, r.provenance.line) for r in resources}
    assert found == {
        ("Deployment/apps/prod-web", "web/templates/deployment.yaml", 1),
        ("Service/apps/prod-web", "web/templates/service.yaml", 8),
        ("ConfigMap/apps/prod-web-ports", "web/templates/service.yaml", 1),
        ("StatefulSet/apps/prod-cache", "web/charts/cache/templates/statefulset.yaml", 1),
    }  # the chart's test pod (helm.sh/hook: test) is not installed, so not scanned
    deployment = next(r for r in resources if r.identity.kind == "Deployment")
    assert deployment.provenance.rendered_by == "helm"
    assert deployment.provenance.overlay == "chart web (release prod in apps, values web/values-debug.yaml)"
    container = deployment.data["spec"]["template"]["spec"]["containers"][0]
    assert container["securityContext"] == {"privileged": True}
    assert deployment.data["spec"]["replicas"] == 3
    assert deployment.data["metadata"]["labels"]["app.kubernetes.io/name"] == "web"  # file:// library
    assert stats.resources == 4


def test_helm_defaults_release_name_to_chart_and_namespace_to_default(charts: Path):
    resources, errors, _ = _scan(charts, HelmConfig())
    assert errors == []
    assert "Deployment/default/web-web" in {str(r.identity) for r in resources}


@pytest.mark.parametrize(("change", "message"), [
    pytest.param(lambda root: shutil.rmtree(root / "web" / "charts" / "cache"),
                 "chart dependency 'cache' (no repository) is not vendored in charts/ (web/Chart.yaml:6:5",
                 id="dependency-not-vendored"),
    pytest.param(lambda root: (root / "web" / "templates" / "bad.yaml").write_text("{{ .Values.nope.deeper }}\n"),
                 "web/templates/bad.yaml:1: helm template failed: template: web/templates/bad.yaml:1:10: executing",
                 id="template-error"),
    pytest.param(lambda root: (root / "web" / "templates" / "bad.yaml").write_text("a: b\n  c: [\n"),
                 "web/templates/bad.yaml:2: helm template failed: YAML parse error on web/templates/bad.yaml",
                 id="template-renders-invalid-yaml"),
    pytest.param(lambda root: (root / "web" / "Chart.yaml").write_text("apiVersion: v2\nversion: 1.0.0\n"),
                 "Chart.yaml has no chart name (the name key)", id="chart-without-name"),
])
def test_helm_chart_that_cannot_render_is_a_located_error(charts: Path, change, message):
    change(charts)
    resources, errors, stats = _scan(charts, HelmConfig())
    assert resources == []
    assert len(errors) == 1 and stats.errors == 1
    assert message in f"{errors[0].location}: {errors[0].message}"


def test_helm_output_past_the_file_limit_stops_the_render(charts: Path, monkeypatch):
    """A template that prints more than the largest file the scanner reads does not take the
    scan's memory: helm is stopped and the chart is one located error."""
    monkeypatch.setattr(render, "DEFAULT_LIMITS", dataclasses.replace(render.DEFAULT_LIMITS, max_file_bytes=100_000))
    (charts / "web" / "templates" / "big.yaml").write_text(
        "{{- range until 5000 }}\n# " + "x" * 100 + "\n{{- end }}\nkind: ConfigMap\n")
    resources, errors, _ = _scan(charts, HelmConfig())
    assert resources == []
    assert [(e.location.path, e.message) for e in errors] == [
        ("web/Chart.yaml", "helm template failed: stopped after printing more than 100,000 bytes (the largest "
                           "file the scanner reads)")]


def test_helm_missing_values_file_is_a_located_error(charts: Path):
    _, errors, _ = _scan(charts, HelmConfig(values=("nope.yaml",)))
    assert [(e.location.path, e.message) for e in errors] == [("web/Chart.yaml", "helm values file not found: nope.yaml")]


def test_helm_off_counts_charts_as_skipped(charts: Path):
    resources, errors, stats = _scan(charts, HelmConfig(mode="off"))
    assert (resources, errors, dict(stats.skipped)) == ([], [], {"helm-off": 1})


def test_helm_not_installed_is_one_error_per_chart(charts: Path, monkeypatch, tmp_path: Path):
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    _, errors, _ = _scan(charts, HelmConfig(), ("web", "other"))
    assert [(e.kind, e.location.path, e.message) for e in errors] == [
        ("renderer-missing", "web/Chart.yaml", "helm not found: install helm 3 or set helm: off"),
        ("renderer-missing", "other/Chart.yaml", "helm not found: install helm 3 or set helm: off")]


def test_helm_library_and_dependency_charts_are_not_releases_of_their_own(charts: Path):
    shutil.copytree(charts / "web" / "charts" / "cache", charts / "cache")
    (charts / "web" / "Chart.yaml").write_text((charts / "web" / "Chart.yaml").read_text().replace(
        "  - name: cache\n    version: 0.1.0\n", "  - name: cache\n    version: 0.1.0\n    repository: file://../cache\n"))
    shutil.rmtree(charts / "web" / "charts" / "cache")
    resources, errors, stats = _scan(charts, HelmConfig(), ("cache", "lib", "web"))
    assert errors == []
    assert dict(stats.skipped) == {"helm-library-chart": 1, "helm-dependency-chart": 1}
    assert "StatefulSet/default/web-cache" in {str(r.identity) for r in resources}
    configured = HelmConfig(charts={"cache": HelmChartConfig(release="solo")})
    resources, errors, stats = _scan(charts, configured, ("cache", "lib", "web"))
    assert {"StatefulSet/default/web-cache", "StatefulSet/default/solo-cache"} <= {str(r.identity) for r in resources}


def test_helm_runs_without_the_callers_environment(charts: Path, monkeypatch, tmp_path: Path):
    # a stand-in helm that renders its own environment and arguments, to see what helm is given
    shim = tmp_path / "bin" / "helm"
    shim.parent.mkdir()
    shim.write_text(textwrap.dedent("""\
        #!/bin/sh
        [ "$1" = version ] && { echo v3.99.0; exit 0; }
        printf -- '---\\n# Source: web/templates/env.yaml\\napiVersion: v1\\nkind: ConfigMap\\n'
        printf 'metadata: {name: env}\\ndata:\\n  env: "%s"\\n  args: "%s"\\n' "$(env | sort | tr '\\n' ' ')" "$*"
        """))
    shim.chmod(0o755)
    monkeypatch.setenv("PATH", f"{shim.parent}:{os.environ['PATH']}")
    monkeypatch.setenv("SCANNER_PLANTED_TOKEN", "s3cr3t")
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:9")
    resources, errors, _ = _scan(charts, HelmConfig())
    assert errors == []
    data = resources[0].data["data"]
    names = {pair.split("=", 1)[0] for pair in data["env"].split()}
    assert names == {"PATH", "HOME", "KUBECONFIG", "HELM_CACHE_HOME", "HELM_CONFIG_HOME", "HELM_DATA_HOME",
                     "HELM_PLUGINS", "GOGC", "PWD"}
    assert "s3cr3t" not in data["env"] and os.path.expanduser("~") + " " not in data["env"]
    assert data["args"].startswith("template web ") and {"--include-crds", "--skip-tests"} <= set(data["args"].split())


def test_helm_read_chart_finds_dependencies_with_locations():
    chart = read_chart(DiskTree(str(DATA)), "web")
    assert [(d.name, d.local_path, d.location.line) for d in chart.dependencies] == [
        ("cache", None, 6), ("labels", "../lib", 8)]
