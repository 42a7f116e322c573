"""One reader per section of the config file (``database``, ``policies``, ``sources``,
``reports``, ``schedule``, ``scan``), each from the section's raw value to its dataclass."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping
from typing import Any

from scanner.config.model import (
    DATABASE_ENV,
    FAIL_ON,
    MAX_JOBS,
    REPORT_FORMATS,
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
from scanner.config.reader import Keys, Reader
from scanner.errors import Location

_SOURCE_KEYS = {"name", "git", "export", "directory", "include", "exclude", "kustomize", "helm", "helm_values",
                "helm_charts", "helm_timeout", "gitops", "repository_urls", "kustomize_roots",
                "kustomize_remote_hosts", "cluster"}


def read_database(r: Reader, raw: Any, env: Mapping[str, str]) -> str:
    """``database``: its URL, ``SCANNER_DATABASE_URL`` first. A relative SQLite path is relative to
    the config file's folder; in the variable, to the working directory (as every other command
    reads that variable)."""
    db = r.mapping(raw, ["database"], {"url"})
    url = env.get(DATABASE_ENV)
    if not url:
        url = r.string(db.get("url"), ["database", "url"]) or "sqlite:///scanner.db"
        if url.startswith("sqlite:///") and not url.startswith("sqlite:////") and url != "sqlite:///:memory:":
            url = "sqlite:///" + r.path(url[len("sqlite:///"):])
    return url


def read_policies(r: Reader, raw: Any) -> tuple[PolicyLocation, ...]:
    """``policies``: a non-empty list of ``{path}`` or ``{git}`` entries with their filters."""
    if not isinstance(raw, list) or not raw:
        raise r.fail(["policies"], "must be a non-empty list of {path: ...} or {git: {...}} entries")
    policies = []
    for i, entry in enumerate(raw):
        e = r.mapping(entry, ["policies", i], {"path", "git", "include", "exclude"})
        if ("path" in e) == ("git" in e):
            raise r.fail(["policies", i], "needs exactly one of path or git")
        include = r.strings(e.get("include"), ["policies", i, "include"])
        exclude = r.strings(e.get("exclude"), ["policies", i, "exclude"])
        if "path" in e:
            policy_path = r.required_string(e["path"], ["policies", i, "path"])
            policies.append(PolicyLocation(path=r.path(policy_path), include=include, exclude=exclude))
        else:
            policies.append(PolicyLocation(git=read_git(r, e["git"], ["policies", i, "git"]), include=include,
                                           exclude=exclude))
    return tuple(policies)


def read_sources(r: Reader, raw: Any) -> tuple[SourceConfig, ...]:
    """``sources``: a non-empty list of Git, export and directory sources, named uniquely."""
    if not isinstance(raw, list) or not raw:
        raise r.fail(["sources"], "must be a non-empty list of sources")
    sources = []
    names: set[str] = set()
    for i, entry in enumerate(raw):
        sources.append(_source(r, entry, ["sources", i], names))
    return tuple(sources)


def _source(r: Reader, entry: Any, keys: Keys, names: set[str]) -> SourceConfig:
    """One source; its name joins ``names``, which must not hold it yet."""
    s = r.mapping(entry, keys, _SOURCE_KEYS)
    name = r.required_string(s.get("name"), [*keys, "name"])
    if name in names:
        raise r.fail([*keys, "name"], f"duplicate source name {name!r}")
    names.add(name)
    kinds = [k for k in ("git", "export", "directory") if k in s]
    if len(kinds) != 1:
        raise r.fail(keys, "needs exactly one of git, export or directory")
    kind = kinds[0]
    kustomize = r.switch(s, keys, "kustomize")
    common: dict[str, Any] = {
        "include": r.strings(s.get("include"), [*keys, "include"]),
        "exclude": r.strings(s.get("exclude"), [*keys, "exclude"]), "kustomize": kustomize,
        "helm": _helm(r, s, keys), "gitops": r.switch(s, keys, "gitops"),
        "repository_urls": r.strings(s.get("repository_urls"), [*keys, "repository_urls"]),
        "kustomize_roots": _kustomize_roots(r, s.get("kustomize_roots"), [*keys, "kustomize_roots"]),
        "kustomize_remote_hosts": _remote_hosts(r, s.get("kustomize_remote_hosts"), [*keys, "kustomize_remote_hosts"]),
        "cluster": r.required_string(s["cluster"], [*keys, "cluster"]) if "cluster" in s else ""}
    if kind == "git":
        return SourceConfig(name, "git", git=read_git(r, s["git"], [*keys, "git"], with_path=False), **common)
    # a directory source is one folder (scanned with include/exclude); an export, files or folders
    body = r.mapping(s[kind], [*keys, kind], {"path"} if kind == "directory" else {"path", "paths"})
    listed = list(r.strings(body.get("paths"), [*keys, kind, "paths"]))
    single = r.string(body.get("path"), [*keys, kind, "path"])
    if single:
        listed.insert(0, single)
    if not listed:
        raise r.fail([*keys, kind, "path"], "is required")
    return SourceConfig(name, kind, paths=tuple(r.path(x) for x in listed), **common)


def read_git(r: Reader, value: Any, keys: Keys, *, with_path: bool = True) -> GitRef:
    """A Git location; ``path`` (a folder in the repository) only where ``with_path``."""
    allowed = {"url", "ref", "shallow", "token_env", "ssh_key", "timeout", "submodules"} | (
        {"path"} if with_path else set())
    g = r.mapping(value, keys, allowed)
    url = r.required_string(g.get("url"), [*keys, "url"])
    if "://" not in url and not url.startswith("git@") and ":" not in url.split("/")[0]:
        url = r.path(url)
    timeout = r.seconds(g.get("timeout", 300), [*keys, "timeout"])
    ssh_key = r.string(g.get("ssh_key"), [*keys, "ssh_key"])
    return GitRef(
        url=url,
        ref=r.ref(g.get("ref"), [*keys, "ref"]),
        path=r.string(g.get("path"), [*keys, "path"]) or "",
        shallow=r.boolean(g.get("shallow"), [*keys, "shallow"], False),
        token_env=r.string(g.get("token_env"), [*keys, "token_env"]),
        ssh_key=r.path(ssh_key) if ssh_key else None,
        timeout=timeout,
        submodules=r.boolean(g.get("submodules"), [*keys, "submodules"], False),
    )


def _helm(r: Reader, s: Mapping[str, Any], keys: Keys) -> HelmConfig:
    """A source's ``helm``, ``helm_values``, ``helm_charts`` and ``helm_timeout`` keys."""
    mode = r.switch(s, keys, "helm")
    charts = {}
    raw = s.get("helm_charts") or {}
    if not isinstance(raw, dict):
        raise r.fail([*keys, "helm_charts"], "must be a mapping of chart folder -> {release, namespace, values, set}")
    for folder, entry in raw.items():
        at = [*keys, "helm_charts", str(folder)]
        c = r.mapping(entry, at, {"release", "namespace", "values", "set"})
        inline = c.get("set") or {}
        if not isinstance(inline, dict):
            raise r.fail([*at, "set"], "must be a mapping of values")
        charts[_relative_folder(str(folder))] = HelmChartConfig(
            r.string(c.get("release"), [*at, "release"]), r.string(c.get("namespace"), [*at, "namespace"]),
            r.strings(c.get("values"), [*at, "values"]), inline)
    timeout = r.seconds(s.get("helm_timeout", 120), [*keys, "helm_timeout"])
    return HelmConfig(mode, r.strings(s.get("helm_values"), [*keys, "helm_values"]), charts, timeout)


