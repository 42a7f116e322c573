"""`scanner db`: create, upgrade, inspect, downgrade and prune the report database."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from scanner.errors import StoreError
from scanner.store import Store
from scanner.store.connect import describe, missing_sqlite_file, parse_url

DATABASE_HELP = ("Database URL, e.g. sqlite:///scanner.db or postgresql+psycopg://user@host/db "
                 "(default: $SCANNER_DATABASE_URL, then the config's database.url).")


def database_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """The ``--database`` and ``--config`` options every database command takes."""
    command = click.option("--config", "config_path", type=click.Path(dir_okay=False),
                           help="Config file whose database.url to use.")(command)
    return click.option("--database", "database_url", envvar="SCANNER_DATABASE_URL",
                        metavar="URL", help=DATABASE_HELP)(command)


def resolve_database_url(database_url: str | None, config_path: str | None) -> str:
    if database_url:
        return database_url
    if config_path:
        from scanner.config import load_config

        return load_config(config_path).database_url
    raise click.UsageError("no database given: pass --database URL, set SCANNER_DATABASE_URL "
                           "or pass --config FILE")


def open_store(database_url: str | None, config_path: str | None, *, create: bool = False,
               write: bool = False, **options: Any) -> Store:
    """The store of the given database, opened read-only unless ``write`` (so that reading
    works on a full disk and in a read-only folder); an SQLite file that does not exist is
    refused unless ``create`` (reading a mistyped path must not leave a new, empty database
    behind)."""
    url = parse_url(resolve_database_url(database_url, config_path))
    if not create and missing_sqlite_file(url):
        raise StoreError(f"database {describe(url)} does not exist: check --database, $SCANNER_DATABASE_URL "
                         "or the config's database.url; a scan or `scanner db upgrade` creates it")
    return Store(url, read_only=not (write or create), **options)


@click.group("db")
def db() -> None:
    """Manage the report database: schema revisions and retention."""


@db.command("upgrade")
@click.argument("revision", default="head")
@database_options
def upgrade(revision: str, database_url: str | None, config_path: str | None) -> None:
    """Create the schema or upgrade it to REVISION (default: head)."""
    store = open_store(database_url, config_path, create=True, check_schema=False)
    with store:
        state = store.upgrade(revision)
        click.echo(f"{store.describe()}: at revision {state.revision} (head {state.head})")


@db.command("downgrade")
@click.argument("revision")
@database_options
def downgrade(revision: str, database_url: str | None, config_path: str | None) -> None:
    """Downgrade the schema to REVISION ("base" removes it, and all data, entirely)."""
    store = open_store(database_url, config_path, write=True, check_schema=False)
    with store:
        state = store.downgrade(revision)
        click.echo(f"{store.describe()}: at revision {state.revision or 'base'} "
                   f"(head {state.head})")


@db.command("current")
@database_options
def current(database_url: str | None, config_path: str | None) -> None:
    """Show the database's schema revision and whether it is up to date."""
    store = open_store(database_url, config_path, check_schema=False)
    with store:
        state = store.schema_state()
        if state.is_foreign:
            verdict = "not a scanner database"
        elif state.revision is None:
            verdict = "empty: run `scanner db upgrade`"
        elif state.revision == state.head:
            verdict = "up to date"
        else:
            verdict = "not at head: run `scanner db upgrade` (or upgrade scanner if newer)"
        click.echo(f"{store.describe()}: revision {state.revision or 'none'}, head "
                   f"{state.head}: {verdict}")


@db.command("prune")
@click.option("--keep-days", type=click.IntRange(min=0), required=True,
              help="Keep runs that started within this many days.")
@database_options
def prune(keep_days: int, database_url: str | None, config_path: str | None) -> None:
    """Delete finished runs older than --keep-days and what only they referenced."""
    # stale runs are marked by the prune itself, after it made room (on a full disk)
    store = open_store(database_url, config_path, write=True, mark_stale=False)
    with store:
        result = store.prune(keep_days)
        click.echo(f"{store.describe()}: deleted {result.runs} runs started before "
                   f"{result.cutoff.isoformat(timespec='seconds')}, {result.resources} "
                   f"resources, {result.policies} policy versions, {result.findings} "
                   f"resolved findings, {result.discarded_results} results of failed or interrupted runs"
                   + ("; a scan is running, so what no run references any more is "
                                          "deleted by the next prune" if result.orphans_kept else ""))
