"""Scan throughput: a full ``scanner scan`` (Git source + its cluster export, the corpus policy
set, SQLite, HTML and JSON reports) against parsing the same files in one process with PyYAML's
C loader, side by side, at several corpus sizes; optionally against Checkov.

    python benchmarks/bench_scan.py --sizes 1000,10000,50000 [--work DIR] [--checkov VENV_PYTHON]

Corpora come from ``../shared/bench/make_corpus.py`` (seed 1), generated into --work once.
Prints, per size: parse-only seconds, scan seconds, ratio, microseconds per resource and the
scan's peak memory (resident set size of the scan and its workers).
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import resource
import shutil
import subprocess
import sys
import tempfile
import time

from baseline import PARSE_ONLY, ensure_corpus

CONFIG = """\
database: {{url: "sqlite:///{db}"}}
policies: [{{path: {corpus}/policies}}]
sources:
  - name: gitops
    git: {{url: {corpus}/repo}}
    exclude: ["cluster-exports/**"]
  - name: cluster
    export: {{path: {corpus}/repo/cluster-exports}}
reports: {{out: {work}/reports, formats: [html, json]}}
scan: {{cache_dir: {work}/cache, fail_on: never}}
"""


def corpus(work: pathlib.Path, size: int) -> pathlib.Path:
    return ensure_corpus(work / f"corpus-{size}", size)


def timed(cmd: list[str]) -> tuple[float, int, str]:
    """Seconds, peak RSS in MB of the command and its children, and stdout."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    took = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{cmd[0]} failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return took, max(peak, before) // 1024, proc.stdout


def run_size(work: pathlib.Path, size: int, scanner: str) -> dict:
    path = corpus(work, size)
    expected = json.loads((path / "corpus.json").read_text())["resources"]
    parse, _, _ = timed([sys.executable, "-c", PARSE_ONLY, str(path / "repo")])
    run_dir = work / f"run-{size}"
    shutil.rmtree(run_dir, ignore_errors=True)
    run_dir.mkdir()
    config = run_dir / "scanner.yaml"
    config.write_text(CONFIG.format(db=run_dir / "scan.db", corpus=path, work=run_dir))
    # a separate process per measurement so that ru_maxrss is the scan's own peak
    probe = ("import resource, subprocess, sys, time; t = time.perf_counter(); "
             "p = subprocess.run(sys.argv[1:], capture_output=True, text=True); "
             "print(time.perf_counter() - t, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, "
             "p.returncode); sys.stderr.write(p.stdout[-400:] + p.stderr[-2000:])")
    proc = subprocess.run([sys.executable, "-c", probe, scanner, "scan", "--config", str(config), "-q"],
                          capture_output=True, text=True, check=False)
    took_text, rss_text, code = proc.stdout.split()
    if code not in ("0", "1"):
        raise SystemExit(f"scan failed at {size}: {proc.stderr}")
    scan = float(took_text)
    return {"size": size, "resources": expected, "parse_s": round(parse, 2), "scan_s": round(scan, 2),
            "ratio": round(scan / parse, 2), "us_per_resource": round(scan / expected * 1e6),
            "peak_mb": int(rss_text) // 1024, "summary": proc.stderr.strip().splitlines()[:3]}


def checkov(work: pathlib.Path, size: int, python: str, scanner: str) -> None:
    path = corpus(work, size)
    checkov_bin = str(pathlib.Path(python).with_name("checkov"))
    took, peak, _ = timed([checkov_bin, "-d", str(path / "repo"), "--framework", "kubernetes", "--quiet",
                           "-o", "json"])
    scan = run_size(work, size, scanner)
    print(f"checkov at {size}: {took:.1f} s (peak {peak} MB); scanner scan: {scan['scan_s']} s "
          f"-> {took / scan['scan_s']:.1f}x faster")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1000,10000", help="comma-separated corpus sizes")
    ap.add_argument("--work", type=pathlib.Path, default=pathlib.Path(tempfile.gettempdir()) / "scanner-bench")
    ap.add_argument("--checkov", metavar="PYTHON", help="python of a venv with checkov installed (runs at 2,000)")
    args = ap.parse_args(argv)
    args.work.mkdir(parents=True, exist_ok=True)
    scanner = str(pathlib.Path(sys.executable).with_name("scanner"))
    rows = [run_size(args.work, int(s), scanner) for s in args.sizes.split(",") if s]
    print(f"{'resources':>9} {'parse s':>8} {'scan s':>8} {'ratio':>6} {'us/res':>7} {'peak MB':>8}")
    for r in rows:
        print(f"{r['resources']:>9} {r['parse_s']:>8} {r['scan_s']:>8} {r['ratio']:>6} {r['us_per_resource']:>7} "
              f"{r['peak_mb']:>8}")
    if args.checkov:
        checkov(args.work, 2000, args.checkov, scanner)
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    sys.exit(main())
