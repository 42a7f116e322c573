"""The report database schema as SQLAlchemy 2 typed declarative models, each mapped onto its
Core table (``tables``, where the schema is declared; created only by migrations)."""

# (no ``from __future__ import annotations``: SQLAlchemy reads the ``Mapped[...]`` annotations
# as the objects they are, rather than evaluating each as a string, so the module loads faster)
from datetime import datetime

from sqlalchemy.orm import DeclarativeBase, Mapped

from scanner.store import tables
from scanner.store.tables import VERSION_TABLE as VERSION_TABLE  # for the migrations
from scanner.store.tables import UTCDateTime as UTCDateTime


class Base(DeclarativeBase):
    metadata = tables.metadata


class Run(Base):
    __table__ = tables.runs

    run_id: Mapped[int]
    status: Mapped[str]
    trigger: Mapped[str]
    started_at: Mapped[datetime]
    finished_at: Mapped[datetime | None]
    heartbeat_at: Mapped[datetime]
    scanner_version: Mapped[str]
    config_digest: Mapped[str]
    owner_host: Mapped[str]
    owner_pid: Mapped[int]
    resource_count: Mapped[int]
    result_count: Mapped[int]
    pass_count: Mapped[int]
    fail_count: Mapped[int]
    warn_count: Mapped[int]
    error_count: Mapped[int]
    skip_count: Mapped[int]
    error_record_count: Mapped[int]


class Source(Base):
    __table__ = tables.sources

    source_id: Mapped[int]
    name: Mapped[str]
    type: Mapped[str]
    findings_run_id: Mapped[int | None]
    """The completed run whose finish last updated this source's findings: its open findings
    are the failures of that run. Moved by each finish under the source's row lock."""


class RunSource(Base):
    __table__ = tables.run_sources

    run_id: Mapped[int]
    source_id: Mapped[int]
    url: Mapped[str]
    ref: Mapped[str]
    commit_sha: Mapped[str]
    commit_at: Mapped[datetime | None]
    error: Mapped[str]
    previous_run_id: Mapped[int | None]
    """The source's ``findings_run_id`` when this run completed: the run whose findings of
    the source this run continued (NULL for runs that did not complete or scan it)."""


class Policy(Base):
    __table__ = tables.policies

    policy_id: Mapped[int]
    kind: Mapped[str]
    namespace: Mapped[str]
    name: Mapped[str]
    digest: Mapped[str]
    title: Mapped[str]
    category: Mapped[str]
    severity: Mapped[str]
    description: Mapped[str]
    failure_action: Mapped[str]
    scored: Mapped[bool]


class RunPolicy(Base):
    __table__ = tables.run_policies

    run_id: Mapped[int]
    policy_id: Mapped[int]


class Check(Base):
    """A policy rule's identity across policy versions: (kind, namespace, name, rule)."""

    __table__ = tables.checks

    check_id: Mapped[int]
    policy_kind: Mapped[str]
    policy_namespace: Mapped[str]
    policy_name: Mapped[str]
    rule: Mapped[str]
    declared_rule: Mapped[str]


class Resource(Base):
    __table__ = tables.resources

    resource_id: Mapped[int]
    source_id: Mapped[int]
    api_version: Mapped[str]
    kind: Mapped[str]
    namespace: Mapped[str]
    name: Mapped[str]


class ResourceObservation(Base):
    """Where a run found a resource; a resource found twice in one run has two rows."""

    __table__ = tables.resource_observations

    observation_id: Mapped[int]
    run_id: Mapped[int]
    resource_id: Mapped[int]
    path: Mapped[str]
    document_index: Mapped[int]
    item_index: Mapped[int | None]
    line: Mapped[int | None]
    commit_sha: Mapped[str]
    overlay: Mapped[str | None]
    patches: Mapped[str | None]


class Result(Base):
    __table__ = tables.results

    observation_id: Mapped[int]
    check_id: Mapped[int]
    run_id: Mapped[int]
    resource_id: Mapped[int]
    policy_id: Mapped[int]
    status: Mapped[str]
    action: Mapped[str]
    message: Mapped[str]
    path: Mapped[str]


class RunTally(Base):
    """Result counts of a run per (source, check, namespace, status), written at finish."""

    __table__ = tables.run_tallies

    run_id: Mapped[int]
    source_id: Mapped[int]
    check_id: Mapped[int]
    namespace: Mapped[str]
    status: Mapped[str]
    policy_id: Mapped[int]
    count: Mapped[int]


class RunPolicyTally(Base):
    """Result counts of a run per (source, policy, status): its tallies summed over checks and
    namespaces, written at finish, so that trends across many runs read a few rows per run."""

    __table__ = tables.run_policy_tallies

    run_id: Mapped[int]
    source_id: Mapped[int]
    policy_id: Mapped[int]
    status: Mapped[str]
    count: Mapped[int]


class Finding(Base):
    """One failure's lifecycle: a (resource, check) failing from first seen until it ended."""

    __table__ = tables.findings

    finding_id: Mapped[int]
    source_id: Mapped[int]
    resource_id: Mapped[int]
    check_id: Mapped[int]
    policy_id: Mapped[int]
    first_run_id: Mapped[int | None]
    first_seen_at: Mapped[datetime]
    last_run_id: Mapped[int | None]
    last_seen_at: Mapped[datetime | None]
    resolved_run_id: Mapped[int | None]
    resolved_at: Mapped[datetime | None]
    end_reason: Mapped[str | None]


class ScanError(Base):
    __table__ = tables.scan_errors

    error_id: Mapped[int]
    run_id: Mapped[int]
    source_id: Mapped[int | None]
    kind: Mapped[str]
    path: Mapped[str]
    line: Mapped[int | None]
    message: Mapped[str]


class Lock(Base):
    """A named lease: held by ``owner`` until released or ``expires_at`` passes."""

    __table__ = tables.locks

    name: Mapped[str]
    owner: Mapped[str]
    owner_host: Mapped[str]
    owner_pid: Mapped[int]
    acquired_at: Mapped[datetime]
    expires_at: Mapped[datetime]


class RunChainLink(Base):
    """A finished run's link in the hash chain of runs (``scanner.store.chain``)."""

    __table__ = tables.run_chain

    position: Mapped[int]
    run_id: Mapped[int]
    previous_run_id: Mapped[int | None]
    version: Mapped[int]
    run_digest: Mapped[str]
    sources_digest: Mapped[str]
    policies_digest: Mapped[str]
    results_digest: Mapped[str]
    errors_digest: Mapped[str]
    content_digest: Mapped[str]
    chain_digest: Mapped[str]
    pruned_at: Mapped[datetime | None]


class ChainAnchor(Base):
    """The last link retention deleted: where the chain of runs starts."""

    __table__ = tables.chain_anchors

    anchor_id: Mapped[int]
    run_id: Mapped[int]
    position: Mapped[int]
    chain_digest: Mapped[str]
    pruned_at: Mapped[datetime]


class ResultCacheEntry(Base):
    """The reusable results of one resource document (``scanner.store.result_cache``)."""

    __table__ = tables.result_cache

    document_digest: Mapped[str]
    entries: Mapped[bytes]
    last_run_id: Mapped[int]


class ShardCacheEntry(Base):
    """What one shard of a source gave, by its inputs (``scanner.store.result_cache``)."""

    __table__ = tables.shard_cache

    shard_key: Mapped[str]
    output: Mapped[bytes]
    last_run_id: Mapped[int]
