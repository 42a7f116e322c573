"""Render the HTML and JSON reports of a synthetic run: 10,000 resources, 300,000 results.

    .venv/bin/python benchmarks/bench_report.py [--resources N] [--rules-per-resource N]
        [--fail-rate F] [--formats html,json] [--out DIR]
    .venv/bin/python benchmarks/bench_report.py --store URL [--run N] [--formats ...]

Prints the time each format takes and the size of each file. The target is HTML + JSON of
10,000 resources x 30 rules under 10 s together.

With ``--store``: each format of a stored run (e.g. of ``scanner scan`` on the 10k corpus, made
with ``reports.formats: []``) as ``scanner report`` renders it, in a process of its own: the
seconds reading the store, rendering, their sum, its ratio to the JSON report's, and the
process's peak memory. With ``--build DIR`` (repeatable), by the scanner of each checkout
(e.g. a ``git worktree`` of another commit), side by side: each format by each build in turn,
``--rounds`` times, the best round shown, with its ratio to the first build's.

    .venv/bin/python benchmarks/bench_report.py --store sqlite:///scan.db --build /tmp/old --build . --rounds 3
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


# one format of a stored run in a process of its own: read seconds, render seconds, peak RSS in MB
STORED = """
import resource, sys, time
sys.path[:0] = sys.argv[5:]  # a build's checkout, before any other
from pathlib import Path
from scanner.store.store import Store
from scanner.scan.report_data import build_report_data
from scanner.report.render import EVERY_RESULT_FORMATS, render_report
from scanner.scan.processes import collect_less_often
collect_less_often()  # as the ``scanner`` command runs
url, run, fmt, out = sys.argv[1], int(sys.argv[2]), sys.argv[3], Path(sys.argv[4])
start = time.perf_counter()
with Store(url) as store:
    data = build_report_data(store, run, findings_only=fmt not in EVERY_RESULT_FORMATS)
read = time.perf_counter()
path = render_report(data, fmt, out)
done = time.perf_counter()
print(read - start, done - read, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024, path.stat().st_size)
"""


def _stored_once(url: str, run: int, fmt: str, out: Path, build: str | None) -> tuple[float, float, int, int]:
    import subprocess

    checkout = [str(Path(build).resolve())] if build else []
    proc = subprocess.run([sys.executable, "-c", STORED, url, str(run), fmt, str(out), *checkout], check=True,
                          capture_output=True, text=True)
    read, render, peak, size = proc.stdout.split()
    return float(read), float(render), int(peak), int(size)


def stored(url: str, run: int, formats: list[str], out: Path, builds: list[str | None], rounds: int) -> None:
    """Each format of the run rendered by each build, alternating, ``rounds`` times: the best."""
    best: dict[tuple[str | None, str], tuple[float, float, int, int]] = {}
    for _ in range(rounds):
        for fmt in formats:
            for n, build in enumerate(builds):
                folder = out / str(n)
                folder.mkdir(parents=True, exist_ok=True)  # a folder: each format its own file
                row = _stored_once(url, run, fmt, folder, build)
                if (build, fmt) not in best or sum(row[:2]) < sum(best[(build, fmt)][:2]):
                    best[(build, fmt)] = row
    print(f"{'build':>5} {'format':>14} {'read s':>7} {'render s':>8} {'total s':>8} {'x json':>7} {'peak MB':>8} "
          f"{'MB':>7}" + (f" {'x build 0':>9}" if len(builds) > 1 else ""))
    for fmt in formats:
        for n, build in enumerate(builds):
            read, render, peak, size = best[(build, fmt)]
            json_total = sum(best[(build, "json")][:2]) if "json" in formats else None
            ratio = f"{(read + render) / json_total:7.2f}" if json_total else f"{'-':>7}"
            first = sum(best[(builds[0], fmt)][:2])
            against = f" {(read + render) / first:9.2f}" if len(builds) > 1 else ""
            print(f"{n:>5} {fmt:>14} {read:7.2f} {render:8.2f} {read + render:8.2f} {ratio} {peak:8} "
                  f"{size / 1e6:7.1f}{against}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", default=None, help="render a stored run of this database URL")
    parser.add_argument("--run", type=int, default=1, help="with --store: the run")
    parser.add_argument("--build", action="append", default=[],
                        help="with --store: render with the scanner of this checkout (its root), alternating "
                             "with the others given (repeatable; default: this interpreter's)")
    parser.add_argument("--rounds", type=int, default=1, help="with --store: rounds, the best of which is shown")
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
    if args.store:
        stored(args.store, args.run, formats, args.out or Path(tempfile.mkdtemp(prefix="bench-report-")),
               args.build or [None], args.rounds)
        return 0
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
