"""Run queries: listing, one run in detail, the latest run per source, the previous run."""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy import Connection, Row, func, select

from scanner.errors import StoreError
from scanner.store import tables as t
from scanner.store.records import COMPLETED_STATUSES, NOT_EVALUATED, RunStatus, SourceType, Trigger
from scanner.store.views import LatestSourceRun, RunDetail, RunInfo, RunSourceInfo, StatusCounts

RUN_COLUMNS = (t.runs.c.run_id, t.runs.c.status, t.runs.c.trigger, t.runs.c.started_at, t.runs.c.finished_at,
               t.runs.c.heartbeat_at, t.runs.c.scanner_version, t.runs.c.config_digest, t.runs.c.resource_count,
               t.runs.c.pass_count, t.runs.c.fail_count, t.runs.c.warn_count, t.runs.c.error_count, t.runs.c.skip_count,
               t.runs.c.error_record_count)
SOURCE_COLUMNS = (t.sources.c.name, t.sources.c.type, t.run_sources.c.url, t.run_sources.c.ref,
                  t.run_sources.c.commit_sha, t.run_sources.c.commit_at, t.run_sources.c.error)


def run_info(row: Row) -> RunInfo:
    return RunInfo(
        run_id=row.run_id, status=RunStatus(row.status), trigger=Trigger(row.trigger),
        started_at=row.started_at, finished_at=row.finished_at, heartbeat_at=row.heartbeat_at,
        scanner_version=row.scanner_version, config_digest=row.config_digest,
        resources=row.resource_count,
        counts=StatusCounts(passed=row.pass_count, failed=row.fail_count,
                            warned=row.warn_count, errored=row.error_count,
                            skipped=row.skip_count),
        error_records=row.error_record_count)


def source_info(row: Row) -> RunSourceInfo:
    return RunSourceInfo(name=row.name, type=SourceType(row.type), url=row.url, ref=row.ref,
                         commit_sha=row.commit_sha, commit_at=row.commit_at, error=row.error)


def list_runs(connection: Connection, *, limit: int | None = 20, source: str | None = None,
              status: RunStatus | None = None, up_to: int | None = None,
              statuses: Iterable[RunStatus] | None = None, evaluated: bool = False) -> list[RunInfo]:
    """Runs newest first; ``up_to`` keeps those with an id at most it, ``statuses`` those in it,
    ``evaluated`` those that read at least one resource."""
    query = select(*RUN_COLUMNS).order_by(t.runs.c.run_id.desc()).limit(limit)
    if evaluated:
        query = query.where(t.runs.c.resource_count > 0)
    if up_to is not None:
        query = query.where(t.runs.c.run_id <= up_to)
    if statuses is not None:
        query = query.where(t.runs.c.status.in_(list(statuses)))
    if source is not None:
        query = query.where(t.runs.c.run_id.in_(
            select(t.run_sources.c.run_id).join(t.sources, t.sources.c.source_id == t.run_sources.c.source_id)
            .where(t.sources.c.name == source)))
    if status is not None:
        query = query.where(t.runs.c.status == status)
    return [run_info(row) for row in connection.execute(query)]


def find_run(connection: Connection, run_id: int) -> RunInfo | None:
    row = connection.execute(select(*RUN_COLUMNS).where(t.runs.c.run_id == run_id)).first()
    return run_info(row) if row is not None else None


def get_run(connection: Connection, run_id: int) -> RunDetail:
    run = find_run(connection, run_id)
    if run is None:
        latest = [r.run_id for r in list_runs(connection, limit=5)]
        shown = ", ".join(map(str, latest)) if latest else "none yet"
        raise StoreError(f"run {run_id} does not exist; the latest runs are: {shown}")
    sources = connection.execute(
        select(*SOURCE_COLUMNS).join(t.sources, t.sources.c.source_id == t.run_sources.c.source_id)
        .where(t.run_sources.c.run_id == run_id).order_by(t.sources.c.name))
    policies = connection.execute(
        select(func.count()).select_from(t.run_policies).where(t.run_policies.c.run_id == run_id)
    ).scalar_one()
    documents = connection.execute(
        select(func.count()).select_from(t.resource_observations).where(t.resource_observations.c.run_id == run_id)
    ).scalar_one()
    not_evaluated = connection.execute(
        select(func.count()).select_from(t.scan_errors)
        .where(t.scan_errors.c.run_id == run_id, t.scan_errors.c.kind == NOT_EVALUATED)).scalar_one()
    return RunDetail(run=run, sources=tuple(source_info(row) for row in sources),
                     policies=policies, documents=documents, not_evaluated=not_evaluated)


def latest_run_id(connection: Connection, source: str | None = None) -> int | None:
    """The latest completed run (of ``source`` when given)."""
    query = select(func.max(t.runs.c.run_id)).where(t.runs.c.status.in_(COMPLETED_STATUSES))
    if source is not None:
        query = query.where(t.runs.c.run_id.in_(
            select(t.run_sources.c.run_id).join(t.sources, t.sources.c.source_id == t.run_sources.c.source_id)
            .where(t.sources.c.name == source)))
    return connection.execute(query).scalar_one()


def latest_per_source(connection: Connection) -> list[LatestSourceRun]:
    """For every source, the latest completed run that included it."""
    latest = (select(t.run_sources.c.source_id, func.max(t.run_sources.c.run_id).label("run_id"))
              .join(t.runs, t.runs.c.run_id == t.run_sources.c.run_id)
              .where(t.runs.c.status.in_(COMPLETED_STATUSES))
              .group_by(t.run_sources.c.source_id).subquery())
    query = (select(*SOURCE_COLUMNS, *RUN_COLUMNS)
             .select_from(latest)
             .join(t.run_sources, (t.run_sources.c.source_id == latest.c.source_id)
                   & (t.run_sources.c.run_id == latest.c.run_id))
             .join(t.sources, t.sources.c.source_id == t.run_sources.c.source_id)
             .join(t.runs, t.runs.c.run_id == t.run_sources.c.run_id)
             .order_by(t.sources.c.name))
    return [LatestSourceRun(source=source_info(row), run=run_info(row))
            for row in connection.execute(query)]


def previous_run_id(connection: Connection, run_id: int) -> int | None:
    """The latest completed run before ``run_id`` that scanned one of its sources."""
    its_sources = select(t.run_sources.c.source_id).where(t.run_sources.c.run_id == run_id)
    query = (select(func.max(t.runs.c.run_id))
             .where(t.runs.c.run_id < run_id, t.runs.c.status.in_(COMPLETED_STATUSES),
                    t.runs.c.run_id.in_(select(t.run_sources.c.run_id)
                                        .where(t.run_sources.c.source_id.in_(its_sources)))))
    return connection.execute(query).scalar_one()
