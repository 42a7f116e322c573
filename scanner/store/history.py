"""History queries: one resource across runs, and finding lifecycles."""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime
from typing import Literal

from sqlalchemy import Connection, func, select

from scanner.engine.types import FailureAction, RuleStatus
from scanner.store.models import (
    Check,
    Finding,
    Resource,
    ResourceObservation,
    Result,
    Run,
    RunSource,
    Source,
)
from scanner.store.records import COMPLETED_STATUSES, EndReason
from scanner.store.views import (
    FindingInfo,
    ResourceHistory,
    ResourceRef,
    ResourceResult,
    ResourceRunEntry,
)

FindingState = Literal["open", "resolved", "all"]


def _policy_ref(namespace: str, name: str) -> str:
    return f"{namespace}/{name}" if namespace else name


def find_resource_id(connection: Connection, ref: ResourceRef) -> int | None:
    return connection.execute(
        select(Resource.resource_id).join(Source, Source.source_id == Resource.source_id)
        .where(Source.name == ref.source, Resource.api_version == ref.api_version,
               Resource.kind == ref.kind, Resource.namespace == ref.namespace,
               Resource.name == ref.name)).scalar_one_or_none()


def resource_history(connection: Connection, ref: ResourceRef, *,
                     limit: int | None = 50) -> ResourceHistory | None:
    """The resource's provenance and results in each completed run, newest first."""
    resource_id = find_resource_id(connection, ref)
    if resource_id is None:
        return None
    observations = connection.execute(
        select(ResourceObservation.observation_id, Run.run_id, Run.started_at,
               ResourceObservation.path, ResourceObservation.document_index,
               ResourceObservation.item_index, ResourceObservation.line,
               ResourceObservation.commit_sha)
        .join(Run, Run.run_id == ResourceObservation.run_id)
        .where(ResourceObservation.resource_id == resource_id,
               Run.status.in_(COMPLETED_STATUSES))
        .order_by(Run.run_id.desc(), ResourceObservation.observation_id)
        .limit(limit)).all()
    results: dict[int, list[ResourceResult]] = defaultdict(list)
    ids = [row.observation_id for row in observations]
    for start in range(0, len(ids), 400):
        query = (select(Result.observation_id, Check.policy_namespace, Check.policy_name,
                        Check.rule, Result.status, Result.message, Result.path, Result.action)
                 .join(Check, Check.check_id == Result.check_id)
                 .where(Result.observation_id.in_(ids[start:start + 400]))
                 .order_by(Check.policy_namespace, Check.policy_name, Check.rule))
        for row in connection.execute(query):
            results[row.observation_id].append(ResourceResult(
                policy=_policy_ref(row.policy_namespace, row.policy_name), rule=row.rule,
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
        select(RunSource.source_id, Run.run_id, Run.started_at)
        .join(Run, Run.run_id == RunSource.run_id)
        .where(Run.status.in_(COMPLETED_STATUSES), RunSource.error == "")
        .order_by(Run.finished_at, Run.run_id))
    return {row.source_id: (row.run_id, row.started_at) for row in rows}


def list_findings(connection: Connection, *, state: FindingState = "all",
                  source: str | None = None, resource: ResourceRef | None = None,
                  policy: str | None = None, limit: int | None = None) -> list[FindingInfo]:
    """Finding lifecycles, newest first; open findings were last seen by the latest scan."""
    query = (select(Finding.finding_id, Finding.source_id, Finding.first_run_id,
                    Finding.first_seen_at, Finding.last_run_id, Finding.last_seen_at,
                    Finding.resolved_run_id, Finding.resolved_at, Finding.end_reason,
                    Source.name.label("source"), Resource.api_version, Resource.kind,
                    Resource.namespace, Resource.name, Check.policy_namespace,
                    Check.policy_name, Check.rule)
             .join(Source, Source.source_id == Finding.source_id)
             .join(Resource, Resource.resource_id == Finding.resource_id)
             .join(Check, Check.check_id == Finding.check_id)
             .order_by(Finding.finding_id.desc()).limit(limit))
    if state == "open":
        query = query.where(Finding.resolved_at.is_(None))
    elif state == "resolved":
        query = query.where(Finding.resolved_at.is_not(None))
    if source is not None:
        query = query.where(Source.name == source)
    if resource is not None:
        query = query.where(Finding.resource_id == func.coalesce(
            find_resource_id(connection, resource), -1))
    if policy is not None:
        namespace, _, name = policy.rpartition("/")
        query = query.where(Check.policy_namespace == namespace, Check.policy_name == name)
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
            policy=_policy_ref(row.policy_namespace, row.policy_name), rule=row.rule,
            first_run_id=row.first_run_id, first_seen_at=row.first_seen_at,
            last_run_id=last_run, last_seen_at=last_at,
            resolved_run_id=row.resolved_run_id, resolved_at=row.resolved_at,
            end_reason=EndReason(row.end_reason) if row.end_reason else None))
    return findings
