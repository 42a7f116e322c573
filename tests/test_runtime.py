"""The garbage-collector settings of the command line and the scan's workers."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from scanner.runtime import GC_THRESHOLD, collect_less_often


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
