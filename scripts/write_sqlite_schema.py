"""Write scanner/store/sqlite_head.sql: the SQLite schema exactly as the migrations create it.

    python scripts/write_sqlite_schema.py

Run it after adding a migration (and raising ``HEAD_REVISION``); a test fails until then.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from sqlalchemy import create_engine

from scanner.store.schema import HEAD_REVISION, SQLITE_HEAD, sqlite_schema_script, upgrade

HEADER = """\
-- The SQLite schema at revision {revision}, as the migrations create it.
-- A new SQLite database is made from this file; written by scripts/write_sqlite_schema.py,
-- checked against the migrations by tests/store/test_schema.py.

"""


def migrated_sqlite_script() -> str:
    """The schema script of a new SQLite database upgraded to head by the migrations."""
    with tempfile.TemporaryDirectory() as folder:
        engine = create_engine(f"sqlite:///{folder}/head.db")
        try:
            upgrade(engine, engine.url)
            with engine.connect() as connection:
                return sqlite_schema_script(connection)
        finally:
            engine.dispose()


def main() -> None:
    SQLITE_HEAD.write_text(HEADER.format(revision=HEAD_REVISION) + migrated_sqlite_script())
    print(f"wrote {Path(SQLITE_HEAD)}")


if __name__ == "__main__":
    main()
