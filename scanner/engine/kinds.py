"""Which kinds are cluster-scoped, as the Kyverno CLI decides when it loads resources.

Only the built-in core kinds below are cluster-scoped; every other kind, CRDs included,
is treated as namespaced and so gets namespace ``default`` when it has none (spec 0.3).
"""

from __future__ import annotations

CLUSTER_SCOPED_KINDS: frozenset[str] = frozenset(
    {
        "APIService",
        "CertificateSigningRequest",
        "ClusterRole",
        "ClusterRoleBinding",
        "ComponentStatus",
        "CSIDriver",
        "CSINode",
        "CustomResourceDefinition",
        "DeviceClass",
        "FlowSchema",
        "IngressClass",
        "IPAddress",
        "MutatingWebhookConfiguration",
        "Namespace",
        "Node",
        "PersistentVolume",
        "PriorityClass",
        "PriorityLevelConfiguration",
        "ResourceSlice",
        "RuntimeClass",
        "ServiceCIDR",
        "StorageClass",
        "ValidatingAdmissionPolicy",
        "ValidatingAdmissionPolicyBinding",
        "ValidatingWebhookConfiguration",
        "VolumeAttachment",
        "VolumeAttributesClass",
        # the *Review kinds
        "TokenReview",
        "SelfSubjectReview",
        "SelfSubjectAccessReview",
        "SelfSubjectRulesReview",
        "SubjectAccessReview",
    }
)


def is_cluster_scoped(kind: str) -> bool:
    """True if ``kind`` is one of the built-in cluster-scoped kinds (``*Review`` included)."""
    return kind in CLUSTER_SCOPED_KINDS or (kind.endswith("Review") and kind != "Review")
