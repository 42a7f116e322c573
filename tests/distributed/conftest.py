"""The distributed tests run on the PostgreSQL server named by SCANNER_TEST_POSTGRES_URL (marked
``postgres``: deselected without it, by the suite's conftest)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
from sqlalchemy import create_engine, text

from scanner.store import Store
from tests.store.conftest import POSTGRES_URL, with_search_path


@pytest.fixture
def schemas() -> Iterator[tuple[str, str]]:
    """Two fresh PostgreSQL schemas at the store's head: one for the scan, one for the queue."""
    names = [f"scanner_dist_{uuid.uuid4().hex[:10]}" for _ in range(2)]
    admin = create_engine(POSTGRES_URL)
    with admin.begin() as connection:
        for name in names:
            connection.execute(text(f'CREATE SCHEMA "{name}"'))
    urls = [with_search_path(POSTGRES_URL, name) for name in names]
    for url in urls:
        Store(url, check_schema=False).upgrade()
    try:
        yield urls[0], urls[1]
    finally:
        with admin.begin() as connection:
            for name in names:
                connection.execute(text(f'DROP SCHEMA "{name}" CASCADE'))
        admin.dispose()
