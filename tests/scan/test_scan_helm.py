"""``scanner scan`` of a Git repository holding a Helm chart: rendered with the configured release."""

from __future__ import annotations

import json
import pathlib

import pytest

from scanner.cli import main
from scanner.store.store import Store
from tests.programs import helm  # noqa: F401 (a fixture)

from .conftest import Project

CHART = pathlib.Path(__file__).parents[1] / "sources" / "data" / "helm"

NO_PRIVILEGED = """\
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: no-privileged
spec:
  validationFailureAction: Enforce
  rules:
  - name: privileged
    match: {any: [{resources: {kinds: [Pod]}}]}
    validate:
      message: privileged containers are not allowed
      pattern:
        spec:
          containers:
          - =(securityContext):
              =(privileged): "false"
"""

pytestmark = pytest.mark.usefixtures("helm")


@pytest.mark.parametrize(("values", "status"), [
    pytest.param("[web/values-debug.yaml]", "fail", id="privileged-by-a-values-file-fails"),
    pytest.param("[]", "pass", id="chart-defaults-pass"),
])
def test_scan_helm_chart_result_names_template_and_values(project: Project, capsys, values: str, status: str):
    (project.base / "policies" / "require-team.yaml").unlink()
    (project.base / "policies" / "no-privileged.yaml").write_text(NO_PRIVILEGED)
    project.commit({str(p.relative_to(CHART)): p.read_text() for p in CHART.rglob("*") if p.is_file()})
    config = project.config()
    text = config.read_text().replace(
        "    git: {url: repo, ref: main}\n",
        "    git: {url: repo, ref: main}\n"
        f"    helm_charts: {{web: {{release: shop, namespace: apps, values: {values}}}}}\n")
    config.write_text(text)
    code = main(["scan", "--config", str(config), "-q"])
    capsys.readouterr()
    assert code == (1 if status == "fail" else 0)
    store = Store(f"sqlite:///{project.db}")
    try:
        [run] = store.list_runs(limit=1)
        results = {(r.resource.kind, r.resource.name): (str(r.status), r.file, r.line)
                   for r in store.iter_run_results(run.run_id)}
    finally:
        store.close()
    assert results[("Deployment", "shop-web")] == (status, "web/templates/deployment.yaml", 1)
    assert results[("StatefulSet", "shop-cache")] == ("pass", "web/charts/cache/templates/statefulset.yaml", 1)
    report = json.loads(next((project.base / "reports").glob("*.json")).read_text())
    assert report["run"]["id"] == run.run_id


GITOPS = pathlib.Path(__file__).parents[1] / "sources" / "data" / "gitops"


def test_scan_gitops_entry_points_and_what_is_not_scanned(project: Project, capsys):
    (project.base / "policies" / "require-team.yaml").unlink()
    (project.base / "policies" / "no-privileged.yaml").write_text(NO_PRIVILEGED)
    project.commit({str(p.relative_to(GITOPS)): p.read_text() for p in GITOPS.rglob("*") if p.is_file()})
    config = project.config()
    config.write_text(config.read_text().replace(
        "    git: {url: repo, ref: main}\n",
        "    git: {url: repo, ref: main}\n    repository_urls: [https://git.example/team/platform]\n"))
    code = main(["scan", "--config", str(config), "-q"])
    out = capsys.readouterr().out
    assert code == 1, out  # the privileged HelmRelease and Argo CD release fail; not-scanned entries do not
    store = Store(f"sqlite:///{project.db}")
    try:
        [run] = store.list_runs(limit=1)
        results = {(r.resource.kind, r.resource.namespace, r.resource.name): (str(r.status), r.file)
                   for r in store.iter_run_results(run.run_id)}
        errors = sorted((e.kind, e.path, e.message) for e in store.run_errors(run.run_id))
    finally:
        store.close()
    assert results[("Deployment", "shop", "shop-web-web")] == ("fail", "charts/web/templates/deployment.yaml")
    assert results[("Deployment", "debug", "debug-web")] == ("fail", "charts/web/templates/deployment.yaml")
    assert results[("Deployment", "shop", "prod-web")] == ("pass", "apps/base/web.yaml")
    assert [(kind, path) for kind, path, _ in errors] == [("not-scanned", "argo/guestbook.yaml"),
                                                           ("not-scanned", "clusters/prod/releases.yaml")]
    assert errors[1][2].startswith("not scanned: https://charts.example/stable chart redis")
