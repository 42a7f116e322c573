"""Resource identity as Kustomize sees it: group/version/kind, scope, id history, order.

Kustomize decides whether a kind is namespaced from the OpenAPI data it embeds (the
Kubernetes 1.21 API): only the group/version/kind pairs listed in
:data:`CLUSTER_SCOPED` are cluster-scoped; every other pair, CRDs included, counts as
namespaced. Output is sorted in Kustomize's legacy order: some kinds first, webhook
configurations last, then by group/version/kind, namespace and name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from scanner.sources.kustomize.native_yaml import UnsupportedKustomization, clone

Gvk = tuple[str, str, str]  # group, version, kind
Location = tuple[str | int, ...]  # keys and list indexes from the object's root
_MISSING = object()

_CLUSTER_SCOPED_TEXT = """
v1: Namespace Node PersistentVolume ComponentStatus
rbac.authorization.k8s.io/v1 rbac.authorization.k8s.io/v1beta1: ClusterRole ClusterRoleBinding
apiextensions.k8s.io/v1 apiextensions.k8s.io/v1beta1: CustomResourceDefinition
admissionregistration.k8s.io/v1 admissionregistration.k8s.io/v1beta1:
    MutatingWebhookConfiguration ValidatingWebhookConfiguration
apiregistration.k8s.io/v1 apiregistration.k8s.io/v1beta1: APIService
storage.k8s.io/v1 storage.k8s.io/v1beta1: StorageClass CSIDriver CSINode VolumeAttachment
scheduling.k8s.io/v1 scheduling.k8s.io/v1beta1: PriorityClass
node.k8s.io/v1 node.k8s.io/v1beta1: RuntimeClass
policy/v1beta1: PodSecurityPolicy
certificates.k8s.io/v1 certificates.k8s.io/v1beta1: CertificateSigningRequest
flowcontrol.apiserver.k8s.io/v1beta1: FlowSchema PriorityLevelConfiguration
networking.k8s.io/v1 networking.k8s.io/v1beta1: IngressClass
"""


def _cluster_scoped() -> frozenset[tuple[str, str]]:
    pairs: set[tuple[str, str]] = set()
    for entry in re.split(r"\n(?=\S)", _CLUSTER_SCOPED_TEXT.strip()):
        versions, kinds = entry.split(":", 1)
        for api_version in versions.split():
            pairs.update((api_version, kind) for kind in kinds.split())
    return frozenset(pairs)


CLUSTER_SCOPED: frozenset[tuple[str, str]] = _cluster_scoped()
NOT_NAMESPACEABLE = "_non_namespaceable_"

_ORDER_FIRST = (
    "Namespace", "ResourceQuota", "StorageClass", "CustomResourceDefinition", "ServiceAccount",
    "PodSecurityPolicy", "Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding", "ConfigMap",
    "Secret", "Endpoints", "Service", "LimitRange", "PriorityClass", "PersistentVolume",
    "PersistentVolumeClaim", "Deployment", "StatefulSet", "CronJob", "PodDisruptionBudget",
)
_ORDER_LAST = ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration")
_TYPE_ORDER = {**{k: i - len(_ORDER_FIRST) for i, k in enumerate(_ORDER_FIRST)},
               **{k: i + 1 for i, k in enumerate(_ORDER_LAST)}}


@dataclass(slots=True)
class NativeResource:
    """One object being rendered, with the (name, namespace) ids it had before.

    ``shared`` lists the places that hold one YAML node in Kustomize: a label or
    annotation one transformer adds where it was missing, at several paths of an
    object, is a single node there, so a later change at one place shows at all.
    """

    data: dict[str, Any]
    previous: list[tuple[str, str]] = field(default_factory=list)
    shared: list[tuple[Location, ...]] = field(default_factory=list)
    origin: tuple[str, int] | None = None  # the file read (real path) and the document's position
    patches: list[str] = field(default_factory=list)  # patch sources (real paths) applied

    def copy(self) -> NativeResource:
        return NativeResource(clone(self.data), list(self.previous), list(self.shared), self.origin,
                              list(self.patches))

    @property
    def api_version(self) -> str:
        return str(self.data["apiVersion"])

    @property
    def kind(self) -> str:
        return str(self.data["kind"])

    @property
    def name(self) -> str:
        return str(self.data["metadata"]["name"])

    @property
    def namespace(self) -> str:
        return str(self.data["metadata"].get("namespace") or "")

    @property
    def gvk(self) -> Gvk:
        return (*split_api_version(self.api_version), self.kind)

    def ids(self) -> list[tuple[str, str]]:
        """The current (name, namespace) and every earlier one, oldest first."""
        return [*self.previous, (self.name, self.namespace)]

    def original(self) -> tuple[str, str]:
        return self.previous[0] if self.previous else (self.name, self.namespace)

    def remember_id(self) -> None:
        self.previous.append((self.name, self.namespace))

    def check_shared(self) -> None:
        """Raise the fallback signal when places Kustomize shares one node now differ."""
        for places in self.shared:
            values = [v for v in (value_at(self.data, p) for p in places) if v is not _MISSING]
            if any(v != values[0] for v in values):
                raise UnsupportedKustomization(
                    f"{self.kind} {self.name}: change to a label or annotation Kustomize shares "
                    "between several fields")


def value_at(data: Any, location: Location) -> Any:
    """The value at ``location`` in ``data``, or a marker when it is missing."""
    for step in location:
        if isinstance(step, int):
            if not isinstance(data, list) or step >= len(data):
                return _MISSING
        elif not isinstance(data, dict) or step not in data:
            return _MISSING
        data = data[step]
    return data


def split_api_version(api_version: str) -> tuple[str, str]:
    group, _, version = api_version.rpartition("/")
    return group, version


def is_cluster_scoped(api_version: str, kind: str) -> bool:
    return (api_version, kind) in CLUSTER_SCOPED


def effective_namespace(api_version: str, kind: str, namespace: str) -> str:
    if is_cluster_scoped(api_version, kind):
        return NOT_NAMESPACEABLE
    return namespace or "default"


def check_resource(data: Any, path: str, origin: tuple[str, int] | None = None) -> NativeResource:
    """A loaded document as a resource, or the fallback signal if Kustomize would object;
    ``origin`` is the file it was read from and its position among the file's documents."""
    if not isinstance(data, dict):
        raise UnsupportedKustomization("document is not a mapping", path)
    api_version, kind, metadata = data.get("apiVersion"), data.get("kind"), data.get("metadata")
    if not (isinstance(api_version, str) and api_version and isinstance(kind, str) and kind):
        raise UnsupportedKustomization("document without apiVersion and kind", path)
    if kind.endswith("List") or kind in ("Kustomization", "Component"):
        raise UnsupportedKustomization(f"kind {kind} in resources", path)
    if kind == "Namespace" and api_version != "v1":
        raise UnsupportedKustomization("Namespace kind outside v1", path)
    if not isinstance(metadata, dict):
        raise UnsupportedKustomization("metadata is not a mapping", path)
    name, namespace = metadata.get("name"), metadata.get("namespace")
    if not isinstance(name, str) or not name or not isinstance(namespace, str | None):
        raise UnsupportedKustomization("metadata.name/namespace missing or not text", path)
    for key in ("labels", "annotations"):
        values = metadata.get(key)
        if values is not None and not isinstance(values, dict):
            raise UnsupportedKustomization(f"metadata.{key} is not a mapping", path)
        if values and not all(isinstance(v, str) for v in values.values()):
            raise UnsupportedKustomization(f"metadata.{key} value that is not text", path)
        if key == "annotations" and values and any(
                k.startswith(("config.kubernetes.io/", "internal.config.kubernetes.io/",
                              "kustomize.config.k8s.io/", "config.k8s.io/")) for k in values):
            raise UnsupportedKustomization("Kustomize's own annotations", path)
    return NativeResource(data, origin=origin)


def check_unique(resources: list[NativeResource], path: str) -> None:
    seen = set()
    for r in resources:
        key = (r.gvk, r.name, effective_namespace(r.api_version, r.kind, r.namespace))
        if key in seen:
            raise UnsupportedKustomization(f"two resources with the id {key}", path)
        seen.add(key)


def legacy_sort_key(r: NativeResource) -> tuple[int, str, str]:
    group, version = split_api_version(r.api_version)
    gvk_text = "_".join((group or "~G", version or "~V", r.kind or "~K"))
    gvk_string = ".".join((r.kind or "[noKind]", version or "[noVer]", group or "[noGrp]"))
    id_text = "|".join((gvk_string, r.namespace or "~X", r.name or "~N"))
    return _TYPE_ORDER.get(r.kind, 0), gvk_text, id_text
