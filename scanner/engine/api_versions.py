"""The group/versions an API server serves one resource at, and the older ones it was served at.

A manifest written in an older group/version (``extensions/v1beta1`` DaemonSet, ``batch/v1beta1``
CronJob, ``policy/v1beta1`` PodDisruptionBudget, ...) is the same object as one written in the
version served today: the API server stores one resource and converts between its versions.
Kyverno registers its webhooks with ``matchPolicy: Equivalent``, so a request for a resource in any
of its group/versions is converted to a version the webhook names before Kyverno sees it: a rule
for ``apps/v1/DaemonSet`` (an autogen rule, say) applies to a DaemonSet written as
``extensions/v1beta1``. One table, by resource, not one case per policy.
"""

from __future__ import annotations

from functools import lru_cache

# kind -> (group/versions served today, group/versions served only by older API servers).
# Versions served today are equivalent to each other; an older one converts to any of them.
_FAMILIES: tuple[tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]], ...] = (
    (("Deployment",), ("apps/v1",), ("apps/v1beta1", "apps/v1beta2", "extensions/v1beta1")),
    (("DaemonSet", "ReplicaSet"), ("apps/v1",), ("apps/v1beta2", "extensions/v1beta1")),
    (("StatefulSet", "ControllerRevision"), ("apps/v1",), ("apps/v1beta1", "apps/v1beta2")),
    (("CronJob",), ("batch/v1",), ("batch/v1beta1", "batch/v2alpha1")),
    (("HorizontalPodAutoscaler",), ("autoscaling/v2", "autoscaling/v1"),
     ("autoscaling/v2beta2", "autoscaling/v2beta1")),
    (("PodDisruptionBudget",), ("policy/v1",), ("policy/v1beta1",)),
    (("Ingress",), ("networking.k8s.io/v1",), ("networking.k8s.io/v1beta1", "extensions/v1beta1")),
    (("IngressClass",), ("networking.k8s.io/v1",), ("networking.k8s.io/v1beta1",)),
    (("NetworkPolicy",), ("networking.k8s.io/v1",), ("extensions/v1beta1",)),
    (("Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding"), ("rbac.authorization.k8s.io/v1",),
     ("rbac.authorization.k8s.io/v1beta1", "rbac.authorization.k8s.io/v1alpha1")),
    (("StorageClass", "CSIDriver", "CSINode", "CSIStorageCapacity"), ("storage.k8s.io/v1",),
     ("storage.k8s.io/v1beta1",)),
    (("VolumeAttachment",), ("storage.k8s.io/v1",), ("storage.k8s.io/v1beta1", "storage.k8s.io/v1alpha1")),
    (("PriorityClass",), ("scheduling.k8s.io/v1",), ("scheduling.k8s.io/v1beta1", "scheduling.k8s.io/v1alpha1")),
    (("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"), ("admissionregistration.k8s.io/v1",),
     ("admissionregistration.k8s.io/v1beta1",)),
    (("ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"), ("admissionregistration.k8s.io/v1",),
     ("admissionregistration.k8s.io/v1beta1", "admissionregistration.k8s.io/v1alpha1")),
    (("CustomResourceDefinition",), ("apiextensions.k8s.io/v1",), ("apiextensions.k8s.io/v1beta1",)),
    (("APIService",), ("apiregistration.k8s.io/v1",), ("apiregistration.k8s.io/v1beta1",)),
    (("CertificateSigningRequest",), ("certificates.k8s.io/v1",), ("certificates.k8s.io/v1beta1",)),
    (("Lease",), ("coordination.k8s.io/v1",), ("coordination.k8s.io/v1beta1",)),
    (("EndpointSlice",), ("discovery.k8s.io/v1",), ("discovery.k8s.io/v1beta1",)),
    (("Event",), ("v1", "events.k8s.io/v1"), ("events.k8s.io/v1beta1",)),
    (("RuntimeClass",), ("node.k8s.io/v1",), ("node.k8s.io/v1beta1", "node.k8s.io/v1alpha1")),
    (("FlowSchema", "PriorityLevelConfiguration"), ("flowcontrol.apiserver.k8s.io/v1",),
     ("flowcontrol.apiserver.k8s.io/v1beta3", "flowcontrol.apiserver.k8s.io/v1beta2",
      "flowcontrol.apiserver.k8s.io/v1beta1")),
)


def _split(api_version: str) -> tuple[str, str]:
    group, _, version = api_version.rpartition("/")
    return group, version


_SERVED: dict[tuple[str, str, str], tuple[tuple[str, str], ...]] = {}
for _kinds, _served, _older in _FAMILIES:
    for _kind in _kinds:
        for _api_version in (*_served, *_older):
            _SERVED[(*_split(_api_version), _kind)] = tuple(_split(v) for v in _served)


@lru_cache(maxsize=1024)
def equivalent_versions(group: str, version: str, kind: str) -> tuple[tuple[str, str], ...]:
    """The (group, version) pairs a resource of this group/version/kind is matched as: its own,
    then each version served today for the same resource (the API server converts to them)."""
    own = (group, version)
    served = _SERVED.get((group, version, kind), ())
    return (own, *(gv for gv in served if gv != own))

