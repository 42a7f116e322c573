"""Cheaper result rows: status checks as comparisons, and SQLite's results keyed by their key.

SQLite checked ``status IN (...)`` for every row a scan writes at a cost several times that of
the equivalent comparisons (about a third of the time of writing a result row), so the
allowed values of ``results.status``, ``findings.end_reason`` and ``runs.status`` are checked
as ``status = 'pass' OR ...`` now: the same rule. On SQLite the results table is also a
``WITHOUT ROWID`` table: rows are stored in their primary key's order (observation, check),
with no separate index of that key to update. Upgrading an SQLite database copies its
results table once (Alembic's batch mode); on PostgreSQL the checks are replaced in place.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-28
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# table -> (check name, column, allowed values)
CHECKS = {
    "results": ("status", "status", ("pass", "fail", "warn", "error", "skip")),
    "findings": ("end_reason", "end_reason", ("fixed", "resource_gone", "policy_changed", "policy_removed")),
    "runs": ("status", "status", ("running", "succeeded", "partial", "failed", "interrupted")),
}


def _condition(column: str, values: tuple[str, ...], comparisons: bool) -> str:
    if comparisons:
        return " OR ".join(f"{column} = '{value}'" for value in values)
    return f"{column} IN ({', '.join(repr(value) for value in values)})"


def _change(comparisons: bool) -> None:
    sqlite = op.get_bind().dialect.name == "sqlite"
    for table, (name, column, values) in CHECKS.items():
        # SQLite rebuilds a table to change it: results then leave (or take back) their rowid
        options = {"recreate": "always", "table_kwargs": {"sqlite_with_rowid": not comparisons}} \
            if sqlite and table == "results" else {}
        with op.batch_alter_table(table, schema=None, **options) as batch_op:
            batch_op.drop_constraint(op.f(f"ck_{table}_{name}"), type_="check")
            batch_op.create_check_constraint(op.f(f"ck_{table}_{name}"), _condition(column, values, comparisons))


def upgrade() -> None:
    _change(comparisons=True)


def downgrade() -> None:
    _change(comparisons=False)
