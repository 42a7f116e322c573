"""The store: open a report database, write runs, query history. All SQL lives in store/.

    store = Store("sqlite:///scanner.db")
    with store.begin_run(RunStart(started_at=now)) as run:
        run.add_source(SourceRecord(...)); run.add_policies([...])
        run.add_result_rows([(resources, rows)])  # ResultRows, one transaction per call (a scan)
        run.add_results(records)          # or ResultRecords: the same, in batches
        run.finish()
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Connection, Engine
from sqlalchemy.engine import URL
from sqlalchemy.exc import SQLAlchemyError

from scanner.engine.types import RuleStatus
from scanner.store import chain, chain_verify, coverage, diff, history, reporting, runs, schema, summary
from scanner.store import prune as retention
from scanner.store import tables as t
from scanner.store.connect import (
    create_store_engine,
    describe,
    parse_url,
    translate_errors,
    write_connection,
)
from scanner.store.liveness import HOST, mark_interrupted, utc_now
from scanner.store.locks import DatabaseLock, try_lock
from scanner.store.records import RunStart, RunStatus
from scanner.store.views import (
    ErrorInfo,
    ExceptionSkips,
    FindingInfo,
    LatestSourceRun,
    ObservationInfo,
    PolicyInfo,
    PruneResult,
    ReportResult,
    ResourceHistory,
    ResourceRef,
    RunDetail,
    RunDiff,
    RunInfo,
    RunSummary,
    TrendPoint,
)
from scanner.store.writer import DEFAULT_BATCH, RunWriter


class Store:
    """A report database at the schema head.

    ``auto_upgrade`` (default: on for SQLite) creates the schema in an empty database.
    A ``running`` run whose owner died (or whose heartbeat is older than ``stale_after``)
    is marked ``interrupted`` when the store opens (unless ``mark_stale`` is off) and before
    each new run; what it wrote is deleted then (retries must not grow the database).

    ``read_only`` opens a database only to read it (``runs``, ``report``): nothing is written,
    not even the marks, so that a full disk or a read-only folder does not stop reading.
    """

    def __init__(self, url: str | URL, *, auto_upgrade: bool | None = None,
                 check_schema: bool = True, heartbeat_interval: float = 15.0,
                 stale_after: timedelta = timedelta(minutes=2),
                 batch_size: int = DEFAULT_BATCH, read_only: bool = False,
                 mark_stale: bool = True) -> None:
        self.url = parse_url(url)
        self.read_only = read_only
        self.engine = create_store_engine(self.url, read_only=read_only)
        self.heartbeat_interval = heartbeat_interval
        self.stale_after = stale_after
        self.batch_size = batch_size
        if check_schema:
            if auto_upgrade is None:
                auto_upgrade = self.url.get_backend_name() == "sqlite" and not read_only
            with self._errors("open"):
                schema.ensure_schema(self.engine, self.url, auto_upgrade=auto_upgrade)
                if mark_stale and not read_only:
                    self.mark_interrupted()

    def __repr__(self) -> str:
        return f"Store({self.describe()!r})"

    def describe(self) -> str:
        """The database URL with its password redacted."""
        return describe(self.url)

    def reclaim_replaced(self) -> None:
        """PostgreSQL: make the space of the cache rows a scan replaced reusable (a ``VACUUM`` of
        the result and shard caches, as autovacuum would, where it is off or has not come by
        between two scans); SQLite reuses freed pages itself. A database that refuses (its user
        does not own the tables, a server too old for ``SKIP_LOCKED``) is left to its autovacuum."""
        if self.engine.dialect.name != "postgresql":
            return
        try:
            with self.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
                connection.exec_driver_sql("VACUUM (SKIP_LOCKED) shard_cache, result_cache")
        except SQLAlchemyError:
            return

    def close(self) -> None:
        self.engine.dispose()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def _errors(self, doing: str) -> AbstractContextManager[None]:
        return translate_errors(self.url, doing)

    @contextmanager
    def _read(self, doing: str) -> Iterator[Connection]:
        with translate_errors(self.url, doing), self.engine.connect() as connection:
            yield connection

    # -- schema ----------------------------------------------------------------------------
    def schema_state(self) -> schema.SchemaState:
        with self._errors("read the schema revision"):
            return schema.current_state(self.engine)

    def upgrade(self, revision: str = "head") -> schema.SchemaState:
        with self._errors(f"upgrade to {revision}"):
            return schema.upgrade(self.engine, self.url, revision)

    def downgrade(self, revision: str) -> schema.SchemaState:
        with self._errors(f"downgrade to {revision}"):
            return schema.downgrade(self.engine, self.url, revision)

    # -- writing ---------------------------------------------------------------------------
    def mark_interrupted(self) -> list[int]:
        """Mark ``running`` runs whose writer is gone as ``interrupted``; return their ids."""
        with self._errors("mark interrupted runs"):
            return mark_interrupted(self.engine, self.stale_after)

    def begin_run(self, start: RunStart) -> RunWriter:
        self.mark_interrupted()
        now = utc_now()
        run_id = create_run(self.engine, self.url, {
            "status": RunStatus.RUNNING, "trigger": start.trigger,
            "started_at": start.started_at, "heartbeat_at": now,
            "scanner_version": start.scanner_version, "config_digest": start.config_digest,
            "owner_host": HOST, "owner_pid": os.getpid()})
        return RunWriter(self.engine, self.url, run_id, batch_size=self.batch_size,
                         heartbeat_interval=self.heartbeat_interval, sole=True)

    def try_lock(self, name: str, ttl: timedelta = timedelta(minutes=2)) -> DatabaseLock | None:
        """Take the named lock (e.g. one per scheduled scan); None while another holds it."""
        with self._errors(f"take lock {name!r}"):
            return try_lock(self.engine, name, ttl)

    def prune(self, keep_days: int, *, now: datetime | None = None) -> PruneResult:
        """Delete old runs, and what failed and interrupted runs wrote as they went. Stale runs
        are marked interrupted afterwards (and their rows deleted): on a full disk the deletes
        come first, and the marking is what they made room for."""
        with self._errors("prune"), write_connection(self.engine) as connection:
            result = retention.prune(connection, keep_days, now or utc_now())
        self.mark_interrupted()
        return result

    # -- runs ------------------------------------------------------------------------------
    def list_runs(self, *, limit: int | None = 20, source: str | None = None,
                  status: RunStatus | None = None, up_to: int | None = None,
                  statuses: Iterable[RunStatus] | None = None, evaluated: bool = False) -> list[RunInfo]:
        """Runs newest first, at most ``limit``; ``up_to`` keeps ids at most it, ``statuses``
        the runs in one of them, ``evaluated`` the runs that read at least one resource."""
        with self._read("list runs") as c:
            return runs.list_runs(c, limit=limit, source=source, status=status, up_to=up_to, statuses=statuses,
                                  evaluated=evaluated)

    def find_run(self, run_id: int) -> RunInfo | None:
        with self._read(f"read run {run_id}") as c:
            return runs.find_run(c, run_id)

    def get_run(self, run_id: int) -> RunDetail:
        """The run with its sources; a ``StoreError`` listing the latest runs if unknown."""
        with self._read(f"read run {run_id}") as c:
            return runs.get_run(c, run_id)

    def latest_run_id(self, source: str | None = None) -> int | None:
        with self._read("find the latest run") as c:
            return runs.latest_run_id(c, source)

    def latest_per_source(self) -> list[LatestSourceRun]:
        with self._read("find the latest run per source") as c:
            return runs.latest_per_source(c)

    def previous_run_id(self, run_id: int) -> int | None:
        with self._read(f"find the run before {run_id}") as c:
            return runs.previous_run_id(c, run_id)

    # -- the chain of runs -----------------------------------------------------------------
    def verify_chain(self, *, from_run: int | None = None) -> chain_verify.ChainVerdict:
        """Recompute the hash chain of runs from the stored rows (from ``from_run`` on)."""
        with self._read("verify the chain of runs") as c:
            return chain_verify.verify_chain(c, from_run)

    def chain_link(self, run_id: int) -> chain.ChainLink | None:
        """The run's link in the chain (None for a run that did not finish)."""
        with self._read(f"read the chain link of run {run_id}") as c:
            return chain.find_link(c, run_id)

    # -- counts, diffs, history ------------------------------------------------------------
    def summarize_run(self, run_id: int) -> RunSummary:
        with self._read(f"summarize run {run_id}") as c:
            return summary.summarize_run(c, run_id)

    def trend(self, *, since: datetime, until: datetime | None = None,
              group_by: summary.TrendGroup = None, bucket: summary.TrendBucket = "run",
              sources: Iterable[str] = (), statuses: Iterable[str] = ()) -> list[TrendPoint]:
        with self._read("read the trend") as c:
            return summary.trend(c, since=since, until=until, group_by=group_by,
                                 bucket=bucket, sources=sources, statuses=statuses)

    def diff_runs(self, base_run_id: int, head_run_id: int, *, limit: int | None = None,
                  include_still_failing: bool = False) -> RunDiff:
        with self._read(f"compare runs {base_run_id} and {head_run_id}") as c:
            return diff.diff_runs(c, base_run_id, head_run_id, limit=limit,
                                  include_still_failing=include_still_failing)

    def resource_history(self, resource: ResourceRef, *,
                         limit: int | None = 50) -> ResourceHistory | None:
        with self._read("read a resource's history") as c:
            return history.resource_history(c, resource, limit=limit)

    def list_findings(self, *, state: history.FindingState = "all", source: str | None = None,
                      resource: ResourceRef | None = None, policy: str | None = None,
                      limit: int | None = None) -> list[FindingInfo]:
        with self._read("list findings") as c:
            return history.list_findings(c, state=state, source=source, resource=resource,
                                         policy=policy, limit=limit)

    # -- report data -----------------------------------------------------------------------
    def run_policies(self, run_id: int) -> list[PolicyInfo]:
        with self._read(f"read the policies of run {run_id}") as c:
            return reporting.run_policies(c, run_id)

    def exception_skips(self, run_id: int) -> list[ExceptionSkips]:
        """What policy exceptions skipped in the run, per policy rule and exceptions."""
        with self._read(f"read the exceptions applied in run {run_id}") as c:
            return reporting.exception_skips(c, run_id)

    def run_coverage(self, run_id: int) -> list[coverage.CoverageCount]:
        """The run's resources per source and entry point (what rendered them)."""
        with self._read(f"read the coverage of run {run_id}") as c:
            return coverage.run_coverage(c, run_id)

    def run_errors(self, run_id: int) -> list[ErrorInfo]:
        with self._read(f"read the errors of run {run_id}") as c:
            return reporting.run_errors(c, run_id)

    def iter_run_results(self, run_id: int, *,
                         statuses: Iterable[RuleStatus] = ()) -> Iterator[ReportResult]:
        """A run's results in the order reports list them (its narrow rows are read first)."""
        with self._read(f"read the results of run {run_id}") as c:
            yield from reporting.iter_run_results(c, run_id, statuses=statuses)

    def run_result_rows(self, run_id: int, *, statuses: Iterable[RuleStatus] = (),
                        order: Callable[[dict[int, ObservationInfo]], Iterable[int]] | None = None,
                        check_key: reporting.CheckKey | None = None
                        ) -> tuple[list[reporting.ResultRowTuple], dict[int, ObservationInfo]]:
        """A run's results as narrow rows, ``(place, policy id, rule, declared rule, status,
        message, path, action, observation id)``, and where the run found each resource, by
        observation id (read in one transaction); to read with ``run_policies_by_id``. In the
        order of ``iter_run_results``, or by ``check_key`` (see ``reporting.run_result_rows``) and
        then the observations as ``order`` gives them."""
        with self._read(f"read the results of run {run_id}") as c:
            observations = reporting.run_observations(c, run_id)
            ordered = observations if order is None else order(observations)
            return reporting.run_result_rows(c, run_id, ordered, statuses=statuses, check_key=check_key), observations

    def run_policies_by_id(self, run_id: int) -> dict[int, PolicyInfo]:
        with self._read(f"read the policies of run {run_id}") as c:
            return reporting.policies_by_id(c, run_id)

    def iter_run_observations(self, run_id: int) -> Iterator[tuple[str, str, bool]]:
        """``(namespace, source, failing)`` per resource observation with results in the run."""
        with self._read(f"read the resources of run {run_id}") as c:
            yield from reporting.iter_run_observations(c, run_id)


def create_run(engine: Engine, url: URL, values: dict[str, Any]) -> int:
    """A new run's row (``values``); its id."""
    with translate_errors(url, "begin run"), write_connection(engine) as connection:
        return connection.execute(t.runs.insert().values(**values)
                                  .returning(t.runs.c.run_id)).scalar_one()
