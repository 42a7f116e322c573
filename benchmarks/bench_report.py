"""Render the HTML and JSON reports of a synthetic run: 10,000 resources, 300,000 results.

    .venv/bin/python benchmarks/bench_report.py [--resources N] [--rules-per-resource N]
        [--fail-rate F] [--formats html,json] [--out DIR]

Prints the time each format takes and the size of each file. The target is HTML + JSON of
10,000 resources x 30 rules under 10 s together.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scanner.engine.types import FailureAction, RuleStatus
from scanner.report.assemble import assemble_report
from scanner.report.data import (
    PolicyInfo,
    ReportData,
    ResourceInfo,
    ResultRecord,
    RunInfo,
    Severity,
    SourceInfo,
    TrendPoint,
)
from scanner.report.render import FORMATS, render_report

T0 = datetime(2024, 3, 1, 6, 0, tzinfo=UTC)


def synthetic_run(resources: int, rules_per_resource: int, fail_rate: float) -> ReportData:
    rng = random.Random(20240301)
    severities = list(Severity)
    policies = [PolicyInfo(name=f"policy-{i:02d}", title=f"Policy number {i}",
                           category="Best Practices", severity=severities[i % len(severities)],
                           description="Synthetic policy.", action=FailureAction.AUDIT,
                           digest=f"sha256:{i:064x}", path=f"policies/p{i}.yaml",
                           rules=(f"rule-{i:02d}",))
                for i in range(rules_per_resource)]
    items = [ResourceInfo(api_version="apps/v1", kind="Deployment", namespace=f"team-{i % 50}",
                          name=f"app-{i}", source=f"repo-{i % 4}", path=f"apps/team-{i % 50}/"
                          f"app-{i}.yaml", line=1 + i % 7, commit=f"{i % 4:040x}",
                          labels=(("app", f"app-{i}"), ("team", f"team-{i % 50}")),
                          annotations=(("owner", f"team-{i % 50}@example.com"),))
             for i in range(resources)]
    statuses = [RuleStatus.PASS, RuleStatus.SKIP]
    results = []
    for resource in items:
        for policy in policies:
            roll = rng.random()
            if roll < fail_rate:
                status = RuleStatus.FAIL
            elif roll < fail_rate * 1.1:
                status = RuleStatus.WARN
            else:
                status = statuses[roll < fail_rate * 1.1 + 0.05]
            message = (f"validation error: {policy.rules[0]} failed at path "
                       f"/spec/template/spec/containers/0/resources/limits/"
                       if status in (RuleStatus.FAIL, RuleStatus.WARN) else "")
            results.append(ResultRecord(policy=policy.name, rule=policy.rules[0],
                                        status=status, message=message, resource=resource))
    run = RunInfo(run_id=1000, started_at=T0, finished_at=T0 + timedelta(minutes=3),
                  scanner_version="0.1.0", status="succeeded", trigger="schedule",
                  policy_set_digest="sha256:" + "ab" * 32,
                  sources=tuple(SourceInfo(name=f"repo-{i}", type="git",
                                           url=f"https://git.example.com/repo-{i}.git",
                                           ref="main", commit_sha=f"{i:040x}", commit_time=T0)
                                for i in range(4)))
    trend = [TrendPoint(run_id=970 + i, started_at=T0 - timedelta(days=30 - i),
                        failures={s.value: rng.randint(1000, 9000) for s in severities})
             for i in range(30)]
    return assemble_report(run=run, policies=policies, results=results, trend=trend,
                           previous_run_id=999)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--resources", type=int, default=10_000)
    parser.add_argument("--rules-per-resource", type=int, default=30)
    parser.add_argument("--fail-rate", type=float, default=0.1)
    parser.add_argument("--formats", default="html,json")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    formats = [f for f in args.formats.split(",") if f]
    unknown = [f for f in formats if f not in FORMATS]
    if unknown:
        parser.error(f"unknown formats: {', '.join(unknown)}")
    start = time.perf_counter()
    data = synthetic_run(args.resources, args.rules_per_resource, args.fail_rate)
    print(f"built ReportData: {data.summary.resources} resources, {data.summary.results} "
          f"results, {sum(len(g.findings) for g in data.failures_by_policy)} findings "
          f"in {time.perf_counter() - start:.2f}s")
    out = args.out or Path(tempfile.mkdtemp(prefix="bench-report-"))
    total = 0.0
    for fmt in formats:
        start = time.perf_counter()
        path = render_report(data, fmt, out / f"bench{FORMATS[fmt][1]}")
        took = time.perf_counter() - start
        total += took
        print(f"{fmt:>14}: {took:6.2f}s  {path.stat().st_size / 1e6:7.1f} MB  {path}")
    print(f"{'total':>14}: {total:6.2f}s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
