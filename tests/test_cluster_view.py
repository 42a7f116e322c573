"""A real cluster's view of look-ups (scans, ``scanner apply``), beside the CLI's fake API server
(``kyverno test``): group/versions of one resource, unknown paths, scopes, the object under
admission, the admission request's fields and CEL parameters."""

from __future__ import annotations

from dataclasses import replace

import pytest
import yaml

from scanner.engine.context import ContextError, admission_fields
from scanner.engine.environment import make_environment
from scanner.engine.evaluate import evaluate_policy
from scanner.engine.kinds import cluster_scoped_in_cluster
from scanner.engine.match import Request
from scanner.engine.policy import parse_policy
from scanner.engine.types import RuleStatus
from scanner.lookup import ResourceLookup, cluster_of, policies_need_lookup


def _obj(api_version: str, kind: str, name: str, namespace: str = "", **extra: object) -> dict:
    meta = {"name": name, "namespace": namespace} if namespace else {"name": name}
    return {"apiVersion": api_version, "kind": kind, "metadata": meta, **extra}


WRITTEN = [
    _obj("autoscaling/v2", "HorizontalPodAutoscaler", "web", "apps"),
    _obj("policy/v1beta1", "PodDisruptionBudget", "web", "apps"),
    _obj("extensions/v1beta1", "Deployment", "old", "apps"),
    _obj("apps/v1beta2", "DaemonSet", "agent", "apps"),
    _obj("apps/v1beta1", "Deployment", "older", "apps"),
    _obj("apps/v1", "Deployment", "new", "apps"),
    _obj("extensions/v1beta1", "ReplicaSet", "rs", "apps"),
    _obj("extensions/v1beta1", "Ingress", "edge", "apps"),
    _obj("networking.k8s.io/v1beta1", "Ingress", "edge-b", "apps"),
    _obj("batch/v1beta1", "CronJob", "nightly", "apps"),
    _obj("events.k8s.io/v1", "Event", "e1", "apps"),
]


@pytest.mark.parametrize(("path", "names"), [
    pytest.param("/apis/autoscaling/v1/namespaces/apps/horizontalpodautoscalers", ["web"], id="hpa-v2-read-as-v1"),
    pytest.param("/apis/autoscaling/v2/horizontalpodautoscalers", ["web"], id="hpa-v2-read-as-v2"),
    pytest.param("/apis/policy/v1/namespaces/apps/poddisruptionbudgets", ["web"], id="pdb-v1beta1-read-as-v1"),
    pytest.param("/apis/apps/v1/namespaces/apps/deployments", ["new", "old", "older"],
                 id="deployments-of-extensions-and-apps-betas-read-as-apps-v1"),
    pytest.param("/apis/apps/v1/daemonsets", ["agent"], id="daemonset-apps-v1beta2-read-as-v1"),
    pytest.param("/apis/apps/v1/replicasets", ["rs"], id="replicaset-extensions-read-as-apps-v1"),
    pytest.param("/apis/networking.k8s.io/v1/namespaces/apps/ingresses", ["edge", "edge-b"],
                 id="ingresses-of-extensions-and-beta-read-as-networking-v1"),
    pytest.param("/apis/batch/v1/cronjobs", ["nightly"], id="cronjob-v1beta1-read-as-v1"),
    pytest.param("/api/v1/namespaces/apps/events", ["e1"], id="events-k8s-io-read-as-core"),
    pytest.param("/api/v1/namespaces/apps/pods", [], id="built-in-resource-without-objects-is-empty"),
])
def test_cluster_serves_a_resource_across_its_group_versions(path: str, names: list[str]) -> None:
    answer = ResourceLookup(WRITTEN, cluster=True).api_call(path, "GET", None)
    version = path.split("/")[2] if path.startswith("/api/") else "/".join(path.split("/")[2:4])
    assert [i["metadata"]["name"] for i in answer["items"]] == names
    assert {i["apiVersion"] for i in answer["items"]} <= {version}  # answered in the version asked for


