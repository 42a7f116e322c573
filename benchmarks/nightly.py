"""Nightly scans of one estate (``bench_scan.py --nightly``): what each night costs, against the first.

Nights, each a ``scanner scan`` of a copy of the corpus (its Git repository, its cluster export and
its policies) into one database:

1. ``first``: a new database;
2. ``unchanged``: nothing changed;
3. ``commit-1pct``: a commit changes the image of 1% of the repository's files;
4. ``one-rule``: the message of one rule of one policy changes;
or, with ``churn_nights`` N, the first night and then N nights, each a commit changing 1% of the files
(``churn-1`` ...).

Printed per night: seconds of the whole command (reports included) and of the stored run, their
share of the first night's, the (document, policy) pairs evaluated and reused, the shards sent again
unread, the database's size and what the night added to it (SQLite: the file; PostgreSQL: the
relations of its schema), and that share of the first night's bytes. With ``churn_nights``, also
whether the first run's audit record (``audit-json``, its ``content_digest``) is the same after the
last night as after the first.
"""

from __future__ import annotations

import json
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import time

from sqlalchemy import create_engine, text

CONFIG = """\
database: {{url: "{url}"}}
policies: [{{path: {work}/policies}}]
sources:
  - name: gitops
    git: {{url: {work}/repo}}
    exclude: ["cluster-exports/**"]
  - name: cluster
    export: {{path: {work}/repo/cluster-exports}}
reports: {{out: {work}/reports, formats: [html, json]}}
scan: {{cache_dir: {work}/cache, fail_on: never, reuse: true}}
"""

# one scan in a process of its own, as ``scanner scan`` runs it; prints what it did as JSON
RUN = ("import json, sys, time; from scanner import scan; from scanner.config import load_config; "
       "t = time.perf_counter(); o = scan.run(load_config(sys.argv[1])); "
       "print(json.dumps({'total_s': time.perf_counter() - t, 'run_s': o.duration, 'evaluated': o.evaluated, "
       "'reused': o.reused, 'replayed': o.replayed, 'results': sum(o.counts.values())}))")

IMAGE = re.compile(r"""(image:\s*)(["']?)([^"'\s#]+)\2""")
RULE_MESSAGE = re.compile(r"""(\n\s+message:\s*)(["']?)(.*?)\2[ \t]*\n""")
POLICY = "best-practices--disallow-latest-tag.yaml"


def git(repo: pathlib.Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True,
                          env={"GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "b@e", "GIT_COMMITTER_NAME": "bench",
                               "GIT_COMMITTER_EMAIL": "b@e", "PATH": "/usr/bin:/bin", "HOME": str(repo)}).stdout


def copy_corpus(corpus: pathlib.Path, work: pathlib.Path) -> None:
    """The corpus's repository (cloned: its history is the corpus's) and policies, ours to change."""
    subprocess.run(["git", "clone", "-q", str(corpus / "repo"), str(work / "repo")], check=True)
    shutil.copytree(corpus / "policies", work / "policies")


