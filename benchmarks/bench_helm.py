"""Helm chart rendering cost: a directory source of N charts (copies of the test chart, with a
vendored subchart and a file:// library) read through the sources, against one ``helm template``
of one chart, and the per-chart cost.

    .venv/bin/python benchmarks/bench_helm.py [--charts 100] [--rounds 3] [--kustomize]

``--kustomize`` puts each chart in the ``charts/`` folder of a kustomization that inflates it
(``helmCharts``, with a name prefix over the output): rendered by ``kubectl kustomize
--enable-helm`` through the scan's helm wrapper, one process per overlay.

Prints the best round: seconds to read the N charts (rendered, with provenance), seconds per
chart, and one bare ``helm template`` run of the same chart for comparison (what helm itself costs).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from scanner.sources.directory import DirectorySource
from scanner.sources.provenance import ErrorRecord, Resource
from scanner.sources.tree import TreeOptions

CHART = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests", "sources", "data", "helm")


def make_kustomize_source(root: str, charts: int) -> None:
    for i in range(charts):
        folder = os.path.join(root, "apps", f"web{i:03d}")
        chart = os.path.join(folder, "charts", "web")
        shutil.copytree(os.path.join(CHART, "web"), chart)
        shutil.copytree(os.path.join(CHART, "lib"), os.path.join(chart, "charts", "labels"))
        with open(os.path.join(folder, "kustomization.yaml"), "w", encoding="utf-8") as f:
            f.write(f"namePrefix: p{i:03d}-\nhelmCharts:\n- name: web\n  releaseName: web{i:03d}\n")


def make_source(root: str, charts: int) -> None:
    shutil.copytree(os.path.join(CHART, "lib"), os.path.join(root, "lib"))
    for i in range(charts):
        folder = os.path.join(root, "apps", f"web{i:03d}")
        shutil.copytree(os.path.join(CHART, "web"), folder)
        with open(os.path.join(folder, "Chart.yaml"), encoding="utf-8") as f:
            text = f.read().replace("name: web\n", f"name: web{i:03d}\n").replace("file://../lib", "file://../../lib")
        with open(os.path.join(folder, "Chart.yaml"), "w", encoding="utf-8") as f:
            f.write(text)


def read_all(root: str) -> tuple[float, int, int]:
    start = time.perf_counter()
    items = list(DirectorySource("charts", root, TreeOptions()).iter_items())
    seconds = time.perf_counter() - start
    return (seconds, sum(isinstance(i, Resource) for i in items), sum(isinstance(i, ErrorRecord) for i in items))


def bare_helm(root: str) -> float:
    start = time.perf_counter()
    chart = os.path.join(root, "apps", "web000")
    chart = chart if os.path.isfile(os.path.join(chart, "Chart.yaml")) else os.path.join(chart, "charts", "web")
    subprocess.run(["helm", "template", "x", chart], check=True, capture_output=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--charts", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--kustomize", action="store_true", help="charts inflated by kustomizations' helmCharts")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as root:
        (make_kustomize_source if args.kustomize else make_source)(root, args.charts)
        subprocess.run(["helm", "dependency", "build", os.path.join(root, "apps", "web000")], capture_output=True,
                       check=False)  # a vendored copy of the library for the bare run (not for the scan)
        rounds = [read_all(root) for _ in range(args.rounds)]
        bare = min(bare_helm(root) for _ in range(args.rounds))
    seconds, resources, errors = min(rounds)
    what = "kustomizations inflating a chart" if args.kustomize else "charts"
    print(f"{args.charts} {what}: {seconds:.2f} s, {resources} resources, {errors} errors; "
          f"{seconds / args.charts * 1000:.0f} ms per chart (bare helm template: {bare * 1000:.0f} ms)")


if __name__ == "__main__":
    main()
