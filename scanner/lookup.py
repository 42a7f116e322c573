"""Offline answers to Kyverno's cluster look-ups, served from the resources of the same scan.

Like ``kyverno apply`` without a cluster (a fake API server built from the loaded
resources): ``apiCall`` GETs of ``/api/...`` and ``/apis/...`` list and get paths, ConfigMaps
for ``configMap`` context entries, and Namespace labels for ``namespaceSelector``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from scanner.engine.context import ContextError
from scanner.engine.kinds import not_found, plural


def _namespace_and_name(resource: dict) -> tuple[str, str]:
    meta = resource.get("metadata") or {}
    return str(meta.get("namespace") or ""), str(meta.get("name") or "")


class ResourceLookup:
    """An index of resources by API group/version, resource name, namespace and name.

    Like the fake API server, one object is kept per (group/version, resource, namespace,
    name): the first one loaded. Lists are sorted by namespace, then name."""

    def __init__(self, resources: Iterable[dict] = ()) -> None:
        self._items: dict[tuple[str, str], dict[tuple[str, str], dict]] = {}
        self._plurals: dict[tuple[str, str], str] = {}  # (group, kind) -> resource name, from CRDs
        self.namespaces: dict[str, dict] = {}
        for resource in resources:
            self.add(resource)

    def add_definition(self, crd: dict) -> None:
        """Serve the kind a CustomResourceDefinition defines under its own resource name; only
        resources added afterwards are served under it."""
        spec = crd.get("spec") if isinstance(crd.get("spec"), dict) else {}
        names = spec.get("names") if isinstance(spec.get("names"), dict) else {}
        if names.get("kind") and names.get("plural"):
            self._plurals[(str(spec.get("group") or ""), str(names["kind"]))] = str(names["plural"])

    def add(self, resource: dict) -> None:
        api_version, kind = str(resource.get("apiVersion") or ""), str(resource.get("kind") or "")
        if not api_version or not kind:
            return
        group = api_version.rpartition("/")[0]
        stored = self._items.setdefault((api_version, self._plurals.get((group, kind)) or plural(kind)), {})
        key = _namespace_and_name(resource)
        if key in stored:
            return
        stored[key] = resource
        if kind == "Namespace" and api_version == "v1" and key[1]:
            self.namespaces[key[1]] = resource

    def namespace_labels(self, namespace: str) -> dict[str, Any] | None:
        found = self.namespaces.get(namespace)
        return ((found or {}).get("metadata") or {}).get("labels") if found else None

    # -- ContextLoader -------------------------------------------------------------------

    def config_map(self, name: str, namespace: str) -> dict | None:
        return self._items.get(("v1", "configmaps"), {}).get((namespace, name))

    def api_call(self, url_path: str, method: str, data: Any) -> Any:
        if not url_path.startswith("/"):  # an external service, not the API server
            raise ContextError(f"external service calls are not made offline ({url_path})")
        if method.upper() != "GET":
            raise ContextError(f"offline API calls answer GET only, not {method} {url_path}")
        path, _, query = url_path.partition("?")
        if query:  # selectors and paging would need an API server; ignoring them would miscount
            raise ContextError(f"not supported: query parameters in an offline API call ({url_path})")
        parts = [p for p in path.split("/") if p]
        if len(parts) >= 2 and parts[0] == "api":
            api_version, rest = parts[1], parts[2:]
        elif len(parts) >= 3 and parts[0] == "apis":
            api_version, rest = f"{parts[1]}/{parts[2]}", parts[3:]
        else:
            raise ContextError(f"unsupported API path {url_path!r}")
        namespace = None
        if len(rest) >= 2 and rest[0] == "namespaces" and len(rest) != 2:
            namespace, rest = rest[1], rest[2:]
        if len(rest) == 1:
            return self._list(api_version, rest[0], namespace)
        if len(rest) == 2:
            return self._get(api_version, rest[0], namespace or "", rest[1], url_path)
        raise ContextError(f"unsupported API path {url_path!r}")

    def _list(self, api_version: str, resource: str, namespace: str | None) -> dict:
        stored = self._items.get((api_version, resource), {})
        keys = sorted(k for k in stored if namespace is None or k[0] == namespace)
        kind = next((str(r["kind"]) for r in stored.values()), resource)
        return {"apiVersion": api_version, "kind": f"{kind}List", "metadata": {"resourceVersion": ""},
                "items": [stored[k] for k in keys]}

    def _get(self, api_version: str, resource: str, namespace: str, name: str, url: str) -> dict:
        found = self._items.get((api_version, resource), {}).get((namespace, name))
        if found is None:
            raise ContextError(f"failed to GET resource with raw url: {url}: "
                               f"{not_found(api_version, resource, name)}")
        return found


def _contexts(rule: dict) -> Iterable[dict]:
    yield from rule.get("context") or []
    stack = list(((rule.get("validate") or {}).get("foreach")) or [])
    while stack:
        entry = stack.pop()
        if isinstance(entry, dict):
            yield from entry.get("context") or []
            stack.extend(entry.get("foreach") or [])


def _selectors(block: Any) -> bool:
    if not isinstance(block, dict):
        return False
    filters = [block, *(block.get("any") or []), *(block.get("all") or [])]
    return any(isinstance(f, dict) and isinstance(f.get("resources"), dict)
               and f["resources"].get("namespaceSelector") is not None for f in filters)


def policies_need_lookup(raw_policies: Iterable[dict]) -> bool:
    """Whether any policy reads cluster data: apiCall or configMap context entries, or a
    namespaceSelector in match/exclude or in failure action overrides."""
    for policy in raw_policies:
        spec = policy.get("spec") or {}
        if any(isinstance(o, dict) and o.get("namespaceSelector") is not None
               for o in spec.get("validationFailureActionOverrides") or []):
            return True
        for rule in spec.get("rules") or []:
            if not isinstance(rule, dict):
                continue
            if any(isinstance(c, dict) and (c.get("apiCall") is not None or c.get("configMap") is not None)
                   for c in _contexts(rule)):
                return True
            if _selectors(rule.get("match")) or _selectors(rule.get("exclude")):
                return True
            overrides = (rule.get("validate") or {}).get("failureActionOverrides") or []
            if any(isinstance(o, dict) and o.get("namespaceSelector") is not None for o in overrides):
                return True
    return False
