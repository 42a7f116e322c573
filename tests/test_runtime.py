"""The garbage-collector settings of the command line and the scan's workers."""

from __future__ import annotations

import contextlib
import gc
import importlib
import pathlib
import sys
from collections.abc import Iterator

import pytest

from scanner.scan.processes import GC_THRESHOLD, collect_less_often, importing


@pytest.fixture
def thresholds() -> Iterator[None]:
    saved = gc.get_threshold()
    yield
    gc.set_threshold(*saved)


@pytest.mark.parametrize(("before", "after"), [
    ((700, 10, 10), (GC_THRESHOLD, 10, 10)),  # CPython's default: raised, older generations kept
    ((GC_THRESHOLD * 2, 5, 7), (GC_THRESHOLD * 2, 5, 7)),  # already higher: left alone
])
def test_collect_less_often(thresholds: None, before: tuple[int, int, int], after: tuple[int, int, int]) -> None:
    gc.set_threshold(*before)
    collect_less_often()
    assert gc.get_threshold() == after


@pytest.fixture
def collector() -> Iterator[None]:
    enabled = gc.isenabled()
    yield
    gc.unfreeze()
    (gc.enable if enabled else gc.disable)()


@pytest.mark.parametrize("enabled", [True, False])
@pytest.mark.parametrize("fails", [False, True])
@pytest.mark.parametrize("imports", [True, False])
def test_importing_pauses_collection_then_freezes_what_was_loaded(
        collector: None, tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch,
        enabled: bool, fails: bool, imports: bool) -> None:
    name = f"runtime_probe_{tmp_path.name}"
    (tmp_path / f"{name}.py").write_text("VALUE = [1]\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, name, raising=False)
    (gc.enable if enabled else gc.disable)()
    gc.unfreeze()
    with pytest.raises(ValueError) if fails else contextlib.nullcontext(), importing():
        assert not gc.isenabled()
        if imports:
            importlib.import_module(name)
        if fails:
            raise ValueError
    assert gc.isenabled() is enabled  # restored, even after an error
    # frozen only when modules were loaded: a scheduler's later scans leave nothing frozen
    assert (gc.get_freeze_count() > 0) is imports
