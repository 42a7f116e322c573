"""Scans shared through the queue: the 10k corpus as 8 sources, enqueued and run by 1, 2 and 4
worker processes on this machine, against ``scanner scan`` of the same config.

    python benchmarks/bench_distributed.py --database postgresql+psycopg://postgres@127.0.0.1:5432/bench
        [--size 10000] [--workers 1,2,4] [--work DIR]

Each measurement runs in a fresh schema of that database. Prints, per worker count, the seconds
from ``scanner enqueue`` to the run assembled (reports included), the sum and the longest of
the shard jobs' own times (from ``scanner_queue_shards``), and the throughput; and, for the note,
the throughput one more machine would add: resources per second of job time, per worker.
"""

from __future__ import annotations

import argparse
import pathlib
import subprocess
import sys
import tempfile
import time
import uuid
from urllib.parse import quote

from baseline import ensure_corpus
from sqlalchemy import create_engine, text

SOURCES = {  # name -> directory include patterns (the export: the cluster's dump)
    "apps-a": ["apps/[a-c]*/**"], "apps-d": ["apps/[d-i]*/**"], "apps-j": ["apps/[j-m]*/**"],
    "apps-n": ["apps/[n-r]*/**"], "apps-s": ["apps/[s-z]*/**"], "platform": ["platform/**"],
    "legacy": ["legacy/**"],
}


def config(work: pathlib.Path, corpus: pathlib.Path, url: str) -> pathlib.Path:
    lines = [f"database: {{url: '{url}'}}", f"policies: [{{path: {corpus}/policies}}]", "sources:"]
    for name, include in SOURCES.items():
        lines += [f"  - name: {name}", f"    directory: {{path: {corpus}/repo}}", f"    include: {include}",
                  "    gitops: 'off'"]
    lines += ["  - name: cluster", f"    export: {{path: {corpus}/repo/cluster-exports}}",
              f"reports: {{out: {work}/reports, formats: [json]}}", "scan: {fail_on: never}"]
    path = work / f"scanner-{uuid.uuid4().hex[:6]}.yaml"
    path.write_text("\n".join(lines) + "\n")
    return path


def scanner(*args: str, wait: bool = True) -> subprocess.Popen:
    child = subprocess.Popen([sys.executable, "-m", "scanner", *args], stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True)
    if wait:
        out, _ = child.communicate()
        if child.returncode not in (0, 1):
            raise SystemExit(f"scanner {' '.join(args)} failed:\n{out}")
        child.stdout = None
        child.args = out  # type: ignore[assignment]
    return child


def fresh_schema(admin_url: str) -> tuple[str, str]:
    name = f"bench_dist_{uuid.uuid4().hex[:8]}"
    engine = create_engine(admin_url)
    with engine.begin() as connection:
        connection.execute(text(f'CREATE SCHEMA "{name}"'))
    engine.dispose()
    separator = "&" if "?" in admin_url else "?"
    return name, f"{admin_url}{separator}options={quote(f'-csearch_path={name}')}"


def drop_schema(admin_url: str, name: str) -> None:
    engine = create_engine(admin_url)
    with engine.begin() as connection:
        connection.execute(text(f'DROP SCHEMA "{name}" CASCADE'))
    engine.dispose()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--database", required=True)
    parser.add_argument("--size", type=int, default=10000)
    parser.add_argument("--workers", default="1,2,4")
    parser.add_argument("--work", type=pathlib.Path, default=pathlib.Path(tempfile.gettempdir()) / "bench-distributed")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    corpus = ensure_corpus(args.work / f"corpus-{args.size}", args.size)
    name, url = fresh_schema(args.database)
    try:
        path = config(args.work, corpus, url)
        scanner("db", "upgrade", "--config", str(path))
        started = time.monotonic()
        scanner("scan", "--config", str(path), "-q", "--jobs", "1")
        print(f"scanner scan --jobs 1: {time.monotonic() - started:.1f}s")
    finally:
        drop_schema(args.database, name)
    for count in (int(n) for n in args.workers.split(",")):
        name, url = fresh_schema(args.database)
        try:
            path = config(args.work, corpus, url)
            scanner("db", "upgrade", "--config", str(path))
            started = time.monotonic()
            enqueued = scanner("enqueue", "--config", str(path))
            said = str(enqueued.args)
            if not said.startswith("run "):
                raise SystemExit(f"scanner enqueue said:\n{said}")
            run_id = int(said.split()[1].rstrip(":"))
            enqueue_seconds = time.monotonic() - started
            scanner("worker", "--config", str(path), "--concurrency", str(count), "--until-idle")
            total = time.monotonic() - started
            engine = create_engine(url)
            with engine.connect() as connection:
                status, resources = connection.execute(text(
                    "SELECT status, resource_count FROM runs WHERE run_id = :run"), {"run": run_id}).one()
                job_seconds = [row[0] for row in connection.execute(text(
                    "SELECT EXTRACT(EPOCH FROM finished_at - started_at) FROM scanner_queue_shards "
                    "WHERE run_id = :run"), {"run": run_id})]
            engine.dispose()
            per_worker = resources / sum(job_seconds)
            print(f"{count} worker(s): {total:.1f}s ({enqueue_seconds:.1f}s enqueue), run {status}, "
                  f"{resources} resources, {resources / total:.0f}/s; jobs: {len(job_seconds)}, "
                  f"sum {sum(job_seconds):.1f}s, longest {max(job_seconds):.1f}s; "
                  f"one more worker machine (1 core) adds ~{per_worker:.0f} resources/s")
        finally:
            drop_schema(args.database, name)


if __name__ == "__main__":
    main()
