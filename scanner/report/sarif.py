"""SARIF 2.1.0: one reporting descriptor per policy/rule, one result per finding.

Results carry the repository-relative path (percent-encoded, a URI reference) and line of the
file that defines the resource -- for a resource rendered from a Kustomize overlay the base file,
with the overlay and patch files named in the message and properties, and the patch files as
related locations -- (``uriBaseId`` is the source name; Git sources also appear in
``versionControlProvenance`` with an absolute repository URI and their commit) and a
``partialFingerprints`` entry hashing source, resource identity, policy and rule, so a finding
keeps its identity across runs. Passing and skipped results are not listed; evaluation errors
and unreadable inputs become tool execution notifications.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from itertools import islice
from pathlib import PurePosixPath
from typing import Any, TextIO
from urllib.parse import quote

import orjson

from scanner.engine.types import RuleStatus
from scanner.report.data import PolicyInfo, ReportData, ResourceInfo, ResultRecord
from scanner.report.formatting import finding_id, iso_time
from scanner.report.json_report import dump_json, indented_json, utf8_writer

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
FINGERPRINT_KEY = "scannerFinding/v1"

_LEVEL_BY_SEVERITY = {"critical": "error", "high": "error", "medium": "warning",
                      "low": "note", "info": "note", "unset": "warning"}
_SECURITY_SEVERITY = {"critical": "9.5", "high": "8.0", "medium": "5.5", "low": "3.0",
                      "info": "1.0"}


# Git's scp-like syntax, [user@]host:path, which it reads when no slash comes before the colon
_SCP_LIKE = re.compile(r"(?:(?P<user>[^@/]+)@)?(?P<host>\[[^\]/]*\]|[^:/]+):(?P<path>.*)")


def rule_id(policy: str, rule: str) -> str:
    return f"{policy}/{rule}"


def _artifact_uri(path: str) -> str:
    """A file path as a URI reference (RFC 3986): what a URI cannot hold is percent-encoded."""
    return quote(path)


def _repository_uri(url: str) -> str | None:
    """A Git source's URL as an absolute URI: a URL as it is, ``user@host:path`` as
    ``ssh://user@host/path``, an absolute local path as a ``file://`` URI; None for anything
    else (a relative path names no repository on its own)."""
    if "://" in url:
        return url
    scp = _SCP_LIKE.fullmatch(url)
    if scp:
        user = f"{scp['user']}@" if scp["user"] else ""
        return f"ssh://{user}{scp['host']}/{quote(scp['path'].lstrip('/'))}"
    path = PurePosixPath(url)
    return path.as_uri() if path.is_absolute() else None


def _branch(ref: str, commit_sha: str) -> str:
    """The branch a source's ``ref`` names, or "" when it names none: not given, ``HEAD``, a
    tag or other ``refs/`` name, or the commit id itself."""
    name = ref.removeprefix("refs/heads/")
    if name == "HEAD" or name.startswith("refs/") or (
            len(name) >= 7 and commit_sha.lower().startswith(name.lower())):
        return ""
    return name


def _descriptor(policy: PolicyInfo, rule: str) -> dict[str, Any]:
    severity = policy.severity_key
    text = policy.title or policy.name
    properties: dict[str, Any] = {"category": policy.category, "severity": severity,
                                  "action": policy.action.value, "policyDigest": policy.digest,
                                  "tags": [t for t in ("kubernetes", policy.category) if t]}
    if severity in _SECURITY_SEVERITY:
        properties["security-severity"] = _SECURITY_SEVERITY[severity]
    descriptor: dict[str, Any] = {
        "id": rule_id(policy.name, rule),
        "name": f"{policy.name}.{rule}",
        "shortDescription": {"text": f"{text}: {rule}"},
        "fullDescription": {"text": policy.description or text},
        "defaultConfiguration": {"level": _LEVEL_BY_SEVERITY[severity]},
        "properties": properties,
    }
    return descriptor


def _physical(resource: ResourceInfo) -> dict[str, Any]:
    """The file (a URI reference relative to the source) and line that define ``resource``."""
    physical: dict[str, Any] = {"artifactLocation": {"uri": _artifact_uri(resource.path),
                                                     "uriBaseId": resource.source}}
    if resource.line is not None and resource.line >= 1:
        physical["region"] = {"startLine": resource.line}
    return physical


def _result(result: ResultRecord, policy: PolicyInfo, index: int) -> dict[str, Any]:
    resource = result.resource
    level = "warning" if result.status is RuleStatus.WARN else _LEVEL_BY_SEVERITY[
        policy.severity_key]
    physical = _physical(resource)
    message = result.message or f"{policy.name}/{result.rule} {result.status.value}"
    if resource.overlay:
        message = f"{message} ({resource.via})"
    document: dict[str, Any] = {
        "ruleId": rule_id(result.policy, result.rule),
        "ruleIndex": index,
        "kind": "fail",
        "level": level,
        "message": {"text": message},
        "locations": [{
            "physicalLocation": physical,
            "logicalLocations": [{"fullyQualifiedName": resource.key, "kind": "resource"}],
        }],
        "partialFingerprints": {
            FINGERPRINT_KEY: finding_id(resource, result.policy, result.rule)},
        "properties": {"status": result.status.value, "action": result.action.value,
                       "source": resource.source, "commit": resource.commit,
                       "resource": {"apiVersion": resource.api_version, "kind": resource.kind,
                                    "namespace": resource.namespace, "name": resource.name}},
    }
    if resource.overlay:
        document["properties"]["overlay"] = resource.overlay
        document["properties"]["patches"] = list(resource.patches)
        if resource.patches:
            document["relatedLocations"] = [
                {"id": i, "message": {"text": f"patch applied by overlay {resource.overlay}"},
                 "physicalLocation": {"artifactLocation": {"uri": _artifact_uri(patch),
                                                           "uriBaseId": resource.source}}}
                for i, patch in enumerate(resource.patches)]
    return document


def _notifications(data: ReportData) -> list[dict[str, Any]]:
    notes: list[dict[str, Any]] = []
    for error in data.errors:
        where = ": ".join(part for part in (error.source, error.location) if part)
        notes.append({"level": "error", "message": {"text": f"{where}: {error.message}" if where else error.message}})
    for entry in data.not_evaluated:  # a notice: the policy is valid, and gives no result
        notes.append({"level": "note", "message": {"text": f"{entry.location}: {entry.message}"}})
    for result in data.results:
        if result.status is RuleStatus.ERROR:
            notes.append({
                "level": "error",
                "message": {"text": f"{result.resource.key}: {result.message}"},
                "associatedRule": {"id": rule_id(result.policy, result.rule)},
                "locations": [{"physicalLocation": _physical(result.resource)}],
            })
    return notes


def _findings(data: ReportData) -> tuple[list[ResultRecord], list[dict[str, Any]], dict[str, int]]:
    """The results SARIF lists (fail and warn), the rule descriptors (each policy's declared
    rules, then any other rule those results name, e.g. autogen-...), and each rule's index."""
    policies = {p.name: p for p in data.policies}
    descriptors: list[dict[str, Any]] = []
    index: dict[str, int] = {}
    for policy in data.policies:
        for rule in policy.rules:
            index[rule_id(policy.name, rule)] = len(descriptors)
            descriptors.append(_descriptor(policy, rule))
    listed = [r for r in data.results if r.status is RuleStatus.FAIL or r.status is RuleStatus.WARN]
    for result in listed:
        key = rule_id(result.policy, result.rule)
        if key not in index:  # a rule the policy catalogue did not list
            index[key] = len(descriptors)
            descriptors.append(_descriptor(policies[result.policy], result.rule))
    return listed, descriptors, index


