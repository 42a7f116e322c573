"""What the benchmarks compare against: parsing a corpus with PyYAML's C loader in one process,
and the seeded corpora of ``../shared/bench/make_corpus.py``."""

from __future__ import annotations

import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
MAKE_CORPUS = ROOT.parent / "shared" / "bench" / "make_corpus.py"

# run as ``python -c PARSE_ONLY FOLDER``: prints the number of documents parsed
PARSE_ONLY = r"""
import os, sys, yaml
n = 0
for dp, dn, fn in os.walk(sys.argv[1]):
    dn[:] = sorted(d for d in dn if not d.startswith("."))
    for f in sorted(fn):
        if f.endswith((".yaml", ".yml", ".json")):
            try:
                with open(os.path.join(dp, f), "rb") as fh:
                    n += sum(1 for _ in yaml.load_all(fh, Loader=yaml.CSafeLoader))
            except yaml.YAMLError:
                pass
print(n)
"""


def ensure_corpus(out: pathlib.Path, resources: int, seed: int = 1) -> pathlib.Path:
    """Generate the corpus into ``out`` unless it is already there."""
    if not (out / "corpus.json").exists():
        subprocess.run([sys.executable, str(MAKE_CORPUS), "--resources", str(resources), "--seed", str(seed),
                        "--out", str(out)], check=True, stdout=subprocess.DEVNULL)
    return out
