"""``scanner report``: render any stored run in any report format."""

from __future__ import annotations

from pathlib import Path

import click

from scanner.commands.db import database_options, open_store
from scanner.errors import StoreError

FORMATS = ("html", "json", "audit-html", "audit-json", "sarif", "junit", "policy-report", "openreports")


@click.command("report")
@database_options
@click.option("--run", "run", default="latest", show_default=True, help="Run id, or 'latest'.")
@click.option("--source", default=None, help="With --run latest: the latest run that scanned this source.")
@click.option("--format", "fmt", type=click.Choice(FORMATS), required=True, help="Report format.")
@click.option("--out", type=click.Path(), default=None,
              help="Output file or folder (default: the config's reports.out, else ./reports).")
@click.option("--history", type=click.IntRange(min=1), default=30, show_default=True,
              help="Runs shown in trend charts.")
def report(database_url: str | None, config_path: str | None, run: str, source: str | None, fmt: str,
           out: str | None, history: int) -> int:
    """Render the report of a stored run."""
    from scanner.report.render import EVERY_RESULT_FORMATS, render_report
    from scanner.report_builder import build_report_data

    if out is None and config_path:
        from scanner.config import load_config

        out = load_config(config_path).reports.out
    target = Path(out or "reports")
    if out is None or (not target.suffix and not target.exists()):
        target.mkdir(parents=True, exist_ok=True)
    with open_store(database_url, config_path) as store:
        if run == "latest":
            run_id = store.latest_run_id(source)
            if run_id is None:
                what = f" for source {source!r}" if source else ""
                raise StoreError(f"no finished run{what} in {store.describe()}")
        else:
            try:
                run_id = int(run)
            except ValueError:
                raise click.BadParameter("must be a run id or 'latest'", param_hint="--run") from None
        data = build_report_data(store, run_id, history=history, findings_only=fmt not in EVERY_RESULT_FORMATS)
    click.echo(render_report(data, fmt, target))
    return 0
