"""The JSON report: the HTML report's data as a documented, versioned document.

The document follows ``schemas/report-1.schema.json`` (``"schema": "urn:scanner:report:1"``).
Key order and list order are fixed, so the same ``ReportData`` always gives the same bytes.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

import orjson

from scanner.report.data import (
    SEVERITY_ORDER,
    ErrorEntry,
    ExceptionApplied,
    FindingGroup,
    GroupCounts,
    PolicyFindings,
    PolicyInfo,
    ReportData,
    ResourceInfo,
    ResultChange,
    ResultRecord,
    RunInfo,
    SourceCoverage,
)
from scanner.report.formatting import finding_id, iso_time

REPORT_SCHEMA_ID = "urn:scanner:report:1"
SCHEMA_DIR = Path(__file__).with_name("schemas")


def run_document(run: RunInfo) -> dict[str, Any]:
    return {
        "id": run.run_id,
        "started_at": iso_time(run.started_at),
        "finished_at": iso_time(run.finished_at) or None,
        "duration_seconds": run.duration_seconds,
        "scanner_version": run.scanner_version,
        "status": run.status,
        "trigger": run.trigger,
        "policy_set_digest": run.policy_set_digest,
        **({"resources": run.resources, "documents": run.documents} if run.resources is not None else {}),
        "sources": [
            {"name": s.name, "type": s.type, "url": s.url, "ref": s.ref,
             "commit_sha": s.commit_sha, "commit_time": iso_time(s.commit_time) or None,
             "error": s.error}
            for s in run.sources
        ],
    }


def resource_document(resource: ResourceInfo) -> dict[str, Any]:
    return {
        "api_version": resource.api_version,
        "kind": resource.kind,
        "namespace": resource.namespace,
        "name": resource.name,
        "source": resource.source,
        "path": resource.path,
        "line": resource.line,
        "location": resource.location,
        "overlay": resource.overlay or None,
        "patches": list(resource.patches),
        "via": resource.via,
        "commit": resource.commit,
        "labels": dict(resource.labels),
        "annotations": dict(resource.annotations),
    }


def defect_document(group: FindingGroup, ids: dict[int, str] | None = None) -> dict[str, Any]:
    """One defect of a policy: its findings (by id) at one defining ``path:line``, with the
    overlays whose renderings hold it. ``ids``: finding ids known already, by ``id()`` of the
    result."""
    known = ids or {}
    return {"rule": group.rule, "status": group.status.value, "source": group.source,
            "path": group.path, "line": group.line, "location": group.location,
            "overlays": list(group.overlays),
            "findings": [known.get(id(r)) or finding_id(r.resource, r.policy, r.rule) for r in group.findings]}


def result_document(result: ResultRecord, *, with_policy: bool,
                    resources: dict[int, dict[str, Any]] | None = None) -> dict[str, Any]:
    """One result; ``resources``: the documents of the resources written so far (by ``id()``),
    shared by their results (a resource with several findings is one object, written out
    for each)."""
    resource = result.resource
    written = resources.get(id(resource)) if resources is not None else None
    if written is None:
        written = resource_document(resource)
        if resources is not None:
            resources[id(resource)] = written
    doc: dict[str, Any] = {"id": finding_id(resource, result.policy, result.rule)}
    if with_policy:
        doc["policy"] = result.policy
    doc.update({
        "rule": result.rule,
        "status": result.status.value,
        "message": result.message,
        "action": result.action.value,
        "exception": result.exception,
        "resource": written,
    })
    return doc


def policy_document(policy: PolicyInfo) -> dict[str, Any]:
    return {
        "name": policy.name,
        "title": policy.title,
        "category": policy.category,
        "severity": policy.severity.value if policy.severity else None,
        "description": policy.description,
        "action": policy.action.value,
        "digest": policy.digest,
        "path": policy.path,
        "rules": list(policy.rules),
    }


def change_document(change: ResultChange) -> dict[str, Any]:
    return {
        "policy": change.policy, "rule": change.rule, "kind": change.kind,
        "namespace": change.namespace, "name": change.name, "source": change.source,
        "status_before": change.status_before.value if change.status_before else None,
        "status_after": change.status_after.value if change.status_after else None,
        "message": change.message,
        "path": change.path, "line": change.line, "location": change.location,
        "overlay": change.overlay or None, "commit": change.commit,
    }


def error_document(error: ErrorEntry) -> dict[str, Any]:
    return {"source": error.source, "location": error.location, "message": error.message}


def not_evaluated_document(entry: ErrorEntry) -> dict[str, Any]:
    return {"location": entry.location, "reason": entry.message}


def exception_document(item: ExceptionApplied) -> dict[str, Any]:
    return {"name": item.name, "namespace": item.namespace, "policy": item.policy,
            "rule": item.rule, "resources": item.resources, "reason": item.reason,
            "path": item.path}


def _group_document(group: GroupCounts, key_name: str) -> dict[str, Any]:
    return {key_name: group.key, "resources": group.resources,
            "failing_resources": group.failing_resources, "counts": dict(group.counts)}


def coverage_document(coverage: SourceCoverage) -> dict[str, Any]:
    """One source's coverage: its entry points with the resources they gave, and what was not
    scanned (with the reason, located at the object or file that asked for it)."""
    return {"source": coverage.source, "resources": coverage.resources,
            "rendered": [{"kind": e.kind, "entry": e.entry or None, "label": e.label, "resources": e.resources,
                          "files": e.files} for e in coverage.entries],
            "not_scanned": [{"location": e.location, "reason": e.message} for e in coverage.not_scanned]}


def summary_document(data: ReportData) -> dict[str, Any]:
    s = data.summary
    return {"results": s.results, "resources": s.resources, "policies": s.policies,
            "policies_not_evaluated": len(data.not_evaluated), "findings": data.findings,
            "by_status": dict(s.by_status), "failures_by_severity": dict(s.failures_by_severity)}


def _policy_failures(group: PolicyFindings, resources: dict[int, dict[str, Any]]) -> dict[str, Any]:
    """A policy with its findings and its defects (which name the findings by id)."""
    findings = [result_document(r, with_policy=False, resources=resources) for r in group.findings]
    ids = {id(r): doc["id"] for r, doc in zip(group.findings, findings, strict=True)}
    return {**policy_document(group.policy), "counts": dict(group.counts), "findings": findings,
            "defects": [defect_document(d, ids) for d in group.groups]}


def report_document(data: ReportData) -> dict[str, Any]:
    """The JSON report as plain data (what ``write_json_report`` serialises)."""
    document = _report_parts(data)
    resources: dict[int, dict[str, Any]] = {}  # (the report's resources outlive it: no id is reused)
    document["failures_by_policy"] = [_policy_failures(group, resources) for group in data.failures_by_policy]
    return document


def _report_parts(data: ReportData) -> dict[str, Any]:
    """The report's keys in the order it is written, ``failures_by_policy`` left empty (each
    policy's is made on its own)."""
    return {
        "schema": REPORT_SCHEMA_ID,
        "run": run_document(data.run),
        "summary": summary_document(data),
        "changes": {
            "previous_run_id": data.previous_run_id,
            "new": [change_document(c) for c in data.new_findings],
            "resolved": [change_document(c) for c in data.resolved_findings],
        },
        "failures_by_policy": [],
        "by_namespace": [_group_document(g, "namespace") for g in data.by_namespace],
        "by_source": [_group_document(g, "source") for g in data.by_source],
        "errors": [error_document(e) for e in data.errors],
        "not_evaluated": [not_evaluated_document(e) for e in data.not_evaluated],
        "trend": [{"run_id": t.run_id, "started_at": iso_time(t.started_at),
                   "failures": {s: int(t.failures.get(s, 0)) for s in SEVERITY_ORDER}}
                  for t in data.trend],
        "exceptions": [exception_document(x) for x in data.exceptions],
        "coverage": [coverage_document(c) for c in data.coverage],
    }


