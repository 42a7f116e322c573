"""The audit record of one run: every policy (digest, action), every source commit, the full
pass/fail/warn/error/skip matrix and the exceptions that applied, sealed by a content digest.

``content_digest`` is ``sha256:`` + the SHA-256 of the canonical JSON of the audit document
without the ``content_digest`` key (keys sorted, no whitespace, UTF-8). Anyone can recompute it
from the audit JSON with ``audit_content_digest``; the audit HTML shows the same digest.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator
from typing import Any, TextIO

import orjson

from scanner.report.data import ReportData, ResourceInfo, ResultRecord
from scanner.report.formatting import FindingIds, PerResource
from scanner.report.json_report import (
    dump_json,
    error_document,
    exception_document,
    indented_json,
    not_evaluated_document,
    policy_document,
    resource_document,
    result_document,
    run_document,
    summary_document,
    utf8_writer,
)

AUDIT_SCHEMA_ID = "urn:scanner:audit:1"
DIGEST_KEY = "content_digest"


def audit_content_digest(document: dict[str, Any]) -> str:
    """``sha256:<hex>`` of the canonical JSON of ``document`` without its digest key."""
    body = {k: v for k, v in document.items() if k != DIGEST_KEY}
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def verify_audit_document(document: dict[str, Any]) -> bool:
    """True when the document's recorded digest matches its content."""
    return document.get(DIGEST_KEY) == audit_content_digest(document)


def _parts(data: ReportData) -> dict[str, Any]:
    """The audit record's keys in the order it is written, ``matrix`` left empty (its rows
    are made one at a time by ``_rows``)."""
    document: dict[str, Any] = {
        "schema": AUDIT_SCHEMA_ID,
        "run": run_document(data.run),
        "summary": summary_document(data),
        "policies": [policy_document(p) for p in data.policies],
        "exceptions": [exception_document(x) for x in data.exceptions],
        "errors": [error_document(e) for e in data.errors],
        "not_evaluated": [not_evaluated_document(e) for e in data.not_evaluated],
        "matrix": [],
    }
    if data.run.chain_digest:  # the run's link in the store's chain of runs (``scanner runs verify``)
        document["chain_digest"] = data.run.chain_digest
    return document


def _rows(data: ReportData) -> Iterator[dict[str, Any]]:
    resources: dict[int, dict[str, Any]] = {}  # each resource's document made once
    return (result_document(r, with_policy=True, resources=resources) for r in data.results)


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


class _RowTexts:
    """Each result's matrix row (``result_document`` with its policy) as canonical JSON (what
    the content digest hashes: sorted keys, no whitespace, as orjson writes it) and as
    ``write_audit_json`` writes it (two levels deep). Each resource's JSON is
    made once, in both layouts, and orjson puts it in each of its rows as it is (kept as text:
    orjson's bytes keep the room they were written in, several times their length)."""

    def __init__(self) -> None:
        self.finding_id = FindingIds()
        self.resources = PerResource(self._documents)

    @staticmethod
    def _documents(resource: ResourceInfo) -> tuple[orjson.Fragment, orjson.Fragment]:
        """The resource's document as canonical JSON and as a row's value (one level in)."""
        document = resource_document(resource)
        return (orjson.Fragment(orjson.dumps(document, option=orjson.OPT_SORT_KEYS).decode("utf-8")),
                orjson.Fragment(indented_json(document, 1).decode("utf-8")))

    @staticmethod
    def _canonical(result: ResultRecord, resource: orjson.Fragment, finding: str) -> bytes:
        return orjson.dumps({  # (its keys given in order)
            "action": result.action, "exception": result.exception, "id": finding, "message": result.message,
            "policy": result.policy, "resource": resource, "rule": result.rule, "status": result.status})

    def canonical(self, result: ResultRecord) -> tuple[bytes, bytes]:
        """The row's canonical JSON, and no text."""
        resource = result.resource
        finding = self.finding_id(resource, result.policy, result.rule)
        return self._canonical(result, self.resources(resource)[0], finding), b""

    def __call__(self, result: ResultRecord) -> tuple[bytes, bytes]:
        """The row's canonical JSON and its text (UTF-8)."""
        resource = result.resource
        canonical, indented = self.resources(resource)
        finding = self.finding_id(resource, result.policy, result.rule)
        text = indented_json({
            "id": finding, "policy": result.policy, "rule": result.rule, "status": result.status,
            "message": result.message, "action": result.action, "exception": result.exception,
            "resource": indented}, 2)
        return self._canonical(result, canonical, finding), text


_BATCH = 1024


def _row_batches(data: ReportData, *, text: bool = True) -> Iterator[list[tuple[bytes, bytes]]]:
    """The results' matrix rows (``_RowTexts``), a batch at a time: each one's canonical JSON and
    (with ``text``) its text."""
    rows = _RowTexts()
    make = rows if text else rows.canonical
    results = data.results
    for start in range(0, len(results), _BATCH):
        yield [make(r) for r in results[start:start + _BATCH]]


def _digest(parts: dict[str, Any], batches: Iterator[list[tuple[bytes, bytes]]],
            each: Callable[[list[bytes]], None] | None = None) -> str:
    """``audit_content_digest`` of ``parts`` with ``batches`` of rows as its matrix
    (``_row_batches``), hashed as they come (each batch's texts also given to ``each``)."""
    keys = sorted(parts)
    at = keys.index("matrix")
    digest = hashlib.sha256()
    head = ",".join(f"{_canonical(k)}:{_canonical(parts[k])}" for k in keys[:at])
    digest.update(("{" + head + ("," if head else "") + '"matrix":[').encode("utf-8"))
    first = True
    for batch in batches:
        if each is not None:
            each([text for _, text in batch])
        digest.update((b"" if first else b",") + b",".join([canonical for canonical, _ in batch]))
        first = False
    tail = "".join(f",{_canonical(k)}:{_canonical(parts[k])}" for k in keys[at + 1:])
    digest.update(("]" + tail + "}").encode("utf-8"))
    return "sha256:" + digest.hexdigest()


def audit_digest(data: ReportData) -> str:
    """The content digest of the audit record of ``data``, without building the record."""
    return _digest(_parts(data), _row_batches(data, text=False))


def audit_document(data: ReportData) -> dict[str, Any]:
    """The audit record as plain data, with its content digest as the last key."""
    document = _parts(data)
    document["matrix"] = list(_rows(data))
    document[DIGEST_KEY] = audit_content_digest(document)
    return document


def write_audit_json(data: ReportData, out: TextIO) -> None:
    """Write the audit record to ``out``: the text of ``dump_json(audit_document(data))``,
    each row of the matrix written as it is made."""
    parts = _parts(data)
    put = utf8_writer(out)
    head = b""
    for key, value in parts.items():
        if key == "matrix":
            break
        head += (b"{\n  " if key == "schema" else b",\n  ") + _canonical(key).encode("utf-8") + b": "
        head += indented_json(value, 1)
    put(head + b',\n  "matrix": [')
    rows = 0

    def written(texts: list[bytes]) -> None:
        nonlocal rows
        put((b"," if rows else b"") + b"\n    " + b",\n    ".join(texts))
        rows += len(texts)

    digest = _digest(parts, _row_batches(data), written)
    tail = "\n  ]" if rows else "]"
    if "chain_digest" in parts:
        tail += f',\n  "chain_digest": {_canonical(parts["chain_digest"])}'
    put((tail + f',\n  "{DIGEST_KEY}": {_canonical(digest)}\n}}\n').encode("utf-8"))


def render_audit_json(data: ReportData) -> str:
    return dump_json(audit_document(data))
