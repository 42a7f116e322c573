"""The distributed tests run on the PostgreSQL server named by SCANNER_TEST_POSTGRES_URL (marked
``postgres``: deselected without it, by the suite's conftest)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from scanner.store import Store
from tests.store.conftest import fresh_schema


@pytest.fixture
def schemas() -> Iterator[tuple[str, str]]:
    """Two fresh PostgreSQL schemas at the store's head: one for the scan, one for the queue."""
    with fresh_schema("scanner_dist") as scan, fresh_schema("scanner_dist") as queue:
        for url in (scan, queue):
            Store(url, check_schema=False).upgrade()
        yield scan, queue
