"""The signed-resource annotations: message payload, signature sets, signed document
(spec 19.2).

``D/message`` is base64 of a gzip stream holding the *blob* — YAML text, or (legacy
"tarball" form) a tar.gz archive of YAML files. The signature covers the blob. YAML text
is parsed by a loader the caller injects (the engine has no YAML parser of its own).
"""

from __future__ import annotations

import posixpath
import tarfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from scanner.engine.manifests.diff import flatten, printed
from scanner.engine.manifests.ignore import DEFAULT_DOMAIN, is_ignored
from scanner.engine.manifests.signature import decode_go_base64
from scanner.engine.match import string_map
from scanner.errors import EngineError, ScannerError

DocumentLoader = Callable[[str], list[Any]]
"""YAML text -> its documents as plain data; raises ``ValueError``/``ScannerError`` if invalid."""

_GZIP_MAGIC = b"\x1f\x8b"
MAX_BLOB_BYTES = 16 * 1024 * 1024
"""Bound on a decompressed message or tarball, so a small annotation cannot expand without limit."""


class _TooLarge(EngineError, ValueError):
    pass


@dataclass(frozen=True, slots=True)
class SignatureSet:
    """Signature set ``index`` (0 = ``D/signature``, 1 = ``D/signature_1`` ...)."""

    index: int
    signature: str
    has_certificate: bool
    has_bundle: bool


@dataclass(frozen=True, slots=True)
class DecodedMessage:
    """The blob and its documents, or the reason the message is unusable."""

    blob: bytes = b""
    documents: tuple[Any, ...] = ()
    error: str = ""


def domain_of(annotation_domain: Any) -> str:
    return annotation_domain if isinstance(annotation_domain, str) and annotation_domain else DEFAULT_DOMAIN


def annotations_of(resource: dict) -> dict[str, str]:
    """``metadata.annotations`` read as a string map: a single value that is not a string
    leaves the resource without readable annotations (Kubernetes' accessor fails)."""
    meta = resource.get("metadata")
    return string_map(meta.get("annotations") if isinstance(meta, dict) else None)


def _suffix(index: int) -> str:
    return "" if index == 0 else f"_{index}"


def signature_sets(annotations: dict[str, str], domain: str) -> list[SignatureSet]:
    """Sets 0, 1, 2, ... up to the first missing ``D/signature[_i]``."""
    sets = []
    index = 0
    while (signature := annotations.get(f"{domain}/signature{_suffix(index)}")) is not None:
        sets.append(SignatureSet(
            index, signature,
            has_certificate=bool(annotations.get(f"{domain}/certificate{_suffix(index)}")),
            has_bundle=bool(annotations.get(f"{domain}/bundle{_suffix(index)}")),
        ))
        index += 1
    return sets


class _Bytes:
    """A read-only, seekable view of bytes for ``tarfile`` (no I/O involved)."""

    def __init__(self, data: bytes) -> None:
        self._data, self._pos = data, 0

    def read(self, size: int | None = -1) -> bytes:
        end = len(self._data) if size is None or size < 0 else min(len(self._data), self._pos + size)
        chunk, self._pos = self._data[self._pos:end], end
        return chunk

    def seek(self, offset: int, whence: int = 0) -> int:
        base = (0, self._pos, len(self._data))[whence]
        self._pos = max(0, base + offset)
        return self._pos

    def tell(self) -> int:
        return self._pos


def _gunzip(data: bytes) -> bytes | None:
    """Every gzip member of ``data`` (Go reads multistream), or ``None`` if not a valid stream.

    Raises ``_TooLarge`` beyond ``MAX_BLOB_BYTES``.
    """
    out = bytearray()
    rest = data
    while True:
        stream = zlib.decompressobj(wbits=31)
        try:
            out += stream.decompress(rest, MAX_BLOB_BYTES + 1 - len(out))
        except zlib.error:
            return None
        if len(out) > MAX_BLOB_BYTES or stream.unconsumed_tail:
            raise _TooLarge(f"the decompressed message exceeds {MAX_BLOB_BYTES} bytes")
        if not stream.eof:
            return None  # truncated
        rest = stream.unused_data
        if not rest:
            return bytes(out)
        if not rest.startswith(_GZIP_MAGIC):
            return None


def _load(text: str, load_documents: DocumentLoader) -> list[Any]:
    try:
        return list(load_documents(text))
    except (ValueError, ScannerError) as exc:
        raise ValueError(f"yaml: {getattr(exc, 'message', None) or exc}") from None


