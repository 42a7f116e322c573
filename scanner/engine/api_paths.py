"""API server paths: the namespace a path reaches (a namespaced policy's ``apiCall`` may reach only
its own namespace, Kyverno's fix of CVE-2026-22039, whatever escapes and ``..`` the path holds),
which group/versions a current API server serves for each built-in resource, and which set of
objects a path reads (one per resource, across the equivalent group/versions of
:mod:`scanner.engine.api_versions`)."""

from __future__ import annotations

import re

from scanner.engine.api_versions import equivalent_versions
from scanner.engine.golang import path as gopath
from scanner.engine.kinds import plural

_NAMESPACE_SEGMENT = re.compile(r"/namespaces/([^/]+)")


def namespace_problem(url_path: str, policy_namespace: str) -> str | None:
    """Why a policy of ``policy_namespace`` may not call ``url_path``, or None when it may."""
    try:
        path = gopath.clean(gopath.path_unescape(url_path))
    except ValueError as exc:
        return str(exc)
    found = _NAMESPACE_SEGMENT.search(path)
    if found is None:
        return f"path {path} does not contain a namespace segment, which is required for namespaced policies"
    if found.group(1) != policy_namespace:
        return (f"path {path} refers to namespace {found.group(1)}, which is different from the policy "
                f"namespace {policy_namespace}")
    return None


# The group/versions a current API server serves for each built-in kind: the paths it answers.
_SERVED_TEXT = """
v1: Binding ComponentStatus ConfigMap Endpoints Event LimitRange Namespace Node PersistentVolume
    PersistentVolumeClaim Pod PodTemplate ReplicationController ResourceQuota Secret Service ServiceAccount
admissionregistration.k8s.io/v1: MutatingWebhookConfiguration ValidatingWebhookConfiguration
    ValidatingAdmissionPolicy ValidatingAdmissionPolicyBinding
apiextensions.k8s.io/v1: CustomResourceDefinition
apiregistration.k8s.io/v1: APIService
apps/v1: ControllerRevision DaemonSet Deployment ReplicaSet StatefulSet
autoscaling/v1: HorizontalPodAutoscaler
autoscaling/v2: HorizontalPodAutoscaler
batch/v1: CronJob Job
certificates.k8s.io/v1: CertificateSigningRequest
coordination.k8s.io/v1: Lease
discovery.k8s.io/v1: EndpointSlice
events.k8s.io/v1: Event
flowcontrol.apiserver.k8s.io/v1: FlowSchema PriorityLevelConfiguration
networking.k8s.io/v1: Ingress IngressClass IPAddress NetworkPolicy ServiceCIDR
node.k8s.io/v1: RuntimeClass
policy/v1: PodDisruptionBudget
rbac.authorization.k8s.io/v1: ClusterRole ClusterRoleBinding Role RoleBinding
scheduling.k8s.io/v1: PriorityClass
storage.k8s.io/v1: CSIDriver CSINode CSIStorageCapacity StorageClass VolumeAttachment VolumeAttributesClass
"""

def _served() -> dict[tuple[str, str], str]:
    served: dict[tuple[str, str], str] = {}
    for entry in re.split(r"\n(?=\S)", _SERVED_TEXT.strip()):
        api_version, kinds = entry.split(":", 1)
        for kind in kinds.split():
            served[(api_version, plural(kind))] = kind
    return served


def group_of(api_version: str) -> str:
    """The API group of ``api_version`` ("" for the core group)."""
    return api_version.rpartition("/")[0]


def stored_as(api_version: str, kind: str, resource: str) -> tuple[str, str]:
    """The set of objects ``resource`` (of ``kind``) of a group/version belongs to, whatever
    version it is written or read in: ``(group, resource)``, where the group is the one the
    resource is served under today (the least, when two serve it: ``v1`` and ``events.k8s.io``
    Events), after the equivalences of :func:`equivalent_versions` (an ``extensions/v1beta1``
    Ingress is a ``networking.k8s.io`` Ingress)."""
    group, _, version = api_version.rpartition("/")
    served = [g for g, v in equivalent_versions(group, version, kind)
              if (f"{g}/{v}" if g else v, resource) in BUILTIN_SERVED]
    return (min(served) if served else group), resource


def served_kind(api_version: str, resource: str) -> str | None:
    """The kind a current API server serves as ``resource`` of ``api_version``, or None when it
    serves no such built-in resource."""
    return BUILTIN_SERVED.get((api_version, resource))


BUILTIN_SERVED: dict[tuple[str, str], str] = _served()
