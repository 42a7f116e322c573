"""``kyverno test`` suites with an offline cluster: ``clusterResources`` (a fake API server and
ConfigMap source built from the test's resources and ClusterResource files) and
``apiCallResponses`` mocks (spec 8.3, 8.4, 14.1)."""

from __future__ import annotations

import pathlib
import textwrap

import pytest

from scanner.kyvernocli.suites import run_suite

POLICY = """\
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: limits}
spec:
  rules:
  - name: few-pods
    match: {any: [{resources: {kinds: [Pod]}}]}
    context:
    - name: podCount
      apiCall:
        urlPath: "/api/v1/namespaces/{{request.namespace}}/pods"
        jmesPath: "items | length(@)"
    validate:
      deny:
        conditions:
          any:
          - {key: "{{podCount}}", operator: GreaterThan, value: 2}
  - name: allowed-team
    match: {any: [{resources: {kinds: [Pod]}}]}
    context:
    - name: teams
      configMap: {name: teams, namespace: platform}
    validate:
      deny:
        conditions:
          any:
          - {key: "{{request.object.metadata.labels.team}}", operator: AnyNotIn, value: "{{teams.data.allowed}}"}
"""

PODS = """\
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: shop, labels: {team: blue}}
spec: {containers: [{name: c, image: nginx}]}
---
apiVersion: v1
kind: Pod
metadata: {name: api, namespace: shop, labels: {team: red}}
spec: {containers: [{name: c, image: nginx}]}
"""

CLUSTER = """\
apiVersion: cli.kyverno.io/v1alpha1
kind: ClusterResource
metadata: {name: cluster}
spec:
  resources:
  - {apiVersion: v1, kind: Namespace, metadata: {name: shop}}
  - {apiVersion: v1, kind: Pod, metadata: {name: old, namespace: shop}, spec: {containers: [{name: c, image: x}]}}
  - {apiVersion: v1, kind: ConfigMap, metadata: {name: teams, namespace: platform}, data: {allowed: '["blue"]'}}
"""


def suite(tmp_path: pathlib.Path, test: str, **files: str) -> list:
    for name, text in {"policy.yaml": POLICY, "pods.yaml": PODS, **files}.items():
        (tmp_path / name).write_text(text)
    (tmp_path / "kyverno-test.yaml").write_text(
        "apiVersion: cli.kyverno.io/v1alpha1\nkind: Test\nmetadata: {name: t}\n"
        "policies: [policy.yaml]\nresources: [pods.yaml]\n" + textwrap.dedent(test))
    return run_suite(tmp_path / "kyverno-test.yaml")


def outcomes(results: list) -> dict[tuple[str, str], str]:
    [result] = results
    assert result.error is None, result.error
    return {(row.rule, row.resource): row.actual for row in result.rows}


ALL_RESULTS = """\
results:
- {policy: limits, rule: few-pods, resources: [web, api], kind: Pod, result: fail}
- {policy: limits, rule: allowed-team, resources: [web, api], kind: Pod, result: fail}
"""


def test_cluster_resources_serve_api_calls_and_config_maps(tmp_path: pathlib.Path) -> None:
    got = outcomes(suite(tmp_path, "clusterResources: [cluster.yaml]\n" + ALL_RESULTS, **{"cluster.yaml": CLUSTER}))
    # three Pods in shop: the test's two and the cluster's one; only blue is allowed
    assert got == {("few-pods", "web"): "fail", ("few-pods", "api"): "fail",
                   ("allowed-team", "web"): "pass", ("allowed-team", "api"): "fail"}


def test_without_cluster_resources_the_entries_are_skipped(tmp_path: pathlib.Path) -> None:
    values = "values:\n  policies:\n  - name: limits\n    rules:\n    - name: few-pods\n      values: {podCount: 1}\n"
    got = outcomes(suite(tmp_path, values + ALL_RESULTS))
    assert got[("few-pods", "web")] == "pass"  # the values file's podCount stays visible
    assert got[("allowed-team", "web")] == "error"  # teams is unknown


def test_a_resource_whose_namespace_the_cluster_lacks_fails_the_test(tmp_path: pathlib.Path) -> None:
    cluster = CLUSTER.replace("metadata: {name: shop}", "metadata: {name: other}")
    [result] = suite(tmp_path, "clusterResources: [cluster.yaml]\n" + ALL_RESULTS, **{"cluster.yaml": cluster})
    assert result.error is not None
    assert result.error.endswith('failed to apply policies on resource web (failed to get the resource\'s '
                                 'namespace (namespaces "shop" not found))')


