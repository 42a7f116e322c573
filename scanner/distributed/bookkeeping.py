"""What the queue knows of its runs, in two tables of its own beside Procrastinate's: each
run's selected sources and Git commits, and each shard's state, where it ran and how long.

A shard's row is claimed (``done``) in the transaction that writes its results: a retried job
whose earlier attempt committed finds it done and writes nothing; one whose earlier attempt was
killed finds it queued, the killed attempt's writes having been rolled back with it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Connection, Engine, text

from scanner.store.connect import write_connection

DDL = (
    """CREATE TABLE IF NOT EXISTS scanner_queue_runs (
        run_id BIGINT PRIMARY KEY,
        config_digest TEXT NOT NULL,
        sources TEXT NOT NULL,           -- JSON: the selected source names, in config order
        commits TEXT NOT NULL,           -- JSON: source name -> the Git commit the run scans
        reports_at TIMESTAMPTZ           -- when the run's reports were rendered
    )""",
    """CREATE TABLE IF NOT EXISTS scanner_queue_shards (
        run_id BIGINT NOT NULL,
        source TEXT NOT NULL,
        shard INTEGER NOT NULL,
        shards INTEGER NOT NULL,
        status TEXT NOT NULL DEFAULT 'queued',    -- queued, done
        worker TEXT NOT NULL DEFAULT '',
        started_at TIMESTAMPTZ,
        finished_at TIMESTAMPTZ,
        resources INTEGER NOT NULL DEFAULT 0,
        results INTEGER NOT NULL DEFAULT 0,
        fatal TEXT NOT NULL DEFAULT '',          -- why the source failed in this shard
        PRIMARY KEY (run_id, source, shard)
    )""",
)


@dataclass(frozen=True, slots=True)
class QueuedRun:
    run_id: int
    config_digest: str
    sources: tuple[str, ...]
    commits: dict[str, str]
    reports_at: datetime | None


@dataclass(frozen=True, slots=True)
class ShardState:
    source: str
    shard: int
    shards: int
    status: str
    worker: str
    started_at: datetime | None
    finished_at: datetime | None
    resources: int
    results: int
    fatal: str


def ensure_tables(engine: Engine) -> None:
    with write_connection(engine) as connection:
        connection.execute(text("SELECT pg_advisory_xact_lock(hashtext('scanner_queue_tables'))"))
        for statement in DDL:
            connection.execute(text(statement))


def add_run(connection: Connection, run_id: int, digest: str, sources: list[str], commits: dict[str, str],
            shards: dict[str, int]) -> None:
    connection.execute(text("INSERT INTO scanner_queue_runs (run_id, config_digest, sources, commits) "
                            "VALUES (:run, :digest, :sources, :commits)"),
                       {"run": run_id, "digest": digest, "sources": json.dumps(sources),
                        "commits": json.dumps(commits)})
    rows = [{"run": run_id, "source": source, "shard": i, "shards": count}
            for source, count in shards.items() for i in range(count)]
    if rows:
        connection.execute(text("INSERT INTO scanner_queue_shards (run_id, source, shard, shards) "
                                "VALUES (:run, :source, :shard, :shards)"), rows)


def queued_run(connection: Connection, run_id: int, *, lock: bool = False) -> QueuedRun | None:
    row = connection.execute(text("SELECT run_id, config_digest, sources, commits, reports_at "
                                  "FROM scanner_queue_runs WHERE run_id = :run" + (" FOR UPDATE" if lock else "")),
                             {"run": run_id}).first()
    if row is None:
        return None
    return QueuedRun(row.run_id, row.config_digest, tuple(json.loads(row.sources)), json.loads(row.commits),
                     row.reports_at)


def claim_shard(connection: Connection, run_id: int, source: str, shard: int, worker: str,
                started_at: datetime, finished_at: datetime) -> bool:
    """Mark the shard done in the transaction writing its results; False when an earlier attempt
    did (then nothing of this attempt may be kept). Waits for a concurrent attempt to end."""
    return connection.execute(text(
        "UPDATE scanner_queue_shards SET status = 'done', worker = :worker, started_at = :started, "
        "finished_at = :finished WHERE run_id = :run AND source = :source AND shard = :shard "
        "AND status <> 'done'"),
        {"run": run_id, "source": source, "shard": shard, "worker": worker, "started": started_at,
         "finished": finished_at}).rowcount == 1


def record_shard(connection: Connection, run_id: int, source: str, shard: int, resources: int, results: int,
                 fatal: str, finished_at: datetime) -> None:
    """What the shard's job wrote, and when it ended (its results written, before the commit)."""
    connection.execute(text(
        "UPDATE scanner_queue_shards SET resources = :resources, results = :results, fatal = :fatal, "
        "finished_at = :finished WHERE run_id = :run AND source = :source AND shard = :shard"),
        {"run": run_id, "source": source, "shard": shard, "resources": resources, "results": results,
         "fatal": fatal, "finished": finished_at})


def pending_shards(connection: Connection, run_id: int) -> int:
    return int(connection.execute(text("SELECT COUNT(*) FROM scanner_queue_shards WHERE run_id = :run "
                                       "AND status <> 'done'"), {"run": run_id}).scalar_one())


def shard_states(connection: Connection, run_id: int) -> list[ShardState]:
    rows = connection.execute(text(
        "SELECT source, shard, shards, status, worker, started_at, finished_at, resources, results, fatal "
        "FROM scanner_queue_shards WHERE run_id = :run ORDER BY source, shard"), {"run": run_id})
    return [ShardState(*row) for row in rows]


def mark_reported(connection: Connection, run_id: int, at: datetime) -> None:
    connection.execute(text("UPDATE scanner_queue_runs SET reports_at = :at WHERE run_id = :run"),
                       {"run": run_id, "at": at})


@dataclass(frozen=True, slots=True)
class TaskInfo:
    """One shard job of a queued run, as ``scanner runs show`` tells it."""
    source: str
    shard: int
    shards: int
    status: str
    worker: str  # host:pid of the worker that wrote it; '' while none did
    attempts: int  # the job's attempts so far (Procrastinate's count)
    started_at: datetime | None
    finished_at: datetime | None
    resources: int
    results: int
    fatal: str

    @property
    def duration_seconds(self) -> float | None:
        if self.started_at is None or self.finished_at is None:
            return None
        return (self.finished_at - self.started_at).total_seconds()


def run_tasks(engine: Engine, run_id: int) -> list[TaskInfo]:
    """The run's shard jobs; none for a run not made by the queue, or a database without the
    queue's tables (SQLite included), which is only read."""
    if engine.dialect.name != "postgresql":
        return []
    with engine.connect() as connection:
        shards, jobs = connection.execute(text(
            "SELECT to_regclass('scanner_queue_shards'), to_regclass('procrastinate_jobs')")).one()
        if shards is None:
            return []
        attempts = ("(SELECT MAX(j.attempts) FROM procrastinate_jobs j WHERE j.task_name = 'scanner.scan_shard' "
                    "AND j.args->>'run_id' = s.run_id::text AND j.args->>'source' = s.source "
                    "AND j.args->>'shard' = s.shard::text)") if jobs is not None else "NULL"
        rows = connection.execute(text(
            f"SELECT s.source, s.shard, s.shards, s.status, s.worker, COALESCE({attempts}, 0), s.started_at, "
            "s.finished_at, s.resources, s.results, s.fatal FROM scanner_queue_shards s WHERE s.run_id = :run "
            "ORDER BY s.source, s.shard"), {"run": run_id})
        return [TaskInfo(*row) for row in rows]
