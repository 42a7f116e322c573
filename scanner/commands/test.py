"""``scanner test``: run kyverno-test.yaml suites like ``kyverno test``."""

from __future__ import annotations

import json
import sys

import click

from scanner.kyvernocli.suites import TEST_FILE, find_test_files, run_suite


@click.command("test")
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True))
@click.option("--output", "output", type=click.Choice(["table", "json"]), default="table",
              show_default=True, help="Output format.")
@click.option("--file-name", default=TEST_FILE, show_default=True, help="Test file name to look for.")
@click.option("--fail-only", is_flag=True, help="Show only rows that did not match.")
def test(paths: tuple[str, ...], output: str, file_name: str, fail_only: bool) -> int:
    """Run every kyverno-test.yaml under PATHS and compare with the expected results."""
    suites = []
    for path in find_test_files(list(paths), file_name):
        suites.extend(run_suite(path))
    passed = sum(1 for s in suites for r in s.rows if r.ok)
    failed = sum(1 for s in suites for r in s.rows if not r.ok)
    errors = sum(1 for s in suites if s.error)
    if output == "json":
        doc = {
            "tests": [s.as_dict() for s in suites],
            "summary": {"passed": passed, "failed": failed, "errors": errors},
        }
        sys.stdout.write(json.dumps(doc) + "\n")
    else:
        _print_table(suites, fail_only)
        click.echo(f"{passed} passed, {failed} failed" + (f", {errors} not loaded" if errors else ""))
    if not suites:
        click.echo(f"error: no {file_name} found under {', '.join(paths)}", err=True)
        return 1
    return 1 if failed or errors else 0


def _print_table(suites: list, fail_only: bool) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console(highlight=False, width=None if sys.stdout.isatty() else 160)
    for suite in suites:
        click.echo(f"Test {suite.name} ({suite.path})")
        if suite.error:
            click.echo(f"  error: {suite.error}")
            continue
        for warning in suite.warnings:
            click.echo(f"  warning: {warning}")
        table = Table(show_lines=False)
        for col in ("#", "Policy", "Rule", "Resource", "Result", "Reason"):
            table.add_column(col)
        for i, row in enumerate(suite.rows, 1):
            if fail_only and row.ok:
                continue
            resource = "/".join(x for x in (row.kind, row.namespace, row.resource) if x)
            table.add_row(str(i), row.policy, row.rule, resource,
                          "Pass" if row.ok else "Fail", row.reason)
        console.print(table)
