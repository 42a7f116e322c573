"""``kyverno apply`` compatibility: policies, exceptions, values and manifest files in; every
rule result with its resource and policy out, evaluated as the Kyverno CLI admits each
resource into a cluster holding the others."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from scanner.engine.environment import make_environment
from scanner.engine.evaluate import PolicyIndex, RequestContext, evaluate_resource
from scanner.engine.exceptions import PolicyException
from scanner.engine.match import UserInfo
from scanner.engine.policy import Policy
from scanner.engine.types import FailureAction, RuleResult, RuleStatus
from scanner.engine.values import Values, ValuesError
from scanner.errors import Location, ScannerError
from scanner.kyvernocli.resource_files import LoadedResource
from scanner.lookup import cluster_of
from scanner.yamldoc import load_documents, load_yaml_value, load_yaml_values

Evaluated = tuple[LoadedResource, Policy, RuleResult]


@dataclass(slots=True)
class ApplyOutcome:
    """The results of one ``apply``, in resource then policy order."""

    evaluated: list[Evaluated] = field(default_factory=list)

    @property
    def enforce_failures(self) -> bool:
        return any(r.status is RuleStatus.FAIL and r.action is FailureAction.ENFORCE for _, _, r in self.evaluated)

    @property
    def errors(self) -> bool:
        return any(r.status is RuleStatus.ERROR for _, _, r in self.evaluated)


def read_parsed(path: str, parse: Callable[[Any], Any]) -> Any:
    """``parse`` of the first document of a values or user info file; errors name the file and line."""
    try:
        with open(path, "rb") as fh:
            docs = load_documents(fh.read(), path, keep_nodes=True)
    except OSError as exc:
        raise ScannerError(f"cannot read {path}: {exc.strerror}") from exc
    try:
        return parse(docs[0].data if docs else {})
    except ValuesError as exc:
        where = docs[0].locate(exc.pointer)
        raise ScannerError(str(exc), Location(where.path, where.line, where.column)) from exc


def apply_policies(policies: list[Policy], resources: list[LoadedResource], *, values: Values,
                   user: UserInfo | None, exceptions: list[PolicyException], audit_warn: bool) -> ApplyOutcome:
    """Evaluate ``policies`` against ``resources``, each admitted as a ``CREATE`` into a cluster
    holding the others; with ``audit_warn`` a failure of an Audit policy is a warning."""
    index = PolicyIndex(policies)
    lookup = cluster_of(r.resource for r in resources)
    now = datetime.now(UTC)
    env = make_environment(now=lambda: now, load_yaml=load_yaml_value, values=values,
                           exceptions=tuple(exceptions), loader=lookup, namespaces=lookup.namespaces,
                           param_resources=tuple(r.resource for r in resources),
                           load_documents=load_yaml_values, monotonic=time.monotonic, admission=True,
                           cluster_scoped=lookup.is_cluster_scoped)

    def namespace_labels(namespace: str) -> dict | None:
        labels = values.labels_of(namespace)
        return labels if labels is not None else lookup.namespace_labels(namespace)

    # on CREATE, a resource's look-ups do not see it
    context = RequestContext(env, user=user, namespace_labels=namespace_labels, admitting=lookup.admitting)
    outcome = ApplyOutcome()
    for loaded in resources:
        for policy, results in evaluate_resource(index, loaded.resource, context):
            for result in results:
                if audit_warn and result.status is RuleStatus.FAIL and _policy_action(policy) is FailureAction.AUDIT:
                    result = replace(result, status=RuleStatus.WARN)
                outcome.evaluated.append((loaded, policy, result))
    return outcome


def _policy_action(policy: Policy) -> FailureAction:
    for rule in policy.rules:
        if rule.failure_action is not None:
            return rule.failure_action
    return policy.overrides[0].action if policy.overrides else policy.action


def result_row(loaded: LoadedResource, policy: Policy, r: RuleResult) -> dict[str, Any]:
    """One result as ``apply --output json`` prints it."""
    res = loaded.resource
    meta = res.get("metadata") or {}
    return {
        "policy": r.policy, "rule": r.rule, "status": str(r.status), "message": r.message,
        "path": r.path, "action": str(r.action),
        "resource": {"apiVersion": res.get("apiVersion"), "kind": res.get("kind"),
                     "namespace": meta.get("namespace") or "", "name": meta.get("name") or ""},
        "source": {"file": loaded.path, "document": loaded.document, "item": loaded.item, "line": loaded.line},
        "severity": policy.severity, "category": policy.category,
    }