def change_images(repo: pathlib.Path, share: float, night: int) -> int:
    """Commit a new image tag in ``share`` of the repository's files (those naming an image);
    returns how many files changed."""
    files = [f for f in git(repo, "ls-files").splitlines() if not f.startswith("cluster-exports/")]
    wanted = max(1, round(len(files) * share))
    with_images = [f for f in files if IMAGE.search((repo / f).read_text(errors="replace"))]
    step = max(1, len(with_images) // wanted)
    chosen = with_images[::step][:wanted]
    for name in chosen:
        path = repo / name
        path.write_text(IMAGE.sub(lambda m: f"{m[1]}{m[2]}{m[3]}-night{night}{m[2]}", path.read_text(), count=1))
    git(repo, "commit", "-q", "-am", f"night {night}: {len(chosen)} images")
    return len(chosen)


def change_one_rule(policies: pathlib.Path, night: int) -> str:
    """Reword the first rule message of ``POLICY``; returns what changed."""
    path = policies / POLICY
    path.write_text(RULE_MESSAGE.sub(lambda m: f"{m[1]}{m[2]}{m[3]} (night {night}){m[2]}\n", path.read_text(),
                                     count=1))
    return "1 rule"


def database_bytes(url: str) -> int:
    if url.startswith("sqlite:///"):
        file = pathlib.Path(url.removeprefix("sqlite:///"))
        return sum(p.stat().st_size for p in file.parent.glob(file.name + "*"))
    engine = create_engine(url)
    try:
        with engine.connect() as connection:
            return int(connection.execute(text(
                "SELECT COALESCE(SUM(pg_total_relation_size(c.oid)), 0) FROM pg_class c "
                "JOIN pg_namespace n ON n.oid = c.relnamespace "
                "WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'm')")).scalar_one())
    finally:
        engine.dispose()


def scan(config: pathlib.Path) -> dict:
    proc = subprocess.run([sys.executable, "-c", RUN, str(config)], capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"scan failed: {proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def first_audit(url: str, out: pathlib.Path) -> tuple[str, bytes]:
    """Run 1's audit record as ``scanner report`` renders it: its content digest and bytes."""
    subprocess.run([sys.executable, "-m", "scanner", "report", "--database", url, "--run", "1", "--format",
                    "audit-json", "--out", str(out)], check=True, capture_output=True)
    return json.loads(out.read_text())["content_digest"], out.read_bytes()


def nightly(corpus: pathlib.Path, url: str | None, work_root: pathlib.Path, churn_nights: int = 0) -> list[dict]:
    work = pathlib.Path(tempfile.mkdtemp(prefix="nightly-", dir=work_root))
    copy_corpus(corpus, work)
    url = url or f"sqlite:///{work}/scan.db"
    config = work / "scanner.yaml"
    config.write_text(CONFIG.format(url=url, work=work))
    nights: list[dict] = []
    steps = [("first", lambda: ""), ("unchanged", lambda: ""),
             ("commit-1pct", lambda: f"{change_images(work / 'repo', 0.01, 3)} files"),
             ("one-rule", lambda: change_one_rule(work / "policies", 4))]
    if churn_nights:  # the first night, then only commits changing 1% of the files
        steps = steps[:1] + [(f"churn-{n + 1}", lambda n=n: f"{change_images(work / 'repo', 0.01, 5 + n)} files")
                             for n in range(churn_nights)]
    for name, change in steps:
        what = change()
        before = database_bytes(url) if nights else 0
        started = time.perf_counter()
        done = scan(config)
        took = time.perf_counter() - started
        size = database_bytes(url)
        nights.append({"night": name, "change": what, "wall_s": took, **done, "db_bytes": size,
                       "added_bytes": size - before})
        if churn_nights and len(nights) in (1, len(steps)):  # (not timed)
            nights[-1]["first_audit"] = first_audit(url, work / f"audit-{len(nights)}.json")
    shutil.rmtree(work, ignore_errors=True)
    return nights


def print_nights(nights: list[dict]) -> None:
    first = nights[0]
    print(f"{'night':<12} {'change':<14} {'wall s':>7} {'%':>5} {'run s':>6} {'%':>5} {'evaluated':>9} "
          f"{'reused':>7} {'shards':>6} {'results':>8} {'db MB':>7} {'added MB':>8} {'%':>6}")
    for n in nights:
        print(f"{n['night']:<12} {n['change']:<14} {n['wall_s']:>7.2f} {100 * n['wall_s'] / first['wall_s']:>5.1f} "
              f"{n['run_s']:>6.2f} {100 * n['run_s'] / first['run_s']:>5.1f} {n['evaluated']:>9} {n['reused']:>7} "
              f"{n['replayed']:>6} {n['results']:>8} {n['db_bytes'] / 1e6:>7.1f} {n['added_bytes'] / 1e6:>8.2f} "
              f"{100 * n['added_bytes'] / first['added_bytes']:>6.1f}")
    last = nights[-1]
    if last["night"].startswith("churn-"):
        print(f"after {last['night'].removeprefix('churn-')} nights of 1% churn: {last['db_bytes'] / 1e6:.1f} MB, "
              f"{last['db_bytes'] / first['db_bytes']:.2f}x the first night's database")
        (digest, text), (after, after_text) = first["first_audit"], last["first_audit"]
        print(f"run 1's audit record after them: content_digest {'unchanged' if after == digest else 'CHANGED'} "
              f"({digest}), {'the same bytes' if after_text == text else 'OTHER BYTES'}")
