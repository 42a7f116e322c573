"""List paths with a query in a real cluster's view: label and field selectors filter as the API
server does; other parameters are refused, never ignored."""

from __future__ import annotations

import pytest

from scanner.engine.context import ContextError
from scanner.lookup import ResourceLookup


def _pod(name: str, namespace: str, **labels: str) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace, "labels": labels}}


PODS = [_pod("a", "shop", app="web", tier="front"), _pod("b", "shop", app="api"), _pod("c", "ops", app="web"),
        _pod("d", "shop")]
CLUSTER = ResourceLookup(PODS, cluster=True)


@pytest.mark.parametrize(("query", "names"), [
    pytest.param("labelSelector=app%3Dweb", ["c", "a"], id="equality-escaped"),
    pytest.param("labelSelector=app==web", ["c", "a"], id="double-equals"),
    pytest.param("labelSelector=app!=web", ["b", "d"], id="inequality-includes-unlabelled"),
    pytest.param("labelSelector=app in (web,api)", ["c", "a", "b"], id="set-in"),
    pytest.param("labelSelector=app notin (web)", ["b", "d"], id="set-notin"),
    pytest.param("labelSelector=tier", ["a"], id="exists"),
    pytest.param("labelSelector=!app", ["d"], id="does-not-exist"),
    pytest.param("labelSelector=app=web,tier=front", ["a"], id="requirements-all-hold"),
    pytest.param("fieldSelector=metadata.name=b", ["b"], id="field-name"),
    pytest.param("fieldSelector=metadata.namespace!=shop", ["c"], id="field-namespace-negated"),
    pytest.param("labelSelector=app=web&fieldSelector=metadata.namespace=shop", ["a"], id="both-selectors"),
])
def test_cluster_list_query_filters(query: str, names: list[str]) -> None:
    items = CLUSTER.api_call(f"/api/v1/pods?{query}", "GET", None)["items"]
    assert [i["metadata"]["name"] for i in items] == names


@pytest.mark.parametrize(("path", "message"), [
    pytest.param("/api/v1/pods?limit=1", "not supported: query parameter limit", id="paging"),
    pytest.param("/api/v1/pods?fieldSelector=spec.nodeName=n1", "not supported: field selector on 'spec.nodeName'",
                 id="other-field"),
    pytest.param("/api/v1/pods?labelSelector=a+in+(x", "invalid label selector requirement", id="bad-selector"),
    pytest.param("/api/v1/namespaces/shop/pods/a?labelSelector=x", "not supported: query parameters of a GET",
                 id="query-on-get"),
])
def test_cluster_list_query_refused(path: str, message: str) -> None:
    with pytest.raises(ContextError, match=message.replace("(", r"\(")):
        CLUSTER.api_call(path, "GET", None)


def test_cli_view_refuses_queries() -> None:
    with pytest.raises(ContextError, match="not supported: query parameters in an offline API call"):
        ResourceLookup(PODS).api_call("/api/v1/pods?labelSelector=app%3Dweb", "GET", None)