def test_namespace_labels_from_values_stand_in_for_the_namespace(tmp_path: pathlib.Path) -> None:
    cluster = CLUSTER.replace("metadata: {name: shop}", "metadata: {name: other}")
    values = "values:\n  namespaceSelector:\n  - {name: shop, labels: {env: prod}}\n"
    got = outcomes(suite(tmp_path, "clusterResources: [cluster.yaml]\n" + values + ALL_RESULTS,
                         **{"cluster.yaml": cluster}))
    assert got[("allowed-team", "web")] == "pass"


def test_custom_resources_are_served_under_their_definition_s_plural(tmp_path: pathlib.Path) -> None:
    policy = POLICY.replace("/api/v1/namespaces/{{request.namespace}}/pods", "/apis/example.io/v1/octopi")
    crd = ("apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: octopi.example.io}\n"
           "spec: {group: example.io, names: {kind: Octopus, plural: octopi}, scope: Cluster}\n")
    cluster = CLUSTER.replace("  resources:\n", "  crds: [crd.yaml]\n  resources:\n  - {apiVersion: example.io/v1, "
                              "kind: Octopus, metadata: {name: a}}\n  - {apiVersion: example.io/v1, kind: Octopus, "
                              "metadata: {name: b}}\n  - {apiVersion: example.io/v1, kind: Octopus, metadata: "
                              "{name: c}}\n")
    got = outcomes(suite(tmp_path, "clusterResources: [cluster.yaml]\n" + ALL_RESULTS,
                         **{"policy.yaml": policy, "cluster.yaml": cluster, "crd.yaml": crd}))
    assert got[("few-pods", "web")] == "fail"  # three octopi, not "octopus" resources


MOCKS = """\
apiCallResponses:
- urlPath: /api/v1/namespaces/shop/pods
  response: {statusCode: 200, body: {items: [1, 2, 3]}}
"""


def test_api_call_responses_answer_without_a_cluster(tmp_path: pathlib.Path) -> None:
    got = outcomes(suite(tmp_path, MOCKS + ALL_RESULTS))
    assert got[("few-pods", "web")] == "fail"
    assert got[("allowed-team", "web")] == "error"  # no cluster: the configMap entry is skipped


def test_api_call_responses_win_over_the_cluster(tmp_path: pathlib.Path) -> None:
    mocks = MOCKS.replace("[1, 2, 3]", "[1]")
    got = outcomes(suite(tmp_path, "clusterResources: [cluster.yaml]\n" + mocks + ALL_RESULTS,
                         **{"cluster.yaml": CLUSTER}))
    assert got[("few-pods", "web")] == "pass"


def test_an_api_call_response_with_an_error_status_is_an_error(tmp_path: pathlib.Path) -> None:
    [result] = suite(tmp_path, MOCKS.replace("200", "404") + ALL_RESULTS)
    row = next(r for r in result.rows if r.rule == "few-pods")
    assert row.actual == "error"
    assert "API call GET /api/v1/namespaces/shop/pods answered status 404" in row.reason


@pytest.mark.parametrize(("test", "files", "message"), [
    ("clusterResources: [cluster.yaml]\n", {"cluster.yaml": PODS},
     "clusterResources: cluster.yaml: expected a ClusterResource document (cli.kyverno.io/v1alpha1), found Pod"),
    ("clusterResources: cluster.yaml\n", {}, "clusterResources: must be a list of file names"),
    ("apiCallResponses: [{response: {statusCode: 200}}]\n", {}, "apiCallResponses[0]: urlPath or url is required"),
    ("apiCallResponses: [{urlPath: /x, response: {statusCode: ok}}]\n", {},
     "apiCallResponses[0].response.statusCode: must be an integer"),
    ("globalContextEntries: [{name: e, data: {}}]\n", {}, "globalContextEntries: not supported: globalContextEntries"),
], ids=["not-a-cluster-resource", "not-a-list", "mock-without-url", "mock-status-text", "global-context-entries"])
def test_bad_cluster_inputs_are_suite_errors(tmp_path: pathlib.Path, test: str, files: dict[str, str],
                                             message: str) -> None:
    [result] = suite(tmp_path, test + ALL_RESULTS, **files)
    assert result.error is not None and message in result.error
