"""``scanner apply``: evaluate policies against manifests like ``kyverno apply``."""

from __future__ import annotations

import json
import sys
import time
from collections import Counter

import click

from scanner.engine.types import RuleStatus, reported_status
from scanner.engine.values import Values, parse_userinfo, parse_values
from scanner.errors import ManifestError, ScannerError
from scanner.kyvernocli.apply import Evaluated, apply_policies, read_parsed, result_row
from scanner.kyvernocli.resource_files import iter_resources
from scanner.policies import STDIN, load_exceptions, load_policies


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
    values = read_parsed(values_file, parse_values) if values_file else Values()
    user = read_parsed(userinfo, parse_userinfo) if userinfo else None
    exceptions, exception_errors = load_exceptions(exception_paths)
    for err in exception_errors:
        click.echo(f"error: {err}", err=True)
    errors: list[ManifestError] = []
    warnings: list[ManifestError] = []
    loaded_resources = list(iter_resources(resources, errors, stdin, warnings))
    for warning in warnings:
        click.echo(f"warning: {warning}", err=True)
    if not loaded_resources and not errors:
        click.echo(f"warning: no Kubernetes resources found in {', '.join(resources)}", err=True)
    outcome = apply_policies(policy_set.policies, loaded_resources, values=values, user=user,
                             exceptions=exceptions, audit_warn=audit_warn)
    evaluated = outcome.evaluated
    for problem in errors:
        click.echo(f"error: {problem}", err=True)
    if output == "json":
        sys.stdout.write(json.dumps([result_row(lr, p, r) for lr, p, r in evaluated]) + "\n")
    elif output == "policy-report":
        from scanner.kyvernocli.apply_report import policy_reports

        docs = policy_reports(evaluated, time.time())
        import yaml

        sys.stdout.write(yaml.safe_dump_all(docs, sort_keys=False))
    else:
        _print_summary(evaluated)
    if policy_set.errors or policy_set.unsupported or exception_errors:
        return 2  # invalid or unsupported policies, invalid exceptions (the valid ones were still applied)
    return 1 if outcome.enforce_failures or outcome.errors or errors else 0


def _print_summary(evaluated: list[Evaluated]) -> None:
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
