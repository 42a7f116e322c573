"""The report database schema as SQLAlchemy 2 typed models (created only by migrations).

Tables: ``runs`` and what each saw of ``sources`` (``run_sources``); ``policies`` (one row
per content digest) and ``run_policies``; ``checks`` (a policy rule's stable identity);
``resources`` (stable identity) and their per-run ``resource_observations`` (provenance);
``results``; ``run_tallies`` (per-run counts the summaries and trends read); ``findings``
(failure lifecycles); ``scan_errors``; ``locks``.

``results`` declares no foreign keys: it is the one table with millions of rows per run,
written by bulk COPY/executemany where per-row constraint triggers would dominate the
cost, and deleting a parent would have to probe it. Its id columns are written by the
writer from rows it created in the same transaction, and retention deletes results
before their runs and observations.
"""

# (no ``from __future__ import annotations``: SQLAlchemy reads the ``Mapped[...]`` annotations
# as the objects they are, rather than evaluating each as a string, so the module loads faster)
from datetime import UTC, datetime

from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    DateTime,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.engine import Dialect
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column
from sqlalchemy.types import TypeDecorator

NAMING_CONVENTION = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

VERSION_TABLE = "scanner_schema_version"
"""Alembic's version table; its presence marks a database as a scanner database."""

RUN_STATUSES = ("running", "succeeded", "partial", "failed", "interrupted")
RESULT_STATUSES = ("pass", "fail", "warn", "error", "skip")
END_REASONS = ("fixed", "resource_gone", "policy_changed", "policy_removed")


def one_of(column: str, values: tuple[str, ...]) -> str:
    """A check that ``column`` holds one of ``values``, as comparisons: SQLite checks an
    ``IN (...)`` list several times slower, for every row written."""
    return " OR ".join(f"{column} = '{value}'" for value in values)


BigId = BigInteger().with_variant(Integer(), "sqlite")


class UTCDateTime(TypeDecorator[datetime]):
    """``DateTime(timezone=True)`` that always returns aware UTC values (SQLite drops zones)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError(f"naive datetime {value!r}: the store keeps UTC timestamps")
        value = value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)


class Run(Base):
    __tablename__ = "runs"
    __table_args__ = (CheckConstraint(one_of("status", RUN_STATUSES), name="status"),)

    run_id: Mapped[int] = mapped_column(Integer, primary_key=True)
    status: Mapped[str] = mapped_column(String(16), index=True)
    trigger: Mapped[str] = mapped_column(String(16))
    started_at: Mapped[datetime] = mapped_column(UTCDateTime, index=True)
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    heartbeat_at: Mapped[datetime] = mapped_column(UTCDateTime)
    scanner_version: Mapped[str] = mapped_column(String(64))
    config_digest: Mapped[str] = mapped_column(String(128))
    owner_host: Mapped[str] = mapped_column(String(255))
    owner_pid: Mapped[int] = mapped_column(Integer)
    resource_count: Mapped[int] = mapped_column(Integer, server_default="0")
    result_count: Mapped[int] = mapped_column(Integer, server_default="0")
    pass_count: Mapped[int] = mapped_column(Integer, server_default="0")
    fail_count: Mapped[int] = mapped_column(Integer, server_default="0")
    warn_count: Mapped[int] = mapped_column(Integer, server_default="0")
    error_count: Mapped[int] = mapped_column(Integer, server_default="0")
    skip_count: Mapped[int] = mapped_column(Integer, server_default="0")
    error_record_count: Mapped[int] = mapped_column(Integer, server_default="0")


class Source(Base):
    __tablename__ = "sources"

    source_id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(Text, unique=True)
    type: Mapped[str] = mapped_column(String(16))
    findings_run_id: Mapped[int | None] = mapped_column(
        ForeignKey("runs.run_id", ondelete="SET NULL"))
    """The completed run whose finish last updated this source's findings: its open findings
    are the failures of that run. Moved by each finish under the source's row lock."""


