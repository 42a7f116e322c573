"""Run ids never reused: SQLite's runs table takes AUTOINCREMENT.

Without it SQLite gives a new row the largest id in the table plus one: after `scanner db
prune` deleted the newest runs' predecessors (or every run), the next run got an id an
earlier run had had, and its reports (``scanner-run-<id>.*``) overwrote that run's. With
AUTOINCREMENT the largest id ever given is kept (in ``sqlite_sequence``) and never given
again; the copy of the table seeds it with the largest id stored. PostgreSQL draws run ids
from a sequence, which never goes back: nothing changes there.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-28
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _recreate(autoincrement: bool) -> None:
    if op.get_bind().dialect.name != "sqlite":
        return
    with op.batch_alter_table("runs", schema=None, recreate="always",
                              table_kwargs={"sqlite_autoincrement": autoincrement}):
        pass


def upgrade() -> None:
    _recreate(autoincrement=True)


def downgrade() -> None:
    _recreate(autoincrement=False)
