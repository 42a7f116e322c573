"""The import rules of the design: the engine is pure, siblings do not import each other."""

from __future__ import annotations

import ast
import pathlib
import subprocess
import sys

import pytest

PACKAGE = pathlib.Path(__file__).resolve().parents[1] / "scanner"

# module prefix -> scanner modules it must not import
FORBIDDEN = {
    "scanner.engine": ("scanner.",),
    "scanner.errors": ("scanner.",),
    "scanner.store": ("scanner.sources", "scanner.report", "scanner.scan", "scanner.cli",
                      "scanner.policies", "scanner.schedule", "scanner.commands"),
    "scanner.report": ("scanner.store", "scanner.sources", "scanner.scan", "scanner.cli",
                       "scanner.schedule", "scanner.commands"),
    "scanner.sources": ("scanner.store", "scanner.report", "scanner.scan", "scanner.cli",
                        "scanner.policies", "scanner.schedule", "scanner.commands"),
    "scanner.policies": ("scanner.store", "scanner.report", "scanner.sources", "scanner.scan",
                         "scanner.cli", "scanner.schedule", "scanner.commands"),
    "scanner.scan": ("scanner.cli", "scanner.schedule", "scanner.commands"),
}
ALLOWED_IN_ENGINE = ("scanner.engine", "scanner.errors")
# the engine may use only the standard library and these third-party packages
ENGINE_THIRD_PARTY = {"jmespath", "cel_expr_python", "cryptography", "re2"}
FORBIDDEN_STDLIB_IN_ENGINE = {"os", "pathlib", "subprocess", "socket", "sqlite3", "shutil",
                              "tempfile", "io", "glob", "urllib", "http", "logging"}


def _modules() -> list[tuple[str, pathlib.Path]]:
    out = []
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(PACKAGE.parent).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts.pop()
        out.append((".".join(parts), path))
    return out


def _imports(path: pathlib.Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


@pytest.mark.parametrize(("module", "path"), _modules(), ids=[m for m, _ in _modules()])
def test_layers_imports_follow_the_design(module: str, path: pathlib.Path) -> None:
    imported = _imports(path)
    for prefix, banned in FORBIDDEN.items():
        if module == prefix or module.startswith(prefix + "."):
            for name in imported:
                if prefix == "scanner.engine" and name.startswith("scanner."):
                    assert name.startswith(ALLOWED_IN_ENGINE), f"{module} imports {name}"
                elif prefix != "scanner.engine":
                    assert not name.startswith(banned), f"{module} imports {name}"
    if module.startswith("scanner.engine"):
        for name in imported:
            top = name.split(".")[0]
            assert top not in FORBIDDEN_STDLIB_IN_ENGINE, f"{module} imports {name}"
            if top not in ("scanner", "__future__") and top not in ENGINE_THIRD_PARTY:
                import sys

                assert top in sys.stdlib_module_names, f"{module} imports third-party {name}"


def test_the_store_writes_and_reads_with_core_alone() -> None:
    """A scan and its reports load SQLAlchemy Core only: the typed models (and the ORM, several
    times Core's import cost) are for the migrations and for code that maps rows to objects."""
    program = ("import sys, scanner.scan, scanner.report_builder, scanner.store.store, scanner.store.writer; "
               "print(sorted(m for m in sys.modules if m.startswith(('sqlalchemy.orm', 'scanner.store.models'))))")
    out = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, check=True, timeout=120)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr
