"""Offline answers to Kyverno's cluster look-ups, served from the resources of the same cluster.

Two views of one index. The CLI's (``kyverno test`` with ``clusterResources``): a fake API
server built from the loaded resources, each group/version its own set of objects, any list path
answered (empty when nothing was loaded). A real cluster's (``cluster=True``: scans and
``scanner apply``): a resource is one set of objects whatever group/version it was written or is
read in (an ``autoscaling/v2`` HPA is listed by ``/apis/autoscaling/v1/...``, an
``extensions/v1beta1`` Deployment by ``/apis/apps/v1/...``), a path the server would not serve is
"not found", custom kinds keep the scope their CRDs give them, and the object under admission is
not yet stored when it is created (:meth:`ResourceLookup.admitting`).

Served: ``apiCall`` GETs of ``/api/...`` and ``/apis/...`` list and get paths, ConfigMaps for
``configMap`` context entries, and Namespace labels for ``namespaceSelector``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from scanner.engine.api_paths import BUILTIN_SERVED, group_of, served_kind, stored_as
from scanner.engine.context import ContextError, ContextLoader
from scanner.engine.kinds import cluster_scoped_in_cluster, not_found, plural
from scanner.lookup.query import query_filter

NOT_SERVED = "the server could not find the requested resource"
BUILT_IN_NAMESPACES = ("default", "kube-node-lease", "kube-public", "kube-system")
NAME_LABEL = "kubernetes.io/metadata.name"  # set by the API server on every Namespace
Key = tuple[str, str]  # (group/version or stored group, resource name)
Ident = tuple[str, str]  # (namespace, name)


def _namespace_and_name(resource: dict) -> Ident:
    meta = resource.get("metadata") or {}
    return str(meta.get("namespace") or ""), str(meta.get("name") or "")


class ResourceLookup:
    """An index of resources by API group/version (or group), resource name, namespace and name.

    Like the API server, one object is kept per (resource, namespace, name): the first one
    loaded. Lists are sorted by namespace, then name."""

    def __init__(self, resources: Iterable[dict] = (), *, cluster: bool = False) -> None:
        self.cluster = cluster
        self._items: dict[Key, dict[Ident, dict]] = {}
        self._sorted: dict[Key, list[Ident]] = {}
        self._plurals: dict[tuple[str, str], str] = {}  # (group, kind) -> resource name, from CRDs
        self._kinds: dict[tuple[str, str], str] = {}  # (group/version, resource) -> kind: paths served
        self.scopes: dict[tuple[str, str], bool] = {}  # (group, kind) -> cluster-scoped, from CRDs
        self._custom: set[str] | None = None  # custom group/versions the cluster holds kinds of
        self.namespaces: dict[str, dict] = {}
        for resource in resources:
            self.add(resource)

    def add_definition(self, crd: dict) -> None:
        """Serve the kind a CustomResourceDefinition defines under its own resource name (and, in
        a real cluster, under each version it serves, with its scope); only resources added
        afterwards are served under it."""
        spec = _mapping(crd.get("spec"))
        names = _mapping(spec.get("names"))
        if not (names.get("kind") and names.get("plural")):
            return
        group, kind, resource = str(spec.get("group") or ""), str(names["kind"]), str(names["plural"])
        self._plurals[(group, kind)] = resource
        self.scopes[(group, kind)] = spec.get("scope") == "Cluster"
        versions = [v.get("name") for v in spec.get("versions") or []
                    if isinstance(v, dict) and v.get("served") is not False]
        for version in [*versions, spec.get("version")]:
            if isinstance(version, str) and version:
                self._kinds.setdefault((f"{group}/{version}" if group else version, resource), kind)
                self._custom = None

    def is_cluster_scoped(self, api_version: str, kind: str) -> bool:
        """Whether the cluster keeps ``kind`` cluster-scoped (its CRD, else the known kinds)."""
        return cluster_scoped_in_cluster(api_version, kind, self.scopes)

    def _key(self, api_version: str, kind: str, resource: str) -> Key:
        return stored_as(api_version, kind, resource) if self.cluster else (api_version, resource)

    def _resource_name(self, api_version: str, kind: str) -> str:
        return self._plurals.get((group_of(api_version), kind)) or plural(kind)

    def add(self, resource: dict) -> None:
        api_version, kind = str(resource.get("apiVersion") or ""), str(resource.get("kind") or "")
        if not api_version or not kind:
            return
        name = self._resource_name(api_version, kind)
        if (api_version, name) not in self._kinds:
            self._kinds[(api_version, name)] = kind
            self._custom = None
        key = self._key(api_version, kind, name)
        stored = self._items.setdefault(key, {})
        ident = _namespace_and_name(resource)
        if ident in stored:
            return
        stored[ident] = resource
        self._sorted.pop(key, None)
        if kind == "Namespace" and api_version == "v1" and ident[1]:
            self.namespaces[ident[1]] = resource

    def add_namespaces(self) -> None:
        """The Namespaces a real cluster has beside those loaded: the built-in ones and those its
        objects live in (an object exists only in an existing Namespace), each with the label
        the API server gives every Namespace (``kubernetes.io/metadata.name``)."""
        key = self._key("v1", "Namespace", "namespaces")
        stored = self._items.setdefault(key, {})
        wanted = set(BUILT_IN_NAMESPACES)
        for objects in self._items.values():
            wanted.update(namespace for namespace, _ in objects if namespace)
        for name in sorted(wanted - set(self.namespaces)):
            self.add({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
        for ident, namespace in list(stored.items()):
            meta = _mapping(namespace.get("metadata"))
            labels = _mapping(meta.get("labels"))
            if ident[1] and labels.get(NAME_LABEL) != ident[1]:
                labeled = {**namespace, "metadata": {**meta, "labels": {**labels, NAME_LABEL: ident[1]}}}
                stored[ident] = self.namespaces[ident[1]] = labeled

    def objects(self, kinds: set[tuple[str, str]] | None = None) -> Iterator[dict]:
        """Every stored object, or those of the (apiVersion, kind) pairs ``kinds``."""
        for stored in self._items.values():
            for obj in stored.values():
                if kinds is None or (obj.get("apiVersion"), obj.get("kind")) in kinds:
                    yield obj

    def namespace_labels(self, namespace: str) -> dict[str, Any] | None:
        found = self.namespaces.get(namespace)
        return ((found or {}).get("metadata") or {}).get("labels") if found else None

    def admitting(self, resource: dict, operation: str) -> ContextLoader:
        """The look-ups of an admission request for ``resource``: in a real cluster, an object
        being created is not stored yet, so its own look-ups do not see it; on UPDATE and DELETE
        the stored object (offline: the same one) is seen."""
        if not self.cluster or operation != "CREATE":
            return self
        api_version, kind = str(resource.get("apiVersion") or ""), str(resource.get("kind") or "")
        if not api_version or not kind:
            return self
        return _Admitting(self, (self._key(api_version, kind, self._resource_name(api_version, kind)),
                                 _namespace_and_name(resource)))

    # -- ContextLoader -------------------------------------------------------------------

    def config_map(self, name: str, namespace: str, hidden: tuple[Key, Ident] | None = None) -> dict | None:
        key = self._key("v1", "ConfigMap", "configmaps")
        if hidden is not None and hidden == (key, (namespace, name)):
            return None
        return self._items.get(key, {}).get((namespace, name))

    def api_call(self, url_path: str, method: str, data: Any, hidden: tuple[Key, Ident] | None = None) -> Any:
        if not url_path.startswith("/"):  # an external service, not the API server
            raise ContextError(f"external service calls are not made offline ({url_path})")
        if method.upper() != "GET":
            raise ContextError(f"offline API calls answer GET only, not {method} {url_path}")
        path, _, query = url_path.partition("?")
        if query and not self.cluster:  # the CLI's fake server: ignoring them would miscount
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
        if len(rest) not in (1, 2):
            raise ContextError(f"unsupported API path {url_path!r}")
        kind = self._served(api_version, rest[0])
        if kind is None:
            raise ContextError(f"failed to GET resource with raw url: {url_path}: {NOT_SERVED}")
        if len(rest) == 1:
            listed = self._list(api_version, rest[0], kind, namespace, hidden)
            if query:
                keep = query_filter(query, url_path)
                listed["items"] = [item for item in listed["items"] if keep(item)]
            return listed
        if query:
            raise ContextError(f"not supported: query parameters of a GET of one object ({url_path})")
        return self._get(api_version, kind, rest[0], namespace or "", rest[1], url_path, hidden)

    def _served(self, api_version: str, resource: str) -> str | None:
        """The kind served at ``api_version``/``resource``, or None when a real cluster serves no
        such path: one of its built-in resources, a kind it holds objects or a CRD of, or a
        resource of a custom group/version it holds such kinds of (a project's CRDs are installed
        together, often from outside the scanned sources). The CLI's fake server answers any path."""
        kind = self._kinds.get((api_version, resource))
        if not self.cluster:
            return kind or resource
        kind = kind or served_kind(api_version, resource)
        if kind is None and api_version in self._custom_versions():
            return resource
        return kind

    def _custom_versions(self) -> set[str]:
        if self._custom is None:
            built_in = {version for version, _ in BUILTIN_SERVED}
            self._custom = {version for version, _ in self._kinds if version not in built_in and "/" in version}
        return self._custom

    def _as_read(self, obj: dict, api_version: str) -> dict:
        """``obj`` as read at ``api_version`` (the server answers in the version asked for)."""
        if obj.get("apiVersion") == api_version:
            return obj
        return {**obj, "apiVersion": api_version}

    def _list(self, api_version: str, resource: str, kind: str, namespace: str | None,
              hidden: tuple[Key, Ident] | None) -> dict:
        key = self._key(api_version, kind, resource)
        stored = self._items.get(key, {})
        keys = self._sorted.get(key)
        if keys is None:
            keys = self._sorted[key] = sorted(stored)
        skip = hidden[1] if hidden is not None and hidden[0] == key else None
        items = [self._as_read(stored[k], api_version) for k in keys
                 if (namespace is None or k[0] == namespace) and k != skip]
        return {"apiVersion": api_version, "kind": f"{kind}List", "metadata": {"resourceVersion": ""},
                "items": items}

    def _get(self, api_version: str, kind: str, resource: str, namespace: str, name: str, url: str,
             hidden: tuple[Key, Ident] | None) -> dict:
        key = self._key(api_version, kind, resource)
        found = self._items.get(key, {}).get((namespace, name))
        if found is None or hidden == (key, (namespace, name)):
            raise ContextError(f"failed to GET resource with raw url: {url}: "
                               f"{not_found(api_version, resource, name)}")
        return self._as_read(found, api_version)


def cluster_of(resources: Iterable[dict]) -> ResourceLookup:
    """A real cluster holding ``resources``: their CRDs first (resource names and scopes of their
    kinds), then every object. An object of a kind the cluster keeps cluster-scoped loses, in
    place, the namespace a loader gave it (the API server keeps none)."""
    objects = list(resources)
    lookup = ResourceLookup(cluster=True)
    for obj in objects:
        if obj.get("kind") == "CustomResourceDefinition":
            lookup.add_definition(obj)
    for obj in objects:
        meta = obj.get("metadata")
        if isinstance(meta, dict) and meta.get("namespace") and lookup.is_cluster_scoped(
                str(obj.get("apiVersion") or ""), str(obj.get("kind") or "")):
            del meta["namespace"]
        lookup.add(obj)
    lookup.add_namespaces()
    return lookup


class _Admitting:
    """The look-ups of one resource's CREATE: the lookup without the resource itself."""

    __slots__ = ("hidden", "lookup")

    def __init__(self, lookup: ResourceLookup, hidden: tuple[Key, Ident]) -> None:
        self.lookup, self.hidden = lookup, hidden

    def config_map(self, name: str, namespace: str) -> dict | None:
        return self.lookup.config_map(name, namespace, self.hidden)

    def api_call(self, url_path: str, method: str, data: Any) -> Any:
        return self.lookup.api_call(url_path, method, data, self.hidden)


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


