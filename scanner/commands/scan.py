"""``scanner scan``: run the configured scan once, store it and render its reports."""

from __future__ import annotations

import logging
import traceback

import click

from scanner.commands.progress import ScanProgress
from scanner.config import MAX_JOBS
from scanner.errors import ScannerError


@click.command("scan")
@click.option("--config", "config_path", required=True, type=click.Path(dir_okay=False),
              help="Scan configuration file (see config.example.yaml).")
@click.option("--source", "sources", multiple=True, help="Scan only this source (repeatable).")
@click.option("--jobs", "-j", type=click.IntRange(min=1, max=MAX_JOBS), default=None,
              help="Worker processes (default: scan.jobs or the CPU count).")
@click.option("--quiet", "-q", is_flag=True, help="Print only the summary.")
@click.option("--verbose", "-v", is_flag=True, help="Log details and show tracebacks.")
def scan(config_path: str, sources: tuple[str, ...], jobs: int | None, quiet: bool, verbose: bool) -> int:
    """Scan the configured sources with the configured policies."""
    from scanner.config import load_config

    logging.basicConfig(level=logging.DEBUG if verbose else logging.WARNING, format="%(levelname)s %(message)s")
    try:
        config = load_config(config_path)
        progress = ScanProgress(quiet)
        try:
            from scanner.scan.runner import run

            outcome = run(config, only_sources=sources, jobs=jobs, progress=progress)
        finally:
            progress.close()
    except ScannerError:
        if verbose:
            traceback.print_exc()
        raise
    counts = outcome.counts
    status_text = ", ".join(f"{k} {counts.get(k, 0)}" for k in ("pass", "fail", "warn", "error", "skip"))
    reports_time = outcome.total_seconds - outcome.duration
    click.echo(f"run {outcome.run_id}: {outcome.status} in {outcome.duration:.1f}s"
               + (f" (+{reports_time:.1f}s writing reports)" if outcome.reports and reports_time >= 0.05 else ""))
    click.echo(f"  resources: {outcome.resources} distinct ({outcome.documents} documents read, "
               f"{outcome.resources_with_results} with results)")
    not_evaluated = len(outcome.not_evaluated) + len(outcome.unsupported_policies)
    invalid = len(outcome.policy_errors)
    click.echo(f"  policies:  {outcome.policies} evaluated"
               + (f", {not_evaluated} not evaluated" if not_evaluated else "")
               + (f", {invalid} invalid (see errors)" if invalid else ""))
    click.echo(f"  results:   {status_text}")
    if outcome.previous_run_id is None:
        click.echo(f"  findings:  {outcome.new_findings}, no previous run to compare")
    else:
        click.echo(f"  findings:  {outcome.new_findings} new, {outcome.resolved_findings} resolved "
                   f"since run {outcome.previous_run_id}")
    click.echo(f"  errors:    {outcome.errors}" + (f" (failed sources: {', '.join(outcome.failed_sources)})"
                                                  if outcome.failed_sources else ""))
    for name, reasons in outcome.skipped.items():
        click.echo(f"  skipped:   {name}: " + ", ".join(f"{n} {reason}" for reason, n in reasons.items()))
    for path in outcome.reports:
        click.echo(f"  report:    {path}")
    for failure in outcome.source_failures:
        click.echo(f"error: {failure}", err=True)
    for error in outcome.policy_errors:
        click.echo(f"error: {error}", err=True)
    for error in outcome.unsupported_policies:  # errors (they count towards ``fail_on``)
        click.echo(f"error: {error}", err=True)
    for notice in outcome.not_evaluated:
        click.echo(f"note: {notice}", err=True)
    for name in outcome.empty_sources:
        click.echo(f"warning: source {name}: no Kubernetes resources found; check its path and include/exclude",
                   err=True)
    return outcome.exit_code