def test_cluster_list_is_named_after_the_served_kind() -> None:
    answer = ResourceLookup([], cluster=True).api_call("/apis/networking.k8s.io/v1/ingresses", "GET", None)
    assert (answer["kind"], answer["items"]) == ("IngressList", [])


@pytest.mark.parametrize("path", [
    pytest.param("/apis/example.io/v1/widgets", id="custom-resource-without-definition-or-object"),
    pytest.param("/apis/apps/v1/namespaces/apps/widgets", id="resource-the-group-does-not-serve"),
    pytest.param("/apis/autoscaling/v3/horizontalpodautoscalers", id="version-not-served"),
])
def test_cluster_unknown_path_is_not_found(path: str) -> None:
    with pytest.raises(ContextError, match="the server could not find the requested resource"):
        ResourceLookup(WRITTEN, cluster=True).api_call(path, "GET", None)


def test_cli_view_keeps_each_group_version_apart_and_answers_any_list() -> None:
    cli = ResourceLookup(WRITTEN)
    assert cli.api_call("/apis/autoscaling/v1/horizontalpodautoscalers", "GET", None)["items"] == []
    assert cli.api_call("/apis/example.io/v1/widgets", "GET", None)["items"] == []


def test_cluster_serves_the_versions_a_definition_serves() -> None:
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "spec": {"group": "example.io", "scope": "Namespaced", "names": {"kind": "Widget", "plural": "widgets"},
                    "versions": [{"name": "v1", "served": True}, {"name": "v2", "served": True},
                                 {"name": "v0", "served": False}]}}
    lookup = cluster_of([crd, _obj("example.io/v1", "Widget", "w", "apps")])
    assert [i["metadata"]["name"] for i in lookup.api_call("/apis/example.io/v2/widgets", "GET", None)["items"]] == ["w"]
    with pytest.raises(ContextError, match="could not find the requested resource"):
        lookup.api_call("/apis/example.io/v0/widgets", "GET", None)


SERVICES = [_obj("v1", "Service", "web", "apps"), _obj("v1", "Service", "api", "apps"),
            _obj("v1", "ConfigMap", "settings", "apps")]


@pytest.mark.parametrize(("operation", "names", "sees_itself"), [
    pytest.param("CREATE", ["api"], False, id="created-object-is-not-stored-yet"),
    pytest.param("UPDATE", ["api", "web"], True, id="updated-object-is-the-stored-old-one"),
    pytest.param("DELETE", ["api", "web"], True, id="deleted-object-is-still-stored"),
])
def test_cluster_look_ups_of_the_object_under_admission(operation: str, names: list[str], sees_itself: bool) -> None:
    lookup = ResourceLookup(SERVICES, cluster=True)
    loader = lookup.admitting(SERVICES[0], operation)
    listed = loader.api_call("/api/v1/namespaces/apps/services", "GET", None)["items"]
    assert [i["metadata"]["name"] for i in listed] == names
    try:
        loader.api_call("/api/v1/namespaces/apps/services/web", "GET", None)
        found = True
    except ContextError:
        found = False
    assert found is sees_itself
    assert loader.api_call("/api/v1/namespaces/apps/services/api", "GET", None)["metadata"]["name"] == "api"


def test_cluster_created_config_map_is_not_its_own_look_up() -> None:
    lookup = ResourceLookup(SERVICES, cluster=True)
    assert lookup.admitting(SERVICES[2], "CREATE").config_map("settings", "apps") is None
    assert lookup.admitting(SERVICES[0], "CREATE").config_map("settings", "apps") is not None


def test_cluster_created_object_written_in_another_version_is_hidden() -> None:
    lookup = ResourceLookup(WRITTEN, cluster=True)
    loader = lookup.admitting(WRITTEN[2], "CREATE")  # the extensions/v1beta1 Deployment "old"
    listed = loader.api_call("/apis/apps/v1/namespaces/apps/deployments", "GET", None)["items"]
    assert [i["metadata"]["name"] for i in listed] == ["new", "older"]


