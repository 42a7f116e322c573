"""Result cache: what the rules gave for a resource document, and what a shard of a source gave.

``result_cache`` holds one row per document digest: the results of each policy under its
evaluation key (``scanner.scan_cache``); ``shard_cache`` one row per shard key: the shard's
output (``scanner.scan_replay``); each row the last run that wrote or reused it. No run's
stored content changes: the chain's digests stay as they were.

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-28
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "result_cache",
        sa.Column("document_digest", sa.String(length=64), nullable=False),
        sa.Column("entries", sa.LargeBinary(), nullable=False),
        sa.Column("last_run_id", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("document_digest", name=op.f("pk_result_cache")),
    )
    with op.batch_alter_table("result_cache", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_result_cache_last_run_id"), ["last_run_id"], unique=False)
    op.create_table(
        "shard_cache",
        sa.Column("shard_key", sa.String(length=64), nullable=False),
        sa.Column("output", sa.LargeBinary(), nullable=False),
        sa.Column("last_run_id", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("shard_key", name=op.f("pk_shard_cache")),
    )
    with op.batch_alter_table("shard_cache", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_shard_cache_last_run_id"), ["last_run_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("shard_cache", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_shard_cache_last_run_id"))
    op.drop_table("shard_cache")
    with op.batch_alter_table("result_cache", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_result_cache_last_run_id"))
    op.drop_table("result_cache")
