"""Which objects form a cluster: a source's look-ups see its own cluster only (by default the
source itself; ``sources[].cluster`` joins sources), whatever else ``--source`` selects."""

from __future__ import annotations

import pytest

from scanner.cli import main
from scanner.store.store import Store

from .conftest import Project

UNIQUE_SELECTOR = """\
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: unique-selector}
spec:
  validationFailureAction: Enforce
  background: false
  rules:
  - name: selector
    match: {any: [{resources: {kinds: [Service]}}]}
    context:
    - name: taken
      apiCall:
        urlPath: "/api/v1/namespaces/{{request.namespace}}/services"
        jmesPath: "items[?label_match(spec.selector, `{{request.object.spec.selector}}`)] | length(@)"
    validate:
      message: another Service has this selector
      deny: {conditions: {any: [{key: "{{taken}}", operator: GreaterThan, value: 0}]}}
"""


def service(name: str) -> str:
    return f"apiVersion: v1\nkind: Service\nmetadata: {{name: {name}, namespace: apps}}\n" \
           "spec: {selector: {app: web}, ports: [{port: 80}]}\n"


def _statuses(project: Project) -> dict[tuple[str, str], str]:
    with Store(f"sqlite:///{project.db}") as store:
        return {(r.resource.source, r.resource.name): str(r.status)
                for r in store.iter_run_results(store.latest_run_id()) if r.rule == "selector"}


@pytest.mark.parametrize(("cluster", "selected", "expected"), [
    pytest.param("", (), {("gitops", "web"): "pass", ("other", "web-copy"): "pass"},
                 id="each-source-is-its-own-cluster"),
    pytest.param("gitops", (), {("gitops", "web"): "fail", ("other", "web-copy"): "fail"},
                 id="sources-of-one-cluster-see-each-other"),
    pytest.param("gitops", ("gitops",), {("gitops", "web"): "fail"},
                 id="selecting-one-source-still-reads-its-cluster"),
    pytest.param("", ("gitops",), {("gitops", "web"): "pass"},
                 id="selecting-one-source-of-its-own-cluster"),
    pytest.param("shared", (), {("gitops", "web"): "pass", ("other", "web-copy"): "pass"},
                 id="a-cluster-named-by-one-source-only"),
])
def test_scan_look_ups_see_the_source_s_cluster_only(project: Project, capsys, cluster: str,
                                                     selected: tuple[str, ...], expected: dict) -> None:
    (project.base / "policies" / "unique-selector.yaml").write_text(UNIQUE_SELECTOR)
    project.commit({"svc.yaml": service("web")})
    (project.base / "other").mkdir()
    (project.base / "other" / "svc.yaml").write_text(service("web-copy"))
    config = project.config(extra_sources="- name: other\n  directory: {path: other}\n"
                            + (f"  cluster: {cluster}\n" if cluster else ""))
    args = [a for name in selected for a in ("--source", name)]
    main(["scan", "--config", str(config), "-q", "-j", "1", *args])
    capsys.readouterr()
    assert _statuses(project) == expected


def test_scan_the_object_created_is_not_in_its_own_look_up(project: Project, capsys) -> None:
    (project.base / "policies" / "unique-selector.yaml").write_text(UNIQUE_SELECTOR)
    project.commit({"svc.yaml": service("web"), "dup.yaml": service("web")})
    config = project.config()
    main(["scan", "--config", str(config), "-q", "-j", "1"])
    capsys.readouterr()
    assert _statuses(project) == {("gitops", "web"): "pass"}


@pytest.mark.parametrize(("kind", "api_version", "crd_scope", "namespace"), [
    pytest.param("ClusterIssuer", "cert-manager.io/v1", None, "", id="well-known-cluster-kind"),
    pytest.param("GatewayClass", "gateway.networking.k8s.io/v1", None, "", id="gateway-class"),
    pytest.param("Widget", "example.io/v1", "Cluster", "", id="crd-in-the-sources-says-cluster"),
    pytest.param("Widget", "example.io/v1", "Namespaced", "default", id="crd-in-the-sources-says-namespaced"),
    pytest.param("Widget", "example.io/v1", None, "default", id="unknown-custom-kind-is-namespaced"),
])
def test_scan_cluster_scoped_kinds_get_no_namespace(project: Project, capsys, kind: str, api_version: str,
                                                    crd_scope: str | None, namespace: str) -> None:
    (project.base / "policies" / "unique-selector.yaml").write_text(UNIQUE_SELECTOR)  # makes the scan read CRDs
    (project.base / "policies" / "require-team.yaml").write_text(
        "apiVersion: kyverno.io/v1\nkind: ClusterPolicy\nmetadata: {name: require-team}\nspec:\n  rules:\n"
        f"  - name: team\n    match: {{any: [{{resources: {{kinds: [{kind}]}}}}]}}\n"
        "    validate: {message: team, pattern: {metadata: {labels: {team: '?*'}}}}\n")
    files = {"obj.yaml": f"apiVersion: {api_version}\nkind: {kind}\nmetadata: {{name: one}}\nspec: {{}}\n"}
    if crd_scope:
        files["crd.yaml"] = ("apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n"
                             "metadata: {name: widgets.example.io}\nspec:\n  group: example.io\n"
                             f"  scope: {crd_scope}\n  names: {{kind: Widget, plural: widgets}}\n"
                             "  versions: [{name: v1, served: true, storage: true}]\n")
    project.commit(files)
    main(["scan", "--config", str(project.config()), "-q", "-j", "1"])
    capsys.readouterr()
    with Store(f"sqlite:///{project.db}") as store:
        found = {(r.resource.kind, r.resource.namespace) for r in store.iter_run_results(store.latest_run_id())
                 if r.rule == "team"}
    assert found == {(kind, namespace)}


CEL_PARAMS = """\
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: replica-limit}
spec:
  validationFailureAction: Enforce
  rules:
  - name: limit
    match: {any: [{resources: {kinds: [Deployment]}}]}
    validate:
      cel:
        paramKind: {apiVersion: example.io/v1, kind: ReplicaLimit}
        paramRef: {name: limits, parameterNotFoundAction: Deny}
        expressions:
        - {expression: "object.spec.replicas <= params.max", message: too many replicas}
"""
LIMIT_CRD = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: replicalimits.example.io}
spec:
  group: example.io
  scope: Cluster
  names: {kind: ReplicaLimit, plural: replicalimits}
  versions: [{name: v1, served: true, storage: true}]
"""


@pytest.mark.parametrize(("replicas", "status"), [
    pytest.param(2, "pass", id="within-the-cluster-scoped-parameter"),
    pytest.param(9, "fail", id="beyond-the-cluster-scoped-parameter"),
])
def test_scan_cel_parameters_of_a_cluster_scoped_kind(project: Project, capsys, replicas: int, status: str) -> None:
    (project.base / "policies" / "replica-limit.yaml").write_text(CEL_PARAMS)
    project.commit({"crd.yaml": LIMIT_CRD,
                    "limit.yaml": "apiVersion: example.io/v1\nkind: ReplicaLimit\nmetadata: {name: limits}\nmax: 3\n",
                    "deploy.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: apps}\n"
                                   f"spec: {{replicas: {replicas}}}\n"})
    main(["scan", "--config", str(project.config()), "-q", "-j", "1"])
    capsys.readouterr()
    with Store(f"sqlite:///{project.db}") as store:
        found = {r.resource.name: str(r.status) for r in store.iter_run_results(store.latest_run_id())
                 if r.rule == "limit"}
    assert found == {"web": status}