class RunSource(Base):
    __tablename__ = "run_sources"
    __table_args__ = (Index("ix_run_sources_source_id_run_id", "source_id", "run_id"),)

    run_id: Mapped[int] = mapped_column(
        ForeignKey("runs.run_id", ondelete="CASCADE"), primary_key=True)
    source_id: Mapped[int] = mapped_column(ForeignKey("sources.source_id"), primary_key=True)
    url: Mapped[str] = mapped_column(Text)
    ref: Mapped[str] = mapped_column(Text)
    commit_sha: Mapped[str] = mapped_column(String(64))
    commit_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    error: Mapped[str] = mapped_column(Text)
    previous_run_id: Mapped[int | None] = mapped_column(
        ForeignKey("runs.run_id", ondelete="SET NULL"))
    """The source's ``findings_run_id`` when this run completed: the run whose findings of
    the source this run continued (NULL for runs that did not complete or scan it)."""


class Policy(Base):
    __tablename__ = "policies"
    __table_args__ = (UniqueConstraint("kind", "namespace", "name", "digest"),)

    policy_id: Mapped[int] = mapped_column(Integer, primary_key=True)
    kind: Mapped[str] = mapped_column(String(64))
    namespace: Mapped[str] = mapped_column(Text)
    name: Mapped[str] = mapped_column(Text)
    digest: Mapped[str] = mapped_column(String(128))
    title: Mapped[str] = mapped_column(Text)
    category: Mapped[str] = mapped_column(Text)
    severity: Mapped[str] = mapped_column(Text)
    description: Mapped[str] = mapped_column(Text)
    failure_action: Mapped[str] = mapped_column(String(16))
    scored: Mapped[bool] = mapped_column(Boolean)


class RunPolicy(Base):
    __tablename__ = "run_policies"

    run_id: Mapped[int] = mapped_column(
        ForeignKey("runs.run_id", ondelete="CASCADE"), primary_key=True)
    policy_id: Mapped[int] = mapped_column(
        ForeignKey("policies.policy_id"), primary_key=True, index=True)


class Check(Base):
    """A policy rule's identity across policy versions: (kind, namespace, name, rule)."""

    __tablename__ = "checks"
    __table_args__ = (
        UniqueConstraint("policy_kind", "policy_namespace", "policy_name", "rule"),)

    check_id: Mapped[int] = mapped_column(Integer, primary_key=True)
    policy_kind: Mapped[str] = mapped_column(String(64))
    policy_namespace: Mapped[str] = mapped_column(Text)
    policy_name: Mapped[str] = mapped_column(Text)
    rule: Mapped[str] = mapped_column(Text)
    declared_rule: Mapped[str] = mapped_column(Text)


class Resource(Base):
    __tablename__ = "resources"
    __table_args__ = (
        UniqueConstraint("source_id", "api_version", "kind", "namespace", "name"),)

    resource_id: Mapped[int] = mapped_column(Integer, primary_key=True)
    source_id: Mapped[int] = mapped_column(ForeignKey("sources.source_id"))
    api_version: Mapped[str] = mapped_column(Text)
    kind: Mapped[str] = mapped_column(Text)
    namespace: Mapped[str] = mapped_column(Text)
    name: Mapped[str] = mapped_column(Text)


class ResourceObservation(Base):
    """Where a run found a resource; a resource found twice in one run has two rows."""

    __tablename__ = "resource_observations"
    __table_args__ = (
        Index("ix_resource_observations_run_id_resource_id", "run_id", "resource_id"),)

    observation_id: Mapped[int] = mapped_column(BigId, primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("runs.run_id", ondelete="CASCADE"))
    resource_id: Mapped[int] = mapped_column(ForeignKey("resources.resource_id"), index=True)
    path: Mapped[str] = mapped_column(Text)
    document_index: Mapped[int] = mapped_column(Integer)
    item_index: Mapped[int | None] = mapped_column(Integer)
    line: Mapped[int | None] = mapped_column(Integer)
    commit_sha: Mapped[str] = mapped_column(String(64))


class Result(Base):
    __tablename__ = "results"
    __table_args__ = (
        CheckConstraint(one_of("status", RESULT_STATUSES), name="status"),
        # status second: a run's failing rows are a few index ranges, not a scan of the run
        Index("ix_results_run_id_status_resource_id_check_id", "run_id", "status",
              "resource_id", "check_id"),
        {"sqlite_with_rowid": False},  # stored by (observation, check): no rowid and key index to update
    )

    observation_id: Mapped[int] = mapped_column(BigId, primary_key=True)
    check_id: Mapped[int] = mapped_column(Integer, primary_key=True)
    run_id: Mapped[int] = mapped_column(Integer)
    resource_id: Mapped[int] = mapped_column(Integer)
    policy_id: Mapped[int] = mapped_column(Integer)
    status: Mapped[str] = mapped_column(String(8))
    action: Mapped[str] = mapped_column(String(8))
    message: Mapped[str] = mapped_column(Text)
    path: Mapped[str] = mapped_column(Text)


