"""What a run evaluates: the config's policies and values, and each source built and dealt out
into the shards the workers read (a Git source taken from the prefetch when it has it); the
objects each cluster's sources hold, for the policies' look-ups."""

from __future__ import annotations

import logging
import os
import shutil
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scanner.config import Config, PolicyLocation, SourceConfig
from scanner.engine.policy import Policy
from scanner.engine.values import Values, ValuesError, parse_values
from scanner.errors import ConfigError, Location, PolicyError, ScannerError
from scanner.lookup import ResourceLookup, cluster_of
from scanner.policies import NotEvaluated, PolicySet, load_policies, not_evaluated_reason
from scanner.scan.git_prefetch import GitPrefetch, git_options
from scanner.scan.workers import ShardTask
from scanner.sources.directory import DirectorySource, root_problem
from scanner.sources.export import ExportSource
from scanner.sources.git import GitSource, redact
from scanner.sources.helm.render import helm_probe
from scanner.sources.kustomize.version import renderer_probes
from scanner.sources.paths import PathFilter, Shard
from scanner.sources.provenance import ErrorRecord as SourceErrorRecord
from scanner.sources.provenance import Resource
from scanner.sources.tool_versions import start_probes
from scanner.sources.tree import TreeOptions
from scanner.store import records
from scanner.yamldoc import load_documents

log = logging.getLogger("scanner.scan")


class PolicySetError(PolicyError):
    """Invalid policies: the scan stops before anything is written, listing them all."""

    def __init__(self, errors: list[PolicyError], nouns: tuple[str, str] = ("policy", "policies")) -> None:
        self.errors = errors
        lines = "\n".join(f"  {e}" for e in errors)
        super().__init__(f"{len(errors)} invalid {nouns[len(errors) != 1]}:\n{lines}")


# -- policies, values, sources ---------------------------------------------------------------


def load_config_policies(config: Config) -> PolicySet:
    """Every policy of the config, with the invalid or unreadable ones (and the names given to
    different policies) as located errors in ``errors``. Raises when no policy at all was found:
    ``PolicySetError`` listing the errors, or a ``PolicyError`` naming where it looked."""
    result = PolicySet()
    for i, location in enumerate(config.policies):
        accept = PathFilter(location.include, location.exclude) if location.include or location.exclude else None
        if location.path is not None:
            if not os.path.exists(location.path):
                result.errors.append(PolicyError(f"policy path not found: {location.path}"))
                continue
            result.extend(load_policies([location.path], accept=accept))
        elif location.git is not None:
            source = GitSource(f"policies-{i}", git_options(location.git, config))
            try:
                workdir, commit = source.checkout()
            except ScannerError as exc:
                result.errors.append(PolicyError(f"policies from Git: {exc}"))
                continue
            folder = os.path.normpath(os.path.join(workdir, location.git.path.lstrip("/")))
            problem = ("leaves the repository" if os.path.commonpath([workdir, folder]) != os.path.normpath(workdir)
                       else None if os.path.exists(folder) else f"is not in the repository at {commit.sha[:12]}")
            if problem:
                result.errors.append(PolicyError(f"policies from Git {redact(location.git.url)}: path "
                                                 f"{location.git.path!r} {problem}"))
                continue
            result.extend(load_policies([folder], accept=accept))
    duplicates = result.duplicates()
    result.errors += [d.error() for d in duplicates]
    result.without({d.ref for d in duplicates})
    if not result.policies:
        if result.errors:
            raise PolicySetError(result.errors)
        places = ", ".join(place for loc in config.policies if (place := _policy_place(loc)) is not None)
        raise PolicyError(result.nothing_found(places))
    return result


def _policy_place(location: PolicyLocation) -> str | None:
    """Where a policy location points, as a message names it: its path, or repository and folder."""
    if location.path is not None:
        return location.path
    if location.git is not None:
        return f"{redact(location.git.url)} ({location.git.path or '.'})"
    return None


