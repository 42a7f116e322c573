"""Argo CD objects read as entry points.

- ``Application``: ``source``/``sources`` with ``repoURL`` and ``path`` (a chart, a kustomization
  or plain files: ``helm``, ``kustomize`` and ``directory`` options), and
  ``destination.namespace``.
- ``ApplicationSet``: the Applications its generators make (:mod:`scanner.sources.gitops.appset`),
  each read as above and named with the ApplicationSet.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import yaml

from scanner.sources.gitops.appset import Unsupported, expand
from scanner.sources.gitops.entries import (
    Catalog,
    Declared,
    EntryPoint,
    Found,
    NotScanned,
    clean_path,
    mapping_of,
    merge_values,
)


def application_set(data: dict, declared: Declared, catalog: Catalog) -> list[Found]:
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
        spec = mapping_of(app.data["spec"])
        found += application(spec, replace(declared, kind="Application", name=app.name, generated_by=by),
                             catalog, app.data)
    return found


def application(spec: dict, declared: Declared, catalog: Catalog, data: dict) -> list[Found]:
    """The entry points of an Argo CD ``Application`` (its ``spec``): one per source."""
    listed = spec.get("sources")
    sources = [s for s in (listed if isinstance(listed, list) else [spec.get("source")]) if isinstance(s, dict)]
    if not sources:  # (an object Argo CD would refuse: listed, never passed over silently)
        return [NotScanned(declared, "(no source)", "the Application names no source")]
    namespace = mapping_of(spec.get("destination")).get("namespace")
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
        entry = _source_entry(source, scanned, str(namespace) if namespace else None, refs, catalog, declared)
        found.append(entry)
    return found


def _source_entry(source: dict, scanned: str, namespace: str | None, refs: dict[str, dict], catalog: Catalog,
                  declared: Declared) -> Found:
    """The entry point of one source of an Application in the scanned source ``scanned``."""
    url = str(source.get("repoURL") or "")
    path = clean_path(source.get("path"))
    helm, kustomize, directory = _options(source, "helm"), _options(source, "kustomize"), _options(source, "directory")
    if directory is not None and directory.get("jsonnet"):
        return NotScanned(declared, url, "not supported: Jsonnet")
    renderer = "helm" if helm is not None else "kustomize" if kustomize is not None \
        else "directory" if directory is not None else "auto"
    entry = EntryPoint(declared, scanned, path, renderer, namespace=namespace)
    if helm is not None:
        with_values = _argo_helm(entry, helm, path, refs, catalog, declared)
        if isinstance(with_values, NotScanned):
            return with_values
        entry = with_values
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
    return entry


def _options(source: dict, key: str) -> dict | None:
    """A source's ``helm``, ``kustomize`` or ``directory`` options; None where not a mapping."""
    value = source.get(key)
    return value if isinstance(value, dict) else None


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
            files.append(clean_path(rest))
        else:
            files.append(clean_path(f"{path}/{text}" if path else text))
    values: dict[str, Any] = {}
    if isinstance(helm.get("values"), str):
        loaded = yaml.safe_load(helm["values"])
        values = loaded if isinstance(loaded, dict) else {}
    if isinstance(helm.get("valuesObject"), dict):
        values = merge_values(values, helm["valuesObject"])
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
