"""Run policy tallies: each run's result counts per (source, policy, status).

A run's tallies are kept per (source, check, namespace, status): tens of thousands of rows
for a large scan, mostly passes. A trend over a month of such runs read all of them. These
sums per policy are a few rows per policy and run; existing runs get them from their tallies.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-25
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_FROM_TALLIES = """
INSERT INTO run_policy_tallies (run_id, source_id, policy_id, status, count)
SELECT run_id, source_id, policy_id, status, SUM(count) FROM run_tallies
GROUP BY run_id, source_id, policy_id, status
"""


def upgrade() -> None:
    op.create_table(
        "run_policy_tallies",
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("source_id", sa.Integer(), nullable=False),
        sa.Column("policy_id", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(length=8), nullable=False),
        sa.Column("count", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["policy_id"], ["policies.policy_id"], name=op.f("fk_run_policy_tallies_policy_id_policies")
        ),
        sa.ForeignKeyConstraint(
            ["run_id"], ["runs.run_id"], name=op.f("fk_run_policy_tallies_run_id_runs"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["source_id"], ["sources.source_id"], name=op.f("fk_run_policy_tallies_source_id_sources")
        ),
        sa.PrimaryKeyConstraint(
            "run_id", "source_id", "policy_id", "status", name=op.f("pk_run_policy_tallies")
        ),
    )
    with op.batch_alter_table("run_policy_tallies", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_run_policy_tallies_policy_id"), ["policy_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_run_policy_tallies_source_id"), ["source_id"], unique=False)
    op.execute(_FROM_TALLIES)


def downgrade() -> None:
    op.drop_table("run_policy_tallies")
