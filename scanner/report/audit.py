"""The audit record of one run: every policy (digest, action), every source commit, the full
pass/fail/warn/error/skip matrix and the exceptions that applied, sealed by a content digest.

``content_digest`` is ``sha256:`` + the SHA-256 of the canonical JSON of the audit document
without the ``content_digest`` key (keys sorted, no whitespace, UTF-8). Anyone can recompute it
from the audit JSON with ``audit_content_digest``; the audit HTML shows the same digest.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

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


def audit_document(data: ReportData) -> dict[str, Any]:
    """The audit record as plain data, with its content digest as the last key."""
    document: dict[str, Any] = {
        "schema": AUDIT_SCHEMA_ID,
        "run": run_document(data.run),
        "summary": summary_document(data),
        "policies": [policy_document(p) for p in data.policies],
        "exceptions": [exception_document(x) for x in data.exceptions],
        "errors": [error_document(e) for e in data.errors],
        "not_evaluated": [not_evaluated_document(e) for e in data.not_evaluated],
        "matrix": [result_document(r, with_policy=True) for r in data.results],
    }
    if data.run.chain_digest:  # the run's link in the store's chain of runs (``scanner runs verify``)
        document["chain_digest"] = data.run.chain_digest
    document[DIGEST_KEY] = audit_content_digest(document)
    return document


def render_audit_json(data: ReportData) -> str:
    return dump_json(audit_document(data))
