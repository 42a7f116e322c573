"""Kinds as the Kyverno CLI and the API server see them: which are cluster-scoped (as the CLI
decides when it loads resources), their resource names, and the API server's not-found text.

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


def plural(kind: str) -> str:
    """The API resource name of a kind (``NetworkPolicy`` -> ``networkpolicies``, ``Gateway`` ->
    ``gateways``): the names real API servers serve, which the policies' URL paths use."""
    lower = kind.lower()
    if lower.endswith("s") or lower.endswith("x") or lower.endswith("ch") or lower.endswith("sh"):
        return lower if lower.endswith("endpoints") else lower + "es"
    if lower.endswith("y") and len(lower) > 1 and lower[-2] not in "aeiou":
        return lower[:-1] + "ies"
    return lower + "s"


def not_found(api_version: str, resource: str, name: str) -> str:
    """The API server's text for a missing object of ``resource`` (a plural)."""
    group = api_version.rpartition("/")[0]
    return f'{resource}.{group} "{name}" not found' if group else f'{resource} "{name}" not found'
