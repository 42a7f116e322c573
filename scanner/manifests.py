"""Manifest files named on the command line -> Kubernetes resources (List dumps expanded)."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from scanner.engine.normalize import normalize_resource
from scanner.errors import Location, ManifestError
from scanner.policies import iter_yaml_files
from scanner.yamldoc import iter_documents


@dataclass(frozen=True, slots=True)
class LoadedResource:
    resource: dict
    path: str
    document: int
    item: int | None
    line: int


def is_kubernetes_object(data: object) -> bool:
    return isinstance(data, dict) and bool(data.get("apiVersion")) and bool(data.get("kind"))


def iter_resources(
    paths: Iterable[str | os.PathLike[str]], errors: list[ManifestError]
) -> Iterator[LoadedResource]:
    """Resources in files and directories; unreadable input is appended to ``errors``."""
    for path in iter_yaml_files(paths):
        try:
            text = path.read_bytes()
        except OSError as exc:
            errors.append(ManifestError(f"cannot read file: {exc.strerror}", Location(str(path))))
            continue
        try:
            for doc in iter_documents(text, str(path), split_lists=True):
                if is_kubernetes_object(doc.data):
                    yield LoadedResource(normalize_resource(doc.data), str(path), doc.index, doc.item, doc.line)
        except ManifestError as exc:
            errors.append(exc)
