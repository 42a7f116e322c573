"""Provenance of rendered resources: the overlay and the patch files.

A resource rendered from a Kustomize overlay is observed at the file and line that define it
(a base file); ``resource_observations`` now also records the entry point that was rendered
(``overlay``) and the patch files that changed the resource (``patches``, one a line). Both
are empty for a resource read from a file as it is. Adding nullable columns changes no row.

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-28
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

COLUMNS = ("overlay", "patches")


def upgrade() -> None:
    with op.batch_alter_table("resource_observations", schema=None) as batch_op:
        for column in COLUMNS:
            batch_op.add_column(sa.Column(column, sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("resource_observations", schema=None) as batch_op:
        for column in reversed(COLUMNS):
            batch_op.drop_column(column)
