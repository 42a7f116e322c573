"""The engine's errors share one base, and no broad handler drops a failure unrecorded."""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
from pathlib import Path

import scanner.engine
from scanner.errors import EngineError, ScannerError

ENGINE = Path(scanner.engine.__file__).parent


def _engine_modules() -> list[str]:
    return [m.name for m in pkgutil.walk_packages(scanner.engine.__path__, "scanner.engine.")]


def test_every_engine_error_derives_from_engine_error() -> None:
    strays = []
    for name in _engine_modules():
        module = importlib.import_module(name)
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ != name or not issubclass(cls, BaseException):
                continue
            # user-facing errors (an invalid policy) are the scanner's own tree
            if not issubclass(cls, (EngineError, ScannerError)):
                strays.append(f"{name}.{cls.__name__}")
    assert strays == []


def test_no_broad_handler_drops_a_failure() -> None:
    """``except Exception`` only where the failure becomes a result or an engine error."""
    found = []
    for path in sorted(ENGINE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.ExceptHandler):
                continue
            broad = node.type is None or (isinstance(node.type, ast.Name) and node.type.id in ("Exception", "BaseException"))
            if broad and (node.name is None or not any(
                    isinstance(n, ast.Name) and n.id == node.name for stmt in node.body for n in ast.walk(stmt))):
                found.append(f"{path.relative_to(ENGINE)}:{node.lineno}")
    assert found == []
