"""One store suite for every backend: SQLite in tmp_path and the PostgreSQL server named by
SCANNER_TEST_POSTGRES_URL, each test in its own schema built by the migrations."""

from __future__ import annotations

import os
import pathlib
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from urllib.parse import quote

import pytest
from sqlalchemy import create_engine, text

from scanner.store import Store

POSTGRES_ENV = "SCANNER_TEST_POSTGRES_URL"
POSTGRES_URL = os.environ.get(POSTGRES_ENV, "")

BACKENDS = [
    pytest.param("sqlite", id="sqlite"),
    pytest.param("postgres", id="postgres", marks=pytest.mark.postgres),
]

T0 = datetime(2024, 3, 1, 2, 0, tzinfo=UTC)


def day(n: int, hours: int = 0) -> datetime:
    return T0 + timedelta(days=n, hours=hours)


def with_search_path(url: str, schema: str) -> str:
    separator = "&" if "?" in url else "?"
    return f"{url}{separator}options={quote(f'-csearch_path={schema}')}"


@pytest.fixture(params=BACKENDS)
def database_url(request: pytest.FixtureRequest, tmp_path: object) -> Iterator[str]:
    """An empty database: an SQLite file, or a fresh PostgreSQL schema dropped afterwards."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path}/scanner.db"
        return
    with fresh_schema("scanner_test") as url:
        yield url


@contextmanager
def fresh_schema(prefix: str) -> Iterator[str]:
    """The URL of a new, empty schema on the test server, dropped afterwards."""
    schema = f"{prefix}_{uuid.uuid4().hex[:12]}"
    admin = create_engine(POSTGRES_URL, pool_pre_ping=True)  # (a test may restart the server meanwhile)
    with admin.begin() as connection:
        connection.execute(text(f'CREATE SCHEMA "{schema}"'))
    try:
        yield with_search_path(POSTGRES_URL, schema)
    finally:
        with admin.begin() as connection:
            connection.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
        admin.dispose()


@pytest.fixture
def store(database_url: str) -> Iterator[Store]:
    """A store at the schema head (built by the migrations)."""
    Store(database_url, check_schema=False).upgrade()
    opened = Store(database_url, heartbeat_interval=0.2, stale_after=timedelta(seconds=30),
                   batch_size=7)
    try:
        yield opened
    finally:
        opened.close()


@pytest.fixture(params=BACKENDS)
def databases(request: pytest.FixtureRequest, tmp_path: pathlib.Path) -> Iterator[tuple[str, str]]:
    """Two empty databases of one backend: the one scans reuse results in, and one for scratch scans."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path}/reuse.db", f"sqlite:///{tmp_path}/scratch.db"
        return
    schemas = [f"scanner_test_{uuid.uuid4().hex[:12]}" for _ in range(2)]
    admin = create_engine(POSTGRES_URL)
    with admin.begin() as connection:
        for schema in schemas:
            connection.execute(text(f'CREATE SCHEMA "{schema}"'))
    for schema in schemas:
        Store(with_search_path(POSTGRES_URL, schema), check_schema=False).upgrade()
    try:
        yield with_search_path(POSTGRES_URL, schemas[0]), with_search_path(POSTGRES_URL, schemas[1])
    finally:
        with admin.begin() as connection:
            for schema in schemas:
                connection.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
        admin.dispose()
