"""Run chain: each finished run's content digests, linked into a hash chain of runs.

``run_chain`` holds one link per finished run: its position, the run before it, the digest
of each part of its stored content, its content digest and chain digest, and when retention
deleted its rows but kept the link. ``chain_anchors`` holds the last link retention deleted.
Existing finished runs (succeeded, partial or failed) are chained in the order they
finished, with the canonical form of ``scanner.store.chain`` (version 1, which that module
keeps computing for as long as records of it exist).

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-28
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_FINISHED = """
SELECT run_id FROM runs WHERE status IN ('succeeded', 'partial', 'failed')
ORDER BY COALESCE(finished_at, started_at), run_id
"""

DIGEST = sa.String(length=80)


def upgrade() -> None:
    from scanner.store.chain import link_run

    op.create_table(
        "run_chain",
        sa.Column("position", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("previous_run_id", sa.Integer(), nullable=True),
        sa.Column("version", sa.Integer(), nullable=False),
        *(sa.Column(f"{part}_digest", DIGEST, nullable=False)
          for part in ("run", "sources", "policies", "results", "errors", "content", "chain")),
        sa.Column("pruned_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("position", name=op.f("pk_run_chain")),
    )
    with op.batch_alter_table("run_chain", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_run_chain_run_id"), ["run_id"], unique=False)
    op.create_table(
        "chain_anchors",
        sa.Column("anchor_id", sa.Integer(), nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("chain_digest", DIGEST, nullable=False),
        sa.Column("pruned_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("anchor_id", name=op.f("pk_chain_anchors")),
    )
    connection = op.get_bind()
    for run_id in list(connection.execute(sa.text(_FINISHED)).scalars()):
        link_run(connection, run_id)


def downgrade() -> None:
    op.drop_table("chain_anchors")
    op.drop_table("run_chain")