def _results(data: ReportData, listed: list[ResultRecord], index: dict[str, int]) -> Iterator[dict[str, Any]]:
    policies = {p.name: p for p in data.policies}
    return (_result(r, policies[r.policy], index[rule_id(r.policy, r.rule)]) for r in listed)


def _sarif_run(data: ReportData, descriptors: list[dict[str, Any]]) -> dict[str, Any]:
    """The run's object, its ``results`` left empty (made one at a time by ``_results``)."""
    run = data.run
    provenance = []
    for s in run.sources:
        uri = _repository_uri(s.url) if s.type == "git" and s.commit_sha else None
        if uri:
            branch = _branch(s.ref, s.commit_sha)
            provenance.append({"repositoryUri": uri, "revisionId": s.commit_sha,
                               **({"branch": branch} if branch else {}),
                               "mappedTo": {"uriBaseId": s.name}})
    invocation: dict[str, Any] = {
        "executionSuccessful": not data.errors and not any(s.error for s in run.sources),
        "startTimeUtc": iso_time(run.started_at),
        "toolExecutionNotifications": _notifications(data),
    }
    if run.finished_at is not None:
        invocation["endTimeUtc"] = iso_time(run.finished_at)
    sarif_run: dict[str, Any] = {
        "tool": {"driver": {"name": "scanner", "version": run.scanner_version,
                            "rules": descriptors}},
        "originalUriBaseIds": {
            s.name: {"description": {"text": f"{s.type} source {s.name}"}}
            for s in run.sources},
        "automationDetails": {"id": f"scanner/run/{run.run_id}"},
        "invocations": [invocation],
        "results": [],
        "properties": {"policySetDigest": run.policy_set_digest},
    }
    if provenance:
        sarif_run["versionControlProvenance"] = provenance
    return sarif_run


def _document(sarif_run: dict[str, Any]) -> dict[str, Any]:
    return {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [sarif_run]}


def sarif_document(data: ReportData) -> dict[str, Any]:
    listed, descriptors, index = _findings(data)
    sarif_run = _sarif_run(data, descriptors)
    sarif_run["results"] = list(_results(data, listed, index))
    return _document(sarif_run)


def render_sarif(data: ReportData) -> str:
    return dump_json(sarif_document(data))


_BATCH = 1024


def write_sarif(data: ReportData, out: TextIO) -> None:
    """Write the log to ``out``: the text ``render_sarif`` gives, its results a batch at a
    time; to a file's bytes as orjson gives them, to any other text stream as text."""
    put = utf8_writer(out)
    listed, descriptors, index = _findings(data)
    sarif_run = _sarif_run(data, descriptors)
    if not listed:
        put(indented_json(_document(sarif_run)) + b"\n")
        return
    head = indented_json(_document({}))  # its run: "runs": [{}] at its end
    put(head[:-len(b"{}\n  ]\n}")] + b"{")
    at = b"\n      "  # a key of the run: three levels in
    for n, (key, value) in enumerate(sarif_run.items()):
        put((b"," if n else b"") + at + orjson.dumps(key) + b": ")
        if key != "results":
            put(indented_json(value, 3))
            continue
        results = _results(data, listed, index)
        first = True
        while batch := list(islice(results, _BATCH)):
            put((b"," if not first else b"[") + b",".join(
                b"\n        " + indented_json(r, 4)
                for r in batch))
            first = False
        put(at + b"]")
    put(b"\n    }\n  ]\n}\n")
