"""A queued run's plan, made the same way by ``scanner enqueue`` and by each worker: the
config's policies, values and exceptions, and each selected source prepared (a Git source
checked out) into one task that its shards copy, with the GitOps entry points into it."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime

from scanner.config import Config, SourceConfig
from scanner.engine.exceptions import PolicyException
from scanner.errors import ConfigError
from scanner.lookup import policies_need_lookup
from scanner.policies import NotEvaluated, PolicySet, load_exceptions
from scanner.scan.gitops import with_entry_points
from scanner.scan.plan import (
    PolicySetError,
    SourceRun,
    cluster_lookups,
    load_config_policies,
    load_config_values,
    prepare_source,
    split_not_evaluated,
)
from scanner.scan.workers import EvaluationSetup, ShardTask
from scanner.sources.paths import Shard
from scanner.sources.provenance import ErrorRecord as SourceErrorRecord


@dataclass(slots=True)
class RunPlan:
    """What a run evaluates; ``tasks`` holds one task per source that could be prepared."""

    config: Config
    policy_set: PolicySet
    not_evaluated: list[NotEvaluated]
    exceptions: list[PolicyException]
    runs: dict[str, SourceRun]
    tasks: dict[str, ShardTask]
    gitops_records: list[SourceErrorRecord] = field(default_factory=list)

    def commits(self) -> dict[str, str]:
        return {name: task.commit for name, task in self.tasks.items() if task.commit}

    def shard(self, source: str, index: int, count: int) -> ShardTask:
        """Shard ``index`` of ``count`` of ``source``'s task (``task_id``: the index)."""
        return replace(self.tasks[source], task_id=index, shard=Shard(index, count))

    def setup(self, started_at: datetime) -> EvaluationSetup:
        """The evaluation setup of the run's shards (``started_at``: the run's start, which
        time-dependent rules see)."""
        config = self.config
        selected = [self.runs[name].cfg for name in self.runs]
        raw = tuple(p.raw for p in self.policy_set.policies)
        lookups = cluster_lookups(selected, config, None) if policies_need_lookup(raw) else {}
        return EvaluationSetup(raw, load_config_values(config), tuple(e.raw for e in self.exceptions), started_at,
                               lookups, {cfg.name: cfg.cluster_name for cfg in config.sources})


def selected_sources(config: Config, wanted: list[str] | tuple[str, ...]) -> list[SourceConfig]:
    """The sources named (all when none is), in config order; an unknown name is an error."""
    names = {s.name for s in config.sources}
    unknown = [n for n in wanted if n not in names]
    if unknown:
        raise ConfigError(f"unknown source {unknown[0]!r} (configured: {', '.join(sorted(names))})")
    return [s for s in config.sources if not wanted or s.name in wanted]


def plan_run(config: Config, selected: list[SourceConfig]) -> RunPlan:
    """Load the policies and prepare the sources as ``scanner scan`` does (raises as it does on
    invalid policies, values or exceptions), one task per source."""
    policy_set = load_config_policies(config)
    if policy_set.errors and config.scan.strict_policies:
        raise PolicySetError(policy_set.errors)
    not_evaluated = split_not_evaluated(policy_set)
    load_config_values(config)  # its errors are the config's, before anything is written
    exceptions, exception_errors = load_exceptions(config.exceptions)
    if exception_errors:
        raise PolicySetError(exception_errors, ("policy exception", "policy exceptions"))
    runs: dict[str, SourceRun] = {}
    tasks: dict[str, ShardTask] = {}
    held: dict[str, list[ShardTask]] = {}
    for cfg in selected:
        runs[cfg.name], source_tasks = prepare_source(cfg, config, 1, 0)
        if not source_tasks:
            continue
        if cfg.gitops == "off" or cfg.type == "export":
            tasks[cfg.name] = source_tasks[0]
        else:
            held[cfg.name] = source_tasks
    records: list[SourceErrorRecord] = []
    if held:
        held, records = with_entry_points([c for c in selected if c.name in held], held, config.sources)
        tasks.update({name: source_tasks[0] for name, source_tasks in held.items()})
    return RunPlan(config, policy_set, not_evaluated, list(exceptions), runs, tasks, records)
