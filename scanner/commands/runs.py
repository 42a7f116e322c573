"""`scanner runs`: look at stored scan runs without opening a report."""

from __future__ import annotations

import dataclasses
import json
from datetime import datetime
from enum import Enum
from typing import Any

import click

from scanner.commands.db import database_options, open_store
from scanner.distributed.bookkeeping import TaskInfo, run_tasks
from scanner.store import RunStatus
from scanner.store.views import RunDetail, RunInfo

OUTPUTS = click.Choice(["table", "json"])


def _plain(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    return value


def run_json(run: RunInfo) -> dict[str, Any]:
    data = _plain(dataclasses.asdict(run))
    data["counts"] = run.counts.as_dict()
    data["results"] = run.results
    data["duration_seconds"] = (run.finished_at - run.started_at).total_seconds() if run.finished_at else None
    return data


def duration_text(run: RunInfo) -> str:
    """The run's duration as ``scanner scan`` prints it (from its stored start to its stored end)."""
    if run.finished_at is None:
        return "-"
    return f"{(run.finished_at - run.started_at).total_seconds():.1f}s"


def _time(value: datetime | None) -> str:
    return value.strftime("%Y-%m-%d %H:%M:%S") if value else "-"


def _table(rows: list[list[str]]) -> str:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True))
                     .rstrip() for row in rows)


@click.group("runs")
def runs() -> None:
    """List and show stored scan runs."""


@runs.command("list")
@click.option("--limit", type=click.IntRange(min=1), default=20, show_default=True)
@click.option("--source", help="Only runs that scanned this source.")
@click.option("--status", type=click.Choice([s.value for s in RunStatus]))
@click.option("--output", "output", type=OUTPUTS, default="table", show_default=True)
@database_options
def list_runs(limit: int, source: str | None, status: str | None, output: str,
              database_url: str | None, config_path: str | None) -> None:
    """List the latest runs, newest first."""
    with open_store(database_url, config_path) as store:
        found = store.list_runs(limit=limit, source=source,
                                status=RunStatus(status) if status else None)
    if output == "json":
        click.echo(json.dumps([run_json(run) for run in found], indent=2))
        return
    if not found:
        click.echo("no runs match" if source or status else "no runs stored yet")
        return
    rows = [["RUN", "STARTED (UTC)", "DURATION", "STATUS", "TRIGGER", "RESOURCES", "PASS", "FAIL", "WARN",
             "ERROR", "SKIP", "ERRORS"]]
    for run in found:
        counts = run.counts
        rows.append([str(run.run_id), _time(run.started_at), duration_text(run), run.status.value,
                     run.trigger.value, str(run.resources), str(counts.passed),
                     str(counts.failed), str(counts.warned), str(counts.errored),
                     str(counts.skipped), str(run.error_records)])
    click.echo(_table(rows))


