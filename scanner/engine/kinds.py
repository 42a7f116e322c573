"""Kinds as the Kyverno CLI and the API server see them: which are cluster-scoped, their
resource names, and the API server's not-found text.

The CLI's view (:func:`is_cluster_scoped`, used when loading resources): only the built-in core
kinds below are cluster-scoped; every other kind, CRDs included, is treated as namespaced and so
gets namespace ``default`` when it has none (spec 0.3). A real cluster's view
(:func:`cluster_scoped_in_cluster`): a custom kind is cluster-scoped when its CRD says so, or when
it is a well-known cluster-scoped kind of a widely deployed project.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache

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


@lru_cache(maxsize=4096)
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


# Custom kinds of widely deployed projects whose CRDs make them cluster-scoped, by (group, kind);
# ``*`` stands for every kind of the group. A CRD found beside the objects decides before this.
CLUSTER_SCOPED_CUSTOM: frozenset[tuple[str, str]] = frozenset(
    {
        ("apiextensions.crossplane.io", "CompositeResourceDefinition"),
        ("apiextensions.crossplane.io", "Composition"),
        ("apiextensions.crossplane.io", "CompositionRevision"),
        ("argoproj.io", "ClusterWorkflowTemplate"),
        ("aquasecurity.github.io", "ClusterComplianceReport"),
        ("aquasecurity.github.io", "ClusterConfigAuditReport"),
        ("aquasecurity.github.io", "ClusterRbacAssessmentReport"),
        ("aquasecurity.github.io", "ClusterVulnerabilityReport"),
        ("cert-manager.io", "ClusterIssuer"),
        ("cilium.io", "CiliumClusterwideEnvoyConfig"),
        ("cilium.io", "CiliumClusterwideNetworkPolicy"),
        ("cilium.io", "CiliumLoadBalancerIPPool"),
        ("cilium.io", "CiliumNode"),
        ("constraints.gatekeeper.sh", "*"),
        ("crd.projectcalico.org", "BGPConfiguration"),
        ("crd.projectcalico.org", "FelixConfiguration"),
        ("crd.projectcalico.org", "GlobalNetworkPolicy"),
        ("crd.projectcalico.org", "GlobalNetworkSet"),
        ("crd.projectcalico.org", "IPPool"),
        ("external-secrets.io", "ClusterExternalSecret"),
        ("external-secrets.io", "ClusterSecretStore"),
        ("gateway.networking.k8s.io", "GatewayClass"),
        ("karpenter.k8s.aws", "EC2NodeClass"),
        ("karpenter.sh", "NodeClaim"),
        ("karpenter.sh", "NodePool"),
        ("kueue.x-k8s.io", "ClusterQueue"),
        ("kueue.x-k8s.io", "ResourceFlavor"),
        ("kyverno.io", "ClusterCleanupPolicy"),
        ("kyverno.io", "ClusterPolicy"),
        ("kyverno.io", "GlobalContextEntry"),
        ("pkg.crossplane.io", "Configuration"),
        ("pkg.crossplane.io", "DeploymentRuntimeConfig"),
        ("pkg.crossplane.io", "Function"),
        ("pkg.crossplane.io", "Provider"),
        ("policies.kyverno.io", "DeletingPolicy"),
        ("policies.kyverno.io", "GeneratingPolicy"),
        ("policies.kyverno.io", "ImageValidatingPolicy"),
        ("policies.kyverno.io", "MutatingPolicy"),
        ("policies.kyverno.io", "ValidatingPolicy"),
        ("projectcalico.org", "GlobalNetworkPolicy"),
        ("projectcalico.org", "GlobalNetworkSet"),
        ("projectcalico.org", "IPPool"),
        ("snapshot.storage.k8s.io", "VolumeSnapshotClass"),
        ("snapshot.storage.k8s.io", "VolumeSnapshotContent"),
        ("templates.gatekeeper.sh", "ConstraintTemplate"),
        ("tekton.dev", "ClusterTask"),
        ("trust.cert-manager.io", "Bundle"),
        ("wgpolicyk8s.io", "ClusterPolicyReport"),
    }
)


def cluster_scoped_in_cluster(api_version: str, kind: str,
                              defined: Mapping[tuple[str, str], bool] | None = None) -> bool:
    """Whether a real cluster keeps ``kind`` of ``api_version`` cluster-scoped: a CRD in ``defined``
    ((group, kind) -> cluster-scoped) decides first, then the built-in kinds, then the well-known
    custom kinds. Unlike the CLI's view (:func:`is_cluster_scoped`), a custom kind is not taken
    for namespaced only because it is not built in."""
    group = api_version.rpartition("/")[0]
    if defined:
        found = defined.get((group, kind))
        if found is not None:
            return found
    if "." not in group or (group.endswith(".k8s.io") and (group, kind) not in CLUSTER_SCOPED_CUSTOM):
        return is_cluster_scoped(kind)
    return (group, kind) in CLUSTER_SCOPED_CUSTOM or (group, "*") in CLUSTER_SCOPED_CUSTOM
