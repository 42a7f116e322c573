"""The compiled modules (``setup.py``, ``scanner.compiled``): the build compiled them, they give
what their sources give, and a source changed since the build is what runs."""

from __future__ import annotations

import hashlib
import json
import os
import pathlib
import subprocess
import sys

import pytest

import scanner
from scanner import compiled

from .programs import missing

ROOT = pathlib.Path(__file__).resolve().parent.parent
SCANNER = [sys.executable, "-c", "from scanner.cli import run; run()"]


def _need_compiled() -> None:
    """Skip (in CI: fail) where the build compiled nothing, or the sources run instead."""
    if scanner.COMPILED:
        return
    reason = ("the compiled modules are not in use (no C compiler at install, SCANNER_PURE_PYTHON set, "
              "or a compiled source edited since: `pip install -e .` builds them again)")
    if os.environ.get(compiled.PURE_PYTHON):
        pytest.skip(reason)
    missing(reason)


def _loaded_from(module: str, env: dict[str, str]) -> str:
    code = f"import importlib; print(importlib.import_module({module!r}).__file__)"
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          check=True).stdout.strip()


def test_the_build_compiled_every_listed_module() -> None:
    _need_compiled()
    built = compiled.built_modules()
    assert "scanner.yamldoc.block" in built and "scanner.engine.pattern" in built
    for module in built:
        assert _loaded_from(module, dict(os.environ)).endswith(".so"), module


def test_pure_python_in_the_environment_loads_every_source() -> None:
    _need_compiled()
    env = {**os.environ, compiled.PURE_PYTHON: "1"}
    for module in compiled.built_modules():
        assert _loaded_from(module, env).endswith(".py"), module


def test_a_source_that_differs_from_the_one_compiled_counts_as_changed() -> None:
    sources = {"scanner.engine.pattern": ROOT / "scanner" / "engine" / "pattern.py",
               "scanner.yamldoc.block": ROOT / "scanner" / "yamldoc" / "block.py"}
    built = {name: hashlib.sha256(path.read_bytes()).hexdigest() for name, path in sources.items()}
    assert not compiled.sources_changed(built)
    assert compiled.sources_changed({**built, "scanner.yamldoc.block": "0" * 64})
    assert compiled.sources_changed({**built, "scanner.no_such_module": "0" * 64})


def _outputs(env: dict[str, str]) -> list[object]:
    """What the engine and the readers give on the project's examples and test suites."""
    runs = [
        [*SCANNER, "apply", "examples/policies", "-r", "examples/gitops", "-r", "examples/cluster-export.yaml",
         "-o", "json"],
        [*SCANNER, "test", "tests/cases", "--output", "json"],
    ]
    outputs: list[object] = []
    for argv in runs:
        proc = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
        outputs.append((proc.returncode, json.loads(proc.stdout), proc.stderr))
    return outputs


def test_compiled_modules_give_what_their_sources_give() -> None:
    _need_compiled()
    compiled_outputs = _outputs(dict(os.environ))
    source_outputs = _outputs({**os.environ, compiled.PURE_PYTHON: "1"})
    assert compiled_outputs == source_outputs
    assert all(output[1] for output in compiled_outputs)  # (each run gave results)