@runs.command("show")
@click.argument("run")
@click.option("--output", "output", type=OUTPUTS, default="table", show_default=True)
@database_options
def show(run: str, output: str, database_url: str | None, config_path: str | None) -> None:
    """Show RUN (a run id, or "latest") with its sources and counts."""
    with open_store(database_url, config_path) as store:
        if run == "latest":
            run_id = store.latest_run_id()
            if run_id is None:
                raise click.UsageError("no completed run stored yet")
        elif run.isdigit():
            run_id = int(run)
        else:
            raise click.BadParameter(f"{run!r} is not a run id or 'latest'", param_hint="RUN")
        detail = store.get_run(run_id)
        summary = store.summarize_run(run_id)
        link = store.chain_link(run_id)
        tasks = run_tasks(store.engine, run_id)
    chain = link.chain_digest if link is not None else None
    if output == "json":
        data = run_json(detail.run)
        data["chain_digest"] = chain
        data["sources"] = _plain([dataclasses.asdict(s) for s in detail.sources])
        data["policies"] = detail.policies
        data["policies_not_evaluated"] = detail.not_evaluated
        data["documents"] = detail.documents
        data["by_severity"] = {g.label: g.counts.as_dict() for g in summary.by_severity}
        data["by_source"] = {g.label: g.counts.as_dict() for g in summary.by_source}
        if tasks:
            data["tasks"] = [task_json(task) for task in tasks]
        click.echo(json.dumps(data, indent=2))
        return
    click.echo(_describe(detail))
    if chain:
        click.echo(f"\nchain: {chain}")
    for title, groups in (("by severity", summary.by_severity),
                          ("by source", summary.by_source)):
        if groups:
            click.echo(f"\nresults {title}:")
            rows = [["", "PASS", "FAIL", "WARN", "ERROR", "SKIP"]]
            rows += [[g.label or "-", *map(str, g.counts.as_dict().values())] for g in groups]
            click.echo(_table(rows))
    if tasks:
        click.echo("\ntasks (queue):")
        rows = [["SOURCE", "SHARD", "STATUS", "WORKER", "ATTEMPTS", "STARTED (UTC)", "DURATION", "RESOURCES",
                 "RESULTS"]]
        rows += [[t.source, f"{t.shard + 1}/{t.shards}", t.status + (f": {t.fatal}" if t.fatal else ""),
                  t.worker or "-", str(t.attempts), _time(t.started_at),
                  f"{t.duration_seconds:.1f}s" if t.duration_seconds is not None else "-", str(t.resources),
                  str(t.results)] for t in tasks]
        click.echo(_table(rows))


def task_json(task: TaskInfo) -> dict[str, Any]:
    """A queue task of ``runs show --output json``: its shard counted from 0, as enqueued."""
    data = _plain(dataclasses.asdict(task))
    data["duration_seconds"] = task.duration_seconds
    return data


def _describe(detail: RunDetail) -> str:
    run = detail.run
    counts = ", ".join(f"{n} {s}" for s, n in run.counts.as_dict().items())
    lines = [f"run {run.run_id}: {run.status.value} ({run.trigger.value})",
             f"  started   {_time(run.started_at)} UTC",
             f"  finished  {_time(run.finished_at)} UTC   duration {duration_text(run)}",
             f"  scanner   {run.scanner_version or '-'}   config {run.config_digest or '-'}",
             f"  resources {run.resources} distinct ({detail.documents} documents read)   policies "
             f"{detail.policies} evaluated"
             + (f", {detail.not_evaluated} not evaluated" if detail.not_evaluated else "")
             + f"   errors {run.error_records}",
             f"  results   {counts}", "", "sources:"]
    for source in detail.sources:
        state = f"error: {source.error}" if source.error else "ok"
        parts = [source.name, f"({source.type.value})", source.url, source.ref,
                 f"commit {source.commit_sha[:12] or '-'}"]
        lines.append("  " + " ".join(p for p in parts if p) + f": {state}")
    return "\n".join(lines)


@runs.command("verify")
@click.option("--from", "from_run", type=click.IntRange(min=1), default=None,
              help="Start at this run (taking the link of the run before it as given).")
@database_options
def verify(from_run: int | None, database_url: str | None, config_path: str | None) -> int:
    """Check the hash chain of finished runs against the stored rows.

    Exits 0 when every run's content and link still match what was recorded when it finished;
    else names the first run that does not, and what changed, and exits 1.
    """
    with open_store(database_url, config_path) as store:
        verdict = store.verify_chain(from_run=from_run)
    start = ("the start of the chain" if verdict.anchor.run_id is None or from_run is not None
             else f"the anchor left by pruning run {verdict.anchor.run_id}")
    if verdict.broken is not None:
        broken = verdict.broken
        what = f"{', '.join(broken.parts)} changed" if broken.parts else broken.problem
        click.echo(f"run {broken.run_id}: {what}: {broken.detail}")
        click.echo(f"chain broken at run {broken.run_id} ({verdict.checked} runs before it verified, "
                   f"from {start})", err=True)
        return 1
    if not verdict.checked:
        click.echo("chain verified: no finished runs in it yet")
        return 0
    click.echo(f"chain verified: {verdict.checked} runs, run {verdict.first_run_id} to run "
               f"{verdict.last_run_id}, from {start}\nhead {verdict.head_digest}")
    return 0