def _tar_documents(blob: bytes, load_documents: DocumentLoader) -> list[Any]:
    """Documents of the ``.yaml``/``.yml`` files of a tar.gz blob, in path order."""
    archive = _gunzip(blob)
    if archive is None:
        raise ValueError("gzip: invalid header")
    files: dict[str, bytes] = {}
    try:
        with tarfile.open(fileobj=_Bytes(archive), mode="r:") as tar:  # type: ignore[call-overload]
            for member in tar:
                if member.name.startswith("..") or member.isdir():
                    continue
                if not member.isreg():
                    raise ValueError(f"unknown type: {member.type.decode(errors='replace')} "
                                     f"in {member.name}")
                if posixpath.basename(member.name).endswith((".yaml", ".yml")):
                    reader = tar.extractfile(member)
                    files[member.name] = reader.read() if reader is not None else b""
    except (tarfile.TarError, EOFError, OSError) as exc:
        raise ValueError(f"archive/tar: {exc}") from None
    documents: list[Any] = []
    for name in sorted(files):
        try:
            docs = _load(files[name].decode("utf-8"), load_documents)
        except UnicodeDecodeError as exc:
            raise ValueError(f"yaml: invalid UTF-8 in {name}: {exc.reason}") from None
        if docs and isinstance(docs[0], dict) and docs[0].get("kind"):
            documents.extend(docs)
    if not documents:
        raise ValueError("no YAML manifest with a kind in the tarball")
    return documents


@lru_cache(maxsize=256)
def decode_message(text: str, load_documents: DocumentLoader) -> DecodedMessage:
    """Decode ``D/message`` (spec 19.2.2); ``error`` holds the text after the ``<p>: `` prefix."""
    prefix = "YAML manifest not found for this resource: "
    try:
        raw = decode_go_base64(text)
    except ValueError as exc:
        return DecodedMessage(error=f"{prefix}failed to decode base64 message in the annotation: {exc}")
    blob = raw
    try:
        unzipped = _gunzip(raw)
        blob = raw if unzipped is None else unzipped
        if blob.startswith(_GZIP_MAGIC):
            documents = _tar_documents(blob, load_documents)
        else:
            try:
                documents = _load(blob.decode("utf-8"), load_documents)
            except (ValueError, UnicodeDecodeError):
                documents = []
            if not documents:
                raise ValueError("gzip: invalid header")
    except _TooLarge as exc:
        return DecodedMessage(error=f"{prefix}not supported: {exc}")
    except ValueError as exc:
        return DecodedMessage(blob, error=f"{prefix}failed to read YAMLs in the gzipped message: {exc}")
    return DecodedMessage(blob, tuple(documents))


def _group(api_version: Any) -> str:
    return api_version.rpartition("/")[0] if isinstance(api_version, str) else ""


def _meta(document: dict, key: str) -> Any:
    meta = document.get("metadata")
    return meta.get(key) if isinstance(meta, dict) else None


def select_candidates(documents: tuple[Any, ...], resource: dict,
                      ignore_fields: tuple[str, ...]) -> list[dict]:
    """The signed documents the resource is compared with, best first (spec 19.2.5)."""
    kind = resource.get("kind")
    same_kind = [d for d in documents if isinstance(d, dict) and d.get("kind") == kind]
    if not same_kind:
        return []
    group, name = _group(resource.get("apiVersion")), _meta(resource, "name")
    named = [d for d in same_kind if _group(d.get("apiVersion")) == group and _meta(d, "name") == name]
    if len(named) == 1:
        return named
    if named:
        namespace = _meta(resource, "namespace")
        return [next((d for d in named if _meta(d, "namespace") == namespace), named[0])]
    return _ranked_by_value(same_kind, resource, ignore_fields)


def _masked(document: Any, ignore_fields: tuple[str, ...]) -> dict[str, str]:
    return {path: printed(value) for path, value in flatten(document).items()
            if not is_ignored(path, ignore_fields)}


def _ranked_by_value(documents: list[dict], resource: dict,
                     ignore_fields: tuple[str, ...]) -> list[dict]:
    """At most three documents sharing the most identically printed values (document order)."""
    target = _masked(resource, ignore_fields)
    scores = []
    for document in documents:
        flat = _masked(document, ignore_fields)
        scores.append(sum(1 for path, text in target.items() if flat.get(path) == text))
    best = max(scores)
    return [d for d, score in zip(documents, scores, strict=True) if score == best][:3]
