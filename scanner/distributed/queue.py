"""The Procrastinate application on the scan's PostgreSQL database: its connection, its schema
(applied once, beside the store's), and the names of the two tasks a run is made of."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Engine, text
from sqlalchemy.engine import URL, make_url

from scanner.errors import ConfigError

SHARD_TASK = "scanner.scan_shard"  # evaluate and write one shard of one source
ASSEMBLE_TASK = "scanner.assemble_run"  # finish a run whose shards are all done, render its reports
SHARD_ATTEMPTS = 3  # retries of a shard job before its source is marked failed in the run
QUEUE = "scanner"


def _procrastinate() -> Any:
    try:
        import procrastinate
    except ImportError:
        raise ConfigError("scans on many machines need Procrastinate: pip install 'scanner[distributed]'") from None
    return procrastinate


def conninfo(database_url: str | URL) -> str:
    """The libpq URI of a PostgreSQL ``database_url``; a clear error for any other database."""
    url = make_url(database_url) if isinstance(database_url, str) else database_url
    if url.get_backend_name() != "postgresql":
        raise ConfigError(f"scans on many machines share a PostgreSQL database; database_url is "
                          f"{url.get_backend_name()} (set database_url to postgresql+psycopg://...)")
    return url.set(drivername="postgresql").render_as_string(hide_password=False)


def make_app(database_url: str | URL) -> Any:
    """A Procrastinate ``App`` on the database (not opened). Its pool is small: a worker runs
    one job at a time."""
    procrastinate = _procrastinate()
    connector = procrastinate.PsycopgConnector(conninfo=conninfo(database_url), min_size=1, max_size=4)
    return procrastinate.App(connector=connector)


def ensure_schema(app: Any, engine: Engine) -> None:
    """Apply Procrastinate's schema unless the database has it (``app`` open synchronously)."""
    with engine.connect() as connection:
        found = connection.execute(text("SELECT to_regclass('procrastinate_jobs')")).scalar_one()
    if found is None:
        app.schema_manager.apply_schema()
