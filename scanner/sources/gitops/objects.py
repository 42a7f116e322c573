"""Flux and Argo CD objects read as entry points: which folder of which scanned source they
deploy, and with which options; or, where they point outside the scanned sources, what is not
scanned and why. What an entry point is lives in :mod:`scanner.sources.gitops.entries`; each
tool's objects are read by :mod:`~scanner.sources.gitops.flux` and
:mod:`~scanner.sources.gitops.argo`.
"""

from __future__ import annotations

from scanner.sources.gitops.argo import application, application_set
from scanner.sources.gitops.entries import Catalog, Declared, Found, mapping_of
from scanner.sources.gitops.flux import flux_helm_release, flux_kustomization

FLUX_KUSTOMIZE = "kustomize.toolkit.fluxcd.io/"
FLUX_HELM = "helm.toolkit.fluxcd.io/"
FLUX_SOURCE = "source.toolkit.fluxcd.io/"
ARGO = "argoproj.io/"

CATALOG_KINDS = frozenset({"GitRepository", "OCIRepository", "HelmRepository", "Bucket", "ConfigMap", "Secret",
                           "ArtifactGenerator"})


def is_gitops_object(data: dict) -> bool:
    """Whether ``data`` is an object this module reads as an entry point."""
    api_version, kind = str(data.get("apiVersion") or ""), data.get("kind")
    return ((api_version.startswith(FLUX_KUSTOMIZE) and kind == "Kustomization")
            or (api_version.startswith(FLUX_HELM) and kind == "HelmRelease")
            or (api_version.startswith(ARGO) and kind in ("Application", "ApplicationSet")))


def entry_points(data: dict, declared: Declared, catalog: Catalog) -> list[Found]:
    """The entry points (and what is not scanned) of one GitOps object."""
    catalog.near = f"{declared.source}/{declared.path}"
    spec = mapping_of(data.get("spec"))
    kind = declared.kind
    if kind == "Kustomization":
        return [flux_kustomization(spec, declared, catalog)]
    if kind == "HelmRelease":
        return [flux_helm_release(spec, declared, catalog)]
    if kind == "Application":
        return application(spec, declared, catalog, data)
    return application_set(data, declared, catalog)
