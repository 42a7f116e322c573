"""What a GitOps object deploys: the object as declared, the entry points it names into the
scanned sources (or what it deploys from elsewhere, not scanned), and the catalog of objects its
references resolve against; with the small readers the Flux and Argo CD modules share."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from scanner.sources.gitops.urls import repository_key

Files = Callable[[str], tuple[str, ...]]  # a scanned source's file paths (tree-relative)
Read = Callable[[str, str], bytes]  # (source, tree-relative path) -> content


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


def mapping_of(value: Any) -> dict:
    """``value`` if it is a mapping, else an empty one."""
    return value if isinstance(value, dict) else {}


def string_map(value: Any) -> dict[str, str]:
    """A mapping's keys and values as text; anything else is empty."""
    return {str(k): str(v) for k, v in value.items()} if isinstance(value, dict) else {}


def clean_path(path: Any) -> str:
    """A folder of a repository as the trees name it: no ``./``, no surrounding slashes, ``""`` for the root."""
    text = str(path or "").strip()
    while text.startswith("./"):
        text = text[2:]
    text = text.strip("/")
    return "" if text in ("", ".") else text


def merge_values(base: dict, override: dict) -> dict:
    """Helm's merge of values: maps merged key by key, anything else replaced."""
    merged = dict(base)
    for key, value in override.items():
        merged[key] = merge_values(merged[key], value) \
            if isinstance(value, dict) and isinstance(merged.get(key), dict) else value
    return merged
