"""Garbage-collector settings for batch work (the command line and the scan's workers)."""

from __future__ import annotations

import gc
import sys
from collections.abc import Iterator
from contextlib import contextmanager

# Parsing and evaluating allocate millions of short-lived, acyclic containers (documents,
# results); CPython's default threshold of 700 runs a collection every few hundred of them,
# about a tenth of a scan's time. The threshold counts the containers that are still alive,
# which in a scan are mostly parsed documents waiting to be evaluated and results waiting to
# be written: each collection walks them again, and at 10,000 a 2,000-resource scan still
# spent about 0.1 s of its 3 to 4 s of CPU time in collections. Cyclic garbage, the only
# kind left for the collector, is rare in this work.
GC_THRESHOLD = 100_000


def collect_less_often() -> None:
    """Run the cyclic garbage collector once per ``GC_THRESHOLD`` new containers."""
    gen0, *older = gc.get_threshold()
    if gen0 < GC_THRESHOLD:
        gc.set_threshold(GC_THRESHOLD, *older)


@contextmanager
def importing() -> Iterator[None]:
    """Import large modules without collections: an import builds long-lived objects (which
    a collection walks again and again before they settle in the oldest generation) and
    little garbage. If modules were loaded, every object is frozen afterwards, so later
    collections skip them; only then: in a long-lived process (the scheduler) the objects
    of a later scan must stay collectable."""
    enabled, loaded = gc.isenabled(), len(sys.modules)
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
        if len(sys.modules) > loaded:
            gc.freeze()