def test_cli_view_sees_the_object_itself() -> None:
    lookup = ResourceLookup(SERVICES)
    listed = lookup.admitting(SERVICES[0], "CREATE").api_call("/api/v1/namespaces/apps/services", "GET", None)
    assert len(listed["items"]) == 2


@pytest.mark.parametrize(("api_version", "kind", "defined", "scoped"), [
    pytest.param("cert-manager.io/v1", "ClusterIssuer", {}, True, id="cluster-issuer"),
    pytest.param("cert-manager.io/v1", "Issuer", {}, False, id="issuer"),
    pytest.param("gateway.networking.k8s.io/v1", "GatewayClass", {}, True, id="gateway-class"),
    pytest.param("gateway.networking.k8s.io/v1", "HTTPRoute", {}, False, id="http-route"),
    pytest.param("constraints.gatekeeper.sh/v1beta1", "K8sRequiredLabels", {}, True, id="whole-group"),
    pytest.param("rbac.authorization.k8s.io/v1", "ClusterRole", {}, True, id="built-in-cluster-kind"),
    pytest.param("v1", "ConfigMap", {}, False, id="built-in-namespaced-kind"),
    pytest.param("example.io/v1", "Widget", {}, False, id="unknown-custom-kind-namespaced"),
    pytest.param("example.io/v1", "Widget", {("example.io", "Widget"): True}, True, id="definition-says-cluster"),
    pytest.param("cert-manager.io/v1", "ClusterIssuer", {("cert-manager.io", "ClusterIssuer"): False}, False,
                 id="definition-decides-before-the-table"),
])
def test_cluster_scope_of_kinds(api_version: str, kind: str, defined: dict, scoped: bool) -> None:
    assert cluster_scoped_in_cluster(api_version, kind, defined) is scoped


def test_cluster_of_drops_the_namespace_of_cluster_scoped_objects() -> None:
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "spec": {"group": "example.io", "scope": "Cluster", "names": {"kind": "Widget", "plural": "widgets"},
                    "versions": [{"name": "v1", "served": True}]}}
    objects = [_obj("cert-manager.io/v1", "ClusterIssuer", "ca", "default"), crd,
               _obj("example.io/v1", "Widget", "w", "default"), _obj("cert-manager.io/v1", "Issuer", "i", "default")]
    lookup = cluster_of(objects)
    assert [o["metadata"].get("namespace") for o in objects if o.get("metadata")] == [None, None, "default"]
    assert lookup.api_call("/apis/cert-manager.io/v1/clusterissuers/ca", "GET", None)["metadata"]["name"] == "ca"
    assert lookup.api_call("/apis/example.io/v1/widgets/w", "GET", None)["metadata"]["name"] == "w"


REQUEST_POLICY = """\
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: request-fields}
spec:
  rules:
  - name: fields
    match: {any: [{resources: {kinds: [Ingress]}}]}
    validate:
      message: "{{request.name}} {{request.namespace}} {{request.kind.kind}} {{request.resource.resource}}"
      deny: {conditions: {any: [{key: "{{request.name}}", operator: Equals, value: edge}]}}
"""


@pytest.mark.parametrize(("admission", "status", "message"), [
    pytest.param(True, RuleStatus.FAIL, "edge apps Ingress ingresses", id="admission-request-has-name-and-kind"),
    pytest.param(False, RuleStatus.ERROR, "request.name", id="cli-request-has-no-name"),
])
def test_request_fields(admission: bool, status: RuleStatus, message: str) -> None:
    policy = parse_policy(yaml.safe_load(REQUEST_POLICY))
    env = make_environment(admission=admission)
    [result] = evaluate_policy(policy, _obj("networking.k8s.io/v1", "Ingress", "edge", "apps"), Request(), None, env)
    assert result.status is status and message in result.message