class RunTally(Base):
    """Result counts of a run per (source, check, namespace, status), written at finish."""

    __tablename__ = "run_tallies"

    run_id: Mapped[int] = mapped_column(
        ForeignKey("runs.run_id", ondelete="CASCADE"), primary_key=True)
    source_id: Mapped[int] = mapped_column(
        ForeignKey("sources.source_id"), primary_key=True, index=True)
    check_id: Mapped[int] = mapped_column(
        ForeignKey("checks.check_id"), primary_key=True, index=True)
    namespace: Mapped[str] = mapped_column(Text, primary_key=True)
    status: Mapped[str] = mapped_column(String(8), primary_key=True)
    policy_id: Mapped[int] = mapped_column(ForeignKey("policies.policy_id"), index=True)
    count: Mapped[int] = mapped_column(Integer)


class RunPolicyTally(Base):
    """Result counts of a run per (source, policy, status): its tallies summed over checks and
    namespaces, written at finish, so that trends across many runs read a few rows per run."""

    __tablename__ = "run_policy_tallies"

    run_id: Mapped[int] = mapped_column(
        ForeignKey("runs.run_id", ondelete="CASCADE"), primary_key=True)
    source_id: Mapped[int] = mapped_column(
        ForeignKey("sources.source_id"), primary_key=True, index=True)
    policy_id: Mapped[int] = mapped_column(
        ForeignKey("policies.policy_id"), primary_key=True, index=True)
    status: Mapped[str] = mapped_column(String(8), primary_key=True)
    count: Mapped[int] = mapped_column(Integer)


class Finding(Base):
    """One failure's lifecycle: a (resource, check) failing from first seen until it ended."""

    __tablename__ = "findings"
    __table_args__ = (
        CheckConstraint(one_of("end_reason", END_REASONS), name="end_reason"),
        Index("ix_findings_resource_id_check_id", "resource_id", "check_id"),
        Index("ix_findings_source_id_resolved_at", "source_id", "resolved_at"),
    )

    finding_id: Mapped[int] = mapped_column(BigId, primary_key=True)
    source_id: Mapped[int] = mapped_column(ForeignKey("sources.source_id"))
    resource_id: Mapped[int] = mapped_column(ForeignKey("resources.resource_id"))
    check_id: Mapped[int] = mapped_column(ForeignKey("checks.check_id"), index=True)
    policy_id: Mapped[int] = mapped_column(ForeignKey("policies.policy_id"), index=True)
    first_run_id: Mapped[int | None] = mapped_column(
        ForeignKey("runs.run_id", ondelete="SET NULL"), index=True)
    first_seen_at: Mapped[datetime] = mapped_column(UTCDateTime)
    last_run_id: Mapped[int | None] = mapped_column(
        ForeignKey("runs.run_id", ondelete="SET NULL"), index=True)
    last_seen_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    resolved_run_id: Mapped[int | None] = mapped_column(
        ForeignKey("runs.run_id", ondelete="SET NULL"), index=True)
    resolved_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    end_reason: Mapped[str | None] = mapped_column(String(16))


class ScanError(Base):
    __tablename__ = "scan_errors"

    error_id: Mapped[int] = mapped_column(BigId, primary_key=True)
    run_id: Mapped[int] = mapped_column(
        ForeignKey("runs.run_id", ondelete="CASCADE"), index=True)
    source_id: Mapped[int | None] = mapped_column(ForeignKey("sources.source_id"), index=True)
    kind: Mapped[str] = mapped_column(String(32))
    path: Mapped[str] = mapped_column(Text)
    line: Mapped[int | None] = mapped_column(Integer)
    message: Mapped[str] = mapped_column(Text)


class Lock(Base):
    """A named lease: held by ``owner`` until released or ``expires_at`` passes."""

    __tablename__ = "locks"

    name: Mapped[str] = mapped_column(String(255), primary_key=True)
    owner: Mapped[str] = mapped_column(String(255))
    owner_host: Mapped[str] = mapped_column(String(255))
    owner_pid: Mapped[int] = mapped_column(Integer)
    acquired_at: Mapped[datetime] = mapped_column(UTCDateTime)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime)
