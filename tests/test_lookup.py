"""Offline API calls: served from the scanned resources, like the Kyverno CLI's fake API server."""

from __future__ import annotations

import pytest

from scanner.engine.context import ContextError
from scanner.engine.kinds import plural
from scanner.lookup import ResourceLookup


def _cm(name: str, namespace: str, role: str) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": namespace, "labels": {"role": role}}}


def _object(api_version: str, kind: str, name: str, namespace: str = "") -> dict:
    metadata = {"name": name, "namespace": namespace} if namespace else {"name": name}
    return {"apiVersion": api_version, "kind": kind, "metadata": metadata}


LOOKUP = ResourceLookup([
    _cm("b", "team", "other"), _cm("c", "ops", "settings"), _cm("a", "team", "settings"),
    _cm("a", "team", "duplicate"),
    _object("apps/v1", "Deployment", "web", "team"),
    _object("rbac.authorization.k8s.io/v1", "ClusterRole", "admin"),
    _object("v1", "Namespace", "team"),
    _object("gateway.networking.k8s.io/v1", "Gateway", "edge", "team"),
])


@pytest.mark.parametrize(("kind", "resource"), [
    pytest.param("Pod", "pods", id="plain"),
    pytest.param("NetworkPolicy", "networkpolicies", id="consonant-y"),
    pytest.param("Gateway", "gateways", id="vowel-y"),
    pytest.param("Ingress", "ingresses", id="s"),
    pytest.param("Endpoints", "endpoints", id="endpoints-unchanged"),
])
def test_plural_is_the_served_resource_name(kind: str, resource: str) -> None:
    assert plural(kind) == resource


@pytest.mark.parametrize(("path", "names"), [
    pytest.param("/api/v1/namespaces/team/configmaps", [("team", "a"), ("team", "b")], id="namespaced-list"),
    pytest.param("/api/v1/configmaps", [("ops", "c"), ("team", "a"), ("team", "b")],
                 id="every-namespace-sorted-by-namespace-then-name"),
    pytest.param("/api/v1/namespaces/elsewhere/configmaps", [], id="empty-namespace"),
    pytest.param("/apis/rbac.authorization.k8s.io/v1/clusterroles", [("", "admin")], id="cluster-scoped"),
    pytest.param("/api/v1/namespaces", [("", "team")], id="namespaces"),
])
def test_api_call_lists(path: str, names: list[tuple[str, str]]) -> None:
    items = LOOKUP.api_call(path, "GET", None)["items"]
    assert [(i["metadata"].get("namespace", ""), i["metadata"]["name"]) for i in items] == names


@pytest.mark.parametrize(("path", "envelope"), [
    pytest.param("/api/v1/namespaces/team/configmaps",
                 {"apiVersion": "v1", "kind": "ConfigMapList", "metadata": {"resourceVersion": ""}},
                 id="core"),
    pytest.param("/apis/apps/v1/namespaces/elsewhere/deployments",
                 {"apiVersion": "apps/v1", "kind": "DeploymentList", "metadata": {"resourceVersion": ""}},
                 id="kind-known-although-no-item-is-listed"),
])
def test_api_call_list_envelope(path: str, envelope: dict) -> None:
    answer = LOOKUP.api_call(path, "GET", None)
    assert {k: v for k, v in answer.items() if k != "items"} == envelope


def test_first_of_duplicate_objects_is_kept() -> None:
    found = LOOKUP.api_call("/api/v1/namespaces/team/configmaps/a", "GET", None)
    assert found["metadata"]["labels"]["role"] == "settings"


@pytest.mark.parametrize(("path", "name"), [
    pytest.param("/api/v1/namespaces/ops/configmaps/c", "c", id="namespaced"),
    pytest.param("/apis/rbac.authorization.k8s.io/v1/clusterroles/admin", "admin", id="cluster-scoped"),
    pytest.param("/api/v1/namespaces/team", "team", id="namespace"),
    pytest.param("/apis/gateway.networking.k8s.io/v1/namespaces/team/gateways/edge", "edge",
                 id="served-plural"),
])
def test_api_call_gets_one(path: str, name: str) -> None:
    assert LOOKUP.api_call(path, "GET", None)["metadata"]["name"] == name


@pytest.mark.parametrize(("path", "message"), [
    pytest.param("/api/v1/namespaces/ops/configmaps/x", 'configmaps "x" not found', id="absent"),
    pytest.param("/api/v1/configmaps/c", 'configmaps "c" not found', id="namespaced-object-by-cluster-path"),
    pytest.param("/apis/apps/v1/namespaces/ops/deployments/web", 'deployments.apps "web" not found',
                 id="other-namespace-names-the-group"),
    pytest.param("/apis/gateway.networking.k8s.io/v1/namespaces/ops/gateways/edge",
                 'gateways.gateway.networking.k8s.io "edge" not found', id="group-with-dots"),
])
def test_api_call_get_not_found(path: str, message: str) -> None:
    with pytest.raises(ContextError, match=f"failed to GET resource with raw url: {path}: {message}"):
        LOOKUP.api_call(path, "GET", None)


@pytest.mark.parametrize(("name", "namespace", "found"), [
    pytest.param("c", "ops", True, id="present"),
    pytest.param("c", "team", False, id="other-namespace"),
    pytest.param("c", "", False, id="no-namespace"),
])
def test_config_map(name: str, namespace: str, found: bool) -> None:
    assert (LOOKUP.config_map(name, namespace) is not None) is found


def test_api_call_query_parameters_are_not_ignored() -> None:
    with pytest.raises(ContextError, match=r"not supported: query parameters in an offline API call"):
        LOOKUP.api_call("/api/v1/namespaces/team/configmaps?labelSelector=role%3Dsettings", "GET", None)


def test_api_call_post_is_not_answered() -> None:
    with pytest.raises(ContextError, match=r"offline API calls answer GET only"):
        LOOKUP.api_call("/apis/authorization.k8s.io/v1/subjectaccessreviews", "POST", {})


def test_api_call_to_an_external_service_is_not_made() -> None:
    with pytest.raises(ContextError, match=r"external service calls are not made offline \(https://svc.example/x\)"):
        LOOKUP.api_call("https://svc.example/x", "GET", None)


def test_custom_resources_are_served_under_their_definition_s_plural() -> None:
    lookup = ResourceLookup()
    lookup.add_definition({"spec": {"group": "example.io", "names": {"kind": "Octopus", "plural": "octopi"}}})
    lookup.add(_object("example.io/v1", "Octopus", "a", "sea"))
    assert [i["metadata"]["name"] for i in lookup.api_call("/apis/example.io/v1/octopi", "GET", None)["items"]] == ["a"]
    assert lookup.api_call("/apis/example.io/v1/octopuses", "GET", None)["items"] == []
