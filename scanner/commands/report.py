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
@click.option("--out", type=click.Path(allow_dash=True), default=None,
              help="Output file or folder, or - for standard output "
                   "(default: the config's reports.out, else ./reports).")
@click.option("--history", type=click.IntRange(min=1), default=None,
              help="Runs shown in trend charts (default: the config's reports.history, else 30).")
def report(database_url: str | None, config_path: str | None, run: str, source: str | None, fmt: str,
           out: str | None, history: int | None) -> int:
    """Render the report of a stored run."""
    from scanner.config import ReportsConfig, load_config
    from scanner.report.render import EVERY_RESULT_FORMATS, default_file_name, render_report, render_text
    from scanner.report_builder import build_report_data
    from scanner.store import COMPLETED_STATUSES

    into_folder = out is None  # the default, like the scan's reports.out, is a folder
    if out is None or history is None:
        defaults = load_config(config_path).reports if config_path else ReportsConfig()
        out = defaults.out if out is None else out
        history = defaults.history if history is None else history
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
        data = build_report_data(store, run_id, history=history,
                                 findings_only=fmt not in EVERY_RESULT_FORMATS)
    if data.run.status not in COMPLETED_STATUSES:  # what a CI gate reads must not pass for a full run
        click.echo(f"warning: run {run_id} is {data.run.status}: its results are incomplete", err=True)
    if out == "-" and not into_folder:
        click.echo(render_text(data, fmt), nl=False)
        return 0
    target = Path(out)
    if into_folder or (not target.suffix and not target.exists()):
        target = target / default_file_name(data, fmt)  # the folder is made when the file is written
    click.echo(render_report(data, fmt, target))
    return 0
