"""Which of the package's modules run compiled.

The build (``setup.py``) compiles the modules a scan spends most of its time in with mypyc,
from the same sources, and records each source's digest in ``compiled.json``. A compiled
module is loaded only while every compiled source is still the one it was built from: after
an edit (an editable install not rebuilt) all of them are loaded from their sources, since
compiled modules call each other directly, past the import system. ``SCANNER_PURE_PYTHON=1``
in the environment loads the sources too (and, at build time, compiles nothing).
"""

from __future__ import annotations

import hashlib
import importlib.abc
import importlib.machinery
import importlib.util
import json
import os
import sys
from collections.abc import Sequence
from types import ModuleType

PURE_PYTHON = "SCANNER_PURE_PYTHON"
_PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MANIFEST = os.path.join(_PACKAGE_ROOT, "scanner", "compiled.json")


def built_modules() -> dict[str, str]:
    """Module name -> digest of the source it was compiled from (none without a build)."""
    try:
        with open(MANIFEST, encoding="utf-8") as f:
            built = json.load(f)
    except (OSError, ValueError):
        return {}
    return built if isinstance(built, dict) else {}


def _source(name: str) -> str:
    return os.path.join(_PACKAGE_ROOT, *name.split(".")) + ".py"


def sources_changed(built: dict[str, str]) -> bool:
    """Whether any compiled module's source differs from the one it was built from."""
    for name, digest in built.items():
        try:
            with open(_source(name), "rb") as f:
                if hashlib.sha256(f.read()).hexdigest() != digest:
                    return True
        except OSError:
            return True
    return False


class _SourcesFirst(importlib.abc.MetaPathFinder):
    """Finds ``names`` as their ``.py`` sources, never as the extensions beside them."""

    def __init__(self, names: Sequence[str]) -> None:
        self.names = frozenset(names)

    def find_spec(self, fullname: str, path: Sequence[str] | None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        if fullname not in self.names:
            return None
        source = _source(fullname)
        return importlib.util.spec_from_file_location(fullname, source) if os.path.isfile(source) else None


def choose() -> bool:
    """Before any compiled module is imported: have the sources loaded where they must be.
    Whether the compiled modules are used."""
    built = built_modules()
    if not built:
        return False
    if os.environ.get(PURE_PYTHON) or sources_changed(built):
        sys.meta_path.insert(0, _SourcesFirst(list(built)))
        return False
    return all(_has_extension(name) for name in built)  # (a build without a C compiler made none)


def _has_extension(name: str) -> bool:
    stem = _source(name)[:-3]
    return any(os.path.isfile(stem + suffix) for suffix in importlib.machinery.EXTENSION_SUFFIXES)