def indented_json(value: Any, depth: int = 0) -> bytes:
    """``value`` as ``dump_json`` writes it ``depth`` levels into a document (every line after
    its first indented), UTF-8."""
    text = orjson.dumps(value, option=orjson.OPT_INDENT_2)
    return text.replace(b"\n", b"\n" + b"  " * depth) if depth else text


def dump_json(document: dict[str, Any]) -> str:
    """Indented UTF-8 JSON text with a final newline (the layout of ``json.dumps(indent=2)``)."""
    return indented_json(document).decode("utf-8") + "\n"


def render_json_report(data: ReportData) -> str:
    return dump_json(report_document(data))


def utf8_writer(out: TextIO) -> Callable[[bytes], object]:
    """What writes UTF-8 text made as bytes (JSON as orjson gives it) to ``out``: to a text file
    written as UTF-8, into its bytes as they are (``out`` is flushed first, and written through
    this alone after); to any other text stream, as text."""
    buffer = getattr(out, "buffer", None)
    if buffer is None or (getattr(out, "encoding", "") or "").lower().replace("-", "") != "utf8":
        return lambda text: out.write(text.decode("utf-8"))
    out.flush()
    return buffer.write  # type: ignore[no-any-return]


def write_json_report(data: ReportData, out: TextIO) -> None:
    """Write the JSON report to ``out``: the text ``render_json_report`` gives, a policy's
    findings at a time; to a file's bytes as orjson gives them (UTF-8, as the text would be
    encoded), to any other text stream as text."""
    put = utf8_writer(out)
    put(b"{")
    for n, (key, value) in enumerate(_report_parts(data).items()):
        put((b",\n  " if n else b"\n  ") + orjson.dumps(key) + b": ")
        if key != "failures_by_policy" or not data.failures_by_policy:
            put(indented_json(value, 1))
            continue
        resources: dict[int, dict[str, Any]] = {}
        for i, group in enumerate(data.failures_by_policy):
            put((b",\n    " if i else b"[\n    ") + indented_json(_policy_failures(group, resources), 2))
        put(b"\n  ]")
    put(b"\n}\n")
