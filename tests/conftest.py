"""The whole suite: tests marked ``postgres`` (or using a ``postgres_url`` fixture) run against the server named by
SCANNER_TEST_POSTGRES_URL, and are deselected (and counted in the summary) without it."""

from __future__ import annotations

import os

import pytest

POSTGRES_ENV = "SCANNER_TEST_POSTGRES_URL"
DESELECT_REASON = f"{POSTGRES_ENV} is not set: PostgreSQL tests deselected"
_DESELECTED = pytest.StashKey[int]()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if os.environ.get(POSTGRES_ENV):
        return
    deselected = [item for item in items if _needs_postgres(item)]
    if deselected:
        config.hook.pytest_deselected(items=deselected)
        items[:] = [item for item in items if not _needs_postgres(item)]
        config.stash[_DESELECTED] = len(deselected)


def _needs_postgres(item: pytest.Item) -> bool:
    """Marked ``postgres``, or asking for the ``postgres_url`` fixture."""
    return item.get_closest_marker("postgres") is not None or "postgres_url" in getattr(item, "fixturenames", ())


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    count = terminalreporter.config.stash.get(_DESELECTED, 0)
    if count:
        terminalreporter.write_line(f"{count} tests: {DESELECT_REASON}")
