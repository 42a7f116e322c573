"""Flux objects read as entry points.

- ``Kustomization`` (kustomize.toolkit.fluxcd.io): ``sourceRef`` (a ``GitRepository``, or an
  ``ExternalArtifact`` an ``ArtifactGenerator`` copies from one), ``path``, ``targetNamespace``,
  ``namePrefix``/``nameSuffix``, ``patches``, ``images``, ``postBuild.substitute`` and
  ``substituteFrom`` (ConfigMaps and Secrets of the sources).
- ``HelmRelease`` (helm.toolkit.fluxcd.io): ``chart.spec.chart`` as a path in a
  ``GitRepository``, ``values``, ``valuesFrom``, ``targetNamespace``, ``releaseName``.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

import yaml

from scanner.sources.gitops.entries import (
    Catalog,
    Declared,
    EntryPoint,
    Found,
    NotScanned,
    clean_path,
    mapping_of,
    merge_values,
    string_map,
)

BOOTSTRAP = ("flux-system", "flux-system")  # the GitRepository `flux bootstrap` makes of its own repository


def flux_kustomization(spec: dict, declared: Declared, catalog: Catalog) -> Found:
    """The entry point of a Flux ``Kustomization`` (its ``spec``)."""
    if not mapping_of(spec.get("sourceRef")):  # (an object Flux would refuse: listed, never passed over)
        return NotScanned(declared, "(no sourceRef)", "the Kustomization names no source")
    source, target = _git_source(spec.get("sourceRef"), declared, catalog)
    if source is None:
        return NotScanned(declared, target, "the source is not one of the scanned sources")
    source, path = _artifact_path(source, clean_path(spec.get("path")))
    if path is None:
        return NotScanned(declared, target, f"path {spec.get('path')!r} is not copied into the artifact")
    post_build = spec.get("postBuild")
    substitute = None
    if isinstance(post_build, dict):
        variables: dict[str, str] = {}
        for ref in post_build.get("substituteFrom") or []:
            if isinstance(ref, dict):
                variables.update(_data_of(ref, declared.namespace, catalog))
        variables.update(string_map(post_build.get("substitute")))  # inline values take precedence
        substitute = tuple(sorted(variables.items()))
    target_namespace = spec.get("targetNamespace")
    return EntryPoint(
        declared, source, path, "kustomize",
        namespace=str(target_namespace) if target_namespace else None, set_namespace=bool(target_namespace),
        name_prefix=str(spec.get("namePrefix") or ""), name_suffix=str(spec.get("nameSuffix") or ""),
        patches=json.dumps(spec.get("patches") or []), images=json.dumps(spec.get("images") or []),
        substitute=substitute)


def flux_helm_release(spec: dict, declared: Declared, catalog: Catalog) -> Found:
    """The entry point of a Flux ``HelmRelease`` (its ``spec``) whose chart is in a scanned source."""
    chart = ((spec.get("chart") or {}).get("spec") or {}) if isinstance(spec.get("chart"), dict) else {}
    if not chart:
        ref = mapping_of(spec.get("chartRef"))
        return NotScanned(declared, f"{ref.get('kind', 'chartRef')} {ref.get('name', '')}".strip(),
                          "the chart is not one of the scanned sources")
    source, target = _git_source(chart.get("sourceRef"), declared, catalog)
    if source is None:
        name = chart.get("chart") or ""
        return NotScanned(declared, f"{target} chart {name}".strip(), "the chart is not one of the scanned sources")
    values: dict[str, Any] = {}
    for ref in spec.get("valuesFrom") or []:
        if not isinstance(ref, dict):
            continue
        data = _data_of(ref, declared.namespace, catalog)
        key = str(ref.get("valuesKey") or "values.yaml")
        if ref.get("targetPath"):
            _set_path(values, str(ref["targetPath"]), data.get(key, ""))
        elif key in data:
            loaded = yaml.safe_load(data[key])
            if isinstance(loaded, dict):
                values = merge_values(values, loaded)
    if isinstance(spec.get("values"), dict):
        values = merge_values(values, spec["values"])
    namespace = spec.get("targetNamespace") or declared.namespace
    release = spec.get("releaseName") or (f"{spec['targetNamespace']}-{declared.name}"
                                          if spec.get("targetNamespace") else declared.name)
    return EntryPoint(declared, source, clean_path(chart.get("chart")), "helm", namespace=str(namespace),
                      release=str(release), values=json.dumps(values),
                      values_files=tuple(clean_path(f) for f in chart.get("valuesFiles") or []))


def _git_source(ref: Any, declared: Declared, catalog: Catalog) -> tuple[str | None, str]:
    """The scanned source a Flux ``sourceRef`` names, or None and the target to report."""
    ref = mapping_of(ref)
    kind, name = str(ref.get("kind") or ""), str(ref.get("name") or "")
    namespace = str(ref.get("namespace") or declared.namespace)
    target = f"{kind} {namespace}/{name}"
    if kind == "ExternalArtifact":
        return _generated_artifact(namespace, name, target, catalog, declared.source)
    if kind != "GitRepository":
        found = catalog.get(kind, namespace, name)
        url = ((found or {}).get("spec") or {}).get("url") if found else None
        return None, str(url or target)
    return _repository_source(catalog, namespace, name, declared.source)


def _repository_source(catalog: Catalog, namespace: str, name: str, declared_in: str) -> tuple[str | None, str]:
    """The scanned source a ``GitRepository`` is, or None and what to report. A repository that
    ``flux bootstrap`` generates (``flux-system/flux-system``) and the sources do not define is the
    repository its users are found in."""
    repository = catalog.get("GitRepository", namespace, name)
    if repository is None:
        if (namespace, name) == BOOTSTRAP:
            return declared_in, f"GitRepository {namespace}/{name}"
        return None, f"GitRepository {namespace}/{name} (not found in the scanned sources)"
    url = str((repository.get("spec") or {}).get("url") or "")
    return catalog.source_of(url), url or f"GitRepository {namespace}/{name}"


def _generated_artifact(namespace: str, name: str, target: str, catalog: Catalog,
                        declared_in: str) -> tuple[str | None, str]:
    """The scanned source an ``ExternalArtifact`` of a Flux ``ArtifactGenerator`` copies from, as
    ``source#from=to;...`` (the copies map the artifact's paths to the repository's)."""
    for generator in catalog.all("ArtifactGenerator", namespace):
        spec = mapping_of(generator.get("spec"))
        artifact = next((a for a in spec.get("artifacts") or [] if isinstance(a, dict) and a.get("name") == name), None)
        if artifact is None:
            continue
        aliases = {str(s.get("alias")): s for s in spec.get("sources") or [] if isinstance(s, dict)}
        copies: list[tuple[str, str]] = []
        source_name = None
        for copy in artifact.get("copy") or []:
            origin, _, rest = str(copy.get("from") or "").lstrip("@").partition("/")
            ref = aliases.get(origin) or {}
            if ref.get("kind") != "GitRepository":
                return None, target
            scanned, url = _repository_source(catalog, str(ref.get("namespace") or namespace), str(ref.get("name")),
                                              declared_in)
            if scanned is None or (source_name is not None and scanned != source_name):
                return None, url
            source_name = scanned
            to = str(copy.get("to") or "").removeprefix("@artifact").strip("/")
            copies.append((_glob_base(rest), to))
        if source_name is not None:
            return source_name + "#" + ";".join(f"{f}={t}" for f, t in copies), target
    return None, f"{target} (no ArtifactGenerator of the scanned sources makes it)"


