"""YAML documents of one file -> Kubernetes resources with provenance, or error records.

``kind: List`` and other ``*List`` documents are expanded to their items; empty documents
are skipped; documents without ``apiVersion``/``kind`` (CI workflows, Helm values, ...)
and Kustomize's own config files are skipped and counted, not reported. As the Kyverno
CLI does when it loads resources (spec 0.3), a namespaced kind without a namespace gets
``default`` and null ``annotations``/``labels``/``matchLabels``/``nodeSelector``/``data``/
``stringData`` maps become empty maps.

A large kubectl List dump can be shared by several readers (scan shards): each reads the
items it owns, and the file's other documents are read by the one that owns the file.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from scanner.engine.kinds import is_cluster_scoped
from scanner.engine.normalize import NULL_MAP_KEYS, normalize_null_maps, object_problem
from scanner.errors import Location, ManifestError
from scanner.sources.provenance import (
    ErrorRecord,
    Provenance,
    Resource,
    ResourceIdentity,
    SourceStats,
)
from scanner.yamldoc import (
    DEFAULT_LIMITS,
    ErrorHandler,
    YamlDocument,
    YamlLimits,
    check_file_size,
    iter_documents,
    iter_list_items,
    large_list_items,
)

KUSTOMIZE_CONFIG_KINDS = frozenset({"Kustomization", "Component"})

SourceItem = Resource | ErrorRecord


@dataclass(frozen=True, slots=True)
class Origin:
    """The part of a provenance shared by every document of a source."""

    source: str
    source_type: str
    commit: str | None = None


def resources_from_text(
    text: str | bytes,
    path: str,
    origin: Origin,
    stats: SourceStats,
    limits: YamlLimits = DEFAULT_LIMITS,
    *,
    stream: bool = False,
    items: Callable[[int], bool] | None = None,
    only_split: bool = False,
) -> Iterator[SourceItem]:
    """Resources and error records of one file; ``path`` is relative to the source root.

    A file with a syntax error contributes one error record and no resources (the
    documents before the error are not trusted), unless ``stream`` is set: then
    resources are yielded as they are read and the error comes after them.

    ``items`` selects the items this reader owns of a large List dump, and ``only_split``
    reads nothing of a file that is no such dump (another reader owns it).
    """
    rejected: list[ManifestError] = []  # documents left out (limits), and warnings (kept in order)
    documents = _shared_documents(text, path, limits, items, only_split, rejected.append,
                                  lambda exc: rejected.append(_Warning(exc.message, exc.location)))
    if stream:
        yield from _convert(documents, path, origin, stats, rejected)
        return
    try:
        buffered = list(_convert(documents, path, origin, stats, rejected))
    except _SyntaxError as exc:
        stats.errors += 1
        yield exc.record
        return
    yield from buffered


def _shared_documents(text: str | bytes, path: str, limits: YamlLimits, items: Callable[[int], bool] | None,
                      only_split: bool, on_error: ErrorHandler, on_warning: ErrorHandler) -> Iterator[YamlDocument]:
    """The documents of ``text`` this reader owns: the ``items`` of a large List dump, or,
    unless ``only_split``, every document of any other text."""
    if items is not None or only_split:
        check_file_size(text, path, limits)
        pieces = large_list_items(text, items)
        if pieces is not None:
            yield from iter_list_items(pieces, path, limits=limits, on_error=on_error, on_warning=on_warning,
                                       null_maps=NULL_MAP_KEYS)
            return
        if only_split:
            return
    yield from iter_documents(text, path, limits=limits, split_lists=True, on_error=on_error, on_warning=on_warning,
                              null_maps=NULL_MAP_KEYS)


class _Warning(ManifestError):
    """Something read as Kyverno reads it that the author may not mean (a repeated key): the
    document is read, and the warning recorded with the scan."""


WARNING = "warning"  # the kind of a source's error record that is only a warning (the scan goes on)


class _SyntaxError(Exception):
    def __init__(self, record: ErrorRecord) -> None:
        self.record = record


def _convert(
    documents: Iterator[YamlDocument],
    path: str,
    origin: Origin,
    stats: SourceStats,
    rejected: list[ManifestError],
) -> Iterator[SourceItem]:
    try:
        for doc in documents:
            while rejected:
                yield _limit_record(rejected.pop(0), origin, stats)
            stats.documents += 1
            item = resource_from_document(doc, path, origin, stats)
            if item is not None:
                yield item
    except ManifestError as exc:
        record = ErrorRecord(origin.source, "yaml", exc.message,
                             exc.location or Location(path))
        while rejected:
            yield _limit_record(rejected.pop(0), origin, stats)
        raise _SyntaxError(record) from exc
    while rejected:
        yield _limit_record(rejected.pop(0), origin, stats)


def _limit_record(exc: ManifestError, origin: Origin, stats: SourceStats) -> ErrorRecord:
    if isinstance(exc, _Warning):
        return ErrorRecord(origin.source, WARNING, exc.message, exc.location or Location())
    stats.errors += 1
    return ErrorRecord(origin.source, "limit", exc.message, exc.location or Location())


def resource_from_document(
    doc: YamlDocument, path: str, origin: Origin, stats: SourceStats,
    rendered_by: str | None = None, *,
    overlay: str | None = None, patches: tuple[str, ...] = (),
) -> SourceItem | None:
    """One document (or List item) -> a resource, an error record, or None when skipped.

    A rendered object (``rendered_by``) is given as a document of the
    file that defines it (``doc.line`` its line there, or 0 when unknown), with the ``overlay``
    rendered and the ``patches`` that changed it."""
    data = doc.data
    where = Location(path, doc.line or None, None, None, doc.index)
    if not isinstance(data, dict) or data.get("apiVersion") is None or data.get("kind") is None:
        if doc.item is not None:
            stats.errors += 1
            return ErrorRecord(origin.source, "manifest",
                               f"List item {doc.item} is not a Kubernetes object "
                               "(no apiVersion and kind)", where)
        stats.skipped["not-kubernetes"] += 1
        return None
    problem = object_problem(data)
    if problem is not None:
        stats.errors += 1
        prefix = "" if doc.item is None else f"List item {doc.item}: "
        return ErrorRecord(origin.source, "manifest", prefix + problem, where)
    kind = data["kind"]
    if kind in KUSTOMIZE_CONFIG_KINDS and data["apiVersion"].startswith("kustomize.config.k8s.io/"):
        stats.skipped["kustomize-config"] += 1
        return None
    if kind.endswith("List") and "items" in data:  # a List without items to expand
        stats.skipped["list-without-items"] += 1
        return None
    metadata = data.get("metadata")
    if metadata is None:
        metadata = data["metadata"] = {}
    if doc.null_maps is not NULL_MAP_KEYS:  # (the block reader empties them as it reads)
        normalize_null_maps(data)
    defaulted = False
    if not is_cluster_scoped(kind) and not metadata.get("namespace"):
        metadata["namespace"] = "default"
        defaulted = True
    stats.resources += 1
    uid = metadata.get("uid")
    identity = ResourceIdentity(
        data["apiVersion"], kind,
        None if is_cluster_scoped(kind) else metadata.get("namespace"),
        metadata.get("name"), uid if isinstance(uid, str) else None,
    )
    provenance = Provenance(origin.source, origin.source_type, path, doc.index, doc.line or None, doc.item,
                            origin.commit, rendered_by, overlay, patches)
    return Resource(data, identity, provenance, defaulted)
