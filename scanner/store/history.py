"""History queries: one resource across runs, and finding lifecycles."""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime
from typing import Literal

from sqlalchemy import Connection, func, select

from scanner.engine.types import FailureAction, RuleStatus
from scanner.store import tables as t
from scanner.store.records import COMPLETED_STATUSES, EndReason
from scanner.store.views import (
    FindingInfo,
    ResourceHistory,
    ResourceRef,
    ResourceResult,
    ResourceRunEntry,
    policy_ref,
)

FindingState = Literal["open", "resolved", "all"]


def find_resource_id(connection: Connection, ref: ResourceRef) -> int | None:
    return connection.execute(
        select(t.resources.c.resource_id).join(t.sources, t.sources.c.source_id == t.resources.c.source_id)
        .where(t.sources.c.name == ref.source, t.resources.c.api_version == ref.api_version,
               t.resources.c.kind == ref.kind, t.resources.c.namespace == ref.namespace,
               t.resources.c.name == ref.name)).scalar_one_or_none()


def resource_history(connection: Connection, ref: ResourceRef, *,
                     limit: int | None = 50) -> ResourceHistory | None:
    """The resource's provenance and results in each completed run, newest first."""
    resource_id = find_resource_id(connection, ref)
    if resource_id is None:
        return None
    observations = connection.execute(
        select(t.resource_observations.c.observation_id, t.runs.c.run_id, t.runs.c.started_at,
               t.resource_observations.c.path, t.resource_observations.c.document_index,
               t.resource_observations.c.item_index, t.resource_observations.c.line,
               t.resource_observations.c.commit_sha)
        .join(t.runs, t.runs.c.run_id == t.resource_observations.c.run_id)
        .where(t.resource_observations.c.resource_id == resource_id,
               t.runs.c.status.in_(COMPLETED_STATUSES))
        .order_by(t.runs.c.run_id.desc(), t.resource_observations.c.observation_id)
        .limit(limit)).all()
    results: dict[int, list[ResourceResult]] = defaultdict(list)
    ids = [row.observation_id for row in observations]
    for start in range(0, len(ids), 400):
        r = t.result_rows.c  # (an observation's results are the same in every run that has it)
        query = (select(r.observation_id, t.checks.c.policy_namespace, t.checks.c.policy_name,
                        t.checks.c.rule, r.status, r.message, r.path, r.action)
                 .join(t.checks, t.checks.c.check_id == r.check_id)
                 .where(r.observation_id.in_(sorted(set(ids[start:start + 400]))))
                 .order_by(t.checks.c.policy_namespace, t.checks.c.policy_name, t.checks.c.rule))
        for row in connection.execute(query):
            results[row.observation_id].append(ResourceResult(
                policy=policy_ref(row.policy_namespace, row.policy_name), rule=row.rule,
                status=RuleStatus(row.status), message=row.message, path=row.path,
                action=FailureAction(row.action)))
    entries = tuple(ResourceRunEntry(
        run_id=row.run_id, started_at=row.started_at, file=row.path,
        document=row.document_index, item=row.item_index, line=row.line,
        commit_sha=row.commit_sha, results=tuple(results[row.observation_id]))
        for row in observations)
    return ResourceHistory(resource=ref, entries=entries)


def _latest_scans(connection: Connection) -> dict[int, tuple[int | None, datetime | None]]:
    """source_id -> (run_id, started_at) of the latest completed run that scanned it."""
    rows = connection.execute(
        select(t.run_sources.c.source_id, t.runs.c.run_id, t.runs.c.started_at)
        .join(t.runs, t.runs.c.run_id == t.run_sources.c.run_id)
        .where(t.runs.c.status.in_(COMPLETED_STATUSES), t.run_sources.c.error == "")
        .order_by(t.runs.c.finished_at, t.runs.c.run_id))
    return {row.source_id: (row.run_id, row.started_at) for row in rows}


def list_findings(connection: Connection, *, state: FindingState = "all",
                  source: str | None = None, resource: ResourceRef | None = None,
                  policy: str | None = None, limit: int | None = None) -> list[FindingInfo]:
    """Finding lifecycles, newest first; open findings were last seen by the latest scan."""
    query = (select(t.findings.c.finding_id, t.findings.c.source_id, t.findings.c.first_run_id,
                    t.findings.c.first_seen_at, t.findings.c.last_run_id, t.findings.c.last_seen_at,
                    t.findings.c.resolved_run_id, t.findings.c.resolved_at, t.findings.c.end_reason,
                    t.sources.c.name.label("source"), t.resources.c.api_version, t.resources.c.kind,
                    t.resources.c.namespace, t.resources.c.name, t.checks.c.policy_namespace,
                    t.checks.c.policy_name, t.checks.c.rule)
             .join(t.sources, t.sources.c.source_id == t.findings.c.source_id)
             .join(t.resources, t.resources.c.resource_id == t.findings.c.resource_id)
             .join(t.checks, t.checks.c.check_id == t.findings.c.check_id)
             .order_by(t.findings.c.finding_id.desc()).limit(limit))
    if state == "open":
        query = query.where(t.findings.c.resolved_at.is_(None))
    elif state == "resolved":
        query = query.where(t.findings.c.resolved_at.is_not(None))
    if source is not None:
        query = query.where(t.sources.c.name == source)
    if resource is not None:
        query = query.where(t.findings.c.resource_id == func.coalesce(
            find_resource_id(connection, resource), -1))
    if policy is not None:
        namespace, _, name = policy.rpartition("/")
        query = query.where(t.checks.c.policy_namespace == namespace, t.checks.c.policy_name == name)
    latest = _latest_scans(connection)
    findings = []
    for row in connection.execute(query):
        last_run, last_at = row.last_run_id, row.last_seen_at
        if row.resolved_at is None:
            last_run, last_at = latest.get(row.source_id, (None, None))
        findings.append(FindingInfo(
            finding_id=row.finding_id,
            resource=ResourceRef(source=row.source, api_version=row.api_version,
                                 kind=row.kind, namespace=row.namespace, name=row.name),
            policy=policy_ref(row.policy_namespace, row.policy_name), rule=row.rule,
            first_run_id=row.first_run_id, first_seen_at=row.first_seen_at,
            last_run_id=last_run, last_seen_at=last_at,
            resolved_run_id=row.resolved_run_id, resolved_at=row.resolved_at,
            end_reason=EndReason(row.end_reason) if row.end_reason else None))
    return findings