def _glob_base(pattern: str) -> str:
    """The folder a copy's ``from`` glob starts at (``apps/base/**`` -> ``apps/base``)."""
    parts = []
    for part in pattern.split("/"):
        if any(c in part for c in "*?["):
            break
        parts.append(part)
    return "/".join(parts)


def _artifact_path(source: str, path: str) -> tuple[str, str | None]:
    """The scanned source and the repository path of an artifact path (``source#copies``)."""
    if "#" not in source:
        return source, path
    name, _, copies = source.partition("#")
    for mapping in copies.split(";"):
        origin, _, to = mapping.partition("=")
        if not to or path == to or path.startswith(to + "/"):
            rest = path[len(to):].strip("/") if to else path
            return name, "/".join(p for p in (origin, rest) if p)
    return name, None


def _data_of(ref: dict, namespace: str, catalog: Catalog) -> dict[str, str]:
    """The data of a ConfigMap or Secret a Flux object refers to (Secret data decoded)."""
    kind, name = str(ref.get("kind") or ""), str(ref.get("name") or "")
    found = catalog.get(kind, namespace, name)
    if found is None:
        return {}
    data = string_map(found.get("data"))
    if kind == "Secret":
        decoded = {}
        for key, value in data.items():
            try:
                decoded[key] = base64.b64decode(value, validate=True).decode()
            except (binascii.Error, UnicodeDecodeError):
                continue
        data = {**decoded, **string_map(found.get("stringData"))}
    return data


def _set_path(values: dict, path: str, value: Any) -> None:
    node = values
    parts = path.split(".")
    for part in parts[:-1]:
        node = node.setdefault(part, {}) if isinstance(node.get(part), dict) or part not in node else {}
    node[parts[-1]] = value
