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
@click.option("--distributed", is_flag=True,
              help="Only enqueue each run for `scanner worker` (PostgreSQL), as `scanner enqueue` does.")
@click.option("--shards", type=click.IntRange(min=1, max=1024), default=1, show_default=True,
              help="With --distributed: jobs per source, each reading a share of its files.")
@click.option("--verbose", "-v", is_flag=True, help="Log details.")
def schedule(config_path: str, run_now: bool, jobs: int | None, distributed: bool, shards: int,
             verbose: bool) -> int:
    """Run scans on the configured cron schedule until stopped (SIGTERM or Ctrl-C)."""
    from scanner.schedule import run_scheduler

    if distributed and jobs is not None:
        raise click.UsageError("--jobs sets the processes of a scan on this machine; with --distributed the "
                               "workers scan (scanner worker --concurrency N)")
    if shards != 1 and not distributed:
        raise click.UsageError("--shards needs --distributed")

    logging.basicConfig(level=logging.DEBUG if verbose else logging.INFO,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if not verbose:
        logging.getLogger("apscheduler").setLevel(logging.WARNING)
    return run_scheduler(config_path, run_now=run_now, jobs=jobs, distributed=distributed, shards=shards)
