"""The scan configuration file -> frozen dataclasses. Environment overrides are resolved here only.

Every problem is a ``ConfigError`` located at file:line:col with the key path
(``sources[1].git.url``). Relative paths are relative to the config file's folder.
"""

from __future__ import annotations

import hashlib
import os
import posixpath
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scanner.engine.normalize import describe_type
from scanner.errors import ConfigError, Location, ManifestError
from scanner.yamldoc import YamlDocument, load_documents

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
    the key that signs its audit reports, if any; how many runs' report files the folder keeps
    (``keep``, all when None); whether the JUnit and policy reports list only the findings."""

    out: str = "reports"
    formats: tuple[str, ...] = ("html", "json")
    history: int = 30
    signing_key: SigningKeyConfig | None = None
    keep: int | None = None
    findings_only: bool = False


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


class _Reader:
    """Typed access to the config document with located errors."""

    def __init__(self, doc: YamlDocument, base: Path) -> None:
        self.doc = doc
        self.base = base

    def fail(self, keys: list[str | int], message: str) -> ConfigError:
        pointer = "/" + "/".join(str(k) for k in keys) if keys else ""
        loc = self.doc.locate(pointer) if keys else Location(self.doc.path, 1, 1)
        return ConfigError(f"{_dotted(keys) or 'config'}: {message}",
                           Location(loc.path, loc.line, loc.column, None))

    def mapping(self, value: Any, keys: list[str | int], allowed: set[str]) -> Mapping[str, Any]:
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise self.fail(keys, f"must be a mapping, not {describe_type(value)}")
        for key in value:
            if key not in allowed:
                hint = f" (known keys: {', '.join(sorted(allowed))})"
                raise self.fail([*keys, key], f"unknown key {key!r}{hint}")
        return value

    def string(self, value: Any, keys: list[str | int], *, required: bool = False) -> str | None:
        if value is None:
            if required:
                raise self.fail(keys, "is required")
            return None
        if not isinstance(value, str) or (required and not value):
            shown = "an empty string" if value == "" else describe_type(value)
            raise self.fail(keys, f"must be a non-empty string, not {shown}")
        return value

    def strings(self, value: Any, keys: list[str | int]) -> tuple[str, ...]:
        if value is None:
            return ()
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self.fail(keys, "must be a list of strings")
        return tuple(value)

    def integer(self, value: Any, keys: list[str | int], default: int | None, minimum: int = 0,
                maximum: int | None = None) -> int | None:
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise self.fail(keys, f"must be an integer >= {minimum}")
        if maximum is not None and value > maximum:
            raise self.fail(keys, f"must be at most {maximum}, not {value}")
        return value

    def boolean(self, value: Any, keys: list[str | int], default: bool) -> bool:
        if value is None:
            return default
        if not isinstance(value, bool):
            raise self.fail(keys, "must be true or false")
        return value

    def path(self, value: str) -> str:
        value = os.path.expanduser(value)
        return str(value) if os.path.isabs(value) or "://" in value else str((self.base / value).resolve())

    def git(self, value: Any, keys: list[str | int], *, with_path: bool = True) -> GitRef:
        """A Git location; ``path`` (a folder in the repository) only where ``with_path``."""
        allowed = {"url", "ref", "shallow", "token_env", "ssh_key", "timeout", "submodules"} | (
            {"path"} if with_path else set())
        g = self.mapping(value, keys, allowed)
        url = self.string(g.get("url"), [*keys, "url"], required=True)
        assert url is not None
        if "://" not in url and not url.startswith("git@") and ":" not in url.split("/")[0]:
            url = self.path(url)
        timeout = g.get("timeout", 300)
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0:
            raise self.fail([*keys, "timeout"], "must be a positive number of seconds")
        ssh_key = self.string(g.get("ssh_key"), [*keys, "ssh_key"])
        return GitRef(
            url=url,
            ref=self.ref(g.get("ref"), [*keys, "ref"]),
            path=self.string(g.get("path"), [*keys, "path"]) or "",
            shallow=self.boolean(g.get("shallow"), [*keys, "shallow"], False),
            token_env=self.string(g.get("token_env"), [*keys, "token_env"]),
            ssh_key=self.path(ssh_key) if ssh_key else None,
            timeout=float(timeout),
            submodules=self.boolean(g.get("submodules"), [*keys, "submodules"], False),
        )


    def helm(self, s: Mapping[str, Any], keys: list[str | int]) -> HelmConfig:
        """A source's ``helm``, ``helm_values``, ``helm_charts`` and ``helm_timeout`` keys."""
        mode = self.switch(s, keys, "helm")
        charts = {}
        raw = s.get("helm_charts") or {}
        if not isinstance(raw, dict):
            raise self.fail([*keys, "helm_charts"], "must be a mapping of chart folder -> {release, namespace, "
                                                    "values, set}")
        for folder, entry in raw.items():
            at = [*keys, "helm_charts", str(folder)]
            c = self.mapping(entry, at, {"release", "namespace", "values", "set"})
            inline = c.get("set") or {}
            if not isinstance(inline, dict):
                raise self.fail([*at, "set"], "must be a mapping of values")
            charts[_relative_folder(str(folder))] = HelmChartConfig(
                self.string(c.get("release"), [*at, "release"]), self.string(c.get("namespace"), [*at, "namespace"]),
                self.strings(c.get("values"), [*at, "values"]), inline)
        timeout = s.get("helm_timeout", 120)
        if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
            raise self.fail([*keys, "helm_timeout"], "must be a positive number of seconds")
        return HelmConfig(mode, self.strings(s.get("helm_values"), [*keys, "helm_values"]), charts, float(timeout))

    def switch(self, s: Mapping[str, Any], keys: list[str | int], key: str) -> str:
        """An ``auto``/``off`` key (default ``auto``)."""
        value = s.get(key, "auto")
        if value is False:  # YAML 1.1 reads an unquoted off as false
            value = "off"
        if value not in ("auto", "off"):
            raise self.fail([*keys, key], "must be auto or off")
        return str(value)

    def ref(self, value: Any, keys: list[str | int]) -> str | None:
        """A branch, tag or commit. YAML reads an unquoted ``1.10`` as the number 1.1 and
        ``0123456`` as 42798: anything but a string is refused, not converted."""
        if value is None or isinstance(value, str):
            return value or None
        raise self.fail(keys, f"must be a string, not {describe_type(value)}: quote it (unquoted, YAML reads a tag "
                              "like 1.10 as the number 1.1 and a commit like 0123456 as 42798)")


