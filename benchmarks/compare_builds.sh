#!/usr/bin/env bash
# Side by side: `scanner scan` of a corpus by several builds, alternating, ROUNDS rounds; each
# round a first scan (new database and clone cache) and a rescan, as benchmarks/bench_scan.py
# configures them. Prints wall seconds and user/system CPU seconds (the machine is shared: quote
# ratios of the same round).
#
#   bash benchmarks/compare_builds.sh CORPUS ROUNDS VENV [VENV...]
#
# CORPUS is a folder made by ../shared/bench/make_corpus.py (repo/ and policies/); each VENV is a
# virtual environment with one build of the scanner installed (e.g. a worktree's .venv).
set -euo pipefail
corpus=$1; rounds=$2; shift 2
# each build byte-compiled first, as an installed package is: with PYTHONDONTWRITEBYTECODE set
# (as on some CI machines) an editable install would otherwise compile its modules on every run
for venv in "$@"; do
  "$venv/bin/python" - <<'PY'
import compileall, os, scanner
compileall.compile_dir(os.path.dirname(scanner.__file__), quiet=1)
PY
done
for round in $(seq "$rounds"); do
  for venv in "$@"; do
    work=$(mktemp -d)
    cat > "$work/scanner.yaml" <<CONFIG
database: {url: "sqlite:///$work/scan.db"}
policies: [{path: $corpus/policies}]
sources:
  - name: gitops
    git: {url: $corpus/repo}
    exclude: ["cluster-exports/**"]
  - name: cluster
    export: {path: $corpus/repo/cluster-exports}
reports: {out: $work/reports, formats: [html, json]}
scan: {cache_dir: $work/cache, fail_on: never}
CONFIG
    times=()
    for scan in first rescan; do
      /usr/bin/time -o "$work/time" -f "%e %U %S" "$venv/bin/scanner" scan --config "$work/scanner.yaml" -q \
        >/dev/null 2>&1 || true
      times+=("$scan $(tail -n 1 "$work/time")")
    done
    echo "round $round $venv: ${times[0]} | ${times[1]}"
    rm -rf "$work"
  done
done