@pytest.mark.parametrize(("operation", "options", "named"), [
    pytest.param("CREATE", "CreateOptions", True, id="create"),
    pytest.param("UPDATE", "UpdateOptions", True, id="update"),
    pytest.param("DELETE", "DeleteOptions", True, id="delete"),
])
def test_admission_fields(operation: str, options: str, named: bool) -> None:
    fields = admission_fields(_obj("apps/v1", "Deployment", "web", "apps"), operation)
    assert fields["kind"] == {"group": "apps", "version": "v1", "kind": "Deployment"}
    assert fields["resource"] == {"group": "apps", "version": "v1", "resource": "deployments"}
    assert fields["requestKind"] == fields["kind"] and fields["dryRun"] is False
    assert fields["options"]["kind"] == options and fields["name"] == "web"


def test_admission_fields_leave_out_an_empty_name() -> None:
    assert "name" not in admission_fields({"apiVersion": "v1", "kind": "Pod", "metadata": {"generateName": "p-"}},
                                          "CREATE")


CEL_POLICY = """\
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: replica-limit}
spec:
  rules:
  - name: limit
    match: {any: [{resources: {kinds: [Deployment]}}]}
    validate:
      cel:
        paramKind: {apiVersion: example.io/v1, kind: ReplicaLimit}
        paramRef: {name: limits, parameterNotFoundAction: Deny}
        expressions:
        - expression: "object.spec.replicas <= params.max"
          message: too many replicas
"""


@pytest.mark.parametrize(("replicas", "status"), [
    pytest.param(2, RuleStatus.PASS, id="cluster-scoped-param-found-allows"),
    pytest.param(9, RuleStatus.FAIL, id="cluster-scoped-param-found-denies"),
])
def test_cel_param_kind_of_a_cluster_scoped_kind(replicas: int, status: RuleStatus) -> None:
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "spec": {"group": "example.io", "scope": "Cluster", "names": {"kind": "ReplicaLimit", "plural": "replicalimits"},
                    "versions": [{"name": "v1", "served": True}]}}
    limit = {**_obj("example.io/v1", "ReplicaLimit", "limits", "default"), "max": 3}
    lookup = cluster_of([crd, limit])
    env = make_environment(loader=lookup, param_resources=tuple(lookup.objects()), admission=True,
                           cluster_scoped=lookup.is_cluster_scoped)
    policy = parse_policy(yaml.safe_load(CEL_POLICY))
    deployment = {**_obj("apps/v1", "Deployment", "web", "apps"), "spec": {"replicas": replicas}}
    [result] = evaluate_policy(policy, deployment, Request(), None, env)
    assert result.status is status, result.message
    [cli] = evaluate_policy(policy, deployment, Request(), None, replace(env, cluster_scoped=None))
    assert cli.status is RuleStatus.ERROR  # the CLI takes the custom kind for namespaced: not found in apps


DEFAULT_POLICY = """\
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: uses-default}
spec:
  rules:
  - name: count
    match: {any: [{resources: {kinds: [Pod]}}]}
    context:
    - name: widgets
      apiCall: {urlPath: /apis/example.io/v1/widgets, jmesPath: "items | length(@)", default: -1}
    validate:
      message: "widgets: {{widgets}}"
      deny: {conditions: {any: [{key: "{{widgets}}", operator: Equals, value: -1}]}}
"""


@pytest.mark.parametrize(("cluster", "status"), [
    pytest.param(True, RuleStatus.FAIL, id="unknown-path-not-found-default-applies"),
    pytest.param(False, RuleStatus.PASS, id="cli-answers-an-empty-list"),
])
def test_api_call_default_applies_to_an_unknown_path(cluster: bool, status: RuleStatus) -> None:
    lookup = ResourceLookup([], cluster=cluster)
    policy = parse_policy(yaml.safe_load(DEFAULT_POLICY))
    [result] = evaluate_policy(policy, _obj("v1", "Pod", "p", "apps"), Request(), None,
                               make_environment(loader=lookup, admission=cluster))
    assert result.status is status, result.message


