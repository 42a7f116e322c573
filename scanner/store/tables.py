"""The report database schema as SQLAlchemy Core tables (created only by migrations).

Tables: ``runs`` and what each saw of ``sources`` (``run_sources``); ``policies`` (one row
per content digest) and ``run_policies``; ``checks`` (a policy rule's stable identity);
``resources`` (stable identity); where runs found them and what the rules gave them
(``observation_rows`` and ``result_rows``) and per-run counts (``tally_rows``), each row stored
once for all the runs that found the same and read per run through the views
``resource_observations``, ``results`` and ``run_tallies`` (``scanner.store.shared_rows``);
``run_policy_tallies`` (per-run counts the trends read); ``findings``
(failure lifecycles); ``scan_errors``; ``locks``; ``result_cache`` (results a later scan may
reuse, by resource content) and ``shard_cache`` (what a shard of a source gave, by its inputs):
``scanner.store.result_cache``.

The store's statements are written against these tables; ``models`` maps a typed declarative
class onto each. Core alone is what a scan loads: the ORM is several times its import cost.

``result_rows`` declares no foreign keys: it is the one table with millions of rows, written
by bulk COPY/executemany where per-row constraint triggers would dominate the cost, and
deleting a parent would have to probe it. Its id columns are written by the writer from rows
it created in the same transaction, and retention deletes results with their observations.
"""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    Column,
    DateTime,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    UniqueConstraint,
)
from sqlalchemy.engine import Dialect
from sqlalchemy.types import TypeDecorator

from scanner.store.storedtext import StoredText

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


metadata = MetaData(naming_convention=NAMING_CONVENTION)


def _required(name: str, type_: object, *args: object, **kwargs: object) -> Column:
    """A column that holds a value in every row (NOT NULL)."""
    return Column(name, type_, *args, nullable=False, **kwargs)  # type: ignore[arg-type]


def _optional(name: str, type_: object, *args: object, **kwargs: object) -> Column:
    return Column(name, type_, *args, nullable=True, **kwargs)  # type: ignore[arg-type]


def _count(name: str) -> Column:
    return _required(name, Integer, server_default="0")


runs = Table(
    "runs", metadata,
    Column("run_id", Integer, primary_key=True),
    _required("status", String(16), index=True),
    _required("trigger", String(16)),
    _required("started_at", UTCDateTime, index=True),
    _optional("finished_at", UTCDateTime),
    _required("heartbeat_at", UTCDateTime),
    _required("scanner_version", String(64)),
    _required("config_digest", String(128)),
    _required("owner_host", String(255)),
    _required("owner_pid", Integer),
    _count("resource_count"),
    _count("result_count"),
    _count("pass_count"),
    _count("fail_count"),
    _count("warn_count"),
    _count("error_count"),
    _count("skip_count"),
    _count("error_record_count"),
    CheckConstraint(one_of("status", RUN_STATUSES), name="status"),
    sqlite_autoincrement=True,  # a pruned run's id is never given again (its reports keep their names)
)

sources = Table(
    "sources", metadata,
    Column("source_id", Integer, primary_key=True),
    _required("name", StoredText, unique=True),
    _required("type", String(16)),
    # The completed run whose finish last updated this source's findings: its open findings
    # are the failures of that run. Moved by each finish under the source's row lock.
    _optional("findings_run_id", Integer, ForeignKey("runs.run_id", ondelete="SET NULL")),
)

run_sources = Table(
    "run_sources", metadata,
    Column("run_id", Integer, ForeignKey("runs.run_id", ondelete="CASCADE"), primary_key=True),
    Column("source_id", Integer, ForeignKey("sources.source_id"), primary_key=True),
    _required("url", StoredText),
    _required("ref", StoredText),
    _required("commit_sha", String(64)),
    _optional("commit_at", UTCDateTime),
    _required("error", StoredText),
    # The source's ``findings_run_id`` when this run completed: the run whose findings of the
    # source this run continued (NULL for runs that did not complete or scan it).
    _optional("previous_run_id", Integer, ForeignKey("runs.run_id", ondelete="SET NULL")),
    Index("ix_run_sources_source_id_run_id", "source_id", "run_id"),
)

