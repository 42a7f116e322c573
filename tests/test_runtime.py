"""The garbage-collector settings of the command line and the scan's workers."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

import pytest

from scanner.runtime import GC_THRESHOLD, collect_less_often, importing


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
def test_importing_pauses_collection_then_freezes(collector: None, enabled: bool, fails: bool) -> None:
    (gc.enable if enabled else gc.disable)()
    gc.unfreeze()
    with pytest.raises(ValueError) if fails else contextlib.nullcontext(), importing():
        assert not gc.isenabled()
        kept = [object()]
        if fails:
            raise ValueError
    assert gc.isenabled() is enabled  # restored, even after an error
    assert gc.get_freeze_count() > 0 and kept