def split_not_evaluated(policy_set: PolicySet) -> list[NotEvaluated]:
    """Take the policies that give no validate result (``not_evaluated_reason``) out of
    ``policy_set``: what a scan lists as not evaluated."""
    found = []
    for i, policy in enumerate(policy_set.policies):
        reason = not_evaluated_reason(policy)
        if reason is not None:
            found.append(NotEvaluated(policy.kind, policy.key, policy_set.location_of(i), reason))
    policy_set.without({n.name for n in found})
    return found


def load_config_values(config: Config) -> Values:
    if not config.values:
        return Values()
    try:
        docs = load_documents(Path(config.values).read_bytes(), config.values, keep_nodes=True)
        return parse_values(docs[0].data if docs else {})
    except OSError as exc:
        raise ConfigError(f"cannot read values file {config.values}: {exc.strerror}") from exc
    except ValuesError as exc:
        where = docs[0].locate(exc.pointer)
        raise ConfigError(f"values file: {exc}", Location(where.path, where.line, where.column)) from exc


def values_text(config: Config) -> bytes:
    """The values file's bytes (empty without one): part of every result cache key."""
    if not config.values:
        return b""
    try:
        return Path(config.values).read_bytes()
    except OSError as exc:
        raise ConfigError(f"cannot read values file {config.values}: {exc.strerror}") from exc


def build_source(cfg: SourceConfig, config: Config, prefetch: GitPrefetch | None = None) -> Any:
    tree = TreeOptions(include=cfg.include, exclude=cfg.exclude, kustomize=cfg.kustomize,  # type: ignore[arg-type]
                       helm=cfg.helm, kustomize_roots=cfg.kustomize_roots,
                       kustomize_remote_hosts=cfg.kustomize_remote_hosts)
    if cfg.type == "git":
        return GitSource(cfg.name, git_options(cfg.git, config, tree),
                         prefetch.prepared(cfg.name) if prefetch is not None else None)
    if cfg.type == "export":
        return ExportSource(cfg.name, list(cfg.paths), path_filter=tree.path_filter)
    return DirectorySource(cfg.name, cfg.paths[0], tree)


def source_record(cfg: SourceConfig, source: Any, error: str = "") -> records.SourceRecord:
    commit = getattr(getattr(source, "stats", None), "commit", None)
    url = redact(cfg.git.url) if cfg.git else ", ".join(cfg.paths)
    return records.SourceRecord(
        name=cfg.name, type=records.SourceType(cfg.type), url=url,
        ref=(cfg.git.ref or "") if cfg.git else "",
        commit_sha=commit.sha if commit else "", commit_at=commit.committed_at if commit else None,
        error=error,
    )


def policy_record(policy: Policy) -> records.PolicyRecord:
    return records.PolicyRecord(
        kind=policy.kind, name=policy.name, namespace=policy.namespace if policy.kind == "Policy" else "",
        digest=policy.digest, title=policy.title, category=policy.category,
        severity=policy.severity.strip().lower(),  # as the reports group it: ``Medium`` is ``medium``
        description=policy.annotations.get("policies.kyverno.io/description", ""),
        failure_action=policy.action, scored=policy.scored,
    )



# -- sources ---------------------------------------------------------------------------------


@dataclass(slots=True)
class SourceRun:
    """One source in a scan: its tasks, what they reported, and why it failed if it did."""

    cfg: SourceConfig
    source: Any
    tasks: int = 0
    done: int = 0
    fatal: list[str] = field(default_factory=list)
    errors: list[SourceErrorRecord] = field(default_factory=list)  # found while preparing
    resources: int = 0
    skipped: Counter[str] = field(default_factory=Counter)  # reason -> documents left out