policies = Table(
    "policies", metadata,
    Column("policy_id", Integer, primary_key=True),
    _required("kind", String(64)),
    _required("namespace", StoredText),
    _required("name", StoredText),
    _required("digest", String(128)),
    _required("title", StoredText),
    _required("category", StoredText),
    _required("severity", StoredText),
    _required("description", StoredText),
    _required("failure_action", String(16)),
    _required("scored", Boolean),
    UniqueConstraint("kind", "namespace", "name", "digest"),
)

run_policies = Table(
    "run_policies", metadata,
    Column("run_id", Integer, ForeignKey("runs.run_id", ondelete="CASCADE"), primary_key=True),
    Column("policy_id", Integer, ForeignKey("policies.policy_id"), primary_key=True, index=True),
)

# A policy rule's identity across policy versions: (kind, namespace, name, rule).
checks = Table(
    "checks", metadata,
    Column("check_id", Integer, primary_key=True),
    _required("policy_kind", String(64)),
    _required("policy_namespace", StoredText),
    _required("policy_name", StoredText),
    _required("rule", StoredText),
    _required("declared_rule", StoredText),
    UniqueConstraint("policy_kind", "policy_namespace", "policy_name", "rule"),
)

resources = Table(
    "resources", metadata,
    Column("resource_id", Integer, primary_key=True),
    _required("source_id", Integer, ForeignKey("sources.source_id")),
    _required("api_version", StoredText),
    _required("kind", StoredText),
    _required("namespace", StoredText),
    _required("name", StoredText),
    UniqueConstraint("source_id", "api_version", "kind", "namespace", "name"),
)

# Where a resource was found and what the rules gave it, each stored once for all the runs that
# found the same: an observation's row and its ``result_rows`` belong to every run whose
# ``run_observation_blocks`` mark its id. ``content_digest``: of the row with its results, by
# which a later run of the same source reuses it (NULL: not to be reused); ``commit_sha``: NULL
# where it is the commit the run saw of the resource's source. ``scanner.store.shared_rows``
# writes and deletes them; the views at the end of this module read them run by run.
observation_rows = Table(
    "observation_rows", metadata,
    Column("observation_id", BigId, primary_key=True),
    _required("resource_id", Integer, ForeignKey("resources.resource_id"), index=True),
    _required("path", StoredText),
    _required("document_index", Integer),
    _optional("item_index", Integer),
    _optional("line", Integer),
    _optional("commit_sha", String(64)),
    # a rendered resource: the entry point rendered, and the patch files (one a line) that changed it
    _optional("overlay", StoredText),
    _optional("patches", StoredText),
    _optional("content_digest", String(64)),
)

result_rows = Table(
    "result_rows", metadata,
    Column("observation_id", BigId, primary_key=True),
    Column("check_id", Integer, primary_key=True),
    _required("resource_id", Integer),
    _required("policy_id", Integer),
    _required("status", String(8)),
    _required("action", String(8)),
    _required("message", StoredText),
    _required("path", StoredText),
    CheckConstraint(one_of("status", RESULT_STATUSES), name="status"),
    Index("ix_result_rows_resource_id_check_id", "resource_id", "check_id"),
    sqlite_with_rowid=False,  # stored by (observation, check): no rowid and key index to update
)

# The observations of a run: per block of 32 ids (``block`` = id >> 5), the mask of those it has
# (``scanner.store.shared_rows``).
run_observation_blocks = Table(
    "run_observation_blocks", metadata,
    Column("run_id", Integer, ForeignKey("runs.run_id", ondelete="CASCADE"), primary_key=True),
    Column("block", BigId, primary_key=True, autoincrement=False),
    _required("bits", BigInteger),
    Index("ix_run_observation_blocks_block", "block"),
)

# Result counts per (source, check, namespace, status), written at finish, each stored once for
# all the runs that counted the same: a run's are the rows its ``run_tally_blocks`` mark.
tally_rows = Table(
    "tally_rows", metadata,
    Column("tally_id", BigId, primary_key=True),
    _required("source_id", Integer, ForeignKey("sources.source_id"), index=True),
    _required("check_id", Integer, ForeignKey("checks.check_id"), index=True),
    _required("namespace", StoredText),
    _required("status", String(8)),
    _required("policy_id", Integer, ForeignKey("policies.policy_id"), index=True),
    _required("count", Integer),
)

