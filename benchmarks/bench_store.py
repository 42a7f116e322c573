"""Store benchmark: runs of N rule results stored, then trend and diff queries over them.

    .venv/bin/python benchmarks/bench_store.py --runs 30             # SQLite, 30 x 1,000,000
    .venv/bin/python benchmarks/bench_store.py --runs 30 --skip-sqlite \
        --postgres postgresql+psycopg://postgres@127.0.0.1:5432/test
    .venv/bin/python benchmarks/bench_store.py --results 100000 --runs 5 \
        --postgres postgresql+psycopg://postgres@127.0.0.1:5432/test

Results are generated lazily (20 rules x N/20 resources, a quarter failing, one resource in
25 changing between runs), so the peak memory reported is the store's, not the input's.
Each run is a day after the one before. Queries are timed cold (first call) and warm (best
of three): trend series over every run and over the last week, per run and per day, by
policy, severity and source; the diff of the last two runs (read from the findings), as
counts, with the first 100 entries and with every entry; and the diff of the first and
last runs (which compares the two runs' results). SQLite runs in a temporary folder,
PostgreSQL in a fresh schema; both are deleted afterwards.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import quote

from sqlalchemy import create_engine, text

from scanner.engine.types import RuleStatus
from scanner.store import (
    PolicyRecord,
    ResourceRecord,
    ResultRecord,
    RunStart,
    SourceRecord,
    SourceType,
    Store,
)
from scanner.store.diff import plan_diff

POLICIES = 10
RULES_PER_POLICY = 2
NAMESPACES = 20


def policies() -> list[PolicyRecord]:
    return [PolicyRecord(kind="ClusterPolicy", name=f"policy-{p}", digest=f"sha256:{p}",
                         title=f"Policy {p}", category="Best Practices",
                         severity=("low", "medium", "high")[p % 3]) for p in range(POLICIES)]


def results(count: int, seed: int) -> Iterator[ResultRecord]:
    rules = POLICIES * RULES_PER_POLICY
    for index in range(count // rules):
        resource = ResourceRecord(
            source="bench", api_version="apps/v1", kind="Deployment", name=f"app-{index}",
            namespace=f"ns-{index % NAMESPACES}", path=f"apps/app-{index // 10}.yaml",
            document=index % 10, line=1 + (index % 10) * 40, commit_sha="0" * 40)
        for rule in range(rules):
            failing = (index * 7 + rule * 13 + (seed if index % 25 == 0 else 0)) % 4 == 0
            yield ResultRecord(
                policy=f"policy-{rule // RULES_PER_POLICY}", rule=f"rule-{rule}",
                resource=resource, status=RuleStatus.FAIL if failing else RuleStatus.PASS,
                message="validation error: image tag must not be latest" if failing else "",
                path="/spec/template/spec/containers/0/image/" if failing else "")


def store_run(store: Store, count: int, seed: int, started_at: datetime) -> tuple[int, float]:
    start = time.perf_counter()
    with store.begin_run(RunStart(started_at=started_at, scanner_version="bench")) as run:
        run.add_source(SourceRecord(name="bench", type=SourceType.GIT, url="https://example/x"))
        run.add_policies(policies())
        run.add_results(results(count, seed))
        run.finish()
    return run.run_id, time.perf_counter() - start


def _max_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def timed(label: str, call: Callable[[], object]) -> None:
    """Print the first (cold) and the best of three (warm) times of ``call``."""
    times = []
    for _ in range(3):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    print(f"  {label:<52} {times[0]:7.3f} s cold {min(times):7.3f} s warm")


def store_runs(store: Store, count: int, runs: int, base: datetime) -> list[int]:
    before = _max_rss_mib()
    run_id, seconds = store_run(store, count, 0, base)
    print(f"  store run 1: {seconds:.1f} s ({count / seconds:,.0f} results/s); peak RSS "
          f"{before:.0f} MiB before, {_max_rss_mib():.0f} MiB after")
    ids, times = [run_id], [seconds]
    for index in range(1, runs):
        run_id, seconds = store_run(store, count, index, base + timedelta(days=index))
        ids.append(run_id)
        times.append(seconds)
        print(f"  stored run {index + 1}/{runs} in {seconds:.1f} s", file=sys.stderr,
              flush=True)
    if runs > 1:
        print(f"  store runs 2-{runs}: {min(times[1:]):.1f} s min, "
              f"{statistics.median(times[1:]):.1f} s median, {max(times[1:]):.1f} s max per "
              f"run; peak RSS {_max_rss_mib():.0f} MiB")
    return ids


def bench(name: str, url: str, count: int, runs: int) -> None:
    print(f"{name}: {count:,} results per run, {runs} runs")
    store = Store(url, auto_upgrade=True)
    base = datetime(2024, 1, 1, tzinfo=UTC)
    ids = store_runs(store, count, runs, base)
    since, week = base - timedelta(days=1), base + timedelta(days=runs - 7)
    timed(f"trend per run over {runs} runs", lambda: store.trend(since=since))
    timed("trend per run by policy", lambda: store.trend(since=since, group_by="policy"))
    timed("trend per day by severity", lambda: store.trend(since=since, bucket="day",
                                                          group_by="severity"))
    timed("trend per day by source, last week",
          lambda: store.trend(since=week, bucket="day", group_by="source", sources=["bench"]))
    if len(ids) > 1:
        base_id, head_id = ids[-2], ids[-1]
        with store.engine.connect() as connection:
            method = plan_diff(connection, base_id, head_id).method
        counts = store.diff_runs(base_id, head_id, limit=0)
        print(f"  diff of the last two runs: {counts.new_count:,} new, "
              f"{counts.resolved_count:,} resolved, {counts.still_failing_count:,} still "
              f"failing (from the {method})")
        for label, limit in (("counts", 0), ("first 100 entries", 100),
                             ("every entry", None)):
            timed(f"diff of the last two runs, {label}",
                  lambda limit=limit: store.diff_runs(base_id, head_id, limit=limit))
        with store.engine.connect() as connection:
            method = plan_diff(connection, ids[0], ids[-1]).method
        timed(f"diff of the first and last runs, first 100 ({method})",
              lambda: store.diff_runs(ids[0], ids[-1], limit=100))
    timed("summary of one run", lambda: store.summarize_run(ids[-1]))
    store.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=30, help="runs for the trend query")
    parser.add_argument("--postgres", help="PostgreSQL URL (a temporary schema is used)")
    parser.add_argument("--skip-sqlite", action="store_true")
    parser.add_argument("--only", choices=("sqlite", "postgres"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.only is None:  # one process per backend, so each peak RSS is its own
        common = [sys.executable, __file__, "--results", str(args.results),
                  "--runs", str(args.runs)]
        if not args.skip_sqlite:
            subprocess.run([*common, "--only", "sqlite"], check=True)
        if args.postgres:
            subprocess.run([*common, "--only", "postgres", "--postgres", args.postgres],
                           check=True)
        return 0
    if args.only == "sqlite":
        with tempfile.TemporaryDirectory() as folder:
            bench("SQLite", f"sqlite:///{Path(folder) / 'bench.db'}", args.results, args.runs)
    if args.only == "postgres":
        schema = f"bench_{uuid.uuid4().hex[:8]}"
        admin = create_engine(args.postgres.split("?")[0])
        with admin.begin() as connection:
            connection.execute(text(f"CREATE SCHEMA {schema}"))
        try:
            separator = "&" if "?" in args.postgres else "?"
            url = f"{args.postgres}{separator}options={quote(f'-csearch_path={schema}')}"
            bench("PostgreSQL", url, args.results, args.runs)
        finally:
            with admin.begin() as connection:
                connection.execute(text(f"DROP SCHEMA {schema} CASCADE"))
            admin.dispose()
    return 0


if __name__ == "__main__":
    sys.exit(main())
