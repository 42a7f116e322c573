"""Kustomize's back-reference fix-up, for what a namespace change can move.

After the top kustomization is built, Kustomize points references at the objects'
new names and namespaces. Names only change here through ``namespace`` renaming a
``Namespace`` object, which nothing refers to, so name references stay as they are;
a reference held as a mapping with its own namespace follows its object to the new
namespace. The mapping references Kustomize knows are RoleBinding/ClusterRoleBinding
``subjects`` (to ServiceAccounts, done here) and a few rarer ones (webhook services,
a Node's config map, a StorageClass's secret), which raise the fallback signal.
"""

from __future__ import annotations

from typing import Any

from scanner.sources.kustomize.native_ids import (
    NativeResource,
    effective_namespace,
    is_cluster_scoped,
)
from scanner.sources.kustomize.native_yaml import UnsupportedKustomization

_BINDINGS = ("RoleBinding", "ClusterRoleBinding")


def check_subject_namespaces(resources: list[NativeResource]) -> None:
    """Kustomize refuses a build holding an RBAC RoleBinding whose ServiceAccount subject has a
    ``namespace`` that is not text (``namespace:`` left blank): "Invalid Input: namespace is
    blank for resource ...". A subject that is no mapping, or whose kind is not text, makes it
    crash. The overlay goes to the external renderer, which reports either."""
    for r in resources:
        if r.kind != "RoleBinding" or r.api_version.rpartition("/")[0] != "rbac.authorization.k8s.io":
            continue
        subjects = r.data.get("subjects")
        if not isinstance(subjects, list):
            continue
        for subject in subjects:
            if not isinstance(subject, dict) or ("kind" in subject and not isinstance(subject["kind"], str)):
                raise UnsupportedKustomization("subject is not a mapping with a text kind")
            if subject.get("kind") == "ServiceAccount" and "namespace" in subject \
                    and not isinstance(subject["namespace"], str):
                raise UnsupportedKustomization("RoleBinding subject with a blank namespace (kustomize refuses it)")


def fix_back_references(resources: list[NativeResource]) -> None:
    """Update references to objects a namespace transformation moved, in place."""
    if not any(r.previous for r in resources):
        return
    for r in resources:
        if _holds_other_reference(r):
            raise UnsupportedKustomization(f"reference held by {r.kind} after a namespace change")
    for referrer in resources:
        if referrer.kind in _BINDINGS and \
                referrer.api_version.rpartition("/")[0] == "rbac.authorization.k8s.io" and \
                referrer.data.get("subjects") is not None:
            _fix_subjects(referrer, resources)


def _holds_other_reference(r: NativeResource) -> bool:
    group = r.api_version.rpartition("/")[0]
    if r.kind in ("ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"):
        return group == "admissionregistration.k8s.io" and "webhooks" in r.data
    if r.kind == "Node":
        return "configSource" in (r.data.get("spec") or {})
    if r.kind == "StorageClass":
        return "secretRef" in (r.data.get("parameters") or {})
    return False


def _fix_subjects(referrer: NativeResource, resources: list[NativeResource]) -> None:
    subjects = referrer.data["subjects"]
    if not isinstance(subjects, list) or not all(isinstance(s, dict) for s in subjects):
        raise UnsupportedKustomization("subjects is not a list of mappings")
    reachable = _referable_by(referrer, subjects, resources)
    for subject in subjects:
        name = subject.get("name")
        if not isinstance(name, str):
            raise UnsupportedKustomization("subject without a name")
        candidates = reachable
        if "namespace" in subject:
            namespace = subject["namespace"]
            if not isinstance(namespace, str) or not namespace:
                raise UnsupportedKustomization("subject namespace is empty or not text")
            candidates = [c for c in reachable if _namespace_of(c, c.original()[1]) == namespace] or \
                [c for c in reachable if _namespace_of(c, c.namespace) == namespace]
        # Kustomize's name reference entry for ServiceAccounts names version v1 and no group:
        # a ServiceAccount of any group at version v1 is a candidate
        candidates = [c for c in candidates
                      if c.api_version.rpartition("/")[2] == "v1" and c.kind == "ServiceAccount"
                      and any(n == name for n, _ in c.previous)]
        if not candidates:
            continue
        if len({(c.name, c.namespace) for c in candidates}) > 1:
            raise UnsupportedKustomization(f"subject {name} matches several ServiceAccounts")
        referral = candidates[0]
        if referral.name == name and not referral.namespace:
            continue
        subject["name"] = referral.name
        if referral.namespace:
            subject["namespace"] = referral.namespace


def _namespace_of(r: NativeResource, namespace: str) -> str:
    """``namespace`` as Kustomize groups ``r`` by it: empty is ``default``."""
    return effective_namespace(r.api_version, r.kind, namespace)


def _referable_by(referrer: NativeResource, subjects: list[Any],
                  resources: list[NativeResource]) -> list[NativeResource]:
    """The objects ``referrer`` may refer to, as Kustomize narrows them by namespace."""
    if is_cluster_scoped(referrer.api_version, referrer.kind):
        return resources
    own = effective_namespace(referrer.api_version, referrer.kind, referrer.namespace)
    subject_namespaces = set()
    if referrer.kind == "RoleBinding":
        subject_namespaces = {s["namespace"] for s in subjects
                              if s.get("kind") == "ServiceAccount"
                              and isinstance(s.get("namespace"), str)}
    return [r for r in resources
            if is_cluster_scoped(r.api_version, r.kind)
            or effective_namespace(r.api_version, r.kind, r.namespace) == own
            or r.namespace in subject_namespaces]
