"""What a source yields: resources with their provenance, error records, and counts."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from scanner.errors import Location


@dataclass(frozen=True, slots=True)
class Provenance:
    """Where one resource came from; enough to find it again and to reproduce the scan.

    ``path`` is relative to the source root: the file that defines the resource. For a
    resource rendered from a Kustomize overlay that is the file of the base (or overlay)
    it was read from, as kustomize's ``originAnnotations`` name it, or the kustomization
    whose generator made it; ``overlay`` is then the entry point rendered (a directory,
    ``.`` for the root) and ``patches`` the patch files that changed it. ``document`` is the
    document index in ``path``, ``item`` the index in a ``kind: *List`` document, ``line``
    1-based.
    """

    source: str
    source_type: str
    path: str
    document: int
    line: int | None = None
    item: int | None = None
    commit: str | None = None
    rendered_by: str | None = None  # "kustomize" when the resource is a renderer's output
    overlay: str | None = None  # the rendered entry point (tree-relative directory)
    patches: tuple[str, ...] = ()  # patch files (tree-relative) that changed the resource

    @property
    def location(self) -> Location:
        return Location(self.path, self.line, None, None, self.document)


@dataclass(frozen=True, slots=True)
class ResourceIdentity:
    """apiVersion/kind/namespace/name, plus the uid when the object came from a cluster."""

    api_version: str
    kind: str
    namespace: str | None
    name: str | None
    uid: str | None = None

    def __str__(self) -> str:
        where = f"{self.namespace}/" if self.namespace else ""
        return f"{self.kind}/{where}{self.name}"


@dataclass(frozen=True, slots=True)
class Resource:
    """One Kubernetes object as plain JSON-shaped data, with its identity and provenance."""

    data: dict[str, Any]
    identity: ResourceIdentity
    provenance: Provenance
    namespace_defaulted: bool = False


@dataclass(frozen=True, slots=True)
class ErrorRecord:
    """A located problem of one source (bad file, failed clone, renderer failure ...).

    ``kind`` is a short stable word for grouping: ``yaml``, ``limit``, ``manifest``,
    ``read``, ``git``, ``render``, ``renderer-missing``, ``unsupported``.
    """

    source: str
    kind: str
    message: str
    location: Location

    def __str__(self) -> str:
        return f"{self.location}: {self.message}"


@dataclass(frozen=True, slots=True)
class CommitInfo:
    """The commit a Git source was read at."""

    sha: str
    committed_at: datetime
    ref: str


@dataclass(slots=True)
class SourceStats:
    """Counts of what a source read and what it left out, filled in as it is iterated."""

    files: int = 0
    documents: int = 0
    resources: int = 0
    errors: int = 0
    skipped: Counter[str] = field(default_factory=Counter)  # reason -> documents skipped
    commit: CommitInfo | None = None
