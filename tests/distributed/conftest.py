"""The distributed tests run on the PostgreSQL server named by SCANNER_TEST_POSTGRES_URL and
are deselected without it, as the store suite's PostgreSQL tests are."""

from __future__ import annotations

import pytest

from tests.store.conftest import POSTGRES_URL


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if POSTGRES_URL:
        return
    deselected = [item for item in items if item.get_closest_marker("postgres")]
    if deselected:
        config.hook.pytest_deselected(items=deselected)
        items[:] = [item for item in items if not item.get_closest_marker("postgres")]
