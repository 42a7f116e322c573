"""Finding continuity: the run each source's findings reflect, and what each run continued.

``sources.findings_run_id`` is the completed run whose finish last updated the source's
findings (so its open findings are that run's failures); each finish moves it under the
source's row lock, in commit order whatever the clocks say. ``run_sources.previous_run_id``
keeps the value a run's finish found there: the run it continued from. With it the diff of
a run against that run is read from the findings they changed instead of comparing all
their results. Existing sources start at their latest completed run, as the finish chose
it until now; existing run sources keep NULL (their diffs compare results).

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-25
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_LATEST_COMPLETED = """
UPDATE sources SET findings_run_id = (
    SELECT r.run_id FROM runs r JOIN run_sources rs ON rs.run_id = r.run_id
    WHERE rs.source_id = sources.source_id AND rs.error = ''
      AND r.status IN ('succeeded', 'partial')
    ORDER BY r.finished_at DESC, r.run_id DESC LIMIT 1)
"""


def upgrade() -> None:
    with op.batch_alter_table("sources", schema=None) as batch_op:
        batch_op.add_column(sa.Column("findings_run_id", sa.Integer(), nullable=True))
        batch_op.create_foreign_key(
            batch_op.f("fk_sources_findings_run_id_runs"), "runs", ["findings_run_id"],
            ["run_id"], ondelete="SET NULL")
    with op.batch_alter_table("run_sources", schema=None) as batch_op:
        batch_op.add_column(sa.Column("previous_run_id", sa.Integer(), nullable=True))
        batch_op.create_foreign_key(
            batch_op.f("fk_run_sources_previous_run_id_runs"), "runs", ["previous_run_id"],
            ["run_id"], ondelete="SET NULL")
    op.execute(_LATEST_COMPLETED)


def downgrade() -> None:
    with op.batch_alter_table("run_sources", schema=None) as batch_op:
        batch_op.drop_constraint(batch_op.f("fk_run_sources_previous_run_id_runs"),
                                 type_="foreignkey")
        batch_op.drop_column("previous_run_id")
    with op.batch_alter_table("sources", schema=None) as batch_op:
        batch_op.drop_constraint(batch_op.f("fk_sources_findings_run_id_runs"),
                                 type_="foreignkey")
        batch_op.drop_column("findings_run_id")