def _relative_folder(folder: str) -> str:
    """A folder relative to a source root as the tree names it (``.`` for the root itself)."""
    cleaned = folder.strip().removeprefix("./").strip("/")
    return cleaned or "."


def _remote_hosts(r: _Reader, value: Any, keys: list[str | int]) -> tuple[str, ...]:
    """``sources[].kustomize_remote_hosts``: host names (``github.com``), no scheme, path or port."""
    hosts = r.strings(value, keys)
    for i, host in enumerate(hosts):
        if not re.fullmatch(r"[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?", host):
            raise r.fail([*keys, i], "must be a host name (github.com), without scheme, port or path")
    return tuple(h.lower() for h in hosts)


def _kustomize_roots(r: _Reader, value: Any, keys: list[str | int]) -> tuple[str, ...]:
    """``sources[].kustomize_roots``: folders relative to the source's root, inside it."""
    roots = r.strings(value, keys)
    for i, root in enumerate(roots):
        normal = posixpath.normpath(root.replace("\\", "/")) if root else ""
        if not root or posixpath.isabs(normal) or normal == ".." or normal.startswith("../"):
            raise r.fail([*keys, i], "must be a folder relative to the source's root, inside it")
    return tuple(posixpath.normpath(root) for root in roots)


def _dotted(keys: list[str | int]) -> str:
    out = ""
    for k in keys:
        out += f"[{k}]" if isinstance(k, int) else (f".{k}" if out else str(k))
    return out


_TOP = {"database", "policies", "values", "exceptions", "sources", "reports", "schedule", "scan"}


def _known_timezone(name: str) -> bool:
    """Whether the scheduler can use time zone ``name``: UTC always, others from the system's
    (or the tzdata package's) time zone database, as APScheduler reads them."""
    if name == "UTC":
        return True
    import zoneinfo  # with the system's time zone paths: only for a config that names a zone

    try:
        zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        return False
    return True