run_tally_blocks = Table(
    "run_tally_blocks", metadata,
    Column("run_id", Integer, ForeignKey("runs.run_id", ondelete="CASCADE"), primary_key=True),
    Column("block", BigId, primary_key=True, autoincrement=False),
    _required("bits", BigInteger),
    Index("ix_run_tally_blocks_block", "block"),
)

# Result counts of a run per (source, policy, status): its tallies summed over checks and
# namespaces, written at finish, so that trends across many runs read a few rows per run.
run_policy_tallies = Table(
    "run_policy_tallies", metadata,
    Column("run_id", Integer, ForeignKey("runs.run_id", ondelete="CASCADE"), primary_key=True),
    Column("source_id", Integer, ForeignKey("sources.source_id"), primary_key=True, index=True),
    Column("policy_id", Integer, ForeignKey("policies.policy_id"), primary_key=True, index=True),
    Column("status", String(8), primary_key=True),
    _required("count", Integer),
)

# One failure's lifecycle: a (resource, check) failing from first seen until it ended.
findings = Table(
    "findings", metadata,
    Column("finding_id", BigId, primary_key=True),
    _required("source_id", Integer, ForeignKey("sources.source_id")),
    _required("resource_id", Integer, ForeignKey("resources.resource_id")),
    _required("check_id", Integer, ForeignKey("checks.check_id"), index=True),
    _required("policy_id", Integer, ForeignKey("policies.policy_id"), index=True),
    _optional("first_run_id", Integer, ForeignKey("runs.run_id", ondelete="SET NULL"), index=True),
    _required("first_seen_at", UTCDateTime),
    _optional("last_run_id", Integer, ForeignKey("runs.run_id", ondelete="SET NULL"), index=True),
    _optional("last_seen_at", UTCDateTime),
    _optional("resolved_run_id", Integer, ForeignKey("runs.run_id", ondelete="SET NULL"), index=True),
    _optional("resolved_at", UTCDateTime),
    _optional("end_reason", String(16)),
    CheckConstraint(one_of("end_reason", END_REASONS), name="end_reason"),
    Index("ix_findings_resource_id_check_id", "resource_id", "check_id"),
    Index("ix_findings_source_id_resolved_at", "source_id", "resolved_at"),
)

scan_errors = Table(
    "scan_errors", metadata,
    Column("error_id", BigId, primary_key=True),
    _required("run_id", Integer, ForeignKey("runs.run_id", ondelete="CASCADE"), index=True),
    _optional("source_id", Integer, ForeignKey("sources.source_id"), index=True),
    _required("kind", String(32)),
    _required("path", StoredText),
    _optional("line", Integer),
    _required("message", StoredText),
)

# A named lease: held by ``owner`` until released or ``expires_at`` passes.
locks = Table(
    "locks", metadata,
    Column("name", String(255), primary_key=True),
    _required("owner", String(255)),
    _required("owner_host", String(255)),
    _required("owner_pid", Integer),
    _required("acquired_at", UTCDateTime),
    _required("expires_at", UTCDateTime),
)

# A finished run's link in the hash chain of runs (see ``scanner.store.chain``): the digests of
# its stored content, part by part, and of the chain up to it. No foreign key: the record is
# evidence about the run's rows, and outlives them if they are deleted other than by retention.
# Keyed by position: SQLite gives a new run the id of the newest run if that one was deleted,
# and the link of a pruned run may stay (marked pruned) after its id is given again.
run_chain = Table(
    "run_chain", metadata,
    Column("position", Integer, primary_key=True, autoincrement=False),
    _required("run_id", Integer, index=True),
    _optional("previous_run_id", Integer),
    _required("version", Integer),
    _required("run_digest", String(80)),
    _required("sources_digest", String(80)),
    _required("policies_digest", String(80)),
    _required("results_digest", String(80)),
    _required("errors_digest", String(80)),
    _required("content_digest", String(80)),
    _required("chain_digest", String(80)),
    # set when retention deleted the run's rows but not its link (a run chained after one kept)
    _optional("pruned_at", UTCDateTime),
)

# Where the chain starts after retention deleted its first runs: the last pruned run's link.
chain_anchors = Table(
    "chain_anchors", metadata,
    Column("anchor_id", Integer, primary_key=True),
    _required("run_id", Integer),
    _required("position", Integer),
    _required("chain_digest", String(80)),
    _required("pruned_at", UTCDateTime),
)

