"""The offline cluster of a ``kyverno test`` suite: ``clusterResources`` and ``apiCallResponses``.

With ``clusterResources`` the CLI builds a fake API server from the test's resources, target
and parameter resources and the objects of the listed ``ClusterResource`` files (their
``spec.resources`` and the CRDs named in ``spec.crds``); ``apiCall`` and ``configMap`` context
entries are then served from it, and a resource's Namespace must exist there unless the values
give its labels. ``apiCallResponses`` answer the calls they name, with or without a cluster
(spec 8.3, 8.4, 14.1). Without either, such entries are skipped.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scanner.engine.context import ContextError, NotServed
from scanner.engine.normalize import normalize_resource
from scanner.errors import SuiteError
from scanner.lookup import ResourceLookup

CLUSTER_RESOURCE = "ClusterResource"


@dataclass(frozen=True, slots=True)
class MockResponse:
    status: int
    body: Any


class TestCluster:
    """A suite's context loader: mocked calls first, then the fake cluster if there is one."""

    __test__ = False  # not a pytest class

    def __init__(self, cluster: ResourceLookup | None, mocks: dict[tuple[str, str], MockResponse]) -> None:
        self.cluster = cluster
        self.mocks = mocks

    def config_map(self, name: str, namespace: str) -> dict | None:
        if self.cluster is None:
            raise NotServed("no cluster resources")
        return self.cluster.config_map(name, namespace)

    def api_call(self, url_path: str, method: str, data: Any) -> Any:
        mock = self.mocks.get((url_path, method.upper()))
        if mock is not None:
            if not 200 <= mock.status < 300:
                raise ContextError(f"API call {method.upper()} {url_path} answered status {mock.status}")
            return mock.body
        if self.cluster is None:
            raise NotServed("no cluster resources")
        return self.cluster.api_call(url_path, method, data)

    def namespace_labels(self, values_labels: Callable[[str], dict | None]) -> Callable[[str], dict | None]:
        """Namespace labels as the CLI finds them: from the values, else (with a cluster) from the
        Namespace object, which must then exist."""
        if self.cluster is None:
            return values_labels
        cluster = self.cluster

        def labels(namespace: str) -> dict | None:
            return values_labels(namespace) or cluster.namespace_labels(namespace)
        return labels

    def missing_namespace(self, resource: dict, values_labels: Callable[[str], dict | None]) -> str | None:
        """Why the CLI cannot apply policies to ``resource`` (its Namespace is not in the cluster),
        or None.

        With ``clusterResources`` the CLI runs with ``Cluster`` set and, when the values give no
        labels for the resource's namespace, GETs that Namespace from its fake client
        (``processor/policy_processor.go``); the fake dynamic client's object tracker answers
        NotFound for an object it was not given, and ``kyverno test`` fails the whole test with
        "failed to run test (failed to apply policies on resource ...)". Kyverno's own suites with
        such resources (``test/cli/test-context-apicall``) are not among those its CI runs."""
        if self.cluster is None or resource.get("kind") == "Namespace":
            return None
        meta = resource.get("metadata") or {}
        namespace = str(meta.get("namespace") or "")
        if not namespace or values_labels(namespace) or namespace in self.cluster.namespaces:
            return None
        return (f"failed to apply policies on resource {meta.get('name') or ''} (failed to get the resource's "
                f'namespace (namespaces "{namespace}" not found))')


def load_cluster(base: Path, test: dict, resources: list[dict], where: Path,
                 load_yaml: Callable[[Path], list[Any]]) -> TestCluster | None:
    """The suite's loader, or None when the test has neither ``clusterResources`` nor
    ``apiCallResponses``. ``resources`` are the test's (deduplicated) resources."""
    mocks = _mocks(test.get("apiCallResponses"), where)
    files = test.get("clusterResources")
    if files is not None and not (isinstance(files, list) and all(isinstance(f, str) for f in files)):
        raise SuiteError(f"{where}: clusterResources: must be a list of file names")
    if not files:
        return TestCluster(None, mocks) if mocks else None
    cluster = ResourceLookup()
    objects = list(resources)
    for name in ("targetResources", "paramResources"):
        for rel in _file_list(test, name, where):
            objects += [d for d in load_yaml(base / rel) if isinstance(d, dict)]
    for rel in files:
        for doc in load_yaml(base / rel):
            spec = _cluster_resource_spec(doc, f"{where}: clusterResources: {rel}")
            for crd_rel in spec.get("crds") or []:
                for crd in load_yaml(base / str(crd_rel)):
                    if isinstance(crd, dict):
                        cluster.add_definition(crd)
                        objects.append(crd)
            objects += [r for r in spec.get("resources") or [] if isinstance(r, dict)]
    for obj in objects:
        cluster.add(normalize_resource(obj))
    return TestCluster(cluster, mocks)


def _file_list(test: dict, name: str, where: Path) -> list[str]:
    value = test.get(name)
    if value is not None and not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
        raise SuiteError(f"{where}: {name}: must be a list of file names")
    return value or []


def _cluster_resource_spec(doc: Any, where: str) -> dict:
    """The spec of a ``ClusterResource`` document (its fields are matched without regard to case,
    as Go's JSON decoding matches them)."""
    if not isinstance(doc, dict) or doc.get("kind") != CLUSTER_RESOURCE:
        kind = doc.get("kind") if isinstance(doc, dict) else None
        raise SuiteError(f"{where}: expected a {CLUSTER_RESOURCE} document (cli.kyverno.io/v1alpha1), "
                         f"found {kind or 'no kind'}")
    spec = next((v for k, v in doc.items() if isinstance(k, str) and k.lower() == "spec"), None) or {}
    fields = {k.lower(): v for k, v in spec.items() if isinstance(k, str)} if isinstance(spec, dict) else None
    if fields is None or not all(isinstance(fields.get(k) or [], list) for k in ("crds", "resources")):
        raise SuiteError(f"{where}: spec must be a mapping with lists crds and resources")
    return fields


def _mocks(entries: Any, where: Path) -> dict[tuple[str, str], MockResponse]:
    """``apiCallResponses``: ``{urlPath | url, method, response: {statusCode, body}}`` entries."""
    if entries is None:
        return {}
    if not isinstance(entries, list):
        raise SuiteError(f"{where}: apiCallResponses: must be a list")
    mocks: dict[tuple[str, str], MockResponse] = {}
    for i, entry in enumerate(entries):
        field = f"{where}: apiCallResponses[{i}]"
        if not isinstance(entry, dict):
            raise SuiteError(f"{field}: must be a mapping")
        target = entry.get("urlPath") or entry.get("url")
        if not isinstance(target, str):
            raise SuiteError(f"{field}: urlPath or url is required")
        method = entry.get("method") or "GET"
        response = entry.get("response")
        if not isinstance(method, str) or not isinstance(response, dict):
            raise SuiteError(f"{field}: needs a method name and a response mapping")
        status = response.get("statusCode", 200)
        if not isinstance(status, int) or isinstance(status, bool):
            raise SuiteError(f"{field}.response.statusCode: must be an integer")
        mocks.setdefault((target, method.upper()), MockResponse(status, response.get("body")))
    return mocks