def _signing_key(r: _Reader, raw: object) -> SigningKeyConfig | None:
    if raw is None:
        return None
    keys: list[str | int] = ["reports", "signing_key"]
    entry = r.mapping(raw, keys, {"file", "env"})
    if ("file" in entry) == ("env" in entry):
        raise r.fail(keys, "needs exactly one of file (a PEM file) or env (an environment variable)")
    if "file" in entry:
        return SigningKeyConfig(file=r.path(r.string(entry["file"], [*keys, "file"], required=True) or ""))
    return SigningKeyConfig(env=r.string(entry["env"], [*keys, "env"], required=True))


def load_config(path: str | os.PathLike[str], env: Mapping[str, str] | None = None) -> Config:
    """Read and check a config file; ``env`` (default ``os.environ``) supplies overrides."""
    env = os.environ if env is None else env
    p = Path(path)
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
    r = _Reader(docs[0], p.resolve().parent)
    top = r.mapping(docs[0].data, [], _TOP)

    db = r.mapping(top.get("database"), ["database"], {"url"})
    # a relative SQLite path is relative to the config file's folder; in SCANNER_DATABASE_URL, to the
    # working directory (as every other command reads that variable)
    url = env.get(DATABASE_ENV)
    if not url:
        url = r.string(db.get("url"), ["database", "url"]) or "sqlite:///scanner.db"
        if url.startswith("sqlite:///") and not url.startswith("sqlite:////") and url != "sqlite:///:memory:":
            url = "sqlite:///" + r.path(url[len("sqlite:///"):])

    policies = []
    raw_policies = top.get("policies")
    if not isinstance(raw_policies, list) or not raw_policies:
        raise r.fail(["policies"], "must be a non-empty list of {path: ...} or {git: {...}} entries")
    for i, entry in enumerate(raw_policies):
        e = r.mapping(entry, ["policies", i], {"path", "git", "include", "exclude"})
        if ("path" in e) == ("git" in e):
            raise r.fail(["policies", i], "needs exactly one of path or git")
        include = r.strings(e.get("include"), ["policies", i, "include"])
        exclude = r.strings(e.get("exclude"), ["policies", i, "exclude"])
        if "path" in e:
            policy_path = r.string(e["path"], ["policies", i, "path"], required=True)
            assert policy_path is not None
            policies.append(PolicyLocation(path=r.path(policy_path), include=include, exclude=exclude))
        else:
            policies.append(PolicyLocation(git=r.git(e["git"], ["policies", i, "git"]), include=include,
                                           exclude=exclude))

    sources = []
    names: set[str] = set()
    raw_sources = top.get("sources")
    if not isinstance(raw_sources, list) or not raw_sources:
        raise r.fail(["sources"], "must be a non-empty list of sources")
    for i, entry in enumerate(raw_sources):
        keys: list[str | int] = ["sources", i]
        s = r.mapping(entry, keys, {"name", "git", "export", "directory", "include", "exclude", "kustomize",
                                    "helm", "helm_values", "helm_charts", "helm_timeout", "gitops",
                                    "repository_urls", "kustomize_roots", "kustomize_remote_hosts", "cluster"})
        name = r.string(s.get("name"), [*keys, "name"], required=True)
        assert name is not None
        if name in names:
            raise r.fail([*keys, "name"], f"duplicate source name {name!r}")
        names.add(name)
        kinds = [k for k in ("git", "export", "directory") if k in s]
        if len(kinds) != 1:
            raise r.fail(keys, "needs exactly one of git, export or directory")
        kind = kinds[0]
        kustomize = s.get("kustomize", "auto")
        if kustomize is False:  # YAML 1.1 reads an unquoted off as false
            kustomize = "off"
        if kustomize not in ("auto", "off"):
            raise r.fail([*keys, "kustomize"], "must be auto or off")
        common = {"include": r.strings(s.get("include"), [*keys, "include"]),
                  "exclude": r.strings(s.get("exclude"), [*keys, "exclude"]), "kustomize": kustomize,
                  "helm": r.helm(s, keys), "gitops": r.switch(s, keys, "gitops"),
                  "repository_urls": r.strings(s.get("repository_urls"), [*keys, "repository_urls"]),
                  "kustomize_roots": _kustomize_roots(r, s.get("kustomize_roots"), [*keys, "kustomize_roots"]),
                  "kustomize_remote_hosts": _remote_hosts(r, s.get("kustomize_remote_hosts"),
                                                          [*keys, "kustomize_remote_hosts"]),
                  "cluster": r.string(s["cluster"], [*keys, "cluster"], required=True) if "cluster" in s else ""}
        if kind == "git":
            sources.append(SourceConfig(name, "git", git=r.git(s["git"], [*keys, "git"], with_path=False), **common))
        else:
            # a directory source is one folder (scanned with include/exclude); an export, files or folders
            body = r.mapping(s[kind], [*keys, kind], {"path"} if kind == "directory" else {"path", "paths"})
            listed = list(r.strings(body.get("paths"), [*keys, kind, "paths"]))
            single = r.string(body.get("path"), [*keys, kind, "path"])
            if single:
                listed.insert(0, single)
            if not listed:
                raise r.fail([*keys, kind, "path"], "is required")
            sources.append(SourceConfig(name, kind, paths=tuple(r.path(x) for x in listed), **common))

    values = r.string(top.get("values"), ["values"])
    exceptions = tuple(r.path(x) for x in r.strings(top.get("exceptions"), ["exceptions"]))

    rep = r.mapping(top.get("reports"), ["reports"], {"out", "formats", "history", "signing_key", "keep",
                                                       "findings_only"})
    formats = r.strings(rep.get("formats"), ["reports", "formats"]) if "formats" in rep else ("html", "json")
    for j, fmt in enumerate(formats):
        if fmt not in REPORT_FORMATS:
            raise r.fail(["reports", "formats", j], f"unknown format {fmt!r} (one of {', '.join(REPORT_FORMATS)})")
    reports = ReportsConfig(
        out=r.path(r.string(rep.get("out"), ["reports", "out"]) or "reports"),
        formats=formats,
        history=r.integer(rep.get("history"), ["reports", "history"], 30, 1) or 30,
        signing_key=_signing_key(r, rep.get("signing_key")),
        keep=r.integer(rep.get("keep"), ["reports", "keep"], None, 1),
        findings_only=r.boolean(rep.get("findings_only"), ["reports", "findings_only"], False),
    )

    schedule = []
    raw_schedule = top.get("schedule") or []
    if not isinstance(raw_schedule, list):
        raise r.fail(["schedule"], "must be a list of {cron, timezone} entries")
    for i, entry in enumerate(raw_schedule):
        e = r.mapping(entry, ["schedule", i], {"cron", "timezone"})
        cron = r.string(e.get("cron"), ["schedule", i, "cron"], required=True)
        assert cron is not None
        if len(cron.split()) not in (5, 6):
            raise r.fail(["schedule", i, "cron"],
                         f"must be a 5-field cron expression (or 6 fields, seconds first), not {cron!r}")
        timezone = r.string(e.get("timezone"), ["schedule", i, "timezone"]) or "UTC"
        if not _known_timezone(timezone):
            raise r.fail(["schedule", i, "timezone"], f"unknown time zone {timezone!r} (an IANA name, e.g. "
                         "UTC or Europe/Berlin)")
        where = r.doc.locate(f"/schedule/{i}/cron")
        schedule.append(ScheduleEntry(cron, timezone, Location(where.path, where.line, where.column)))

    sc = r.mapping(top.get("scan"), ["scan"], {"jobs", "fail_on", "cache_dir", "misfire_grace_seconds",
                                               "strict_policies"})
    fail_on = sc.get("fail_on", "enforce")
    if fail_on not in FAIL_ON:
        raise r.fail(["scan", "fail_on"], f"must be one of {', '.join(FAIL_ON)}")
    scan = ScanConfig(
        jobs=r.integer(sc.get("jobs"), ["scan", "jobs"], None, 1, maximum=MAX_JOBS),
        fail_on=fail_on,
        cache_dir=r.path(r.string(sc.get("cache_dir"), ["scan", "cache_dir"]) or ".scanner-cache"),
        misfire_grace_seconds=r.integer(sc.get("misfire_grace_seconds"), ["scan", "misfire_grace_seconds"], 3600, 1)
        or 3600,
        strict_policies=r.boolean(sc.get("strict_policies"), ["scan", "strict_policies"], False),
    )
    return Config(
        path=str(p),
        digest="sha256:" + hashlib.sha256(raw).hexdigest(),
        database_url=url,
        policies=tuple(policies),
        sources=tuple(sources),
        values=r.path(values) if values else None,
        exceptions=exceptions,
        reports=reports,
        schedule=tuple(schedule),
        scan=scan,
    )
