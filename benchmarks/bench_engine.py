"""Engine benchmark: ``scanner apply`` of the corpus policy set over a generated corpus,
against parsing the same files alone with PyYAML's C loader, side by side in one run.

    python benchmarks/bench_engine.py --resources 10000 [--corpus DIR] [--policies DIR]

The corpus comes from ``../shared/bench/make_corpus.py`` (generated into --corpus when that
folder has no corpus.json yet). ``--policies`` overrides the policy set (e.g. the CEL
variants). Prints the times, resources per second and the ratio.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time

from baseline import PARSE_ONLY, ROOT, ensure_corpus


def timed(cmd: list[str], stdout: int | None = subprocess.DEVNULL) -> tuple[float, bytes]:
    start = time.perf_counter()
    proc = subprocess.run(cmd, stdout=subprocess.PIPE if stdout is None else stdout,
                          stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - start, proc.stdout or b""


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--resources", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--corpus", type=pathlib.Path, default=None)
    ap.add_argument("--policies", type=pathlib.Path, default=None)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--cel-comparison", action="store_true",
                    help="time the CEL policies of the conformance corpus against their JMESPath/pattern "
                         "versions over the same resources")
    args = ap.parse_args(argv)
    corpus = args.corpus or pathlib.Path(tempfile.gettempdir()) / f"scanner-corpus-{args.resources}-{args.seed}"
    ensure_corpus(corpus, args.resources, args.seed)
    repo = corpus / "repo"
    policies = args.policies or corpus / "policies"
    expected = json.loads((corpus / "corpus.json").read_text())["resources"]
    scanner = str(pathlib.Path(sys.executable).with_name("scanner"))
    if args.cel_comparison:
        return cel_comparison(scanner, repo, expected, args.repeat)
    best_parse = best_apply = float("inf")
    results = 0
    for _ in range(args.repeat):
        parse, _ = timed([sys.executable, "-c", PARSE_ONLY, str(repo)])
        apply, out = timed([scanner, "apply", str(policies), "--resource", str(repo), "-o", "json"], None)
        best_parse, best_apply = min(best_parse, parse), min(best_apply, apply)
        results = len(json.loads(out or b"[]"))
    print(f"corpus: {corpus} ({expected} resources), policies: {policies}")
    print(f"parse only (PyYAML C loader, one process): {best_parse:7.2f} s  {expected / best_parse:8.0f} resources/s")
    print(f"scanner apply (load + evaluate + output):  {best_apply:7.2f} s  {expected / best_apply:8.0f} resources/s"
          f"  ({results} rule results)")
    print(f"ratio apply / parse: {best_apply / best_parse:.2f}x (target <= 2.0x)")
    return 0


def _policy_pairs(dest: pathlib.Path) -> tuple[pathlib.Path, pathlib.Path, int]:
    """Copy the ``*-cel`` policies of the conformance corpus and their non-CEL twins into two folders."""
    suites = ROOT.parent / "shared" / "conformance" / "kyverno-policies"
    cel_dir, classic_dir = dest / "cel", dest / "classic"
    for d in (cel_dir, classic_dir):
        d.mkdir(parents=True, exist_ok=True)
    pairs = 0
    for cel_suite in sorted(suites.glob("*-cel__*")):
        twin = suites / cel_suite.name.replace("-cel__", "__", 1)
        cel_files, twin_files = sorted(cel_suite.glob("_parent/*.yaml")), sorted(twin.glob("_parent/*.yaml"))
        if not twin.is_dir() or not cel_files or not twin_files:
            continue
        pairs += 1
        for i, f in enumerate(cel_files):
            (cel_dir / f"{cel_suite.name}-{i}.yaml").write_bytes(f.read_bytes())
        for i, f in enumerate(twin_files):
            (classic_dir / f"{twin.name}-{i}.yaml").write_bytes(f.read_bytes())
    return cel_dir, classic_dir, pairs


def cel_comparison(scanner: str, repo: pathlib.Path, expected: int, repeat: int) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        cel_dir, classic_dir, pairs = _policy_pairs(pathlib.Path(tmp))
        times = {}
        for label, folder in (("pattern/JMESPath", classic_dir), ("CEL", cel_dir)):
            best = float("inf")
            results = 0
            for _ in range(repeat):
                took, out = timed([scanner, "apply", str(folder), "--resource", str(repo), "-o", "json"], None)
                best = min(best, took)
                results = len(json.loads(out or b"[]"))
            times[label] = best
            print(f"{label:17} policies ({pairs} pairs): {best:7.2f} s  {expected / best:8.0f} resources/s"
                  f"  ({results} rule results)")
        print(f"ratio CEL / pattern: {times['CEL'] / times['pattern/JMESPath']:.2f}x")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    sys.exit(main())
