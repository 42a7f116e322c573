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

from scanner.report.data import ReportData
from scanner.report.json_report import (
    dump_json,
    error_document,
    exception_document,
    not_evaluated_document,
    policy_document,
    result_document,
    run_document,
    summary_document,
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


def _digest(parts: dict[str, Any], rows: Iterator[dict[str, Any]],
            each: Callable[[dict[str, Any]], None] | None = None) -> str:
    """``audit_content_digest`` of ``parts`` with ``rows`` as its matrix, hashed as the rows
    come (each also given to ``each``): the canonical JSON of a row is the same from orjson,
    which writes it several times faster (sorted keys, no whitespace, no escapes beyond JSON's)."""
    keys = sorted(parts)
    at = keys.index("matrix")
    digest = hashlib.sha256()
    head = ",".join(f"{_canonical(k)}:{_canonical(parts[k])}" for k in keys[:at])
    digest.update(("{" + head + ("," if head else "") + '"matrix":[').encode("utf-8"))
    first = True
    for row in rows:
        if each is not None:
            each(row)
        if not first:
            digest.update(b",")
        digest.update(orjson.dumps(row, option=orjson.OPT_SORT_KEYS))
        first = False
    tail = "".join(f",{_canonical(k)}:{_canonical(parts[k])}" for k in keys[at + 1:])
    digest.update(("]" + tail + "}").encode("utf-8"))
    return "sha256:" + digest.hexdigest()


def audit_digest(data: ReportData) -> str:
    """The content digest of the audit record of ``data``, without building the record."""
    return _digest(_parts(data), _rows(data))


def audit_document(data: ReportData) -> dict[str, Any]:
    """The audit record as plain data, with its content digest as the last key."""
    document = _parts(data)
    document["matrix"] = list(_rows(data))
    document[DIGEST_KEY] = audit_content_digest(document)
    return document


def _indented(value: Any, depth: int) -> str:
    """``value`` as ``dump_json`` writes it ``depth`` levels deep."""
    return orjson.dumps(value, option=orjson.OPT_INDENT_2).decode("utf-8").replace("\n", "\n" + "  " * depth)


def write_audit_json(data: ReportData, out: TextIO) -> None:
    """Write the audit record to ``out``: the text of ``dump_json(audit_document(data))``,
    each row of the matrix written as it is made."""
    parts = _parts(data)
    for key, value in parts.items():
        if key == "matrix":
            break
        out.write(("{\n" if key == "schema" else ",\n") + f"  {_canonical(key)}: {_indented(value, 1)}")
    out.write(',\n  "matrix": [')
    batch: list[str] = []
    rows = 0

    def written(row: dict[str, Any]) -> None:
        nonlocal rows
        batch.append(("," if rows else "") + "\n    " + _indented(row, 2))
        rows += 1
        if len(batch) >= 1024:
            out.write("".join(batch))
            batch.clear()

    digest = _digest(parts, _rows(data), written)
    out.write("".join(batch) + ("\n  ]" if rows else "]"))
    if "chain_digest" in parts:
        out.write(f',\n  "chain_digest": {_canonical(parts["chain_digest"])}')
    out.write(f',\n  "{DIGEST_KEY}": {_canonical(digest)}\n}}\n')


def render_audit_json(data: ReportData) -> str:
    return dump_json(audit_document(data))
