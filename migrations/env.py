"""Alembic environment of the report database.

``scanner db upgrade`` builds the Alembic configuration in code (scanner.store.schema) and
hands over an open connection. For development, ``sqlalchemy.url`` or the
``SCANNER_DATABASE_URL`` environment variable names the database instead.
"""

from __future__ import annotations

import os

from alembic import context
from sqlalchemy import Connection

from scanner.store.connect import create_store_engine, parse_url
from scanner.store.models import VERSION_TABLE, Base, UTCDateTime

config = context.config
target_metadata = Base.metadata


def _render_item(kind: str, item: object, autogen_context: object) -> str | bool:
    """Render the models' custom types as plain SQLAlchemy types (revisions stay frozen)."""
    if kind == "type" and isinstance(item, UTCDateTime):
        return "sa.DateTime(timezone=True)"
    return False


def _configure(**options: object) -> None:
    context.configure(target_metadata=target_metadata, version_table=VERSION_TABLE,
                      compare_type=True, render_item=_render_item, **options)


def _url() -> str:
    url = config.get_main_option("sqlalchemy.url") or os.environ.get("SCANNER_DATABASE_URL")
    if not url:
        raise SystemExit("set sqlalchemy.url or SCANNER_DATABASE_URL")
    return url


def _run_online(connection: Connection) -> None:
    _configure(connection=connection, render_as_batch=connection.dialect.name == "sqlite")
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_offline() -> None:
    url = parse_url(_url())
    _configure(url=url, literal_binds=True, render_as_batch=url.get_backend_name() == "sqlite")
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        _run_online(connection)
        return
    engine = create_store_engine(parse_url(_url()))
    try:
        with engine.connect() as connection:
            _run_online(connection)
            connection.commit()
    finally:
        engine.dispose()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
