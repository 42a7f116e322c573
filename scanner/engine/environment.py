"""What an evaluation needs from outside the engine: functions (with the scan's clock),
external context data, values, objects for CEL lookups, and the budget each rule evaluation
may spend (with the caller's monotonic timer for its time limit). Built once per scan and
thread."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from scanner.engine.budget import DEFAULT_LIMITS, Budget, Limits
from scanner.engine.context import ContextLoader
from scanner.engine.exceptions import PolicyException
from scanner.engine.jmespath.dialect import Evaluator
from scanner.engine.jmespath.functions import build_functions
from scanner.engine.values import Values


@dataclass(frozen=True, slots=True)
class Environment:
    """What evaluation may read besides the resource: the evaluator, values, look-ups, CEL params."""

    evaluator: Evaluator
    values: Values = field(default_factory=Values)
    loader: ContextLoader | None = None
    # Namespace objects by name for CEL's namespaceObject; None gives Kyverno's CLI view
    # (a namespace object carrying only its name)
    namespaces: dict[str, dict] | None = None
    # objects CEL paramRef lookups are served from
    param_resources: tuple[dict, ...] = ()
    exceptions: tuple[PolicyException, ...] = ()
    # YAML text -> documents, for signed manifests (the engine does not parse YAML itself)
    load_documents: Callable[[str], list[Any]] | None = None
    # what one rule evaluation may cost (steps, sizes and, with a timer, time)
    budget: Budget = field(default_factory=Budget)
    # an admission request's fields (name, kind, resource, options ...) beside the CLI's object,
    # namespace, operation and user: what Kyverno's webhook gives a policy
    admission: bool = False
    # (apiVersion, kind) -> cluster-scoped, as the cluster keeps it; None: the CLI's built-in list
    cluster_scoped: Callable[[str, str], bool] | None = None


def make_environment(
    *,
    now: Callable[[], datetime] | None = None,
    load_yaml: Callable[[str], Any] | None = None,
    values: Values | None = None,
    loader: ContextLoader | None = None,
    namespaces: dict[str, dict] | None = None,
    param_resources: tuple[dict, ...] = (),
    exceptions: tuple[PolicyException, ...] = (),
    load_documents: Callable[[str], list[Any]] | None = None,
    monotonic: Callable[[], float] | None = None,
    limits: Limits = DEFAULT_LIMITS,
    admission: bool = False,
    cluster_scoped: Callable[[str, str], bool] | None = None,
) -> Environment:
    """``monotonic`` (seconds, e.g. ``time.monotonic``) enables the per-rule time limit."""
    evaluator = Evaluator(build_functions(now=now, load_yaml=load_yaml))
    return Environment(evaluator, values or Values(), loader, namespaces, param_resources, exceptions,
                       load_documents, Budget(limits, monotonic), admission, cluster_scoped)
