"""The build: the modules a scan spends most of its time in, compiled with mypyc.

mypyc compiles each listed module from its own source (its type hints decide how) to a C
extension beside it that runs about twice as fast; ``scanner/compiled.json`` records the
digest of every source compiled, and ``scanner.compiled`` loads the sources instead wherever
they changed since. ``SCANNER_PURE_PYTHON=1`` builds no extension; so does a machine without
a C compiler (with a warning): the package then runs as plain Python, with the same results.
"""

from __future__ import annotations

import hashlib
import json
import os
import pathlib

from setuptools import setup

COMPILED = [
    "scanner/yamldoc/block.py",
    "scanner/yamldoc/scalars.py",
    "scanner/yamldoc/lists.py",
    "scanner/engine/pattern.py",
    "scanner/engine/evaluate.py",
    "scanner/engine/context.py",
    "scanner/engine/condition_operators.py",
    "scanner/engine/conditions.py",
    "scanner/engine/validate.py",
    "scanner/engine/variables.py",
    "scanner/engine/foreach.py",
    "scanner/engine/match.py",
    "scanner/engine/operators.py",
    "scanner/engine/wildcard.py",
    "scanner/engine/anchor.py",
    "scanner/engine/budget.py",
    "scanner/engine/metadata_expansion.py",
    "scanner/engine/normalize.py",
    "scanner/engine/jmespath/compiler.py",
    "scanner/engine/podsecurity/controls.py",
    "scanner/engine/podsecurity/levels.py",
    "scanner/engine/podsecurity/pod.py",
    "scanner/engine/podsecurity/restricted.py",
]
MANIFEST = pathlib.Path("scanner/compiled.json")


def ext_modules() -> list:
    if not pathlib.Path("scanner").is_dir():
        return []
    # what an earlier build left in the sources (an editable install builds them in place)
    MANIFEST.unlink(missing_ok=True)
    for path in COMPILED:
        for built in pathlib.Path(path).parent.glob(pathlib.Path(path).stem + ".*.so"):
            built.unlink()
    if os.environ.get("SCANNER_PURE_PYTHON"):
        return []
    from mypyc.build import mypycify

    modules = mypycify(COMPILED, opt_level="3", group_name="scanner_compiled")
    for module in modules:
        module.optional = True  # (no C compiler: a warning, and the sources run)
    MANIFEST.write_text(json.dumps({
        path[:-3].replace("/", "."): hashlib.sha256(pathlib.Path(path).read_bytes()).hexdigest()
        for path in COMPILED}, indent=1, sort_keys=True) + "\n")
    return modules


setup(ext_modules=ext_modules())