def param_kinds(raw_policies: Iterable[dict]) -> set[tuple[str, str]]:
    """The (apiVersion, kind) of every CEL ``paramKind`` the policies' rules name."""
    found = set()
    for policy in raw_policies:
        for rule in (policy.get("spec") or {}).get("rules") or []:
            cel = ((rule.get("validate") or {}).get("cel") or {}) if isinstance(rule, dict) else {}
            kind = cel.get("paramKind") if isinstance(cel, dict) else None
            if isinstance(kind, dict):
                found.add((str(kind.get("apiVersion") or ""), str(kind.get("kind") or "")))
    return found


def policies_need_lookup(raw_policies: Iterable[dict]) -> bool:
    """Whether any policy reads cluster data: apiCall or configMap context entries, a
    namespaceSelector in match/exclude or in failure action overrides, CEL parameters or CEL's
    ``namespaceObject``."""
    for policy in raw_policies:
        spec = policy.get("spec") or {}
        if spec.get("paramKind") is not None:
            return True
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
            cel = (rule.get("validate") or {}).get("cel")
            if isinstance(cel, dict) and (cel.get("paramKind") is not None or "namespaceObject" in repr(cel)):
                return True
            overrides = (rule.get("validate") or {}).get("failureActionOverrides") or []
            if any(isinstance(o, dict) and o.get("namespaceSelector") is not None for o in overrides):
                return True
    return False


def _mapping(value: Any) -> dict:
    """``value`` if it is a mapping, else an empty one."""
    return value if isinstance(value, dict) else {}
