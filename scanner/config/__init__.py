"""The scan configuration file -> frozen dataclasses. Environment overrides are resolved here only.

Every problem is a ``ConfigError`` located at file:line:col with the key path
(``sources[1].git.url``). Relative paths are relative to the config file's folder. The
dataclasses live in :mod:`scanner.config.model`, one reader per section in
:mod:`scanner.config.sections`.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from pathlib import Path

from scanner.config.model import (
    DATABASE_ENV,
    FAIL_ON,
    MAX_JOBS,
    REPORT_FORMATS,
    Config,
    GitRef,
    HelmChartConfig,
    HelmConfig,
    PolicyLocation,
    ReportsConfig,
    ScanConfig,
    ScheduleEntry,
    SigningKeyConfig,
    SourceConfig,
)
from scanner.config.reader import Reader
from scanner.config.sections import (
    read_database,
    read_policies,
    read_reports,
    read_scan,
    read_schedule,
    read_sources,
)
from scanner.errors import ConfigError, Location, ManifestError
from scanner.yamldoc import YamlDocument, load_documents

__all__ = [
    "DATABASE_ENV", "FAIL_ON", "MAX_JOBS", "REPORT_FORMATS", "Config", "GitRef", "HelmChartConfig", "HelmConfig",
    "PolicyLocation", "ReportsConfig", "ScanConfig", "ScheduleEntry", "SigningKeyConfig", "SourceConfig",
    "load_config",
]

_TOP = {"database", "policies", "values", "exceptions", "sources", "reports", "schedule", "scan"}


def load_config(path: str | os.PathLike[str], env: Mapping[str, str] | None = None) -> Config:
    """Read and check a config file; ``env`` (default ``os.environ``) supplies overrides."""
    env = os.environ if env is None else env
    p = Path(path)
    raw, doc = _read_document(p)
    r = Reader(doc, p.resolve().parent)
    top = r.mapping(doc.data, [], _TOP)
    database_url = read_database(r, top.get("database"), env)
    policies = read_policies(r, top.get("policies"))
    sources = read_sources(r, top.get("sources"))
    values = r.string(top.get("values"), ["values"])
    exceptions = tuple(r.path(x) for x in r.strings(top.get("exceptions"), ["exceptions"]))
    return Config(
        path=str(p),
        digest="sha256:" + hashlib.sha256(raw).hexdigest(),
        database_url=database_url,
        policies=policies,
        sources=sources,
        values=r.path(values) if values else None,
        exceptions=exceptions,
        reports=read_reports(r, top.get("reports")),
        schedule=read_schedule(r, top.get("schedule")),
        scan=read_scan(r, top.get("scan")),
    )


def _read_document(p: Path) -> tuple[bytes, YamlDocument]:
    """The config file's bytes and its one YAML document."""
    try:
        raw = p.read_bytes()
    except OSError as exc:
        raise ConfigError(f"cannot read config file: {exc.strerror}", Location(str(p))) from exc
    try:
        docs = load_documents(raw, str(p), keep_nodes=True)
    except ManifestError as exc:
        raise ConfigError(exc.message, exc.location) from exc
    if len(docs) != 1:
        raise ConfigError("the config file must hold exactly one YAML document", Location(str(p), 1, 1))
    return raw, docs[0]
