"""Manifest files named on the command line -> Kubernetes resources (List dumps expanded)."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from scanner.engine.normalize import normalize_resource, object_problem
from scanner.errors import Location, ManifestError
from scanner.policies import STDIN, iter_yaml_files
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
    paths: Iterable[str | os.PathLike[str]], errors: list[ManifestError], stdin: bytes | None = None,
    warnings: list[ManifestError] | None = None,
) -> Iterator[LoadedResource]:
    """Resources in files and directories (``-``: the ``stdin`` text); unreadable input is appended
    to ``errors``. Given ``warnings``, a repeated key keeps its last value (as Kyverno reads
    manifests) and is appended there; else it is an error of its file."""
    for path in iter_yaml_files(paths):
        name = str(path)
        if name == STDIN and stdin is not None:
            text, name = stdin, "<stdin>"
        else:
            try:
                text = path.read_bytes()
            except OSError as exc:
                errors.append(ManifestError(f"cannot read file: {exc.strerror}", Location(name)))
                continue
        try:
            for doc in iter_documents(text, name, split_lists=True,
                                      on_warning=None if warnings is None else warnings.append):
                if not is_kubernetes_object(doc.data):
                    continue
                problem = object_problem(doc.data)
                if problem is not None:
                    errors.append(ManifestError(problem, Location(name, doc.line, None, None, doc.index)))
                    continue
                yield LoadedResource(normalize_resource(doc.data), name, doc.index, doc.item, doc.line)
        except ManifestError as exc:
            errors.append(exc)