def _relative_folder(folder: str) -> str:
    """A folder relative to a source root as the tree names it (``.`` for the root itself)."""
    cleaned = folder.strip().removeprefix("./").strip("/")
    return cleaned or "."


def _remote_hosts(r: Reader, value: Any, keys: Keys) -> tuple[str, ...]:
    """``sources[].kustomize_remote_hosts``: host names (``github.com``), no scheme, path or port."""
    hosts = r.strings(value, keys)
    for i, host in enumerate(hosts):
        if not re.fullmatch(r"[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?", host):
            raise r.fail([*keys, i], "must be a host name (github.com), without scheme, port or path")
    return tuple(h.lower() for h in hosts)


def _kustomize_roots(r: Reader, value: Any, keys: Keys) -> tuple[str, ...]:
    """``sources[].kustomize_roots``: folders relative to the source's root, inside it."""
    roots = r.strings(value, keys)
    for i, root in enumerate(roots):
        normal = posixpath.normpath(root.replace("\\", "/")) if root else ""
        if not root or posixpath.isabs(normal) or normal == ".." or normal.startswith("../"):
            raise r.fail([*keys, i], "must be a folder relative to the source's root, inside it")
    return tuple(posixpath.normpath(root) for root in roots)


def read_reports(r: Reader, raw: Any) -> ReportsConfig:
    """``reports``: where, in which formats, how much trend and how many runs are kept, signed by what."""
    rep = r.mapping(raw, ["reports"], {"out", "formats", "history", "signing_key", "keep", "keep_days",
                                       "findings_only"})
    formats = r.strings(rep.get("formats"), ["reports", "formats"]) if "formats" in rep else ("html", "json")
    for j, fmt in enumerate(formats):
        if fmt not in REPORT_FORMATS:
            raise r.fail(["reports", "formats", j], f"unknown format {fmt!r} (one of {', '.join(REPORT_FORMATS)})")
    return ReportsConfig(
        out=r.path(r.string(rep.get("out"), ["reports", "out"]) or "reports"),
        formats=formats,
        history=r.integer(rep.get("history"), ["reports", "history"], 30, 1) or 30,
        signing_key=_signing_key(r, rep.get("signing_key")),
        keep=r.integer(rep.get("keep"), ["reports", "keep"], None, 1),
        findings_only=r.boolean(rep.get("findings_only"), ["reports", "findings_only"], False),
        keep_days=r.integer(rep.get("keep_days"), ["reports", "keep_days"], None, 1),
    )