# What the rules gave for one resource document, by the digest of its content: each entry the
# results of one policy under one evaluation key (``scanner.scan_cache``), reused by later scans
# while nothing that decides them changed. ``last_run_id``: the last run that wrote or reused the
# row; retention deletes the rows no kept run used.
result_cache = Table(
    "result_cache", metadata,
    Column("document_digest", String(64), primary_key=True),
    _required("entries", LargeBinary),
    _required("last_run_id", Integer, index=True),
)

# What one shard of a source gave (its resources, results, errors and counts), by the digest of
# everything that decides it (``scanner.scan_replay``): a later scan of the same inputs sends it
# again without reading the shard. ``last_run_id`` as in ``result_cache``; ``slot``: the digest of
# the source and the shard's place in it, whose older output a new one replaces.
shard_cache = Table(
    "shard_cache", metadata,
    Column("shard_key", String(64), primary_key=True),
    _required("output", LargeBinary),
    _required("last_run_id", Integer, index=True),
    _optional("slot", String(64), index=True),
)


# What the queries read: a run's observations, results and tallies, as views of the shared rows
# above (the migrations create them). In a metadata of their own: they are no tables.
view_metadata = MetaData(naming_convention=NAMING_CONVENTION)

# Where a run found a resource; a resource found twice in one run has two rows.
resource_observations = Table(
    "resource_observations", view_metadata,
    Column("observation_id", BigId, primary_key=True),
    Column("run_id", Integer, primary_key=True),
    _required("resource_id", Integer),
    _required("path", StoredText),
    _required("document_index", Integer),
    _optional("item_index", Integer),
    _optional("line", Integer),
    _required("commit_sha", String(64)),
    _optional("overlay", StoredText),
    _optional("patches", StoredText),
)

results = Table(
    "results", view_metadata,
    Column("observation_id", BigId, primary_key=True),
    Column("check_id", Integer, primary_key=True),
    Column("run_id", Integer, primary_key=True),
    _required("resource_id", Integer),
    _required("policy_id", Integer),
    _required("status", String(8)),
    _required("action", String(8)),
    _required("message", StoredText),
    _required("path", StoredText),
)

# Result counts of a run per (source, check, namespace, status).
run_tallies = Table(
    "run_tallies", view_metadata,
    Column("run_id", Integer, primary_key=True),
    Column("source_id", Integer, primary_key=True),
    Column("check_id", Integer, primary_key=True),
    Column("namespace", StoredText, primary_key=True),
    Column("status", String(8), primary_key=True),
    _required("policy_id", Integer),
    _required("count", Integer),
)

VIEWS = {
    "resource_observations": """
SELECT o.observation_id, m.run_id, o.resource_id, o.path, o.document_index, o.item_index, o.line,
       COALESCE(o.commit_sha, (SELECT rs.commit_sha FROM resources r
                               JOIN run_sources rs ON rs.source_id = r.source_id
                               WHERE r.resource_id = o.resource_id AND rs.run_id = m.run_id), '') AS commit_sha,
       o.overlay, o.patches
FROM run_observation_blocks m JOIN observation_rows o
  ON o.observation_id BETWEEN m.block * 32 AND m.block * 32 + 31 AND m.block = (o.observation_id >> 5)
 AND ((m.bits >> CAST(o.observation_id & 31 AS INTEGER)) & 1) = 1""",
    "results": """
SELECT r.observation_id, r.check_id, m.run_id, r.resource_id, r.policy_id, r.status, r.action, r.message, r.path
FROM run_observation_blocks m JOIN result_rows r
  ON r.observation_id BETWEEN m.block * 32 AND m.block * 32 + 31 AND m.block = (r.observation_id >> 5)
 AND ((m.bits >> CAST(r.observation_id & 31 AS INTEGER)) & 1) = 1""",
    "run_tallies": """
SELECT m.run_id, x.source_id, x.check_id, x.namespace, x.status, x.policy_id, x.count
FROM run_tally_blocks m JOIN tally_rows x
  ON x.tally_id BETWEEN m.block * 32 AND m.block * 32 + 31 AND m.block = (x.tally_id >> 5)
 AND ((m.bits >> CAST(x.tally_id & 31 AS INTEGER)) & 1) = 1""",
}
"""Each view's ``SELECT`` (as revision 0011 creates it)."""
