"""Scan throughput: a full ``scanner scan`` (Git source + its cluster export, the corpus policy
set, SQLite, HTML and JSON reports) against parsing the same files in one process with PyYAML's
C loader, side by side, at several corpus sizes; optionally against Checkov.

    python benchmarks/bench_scan.py --sizes 1000,10000,50000 [--work DIR]
        [--checkov VENV_PYTHON [--checkov-runs N] [--repeats N]]
    python benchmarks/bench_scan.py --nightly [--sizes 10000] [--database URL] [--churn-nights N]

``--nightly``: a first scan, an unchanged rescan, a rescan after a commit changing 1% of the
files and one after a change of one policy rule, into one database (``nightly.py``); with
``--churn-nights N``, a first scan and N nights of commits changing 1% of the files, then the
database's growth and whether run 1's audit record is unchanged.

Corpora come from ``../shared/bench/make_corpus.py`` (seed 1), generated into --work once.
Prints, per size: parse-only seconds, first-scan seconds (new database, Git clone), their ratio,
microseconds per resource, microseconds per resource added since the previous size, the second
scan's seconds (clone cached, database kept: a nightly job) and the scans' peak memory (resident
set size of the scan and its workers).
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import pathlib
import shutil
import statistics
import subprocess
import sys
import tempfile

from baseline import PARSE_ONLY, ensure_corpus
from nightly import nightly, print_nights

import scanner as package

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


# run as ``python -c PROBE CMD...``: prints seconds, peak RSS in KiB of CMD and its children, exit code;
# a separate process per measurement so that ru_maxrss is that command's own peak
PROBE = ("import resource, subprocess, sys, time; t = time.perf_counter(); "
         "p = subprocess.run(sys.argv[1:], capture_output=True, text=True); "
         "print(time.perf_counter() - t, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, "
         "p.returncode); sys.stderr.write(p.stdout[-400:] + p.stderr[-2000:])")


def timed(cmd: list[str]) -> tuple[float, int, str]:
    """Seconds and peak RSS in MB of the command (with its children), and the end of its output."""
    proc = subprocess.run([sys.executable, "-c", PROBE, *cmd], capture_output=True, text=True, check=False)
    took_text, rss_text, code = proc.stdout.split()
    if code not in ("0", "1"):
        raise SystemExit(f"{cmd[0]} failed ({code}): {proc.stderr[-2000:]}")
    return float(took_text), int(rss_text) // 1024, proc.stderr


def scans(work: pathlib.Path, size: int, scanner: str) -> dict:
    """A first scan (new database, Git clone) and a second one (what a nightly job does)."""
    path = corpus(work, size)
    run_dir = pathlib.Path(tempfile.mkdtemp(prefix=f"run-{size}-", dir=work))
    config = run_dir / "scanner.yaml"
    config.write_text(CONFIG.format(db=run_dir / "scan.db", corpus=path, work=run_dir))
    command = [scanner, "scan", "--config", str(config), "-q"]
    scan, peak, output = timed(command)
    rescan, rescan_peak, _ = timed(command)
    return {"scan_s": round(scan, 2), "rescan_s": round(rescan, 2), "peak_mb": max(peak, rescan_peak),
            "summary": output.strip().splitlines()[:3]}


def run_size(work: pathlib.Path, size: int, scanner: str) -> dict:
    """Parse-only, then the scans."""
    path = corpus(work, size)
    expected = json.loads((path / "corpus.json").read_text())["resources"]
    parse, _, _ = timed([sys.executable, "-c", PARSE_ONLY, str(path / "repo")])
    scanned = scans(work, size, scanner)
    return {"size": size, "resources": expected, "parse_s": round(parse, 2), **scanned,
            "ratio": round(scanned["scan_s"] / parse, 2),
            "us_per_resource": round(scanned["scan_s"] / expected * 1e6)}


def checkov(work: pathlib.Path, size: int, python: str, scanner: str, repeats: int, runs_of_checkov: int) -> None:
    """Checkov ``runs_of_checkov`` times, against ``repeats`` scanner runs (each a first scan and
    a second one) dealt out before, between and after them, so that both sample the machine
    over the same minutes; the ratio is of the medians."""
    path = corpus(work, size)
    checkov_bin = str(pathlib.Path(python).with_name("checkov"))
    command = [checkov_bin, "-d", str(path / "repo"), "--framework", "kubernetes", "--quiet", "-o", "json"]
    runs = [scans(work, size, scanner)]
    tooks, peak = [], 0
    for i in range(runs_of_checkov):
        took, checkov_peak, _ = timed(command)
        tooks.append(took)
        peak = max(peak, checkov_peak)
        share = (repeats - 1) * (i + 1) // runs_of_checkov - (repeats - 1) * i // runs_of_checkov
        runs += [scans(work, size, scanner) for _ in range(share)]
    took = statistics.median(tooks)
    first = statistics.median(r["scan_s"] for r in runs)
    second = statistics.median(r["rescan_s"] for r in runs)
    print(f"checkov at {size}, median of {len(tooks)}: {took:.1f} s ({', '.join(f'{t:.1f}' for t in tooks)}; "
          f"peak {peak} MB); scanner scan, median of {len(runs)}: {first:.2f} s -> {took / first:.1f}x faster "
          f"({took / second:.1f}x for the second scan, {second:.2f} s); "
          f"first scans: {', '.join(str(r['scan_s']) for r in runs)}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1000,10000", help="comma-separated corpus sizes")
    ap.add_argument("--work", type=pathlib.Path, default=pathlib.Path(tempfile.gettempdir()) / "scanner-bench")
    ap.add_argument("--checkov", metavar="PYTHON", help="python of a venv with checkov installed (runs at 2,000)")
    ap.add_argument("--repeats", type=int, default=7, help="scanner runs compared with the Checkov runs")
    ap.add_argument("--checkov-runs", type=int, default=3, help="Checkov runs (a minute or so each)")
    ap.add_argument("--nightly", action="store_true", help="nightly scans of the first size's corpus")
    ap.add_argument("--database", help="with --nightly: this (empty) database instead of a new SQLite file")
    ap.add_argument("--churn-nights", type=int, default=0,
                    help="with --nightly: the first night, then this many, each a commit changing 1%% of the files")
    args = ap.parse_args(argv)
    args.work.mkdir(parents=True, exist_ok=True)
    scanner = str(pathlib.Path(sys.executable).with_name("scanner"))
    # byte-compiled as `pip install .` leaves it (and Checkov's venv), even where
    # PYTHONDONTWRITEBYTECODE keeps an editable install from caching its bytecode
    compileall.compile_dir(pathlib.Path(package.__file__).parent, quiet=1)
    if args.nightly:
        size = int(args.sizes.split(",")[0] if args.sizes != "1000,10000" else 10000)
        print_nights(nightly(corpus(args.work, size), args.database, args.work, args.churn_nights))
        return 0
    rows = [run_size(args.work, int(s), scanner) for s in args.sizes.split(",") if s]
    print(f"{'resources':>9} {'parse s':>8} {'scan s':>8} {'ratio':>6} {'us/res':>7} {'added us/res':>12} "
          f"{'rescan s':>9} {'peak MB':>8}")
    previous = None
    for r in rows:
        # the cost of each resource added since the previous size: flat when the scan scales linearly
        added = "" if previous is None else round((r["scan_s"] - previous["scan_s"]) * 1e6
                                                   / (r["resources"] - previous["resources"]))
        print(f"{r['resources']:>9} {r['parse_s']:>8} {r['scan_s']:>8} {r['ratio']:>6} {r['us_per_resource']:>7} "
              f"{added:>12} {r['rescan_s']:>9} {r['peak_mb']:>8}")
        previous = r
    if args.checkov:
        checkov(args.work, 2000, args.checkov, scanner, max(args.repeats, 1), max(args.checkov_runs, 1))
    # removed only now: deleting thousands of files just before a timed scan slows the files it
    # writes on some file systems (ext4 mounted with online discard)
    for run_dir in args.work.glob("run-*"):
        shutil.rmtree(run_dir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    sys.exit(main())
