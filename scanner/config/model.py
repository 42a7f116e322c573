"""What a config file becomes: frozen dataclasses, one per section, and the values they allow."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from scanner.errors import Location

DATABASE_ENV = "SCANNER_DATABASE_URL"
REPORT_FORMATS = ("html", "json", "audit-html", "audit-json", "sarif", "junit", "policy-report", "openreports")
MAX_JOBS = 256
"""The most worker processes a scan may ask for (``scan.jobs``, ``--jobs``); a scan starts at
most ``JOBS_PER_CPU`` per CPU it may run on (``scanner.scan.pool.worker_count``)."""
FAIL_ON = ("enforce", "fail", "error", "never")


@dataclass(frozen=True, slots=True)
class GitRef:
    """A Git repository named in the config (a source's or a policy location's): URL, ref, path, access."""

    url: str
    ref: str | None = None
    path: str = ""
    shallow: bool = False
    token_env: str | None = None
    ssh_key: str | None = None
    timeout: float = 300.0
    submodules: bool = False


@dataclass(frozen=True, slots=True)
class PolicyLocation:
    """Where policies come from: a file or folder, or a folder of a Git repository, and which of
    its files are read (globs relative to that folder, as a source's ``include``/``exclude``)."""

    path: str | None = None
    git: GitRef | None = None
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class SourceConfig:
    """One configured source: a Git repository, cluster export files or a folder, with its filters."""

    name: str
    type: str  # git | export | directory
    git: GitRef | None = None
    paths: tuple[str, ...] = ()
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    kustomize: str = "auto"
    kustomize_roots: tuple[str, ...] = ()  # kustomization folders rendered as entry points too
    kustomize_remote_hosts: tuple[str, ...] = ()  # hosts remote kustomize resources may come from
    helm: HelmConfig = field(default_factory=lambda: HelmConfig())
    gitops: str = "auto"  # auto: Flux and Argo CD objects decide what is rendered; off: they are plain objects
    repository_urls: tuple[str, ...] = ()  # other URLs of the repository (GitOps objects name it by them)

    # the cluster whose objects this source's look-ups see: by default its own (named after it);
    # sources naming the same cluster (an export and the repositories that deploy to it) share one
    cluster: str = ""

    @property
    def cluster_name(self) -> str:
        return self.cluster or self.name


@dataclass(frozen=True, slots=True)
class HelmChartConfig:
    """One chart's release as configured: its name, namespace, values files (relative to the
    source root) and inline values."""

    release: str | None = None
    namespace: str | None = None
    values: tuple[str, ...] = ()
    set: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class HelmConfig:
    """How a source's Helm charts are rendered: ``auto`` with ``helm template``, or ``off``;
    ``values`` files apply to every chart (after its own ``values.yaml``), ``charts`` holds
    per-chart settings keyed by the chart's folder (relative to the source root)."""

    mode: str = "auto"
    values: tuple[str, ...] = ()
    charts: Mapping[str, HelmChartConfig] = field(default_factory=dict)
    timeout: float = 120.0


@dataclass(frozen=True, slots=True)
class SigningKeyConfig:
    """Where the key that signs the audit reports is read from: a PEM file, or an environment
    variable holding the PEM text (the config names it; the key itself is never in the config)."""

    file: str | None = None
    env: str | None = None


@dataclass(frozen=True, slots=True)
class ReportsConfig:
    """Where the reports of each scan are written, in which formats, with how many runs of trend;
    the key that signs its audit reports, if any; which runs' report files the folder keeps:
    the newest ``keep`` and those written in the last ``keep_days`` days (all when None);
    whether the JUnit and policy reports list only the findings."""

    out: str = "reports"
    formats: tuple[str, ...] = ("html", "json")
    history: int = 30
    signing_key: SigningKeyConfig | None = None
    keep: int | None = None
    findings_only: bool = False
    keep_days: int | None = None


@dataclass(frozen=True, slots=True)
class ScheduleEntry:
    """One cron schedule of ``scanner schedule``, in its time zone."""

    cron: str
    timezone: str = "UTC"
    location: Location | None = field(default=None, compare=False)  # of ``cron``, for errors


@dataclass(frozen=True, slots=True)
class ScanConfig:
    """How a scan runs: workers, the exit-code threshold, the clone cache, the scheduler's grace,
    and whether an invalid policy stops the scan before anything is written (``strict_policies``)."""

    jobs: int | None = None
    fail_on: str = "enforce"
    cache_dir: str = ".scanner-cache"
    misfire_grace_seconds: int = 3600
    strict_policies: bool = False
    reuse: bool = False  # nightly scans reuse what earlier scans stored (result and shard caches)


@dataclass(frozen=True, slots=True)
class Config:
    """A loaded, validated config file."""

    path: str
    digest: str
    database_url: str
    policies: tuple[PolicyLocation, ...]
    sources: tuple[SourceConfig, ...]
    values: str | None = None
    exceptions: tuple[str, ...] = ()
    reports: ReportsConfig = field(default_factory=ReportsConfig)
    schedule: tuple[ScheduleEntry, ...] = ()
    scan: ScanConfig = field(default_factory=ScanConfig)

    @property
    def scan_key(self) -> str:
        """What the scan does, whatever the file's comments, layout or name: the database,
        policies, values, exceptions and sources (with their paths resolved)."""
        what = (self.database_url, self.policies, self.values, self.exceptions, self.sources)
        return "sha256:" + hashlib.sha256(repr(what).encode()).hexdigest()
