"""``scanner enqueue`` and ``scanner worker``: one scan shared by many machines through the
PostgreSQL database (``scanner.distributed``)."""

from __future__ import annotations

import logging

import click


@click.command("enqueue")
@click.option("--config", "config_path", required=True, type=click.Path(dir_okay=False),
              help="Scan configuration file (its database_url: PostgreSQL).")
@click.option("--source", "sources", multiple=True, help="Enqueue only this source (repeatable).")
@click.option("--shards", type=click.IntRange(min=1, max=1024), default=1, show_default=True,
              help="Jobs per source, each reading a share of its files.")
def enqueue(config_path: str, sources: tuple[str, ...], shards: int) -> int:
    """Create a run and one job per shard of each source, for `scanner worker` to process."""
    from scanner.config import load_config
    from scanner.distributed.enqueue import enqueue as enqueue_run

    config = load_config(config_path)
    done = enqueue_run(config, sources, shards)
    click.echo(f"run {done.run_id}: {done.jobs} job{'s' if done.jobs != 1 else ''} enqueued"
               + (f" (failed sources: {', '.join(done.failed_sources)})" if done.failed_sources else ""))
    return 0


@click.command("worker")
@click.option("--config", "config_path", required=True, type=click.Path(dir_okay=False),
              help="Scan configuration file: the one the runs were enqueued with.")
@click.option("--concurrency", type=click.IntRange(min=1, max=256), default=1, show_default=True,
              help="Worker processes, each running one job at a time.")
@click.option("--heartbeat", type=click.FloatRange(min=0.1), default=10.0, show_default=True,
              help="Seconds between a worker's heartbeats.")
@click.option("--stalled-after", type=click.FloatRange(min=0.5), default=30.0, show_default=True,
              help="Seconds without a heartbeat after which a worker's job is queued again.")
@click.option("--until-idle", is_flag=True, help="Stop once no job is left instead of waiting for more.")
@click.option("--verbose", "-v", is_flag=True, help="Log details.")
def worker(config_path: str, concurrency: int, heartbeat: float, stalled_after: float, until_idle: bool,
           verbose: bool) -> int:
    """Process enqueued scan jobs until stopped (SIGTERM or Ctrl-C)."""
    logging.basicConfig(level=logging.DEBUG if verbose else logging.INFO,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if not verbose:
        logging.getLogger("procrastinate").setLevel(logging.WARNING)
    from scanner.distributed.worker import serve, serve_many

    if concurrency > 1:
        argv = ["--config", config_path, "--heartbeat", str(heartbeat), "--stalled-after", str(stalled_after),
                *(["--until-idle"] if until_idle else []), *(["--verbose"] if verbose else [])]
        return serve_many(argv, concurrency)
    serve(config_path, heartbeat=heartbeat, stalled_after=stalled_after, wait=not until_idle)
    return 0
