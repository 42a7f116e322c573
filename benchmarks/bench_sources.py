"""Loading a generated corpus through the sources vs parsing its files alone with PyYAML's C loader.

    python3 ../shared/bench/make_corpus.py --resources 10000 --seed 1 --out /tmp/corpus10k
    .venv/bin/python benchmarks/bench_sources.py /tmp/corpus10k [--rounds 2]

Loading = GitSource on the corpus repository by local path (fresh clone into an empty
cache), walk, parse, Kustomize render. Baseline = every .yaml/.yml file of the same tree
read and parsed with ``yaml.load_all(..., Loader=yaml.CSafeLoader)``. Both run in this
process, alternately, and the best round of each is compared. Also checked: with
``kustomize: off`` the resources found equal corpus.json's count, every expected resource
is found (by file and document/List item), and every planted invalid file is reported
exactly once, with a line; with ``kustomize: auto`` every expected resource of a
Kustomize base is found in the rendering of its overlays.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import sys
import tempfile
import time

import yaml

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from scanner.sources.git import GitOptions, GitSource
from scanner.sources.provenance import ErrorRecord, Resource
from scanner.sources.tree import TreeOptions

INVALID = re.compile(r"(-old|\.bak|-wip|-copy)\.yaml$")


def baseline(repo: str) -> dict:
    start = time.perf_counter()
    n_files = n_docs = n_err = 0
    for dirpath, dirnames, filenames in os.walk(repo):
        dirnames[:] = sorted(d for d in dirnames if d != ".git")
        for name in sorted(filenames):
            if not name.endswith((".yaml", ".yml")):
                continue
            with open(os.path.join(dirpath, name), "rb") as f:
                data = f.read()
            n_files += 1
            try:
                n_docs += sum(1 for d in yaml.load_all(data, Loader=yaml.CSafeLoader) if d)
            except yaml.YAMLError:
                n_err += 1
    return {"seconds": time.perf_counter() - start, "files": n_files, "documents": n_docs,
            "parse_errors": n_err}


def load(repo: str, mode: str) -> tuple[dict, list[Resource], list[ErrorRecord]]:
    with tempfile.TemporaryDirectory(prefix="bench-cache-") as cache:
        start = time.perf_counter()
        source = GitSource("corpus", GitOptions(repo, None, cache_dir=cache,
                                                tree=TreeOptions(kustomize=mode)))
        resources, errors = [], []
        for item in source.iter_items():
            (resources if isinstance(item, Resource) else errors).append(item)
        seconds = time.perf_counter() - start
    return ({"seconds": seconds, "resources": len(resources), "errors": len(errors),
             "skipped": dict(source.stats.skipped), "files": source.stats.files,
             "commit": source.stats.commit.sha if source.stats.commit else None},
            resources, errors)


def check(corpus: str, off: list[Resource], auto: list[Resource],
          errors: list[ErrorRecord]) -> dict:
    with open(os.path.join(corpus, "expected.jsonl"), encoding="utf-8") as f:
        expected = [json.loads(line) for line in f]
    with open(os.path.join(corpus, "corpus.json"), encoding="utf-8") as f:
        info = json.load(f)
    raw = {(r.provenance.path, r.provenance.item if r.provenance.item is not None
            else r.provenance.document, r.identity.kind, r.identity.name) for r in off}
    missing = [e for e in expected
               if (e["file"], e.get("item", e.get("doc")), e["kind"], e["name"]) not in raw]
    rendered = collections.Counter()
    for r in auto:
        if r.provenance.rendered_by:
            app = (r.provenance.overlay or r.provenance.path).split("/overlays/")[0]
            rendered[(app, r.identity.kind, r.identity.name)] += 1
    base = [e for e in expected if "/base/" in e["file"]]
    base_missing = [e for e in base
                    if (e["file"].split("/base/")[0], e["kind"], e["name"]) not in rendered]
    reports = collections.Counter(e.location.path for e in errors)
    lines = {e.location.path: e.location.line for e in errors}
    repo_files = [os.path.relpath(os.path.join(d, f), os.path.join(corpus, "repo"))
                  for d, _, fs in os.walk(os.path.join(corpus, "repo")) if ".git" not in d
                  for f in fs]
    planted = sorted(f for f in repo_files if INVALID.search(f))
    return {
        "corpus_resources": info["resources"], "found_kustomize_off": len(off),
        "expected_missing_kustomize_off": len(missing),
        "base_resources": len(base), "base_resources_missing_from_renders": len(base_missing),
        "rendered_resources": sum(rendered.values()),
        "planted_invalid_files": len(planted), "corpus_json_invalid": info["files"]["invalid"],
        "planted_reported_exactly_once_with_line": sum(
            1 for f in planted if reports[f] == 1 and lines[f] is not None),
        "errors_on_other_files": sorted(set(reports) - set(planted)),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("corpus")
    ap.add_argument("--rounds", type=int, default=2)
    a = ap.parse_args()
    repo = os.path.join(a.corpus, "repo")
    off, off_resources, off_errors = load(repo, "off")
    rounds = []
    for _ in range(a.rounds):
        base = baseline(repo)
        auto, auto_resources, auto_errors = load(repo, "auto")
        rounds.append({"baseline": base, "load_auto": auto})
    best_base = min(r["baseline"]["seconds"] for r in rounds)
    best_load = min(r["load_auto"]["seconds"] for r in rounds)
    report = {
        "rounds": rounds, "load_kustomize_off": off,
        "best_baseline_s": round(best_base, 2), "best_load_s": round(best_load, 2),
        "ratio": round(best_load / best_base, 2),
        "checks": check(a.corpus, off_resources, auto_resources, off_errors),
        "auto_errors_by_kind": dict(collections.Counter(e.kind for e in auto_errors)),
    }
    print(json.dumps(report, indent=2, default=str))


if __name__ == "__main__":
    main()
