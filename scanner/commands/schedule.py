"""``scanner schedule``: run the configured scans on their cron schedule, in the foreground."""

from __future__ import annotations

import logging

import click

from scanner.config import MAX_JOBS


@click.command("schedule")
@click.option("--config", "config_path", required=True, type=click.Path(dir_okay=False),
              help="Scan configuration file with a schedule section.")
@click.option("--run-now", is_flag=True, help="Also run one scan right away.")
@click.option("--jobs", "-j", type=click.IntRange(min=1, max=MAX_JOBS), default=None, help="Worker processes per scan.")
@click.option("--verbose", "-v", is_flag=True, help="Log details.")
def schedule(config_path: str, run_now: bool, jobs: int | None, verbose: bool) -> int:
    """Run scans on the configured cron schedule until stopped (SIGTERM or Ctrl-C)."""
    from scanner.schedule import run_scheduler

    logging.basicConfig(level=logging.DEBUG if verbose else logging.INFO,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if not verbose:
        logging.getLogger("apscheduler").setLevel(logging.WARNING)
    return run_scheduler(config_path, run_now=run_now, jobs=jobs)
