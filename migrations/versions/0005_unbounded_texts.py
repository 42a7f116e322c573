"""Unbounded texts: names and labels that come from manifests, policies and the config.

A resource's apiVersion, kind, namespace and name, a policy's namespace, name and severity
annotation, a rule's name, a source's name and ref were limited to 32-255 characters. A
manifest or policy beyond the limit (invalid for Kubernetes, but it can be in Git) stopped
a PostgreSQL scan when its results were stored; SQLite never applied the limits. They are
text now. Downgrading shortens nothing: it fails on PostgreSQL if a longer value is stored.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-27
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# table -> (column, length it had)
COLUMNS: dict[str, tuple[tuple[str, int], ...]] = {
    "sources": (("name", 255),),
    "run_sources": (("ref", 255),),
    "policies": (("namespace", 253), ("name", 253), ("severity", 32)),
    "checks": (("policy_namespace", 253), ("policy_name", 253), ("rule", 255), ("declared_rule", 255)),
    "resources": (("api_version", 255), ("kind", 255), ("namespace", 253), ("name", 253)),
    "run_tallies": (("namespace", 253),),
}


def _alter(to_text: bool) -> None:
    for table, columns in COLUMNS.items():
        with op.batch_alter_table(table, schema=None) as batch_op:
            for column, length in columns:
                old, new = (sa.String(length), sa.Text()) if to_text else (sa.Text(), sa.String(length))
                batch_op.alter_column(column, existing_type=old, type_=new, existing_nullable=False)


def upgrade() -> None:
    _alter(to_text=True)


def downgrade() -> None:
    _alter(to_text=False)
