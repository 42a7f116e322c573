"""``scanner apply``: evaluate policies against manifests like ``kyverno apply``."""

from __future__ import annotations

import json
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC
from typing import Any

import click

from scanner.engine.environment import make_environment
from scanner.engine.evaluate import PolicyIndex, evaluate_policy
from scanner.engine.match import Request
from scanner.engine.policy import Policy
from scanner.engine.types import FailureAction, RuleResult, RuleStatus, reported_status
from scanner.engine.values import Values, ValuesError, parse_userinfo, parse_values
from scanner.errors import Location, ManifestError, ScannerError
from scanner.lookup import cluster_of
from scanner.manifests import LoadedResource, iter_resources
from scanner.policies import STDIN, load_exceptions, load_policies
from scanner.yamldoc import load_documents, load_yaml_value, load_yaml_values


def _read_parsed(path: str, parse: Callable[[Any], Any]) -> Any:
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


@click.command("apply")
@click.argument("policy_paths", nargs=-1, required=True, type=click.Path(exists=True, allow_dash=True))
@click.option("--resource", "-r", "resources", multiple=True, required=True,
              type=click.Path(exists=True, allow_dash=True),
              help="Manifest file or directory (repeatable); - reads the standard input.")
@click.option("--values-file", "-f", type=click.Path(exists=True, dir_okay=False), help="Kyverno Values file.")
@click.option("--userinfo", "-u", type=click.Path(exists=True, dir_okay=False), help="Kyverno UserInfo file.")
@click.option("--output", "-o", type=click.Choice(["table", "json", "policy-report"]), default="table",
              show_default=True)
@click.option("--audit-warn", is_flag=True, help="Report failures of Audit policies as warnings.")
@click.option("--exception", "-e", "exception_paths", multiple=True, type=click.Path(exists=True),
              help="PolicyException file or directory (repeatable).")
def apply(policy_paths: tuple[str, ...], resources: tuple[str, ...], values_file: str | None,
          userinfo: str | None, output: str, audit_warn: bool, exception_paths: tuple[str, ...]) -> int:
    """Apply the policies under POLICY_PATHS (- reads the standard input) to the manifests given
    with --resource."""
    if (*policy_paths, *resources).count(STDIN) > 1:
        raise click.UsageError("the standard input (-) can be read once: give it to the policies or to --resource")
    stdin = sys.stdin.buffer.read() if STDIN in (*policy_paths, *resources) else None
    policy_set = load_policies(policy_paths, stdin)
    for err in policy_set.errors:
        click.echo(f"error: {err}", err=True)
    for unsupported in policy_set.unsupported:
        click.echo(f"error: {unsupported.location}: {unsupported.message}", err=True)
    if not policy_set.policies and not policy_set.errors:
        raise ScannerError(policy_set.nothing_found(", ".join(policy_paths)))
    values = _read_parsed(values_file, parse_values) if values_file else Values()
    user = _read_parsed(userinfo, parse_userinfo) if userinfo else None
    errors: list[ManifestError] = []
    evaluated: list[tuple[LoadedResource, Policy, RuleResult]] = []
    exceptions, exception_errors = load_exceptions(exception_paths)
    for err in exception_errors:
        click.echo(f"error: {err}", err=True)
    index = PolicyIndex(policy_set.policies)
    warnings: list[ManifestError] = []
    loaded_resources = list(iter_resources(resources, errors, stdin, warnings))
    for warning in warnings:
        click.echo(f"warning: {warning}", err=True)
    if not loaded_resources and not errors:
        click.echo(f"warning: no Kubernetes resources found in {', '.join(resources)}", err=True)
    lookup = cluster_of(r.resource for r in loaded_resources)
    env = make_environment(now=_now_function(), load_yaml=load_yaml_value, values=values,
                           exceptions=tuple(exceptions), loader=lookup, namespaces=lookup.namespaces,
                           param_resources=tuple(r.resource for r in loaded_resources),
                           load_documents=load_yaml_values, monotonic=time.monotonic, admission=True,
                           cluster_scoped=lookup.is_cluster_scoped)

    def namespace_labels(namespace: str) -> dict | None:
        labels = values.labels_of(namespace)
        return labels if labels is not None else lookup.namespace_labels(namespace)

    for loaded in loaded_resources:
        view = values.resource_view(loaded.resource)
        for policy in index.for_kind(view.kind):
            request = Request(operation=values.operation(policy.name, view.name), user=user,
                              namespace_labels=namespace_labels)
            seen, seen_view = values.seen_by(policy.name, loaded.resource, view)
            admitted = replace(env, loader=lookup.admitting(loaded.resource, request.operation))
            for result in evaluate_policy(policy, seen, request, seen_view, admitted):
                if audit_warn and result.status is RuleStatus.FAIL and _policy_action(policy) is FailureAction.AUDIT:
                    result = _as_warn(result)
                evaluated.append((loaded, policy, result))
    for err in errors:
        click.echo(f"error: {err}", err=True)
    if output == "json":
        sys.stdout.write(json.dumps([_row(lr, p, r) for lr, p, r in evaluated]) + "\n")
    elif output == "policy-report":
        from scanner.policy_report import policy_reports

        docs = policy_reports(evaluated, time.time())
        import yaml

        sys.stdout.write(yaml.safe_dump_all(docs, sort_keys=False))
    else:
        _print_summary(evaluated)
    if policy_set.errors or policy_set.unsupported or exception_errors:
        return 2  # invalid or unsupported policies, invalid exceptions (the valid ones were still applied)
    enforce_fail = any(r.status is RuleStatus.FAIL and r.action is FailureAction.ENFORCE for _, _, r in evaluated)
    has_error = any(r.status is RuleStatus.ERROR for _, _, r in evaluated)
    return 1 if enforce_fail or has_error or errors else 0


def _now_function():
    from datetime import datetime

    now = datetime.now(UTC)
    return lambda: now


def _policy_action(policy: Policy) -> FailureAction:
    for rule in policy.rules:
        if rule.failure_action is not None:
            return rule.failure_action
    return policy.overrides[0].action if policy.overrides else policy.action


def _as_warn(result: RuleResult) -> RuleResult:
    return replace(result, status=RuleStatus.WARN)


def _row(loaded: LoadedResource, policy: Policy, r: RuleResult) -> dict[str, Any]:
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


def _print_summary(evaluated: list[tuple[LoadedResource, Policy, RuleResult]]) -> None:
    counts: Counter[str] = Counter()
    for loaded, policy, r in evaluated:
        counts[str(reported_status(r.status, policy.scored))] += 1
        if r.status in (RuleStatus.FAIL, RuleStatus.WARN, RuleStatus.ERROR):
            res = loaded.resource
            meta = res.get("metadata") or {}
            ident = "/".join(x for x in (res.get("kind"), meta.get("namespace"), meta.get("name")) if x)
            click.echo(f"{r.status.upper()} policy {r.policy} -> resource {ident} ({loaded.path}:{loaded.line})")
            click.echo(f"  {r.rule}: {r.message}")
    click.echo(
        f"\npass: {counts['pass']}, fail: {counts['fail']}, warn: {counts['warn']}, "
        f"error: {counts['error']}, skip: {counts['skip']}"
    )