def _signing_key(r: Reader, raw: object) -> SigningKeyConfig | None:
    if raw is None:
        return None
    keys: Keys = ["reports", "signing_key"]
    entry = r.mapping(raw, keys, {"file", "env"})
    if ("file" in entry) == ("env" in entry):
        raise r.fail(keys, "needs exactly one of file (a PEM file) or env (an environment variable)")
    if "file" in entry:
        return SigningKeyConfig(file=r.path(r.required_string(entry["file"], [*keys, "file"])))
    return SigningKeyConfig(env=r.required_string(entry["env"], [*keys, "env"]))


def read_schedule(r: Reader, raw: Any) -> tuple[ScheduleEntry, ...]:
    """``schedule``: cron expressions of ``scanner schedule``, each in a known time zone."""
    raw = raw or []
    if not isinstance(raw, list):
        raise r.fail(["schedule"], "must be a list of {cron, timezone} entries")
    schedule = []
    for i, entry in enumerate(raw):
        e = r.mapping(entry, ["schedule", i], {"cron", "timezone"})
        cron = r.required_string(e.get("cron"), ["schedule", i, "cron"])
        if len(cron.split()) not in (5, 6):
            raise r.fail(["schedule", i, "cron"],
                         f"must be a 5-field cron expression (or 6 fields, seconds first), not {cron!r}")
        timezone = r.string(e.get("timezone"), ["schedule", i, "timezone"]) or "UTC"
        if not _known_timezone(timezone):
            raise r.fail(["schedule", i, "timezone"], f"unknown time zone {timezone!r} (an IANA name, e.g. "
                         "UTC or Europe/Berlin)")
        where = r.doc.locate(f"/schedule/{i}/cron")
        schedule.append(ScheduleEntry(cron, timezone, Location(where.path, where.line, where.column)))
    return tuple(schedule)


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


def read_scan(r: Reader, raw: Any) -> ScanConfig:
    """``scan``: workers, the exit-code threshold, the clone cache, the scheduler's grace, strictness,
    result reuse."""
    sc = r.mapping(raw, ["scan"], {"jobs", "fail_on", "cache_dir", "misfire_grace_seconds", "strict_policies",
                                   "reuse"})
    fail_on = sc.get("fail_on", "enforce")
    if fail_on not in FAIL_ON:
        raise r.fail(["scan", "fail_on"], f"must be one of {', '.join(FAIL_ON)}")
    return ScanConfig(
        jobs=r.integer(sc.get("jobs"), ["scan", "jobs"], None, 1, maximum=MAX_JOBS),
        fail_on=fail_on,
        cache_dir=r.path(r.string(sc.get("cache_dir"), ["scan", "cache_dir"]) or ".scanner-cache"),
        misfire_grace_seconds=r.integer(sc.get("misfire_grace_seconds"), ["scan", "misfire_grace_seconds"], 3600, 1)
        or 3600,
        strict_policies=r.boolean(sc.get("strict_policies"), ["scan", "strict_policies"], False),
        reuse=r.boolean(sc.get("reuse"), ["scan", "reuse"], False),
    )