def prepare_source(cfg: SourceConfig, config: Config, jobs: int, first_id: int,
             prefetch: GitPrefetch | None = None) -> tuple[SourceRun, list[ShardTask]]:
    """Check out a Git source (or take it from ``prefetch``) and deal the source out into shards."""
    source = build_source(cfg, config, prefetch)
    run = SourceRun(cfg, source)
    # trees are dealt out finer than the worker count so that the pool balances itself
    count = jobs if cfg.type == "export" or jobs == 1 else 6 * jobs
    shards = [Shard(i, count) for i in range(count)]
    tasks: list[ShardTask] = []
    if cfg.type == "git":
        try:
            workdir, commit, on_disk = source.prepare()
        except ScannerError as exc:
            run.errors.append(SourceErrorRecord(cfg.name, "git", exc.message, exc.location or source_location(cfg)))
            run.fatal.append(exc.message)
            return run, []
        source.stats.commit = commit
        tasks = [ShardTask(first_id + i, cfg.name, "git", root=workdir, commit=commit.sha, objects=not on_disk,
                           tree=source.options.tree, shard=shard) for i, shard in enumerate(shards)]
    elif cfg.type == "directory":
        problem = root_problem(cfg.paths[0])
        if problem:
            run.errors.append(SourceErrorRecord(cfg.name, "source", problem, Location(cfg.paths[0])))
            run.fatal.append(problem)
            return run, []
        tasks = [ShardTask(first_id + i, cfg.name, "directory", root=cfg.paths[0], tree=source.options, shard=shard)
                 for i, shard in enumerate(shards)]
    else:
        patterns = TreeOptions(include=cfg.include, exclude=cfg.exclude)
        tasks = [ShardTask(first_id + i, cfg.name, "export", paths=cfg.paths, tree=patterns, shard=shard)
                 for i, shard in enumerate(shards)]
    run.tasks = len(tasks)
    return run, tasks


def source_fatal_errors(errors: list[SourceErrorRecord]) -> list[SourceErrorRecord]:
    """Errors that mean the source as a whole could not be read (not one bad file)."""
    return [e for e in errors if e.kind in ("git", "source")]


def source_location(cfg: SourceConfig) -> Location:
    return Location(redact(cfg.git.url) if cfg.git else (cfg.paths[0] if cfg.paths else None))


def cluster_lookups(selected: list[SourceConfig], config: Config,
                    prefetch: GitPrefetch | None) -> dict[str, ResourceLookup]:
    """Read the sources of each cluster a selected source belongs to, to serve its apiCall,
    configMap, namespaceSelector and CEL parameter look-ups as the cluster would: a source sees
    the objects of its own cluster only (by default itself; ``sources[].cluster`` joins sources
    into one), and all of them, whichever sources ``--source`` selects, so that a source's
    results do not depend on what else is scanned."""
    wanted = {cfg.cluster_name for cfg in selected}
    members: dict[str, list[SourceConfig]] = {}
    for cfg in config.sources:
        if cfg.cluster_name in wanted:
            members.setdefault(cfg.cluster_name, []).append(cfg)
    return {name: _cluster_lookup(sources, config, prefetch) for name, sources in members.items()}


def _cluster_lookup(sources: list[SourceConfig], config: Config, prefetch: GitPrefetch | None) -> ResourceLookup:
    """The objects of one cluster's sources."""
    read: list[dict] = []
    for cfg in sources:
        try:
            read.extend(item.data for item in build_source(cfg, config, prefetch).iter_items()
                        if isinstance(item, Resource))
        except Exception as exc:  # the source's own scan records why it failed
            log.debug("source %s not read for look-ups: %s", cfg.name, exc)
    return cluster_of(read)


def start_tool_probes(selected: list[SourceConfig]) -> Callable[[], None]:
    """The version probes of the renderers the workers reading ``selected`` may run (kustomize
    or kubectl, helm), started now; the call returned waits for them and keeps their answers
    (``tool_versions.known``: the shards of trees take them to the workers, which then run
    no tool to learn them)."""
    trees = [cfg for cfg in selected if cfg.type != "export"]
    probes = renderer_probes() if any(cfg.kustomize != "off" for cfg in trees) else []
    helm = shutil.which("helm") if any(cfg.helm.mode != "off" for cfg in trees) else None
    if helm is not None:
        probes.append(helm_probe(helm))
    return start_probes(probes)
