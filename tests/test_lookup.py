"""Offline API calls: served from the scanned resources, like the Kyverno CLI's fake API server."""

from __future__ import annotations

import pytest

from scanner.engine.context import ContextError
from scanner.lookup import ResourceLookup


def _cm(name: str, namespace: str, role: str) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": namespace, "labels": {"role": role}}}


LOOKUP = ResourceLookup([_cm("a", "team", "settings"), _cm("b", "team", "other"), _cm("c", "ops", "settings")])


@pytest.mark.parametrize(("path", "names"), [
    pytest.param("/api/v1/namespaces/team/configmaps", ["a", "b"], id="namespaced-list"),
    pytest.param("/api/v1/configmaps", ["a", "b", "c"], id="every-namespace"),
])
def test_api_call_lists(path: str, names: list[str]) -> None:
    assert [i["metadata"]["name"] for i in LOOKUP.api_call(path, "GET", None)["items"]] == names


def test_api_call_get_one_and_not_found() -> None:
    assert LOOKUP.api_call("/api/v1/namespaces/ops/configmaps/c", "GET", None)["metadata"]["name"] == "c"
    with pytest.raises(ContextError, match='configmaps "x" not found'):
        LOOKUP.api_call("/api/v1/namespaces/ops/configmaps/x", "GET", None)


def test_api_call_query_parameters_are_not_ignored() -> None:
    with pytest.raises(ContextError, match=r"not supported: query parameters in an offline API call"):
        LOOKUP.api_call("/api/v1/namespaces/team/configmaps?labelSelector=role%3Dsettings", "GET", None)
