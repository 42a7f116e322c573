"""Render every overlay of a tree in process and with kubectl; compare the objects.

    .venv/bin/python benchmarks/check_kustomize_native.py /tmp/corpus10k/repo

Prints how many overlays rendered in process, how many fell back (and why), and every
overlay whose objects differ from ``kubectl kustomize``'s (as parsed data, in order).
Exits 1 when any overlay differs.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from scanner.sources.file_tree import DiskTree
from scanner.sources.kustomize.external import find_renderer, render_overlay
from scanner.sources.kustomize.native import render_native
from scanner.sources.kustomize.plan import plan
from scanner.sources.paths import PathFilter, walk_tree


def compare(root: str) -> dict:
    files = [f.relpath for f in walk_tree(root, PathFilter((), ()), collections.Counter())]
    overlays = list(plan(DiskTree(root), files).overlays)
    start = time.perf_counter()
    native = render_native(DiskTree(root), overlays)
    native_s = time.perf_counter() - start
    command = find_renderer("auto")
    if command is None:
        raise SystemExit("kubectl or kustomize is needed on PATH")
    rendered = [o for o in native.outputs]
    start = time.perf_counter()
    with ThreadPoolExecutor(4) as pool:
        external = {out.overlay: out for out in pool.map(
            lambda o: render_overlay(command, root, o.overlay, 300.0), rendered)}
    external_s = time.perf_counter() - start
    differ, order_only = [], []
    for out in rendered:
        theirs = external[out.overlay]
        if theirs.error is not None:
            differ.append({"overlay": out.overlay, "kubectl_error": theirs.error})
        elif (key := [json.dumps(d, sort_keys=True) for d in out.documents]) != \
                (other := [json.dumps(d, sort_keys=True) for d in theirs.documents]):  # 1 is not 1.0
            if sorted(key) == sorted(other):
                order_only.append(out.overlay)
            else:
                differ.append({"overlay": out.overlay, "native": out.documents,
                               "kubectl": theirs.documents})
    reasons = collections.Counter(r.split(": ", 1)[-1] for r in native.fallback.values())
    return {"overlays": len(overlays), "native": len(rendered),
            "fallback": len(native.fallback), "fallback_reasons": dict(reasons.most_common()),
            "objects_compared": sum(len(o.documents) for o in rendered),
            "differ": len(differ), "differ_in_order_only": len(order_only),
            "native_seconds": round(native_s, 2), "kubectl_seconds": round(external_s, 2),
            "first_differences": differ[:3], "order_only": order_only[:5]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("root")
    report = compare(ap.parse_args().root)
    print(json.dumps(report, indent=2, default=str))
    sys.exit(1 if report["differ"] or report["differ_in_order_only"] else 0)


if __name__ == "__main__":
    main()
