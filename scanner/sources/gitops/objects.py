"""Flux and Argo CD objects read as entry points: which folder of which scanned source they
deploy, and with which options; or, where they point outside the scanned sources, what is not
scanned and why.

- Flux ``Kustomization`` (kustomize.toolkit.fluxcd.io): ``sourceRef`` (a ``GitRepository``),
  ``path``, ``targetNamespace``, ``namePrefix``/``nameSuffix``, ``patches``, ``images``,
  ``postBuild.substitute`` and ``substituteFrom`` (ConfigMaps and Secrets of the sources).
- Flux ``HelmRelease`` (helm.toolkit.fluxcd.io): ``chart.spec.chart`` as a path in a
  ``GitRepository``, ``values``, ``valuesFrom``, ``targetNamespace``, ``releaseName``.
- Argo CD ``Application``: ``source``/``sources`` with ``repoURL`` and ``path`` (a chart, a
  kustomization or plain files: ``helm``, ``kustomize`` and ``directory`` options), and
  ``destination.namespace``.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

import yaml

from scanner.sources.gitops.appset import Files, Read, Unsupported, expand
from scanner.sources.gitops.urls import repository_key

FLUX_KUSTOMIZE = "kustomize.toolkit.fluxcd.io/"
FLUX_HELM = "helm.toolkit.fluxcd.io/"
FLUX_SOURCE = "source.toolkit.fluxcd.io/"
ARGO = "argoproj.io/"


@dataclass(frozen=True, slots=True)
class Declared:
    """A GitOps object and where it was found (source, file, line)."""

    kind: str
    namespace: str
    name: str
    source: str
    path: str
    line: int | None = None
    generated_by: str = ""  # the ApplicationSet (kind namespace/name) that generated the object

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else self.path
        by = f"{self.generated_by}, " if self.generated_by else ""
        return f"{self.kind} {self.namespace}/{self.name} ({by}{where})"


@dataclass(frozen=True, slots=True)
class EntryPoint:
    """A folder of a scanned source as one GitOps object deploys it.

    ``renderer``: ``kustomize`` (a kustomization, or Flux's generated one over every manifest
    below the folder), ``helm``, ``directory`` (Argo CD's plain files) or ``auto`` (Argo CD:
    decided by the folder's files). JSON texts keep the entry point hashable and picklable."""

    declared: Declared
    source: str
    path: str  # relative to the source root, "" for the root
    renderer: str
    namespace: str | None = None
    set_namespace: bool = False  # Flux targetNamespace / Argo kustomize.namespace: every object
    name_prefix: str = ""
    name_suffix: str = ""
    patches: str = "[]"  # JSON list of kustomize patch entries
    images: str = "[]"  # JSON list of kustomize image entries
    substitute: tuple[tuple[str, str], ...] | None = None  # Flux postBuild variables (None: no postBuild)
    release: str | None = None
    values: str = "{}"  # JSON of inline values (merged after the values files)
    values_files: tuple[str, ...] = ()  # relative to the source root
    set_values: tuple[tuple[str, str, bool], ...] = ()
    recurse: bool = True
    include: str = ""
    exclude: str = ""

    @property
    def label(self) -> str:
        return str(self.declared)


@dataclass(frozen=True, slots=True)
class NotScanned:
    """What a GitOps object deploys from outside the scanned sources (or in a way not rendered)."""

    declared: Declared
    target: str
    reason: str


Found = EntryPoint | NotScanned


@dataclass(slots=True)
class Catalog:
    """The objects an entry point may refer to: Flux sources, ConfigMaps and Secrets, by
    (kind, namespace, name); and which scanned source each repository URL is."""

    repositories: Mapping[str, str]  # repository_key(url) -> scanned source name
    objects: dict[tuple[str, str, str], list[tuple[str, dict]]]  # -> (source/path it was read from, object)
    near: str = ""  # the source/path of the object whose references are being resolved
    files: Files = lambda source: ()  # a scanned source's files (ApplicationSet git generators)
    read: Read = lambda source, path: b""

    def add(self, kind: str, namespace: str, name: str, where: str, data: dict) -> None:
        found = self.objects.setdefault((kind, namespace, name), [])
        if all(w != where for w, _ in found):
            found.append((where, data))

    def get(self, kind: str, namespace: str, name: str) -> dict | None:
        """The object of that kind, namespace and name; of several (one per cluster folder of a
        repository), the one read nearest the referring object."""
        found = self.objects.get((kind, namespace, name))
        if not found:
            return None
        return max(found, key=lambda pair: len(os.path.commonpath([pair[0], self.near])))[1]

    def all(self, kind: str, namespace: str) -> list[dict]:
        """The objects of a kind in a namespace, nearest the referring object first."""
        found = [pair for (k, ns, _), pairs in self.objects.items() if (k, ns) == (kind, namespace) for pair in pairs]
        found.sort(key=lambda pair: -len(os.path.commonpath([pair[0], self.near])))
        return [data for _, data in found]

    def source_of(self, url: str) -> str | None:
        return self.repositories.get(repository_key(url)) if url else None


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
    spec = data.get("spec") if isinstance(data.get("spec"), dict) else {}
    kind = declared.kind
    if kind == "Kustomization":
        return [_flux_kustomization(spec, declared, catalog)]
    if kind == "HelmRelease":
        return [_flux_helm_release(spec, declared, catalog)]
    if kind == "Application":
        return _argo_application(spec, declared, catalog, data)
    return _application_set(data, declared, catalog)


def _application_set(data: dict, declared: Declared, catalog: Catalog) -> list[Found]:
    """The entry points of the Applications an ApplicationSet generates, each named with it."""
    try:
        generated = expand(data, catalog.source_of, catalog.files, catalog.read)
    except LookupError as exc:
        return [NotScanned(declared, str(exc.args[0]), "the git generator's repository is not one of the scanned "
                                                       "sources")]
    except Unsupported as exc:
        return [NotScanned(declared, "ApplicationSet", str(exc))]
    found: list[Found] = []
    by = f"{declared.kind} {declared.namespace}/{declared.name}"
    for app in generated:
        spec = app.data["spec"] if isinstance(app.data["spec"], dict) else {}
        found += _argo_application(spec, replace(declared, kind="Application", name=app.name, generated_by=by),
                                   catalog, app.data)
    return found


def _strings(value: Any) -> dict[str, str]:
    return {str(k): str(v) for k, v in value.items()} if isinstance(value, dict) else {}


def _clean_path(path: Any) -> str:
    text = str(path or "").strip()
    while text.startswith("./"):
        text = text[2:]
    text = text.strip("/")
    return "" if text in ("", ".") else text


def _git_source(ref: Any, declared: Declared, catalog: Catalog) -> tuple[str | None, str]:
    """The scanned source a Flux ``sourceRef`` names, or None and the target to report."""
    ref = ref if isinstance(ref, dict) else {}
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


BOOTSTRAP = ("flux-system", "flux-system")  # the GitRepository `flux bootstrap` makes of its own repository


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
        spec = generator.get("spec") if isinstance(generator.get("spec"), dict) else {}
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


def _flux_kustomization(spec: dict, declared: Declared, catalog: Catalog) -> Found:
    source, target = _git_source(spec.get("sourceRef"), declared, catalog)
    if source is None:
        return NotScanned(declared, target, "the source is not one of the scanned sources")
    source, path = _artifact_path(source, _clean_path(spec.get("path")))
    if path is None:
        return NotScanned(declared, target, f"path {spec.get('path')!r} is not copied into the artifact")
    post_build = spec.get("postBuild") if isinstance(spec.get("postBuild"), dict) else None
    substitute = None
    if post_build is not None:
        variables: dict[str, str] = {}
        for ref in post_build.get("substituteFrom") or []:
            if isinstance(ref, dict):
                variables.update(_data_of(ref, declared.namespace, catalog))
        variables.update(_strings(post_build.get("substitute")))  # inline values take precedence
        substitute = tuple(sorted(variables.items()))
    target_namespace = spec.get("targetNamespace")
    return EntryPoint(
        declared, source, path, "kustomize",
        namespace=str(target_namespace) if target_namespace else None, set_namespace=bool(target_namespace),
        name_prefix=str(spec.get("namePrefix") or ""), name_suffix=str(spec.get("nameSuffix") or ""),
        patches=json.dumps(spec.get("patches") or []), images=json.dumps(spec.get("images") or []),
        substitute=substitute)


def _data_of(ref: dict, namespace: str, catalog: Catalog) -> dict[str, str]:
    """The data of a ConfigMap or Secret a Flux object refers to (Secret data decoded)."""
    kind, name = str(ref.get("kind") or ""), str(ref.get("name") or "")
    found = catalog.get(kind, namespace, name)
    if found is None:
        return {}
    data = _strings(found.get("data"))
    if kind == "Secret":
        decoded = {}
        for key, value in data.items():
            try:
                decoded[key] = base64.b64decode(value, validate=True).decode()
            except (binascii.Error, UnicodeDecodeError):
                continue
        data = {**decoded, **_strings(found.get("stringData"))}
    return data


def _flux_helm_release(spec: dict, declared: Declared, catalog: Catalog) -> Found:
    chart = ((spec.get("chart") or {}).get("spec") or {}) if isinstance(spec.get("chart"), dict) else {}
    if not chart:
        ref = spec.get("chartRef") if isinstance(spec.get("chartRef"), dict) else {}
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
                values = _merge(values, loaded)
    if isinstance(spec.get("values"), dict):
        values = _merge(values, spec["values"])
    namespace = spec.get("targetNamespace") or declared.namespace
    release = spec.get("releaseName") or (f"{spec['targetNamespace']}-{declared.name}"
                                          if spec.get("targetNamespace") else declared.name)
    return EntryPoint(declared, source, _clean_path(chart.get("chart")), "helm", namespace=str(namespace),
                      release=str(release), values=json.dumps(values),
                      values_files=tuple(_clean_path(f) for f in chart.get("valuesFiles") or []))


def _merge(base: dict, override: dict) -> dict:
    """Helm's merge of values: maps merged key by key, anything else replaced."""
    merged = dict(base)
    for key, value in override.items():
        merged[key] = _merge(merged[key], value) if isinstance(value, dict) and isinstance(merged.get(key), dict) \
            else value
    return merged


def _set_path(values: dict, path: str, value: Any) -> None:
    node = values
    parts = path.split(".")
    for part in parts[:-1]:
        node = node.setdefault(part, {}) if isinstance(node.get(part), dict) or part not in node else {}
    node[parts[-1]] = value


def _argo_application(spec: dict, declared: Declared, catalog: Catalog, data: dict) -> list[Found]:
    sources = spec.get("sources") if isinstance(spec.get("sources"), list) else [spec.get("source")]
    sources = [s for s in sources if isinstance(s, dict)]
    destination = spec.get("destination") if isinstance(spec.get("destination"), dict) else {}
    namespace = destination.get("namespace")
    refs = {str(s["ref"]): s for s in sources if s.get("ref")}
    found: list[Found] = []
    for source in sources:
        url = str(source.get("repoURL") or "")
        if source.get("ref") and not source.get("path"):
            continue  # a values-only source, read through $ref/ paths
        if source.get("chart"):
            found.append(NotScanned(declared, f"{url} chart {source['chart']}",
                                    "the chart repository is not one of the scanned sources"))
            continue
        scanned = catalog.source_of(url)
        if scanned is None:
            found.append(NotScanned(declared, url or "(no repoURL)",
                                    "the repository is not one of the scanned sources"))
            continue
        if source.get("plugin") is not None:
            found.append(NotScanned(declared, url, "not supported: config management plugins"))
            continue
        path = _clean_path(source.get("path"))
        helm = source.get("helm") if isinstance(source.get("helm"), dict) else None
        kustomize = source.get("kustomize") if isinstance(source.get("kustomize"), dict) else None
        directory = source.get("directory") if isinstance(source.get("directory"), dict) else None
        if directory is not None and directory.get("jsonnet"):
            found.append(NotScanned(declared, url, "not supported: Jsonnet"))
            continue
        renderer = "helm" if helm is not None else "kustomize" if kustomize is not None \
            else "directory" if directory is not None else "auto"
        entry = EntryPoint(declared, scanned, path, renderer, namespace=str(namespace) if namespace else None)
        if helm is not None:
            entry = _argo_helm(entry, helm, path, refs, catalog, declared)
            if isinstance(entry, NotScanned):
                found.append(entry)
                continue
        if kustomize is not None:
            images = [_argo_image(i) for i in kustomize.get("images") or []]
            entry = replace(entry, name_prefix=str(kustomize.get("namePrefix") or ""),
                             name_suffix=str(kustomize.get("nameSuffix") or ""),
                             patches=json.dumps(kustomize.get("patches") or []), images=json.dumps(images))
            if kustomize.get("namespace"):
                entry = replace(entry, namespace=str(kustomize["namespace"]), set_namespace=True)
        if directory is not None:
            entry = replace(entry, recurse=bool(directory.get("recurse")), include=str(directory.get("include") or ""),
                             exclude=str(directory.get("exclude") or ""))
        elif renderer == "auto":
            entry = replace(entry, recurse=False)
        if renderer in ("auto", "helm") and entry.release is None:
            entry = replace(entry, release=declared.name)
        found.append(entry)
    return found


def _argo_helm(entry: EntryPoint, helm: dict, path: str, refs: dict[str, dict], catalog: Catalog,
               declared: Declared) -> EntryPoint | NotScanned:
    files = []
    for value_file in helm.get("valueFiles") or []:
        text = str(value_file)
        if text.startswith("$"):
            name, _, rest = text[1:].partition("/")
            ref = refs.get(name)
            scanned = catalog.source_of(str((ref or {}).get("repoURL") or ""))
            if ref is None or scanned != entry.source:
                return NotScanned(declared, text, "a values file of another repository is not read")
            files.append(_clean_path(rest))
        else:
            files.append(_clean_path(f"{path}/{text}" if path else text))
    values: dict[str, Any] = {}
    if isinstance(helm.get("values"), str):
        loaded = yaml.safe_load(helm["values"])
        values = loaded if isinstance(loaded, dict) else {}
    if isinstance(helm.get("valuesObject"), dict):
        values = _merge(values, helm["valuesObject"])
    parameters = tuple((str(p.get("name")), str(p.get("value", "")), bool(p.get("forceString")))
                       for p in helm.get("parameters") or [] if isinstance(p, dict) and p.get("name"))
    return replace(entry, release=str(helm.get("releaseName") or declared.name), values=json.dumps(values),
                    values_files=tuple(files), set_values=parameters)


def _argo_image(image: Any) -> dict:
    """An Argo CD kustomize image (``name=newName:tag``, ``name:tag``) as a kustomize images entry."""
    text = str(image)
    name, _, override = text.partition("=") if "=" in text else (text, "", text)
    override_name, _, digest = override.partition("@")
    base, colon, tag = override_name.rpartition(":") if ":" in override_name.rsplit("/", 1)[-1] \
        else (override_name, "", "")
    entry: dict[str, str] = {"name": name.partition(":")[0].partition("@")[0]}
    if base and base != entry["name"]:
        entry["newName"] = base
    if colon:
        entry["newTag"] = tag
    if digest:
        entry["digest"] = digest
    return entry