@pytest.mark.parametrize(("path", "found"), [
    pytest.param("/api/v1/namespaces/default", True, id="built-in-default"),
    pytest.param("/api/v1/namespaces/kube-system", True, id="built-in-kube-system"),
    pytest.param("/api/v1/namespaces/shop", True, id="namespace-an-object-lives-in"),
    pytest.param("/api/v1/namespaces/elsewhere", False, id="namespace-nothing-lives-in"),
])
def test_cluster_has_the_namespaces_its_objects_need(path: str, found: bool) -> None:
    lookup = cluster_of([_obj("v1", "ConfigMap", "c", "shop")])
    try:
        answer = lookup.api_call(path, "GET", None)
    except ContextError:
        answer = None
    assert (answer is not None) is found
    if answer is not None:
        name = path.rsplit("/", 1)[1]
        assert answer["metadata"]["labels"] == {"kubernetes.io/metadata.name": name}


def test_cluster_labels_every_namespace_with_its_name() -> None:
    declared = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop", "labels": {"team": "a"}}}
    lookup = cluster_of([declared])
    assert lookup.namespace_labels("shop") == {"team": "a", "kubernetes.io/metadata.name": "shop"}
    assert declared["metadata"]["labels"] == {"team": "a"}  # the loaded object is left as written


def _rule(**parts: object) -> dict:
    return {"spec": {"rules": [{"name": "r", "match": {"any": [{"resources": {"kinds": ["Pod"]}}]}, **parts}]}}


@pytest.mark.parametrize(("policy", "needed"), [
    pytest.param(_rule(validate={"pattern": {"x": 1}}), False, id="pattern-only"),
    pytest.param(_rule(context=[{"name": "a", "apiCall": {"urlPath": "/api/v1/pods"}}]), True, id="api-call"),
    pytest.param(_rule(context=[{"name": "a", "configMap": {"name": "c"}}]), True, id="config-map"),
    pytest.param(_rule(validate={"foreach": [{"list": "x", "context": [{"name": "a", "apiCall": {}}]}]}), True,
                 id="api-call-in-foreach"),
    pytest.param(_rule(match={"any": [{"resources": {"kinds": ["Pod"], "namespaceSelector": {}}}]}), True,
                 id="namespace-selector"),
    pytest.param(_rule(validate={"cel": {"paramKind": {"apiVersion": "v1", "kind": "ConfigMap"}}}), True,
                 id="cel-parameters"),
    pytest.param(_rule(validate={"cel": {"expressions": [{"expression": "namespaceObject.metadata.name == 'a'"}]}}),
                 True, id="cel-namespace-object"),
    pytest.param(_rule(validate={"cel": {"expressions": [{"expression": "object.metadata.name == 'a'"}]}}), False,
                 id="cel-object-only"),
    pytest.param({"spec": {"paramKind": {"apiVersion": "v1", "kind": "ConfigMap"}}}, True,
                 id="admission-policy-parameters"),
])
def test_policies_need_lookup(policy: dict, needed: bool) -> None:
    assert policies_need_lookup([policy]) is needed


@pytest.mark.parametrize(("path", "served"), [
    pytest.param("/apis/policy.linkerd.io/v1beta1/namespaces/apps/httproutes", True,
                 id="resource-of-a-custom-group-version-the-cluster-holds"),
    pytest.param("/apis/policy.linkerd.io/v1alpha9/namespaces/apps/httproutes", False,
                 id="other-version-of-that-group"),
    pytest.param("/apis/example.io/v1/widgets", False, id="group-the-cluster-holds-nothing-of"),
    pytest.param("/apis/apps/v1/widgets", False, id="built-in-group-serves-only-its-resources"),
])
def test_cluster_serves_the_resources_of_installed_custom_groups(path: str, served: bool) -> None:
    lookup = cluster_of([_obj("policy.linkerd.io/v1beta1", "Server", "s", "apps"), _obj("apps/v1", "Deployment", "d")])
    try:
        items = lookup.api_call(path, "GET", None)["items"]
    except ContextError as exc:
        assert "could not find the requested resource" in str(exc)
        items = None
    assert (items == []) is served
