"""Initial schema: runs, sources, policies, resources, results, tallies, findings, errors.

Revision ID: 0001
Revises:
Create Date: 2024-11-23
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "checks",
        sa.Column("check_id", sa.Integer(), nullable=False),
        sa.Column("policy_kind", sa.String(length=64), nullable=False),
        sa.Column("policy_namespace", sa.String(length=253), nullable=False),
        sa.Column("policy_name", sa.String(length=253), nullable=False),
        sa.Column("rule", sa.String(length=255), nullable=False),
        sa.Column("declared_rule", sa.String(length=255), nullable=False),
        sa.PrimaryKeyConstraint("check_id", name=op.f("pk_checks")),
        sa.UniqueConstraint(
            "policy_kind",
            "policy_namespace",
            "policy_name",
            "rule",
            name=op.f("uq_checks_policy_kind_policy_namespace_policy_name_rule"),
        ),
    )
    op.create_table(
        "policies",
        sa.Column("policy_id", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=64), nullable=False),
        sa.Column("namespace", sa.String(length=253), nullable=False),
        sa.Column("name", sa.String(length=253), nullable=False),
        sa.Column("digest", sa.String(length=128), nullable=False),
        sa.Column("title", sa.Text(), nullable=False),
        sa.Column("category", sa.Text(), nullable=False),
        sa.Column("severity", sa.String(length=32), nullable=False),
        sa.Column("description", sa.Text(), nullable=False),
        sa.Column("failure_action", sa.String(length=16), nullable=False),
        sa.Column("scored", sa.Boolean(), nullable=False),
        sa.PrimaryKeyConstraint("policy_id", name=op.f("pk_policies")),
        sa.UniqueConstraint(
            "kind",
            "namespace",
            "name",
            "digest",
            name=op.f("uq_policies_kind_namespace_name_digest"),
        ),
    )
    op.create_table(
        "results",
        sa.Column(
            "observation_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False
        ),
        sa.Column("check_id", sa.Integer(), nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("resource_id", sa.Integer(), nullable=False),
        sa.Column("policy_id", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(length=8), nullable=False),
        sa.Column("action", sa.String(length=8), nullable=False),
        sa.Column("message", sa.Text(), nullable=False),
        sa.Column("path", sa.Text(), nullable=False),
        sa.CheckConstraint(
            "status IN ('pass', 'fail', 'warn', 'error', 'skip')", name=op.f("ck_results_status")
        ),
        sa.PrimaryKeyConstraint("observation_id", "check_id", name=op.f("pk_results")),
    )
    with op.batch_alter_table("results", schema=None) as batch_op:
        batch_op.create_index(
            "ix_results_run_id_status_resource_id_check_id",
            ["run_id", "status", "resource_id", "check_id"],
            unique=False,
        )

    op.create_table(
        "runs",
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("trigger", sa.String(length=16), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("heartbeat_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("scanner_version", sa.String(length=64), nullable=False),
        sa.Column("config_digest", sa.String(length=128), nullable=False),
        sa.Column("owner_host", sa.String(length=255), nullable=False),
        sa.Column("owner_pid", sa.Integer(), nullable=False),
        sa.Column("resource_count", sa.Integer(), server_default="0", nullable=False),
        sa.Column("result_count", sa.Integer(), server_default="0", nullable=False),
        sa.Column("pass_count", sa.Integer(), server_default="0", nullable=False),
        sa.Column("fail_count", sa.Integer(), server_default="0", nullable=False),
        sa.Column("warn_count", sa.Integer(), server_default="0", nullable=False),
        sa.Column("error_count", sa.Integer(), server_default="0", nullable=False),
        sa.Column("skip_count", sa.Integer(), server_default="0", nullable=False),
        sa.Column("error_record_count", sa.Integer(), server_default="0", nullable=False),
        sa.CheckConstraint(
            "status IN ('running', 'succeeded', 'partial', 'failed', 'interrupted')",
            name=op.f("ck_runs_status"),
        ),
        sa.PrimaryKeyConstraint("run_id", name=op.f("pk_runs")),
    )
    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_runs_started_at"), ["started_at"], unique=False)
        batch_op.create_index(batch_op.f("ix_runs_status"), ["status"], unique=False)

    op.create_table(
        "sources",
        sa.Column("source_id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=255), nullable=False),
        sa.Column("type", sa.String(length=16), nullable=False),
        sa.PrimaryKeyConstraint("source_id", name=op.f("pk_sources")),
        sa.UniqueConstraint("name", name=op.f("uq_sources_name")),
    )
    op.create_table(
        "resources",
        sa.Column("resource_id", sa.Integer(), nullable=False),
        sa.Column("source_id", sa.Integer(), nullable=False),
        sa.Column("api_version", sa.String(length=255), nullable=False),
        sa.Column("kind", sa.String(length=255), nullable=False),
        sa.Column("namespace", sa.String(length=253), nullable=False),
        sa.Column("name", sa.String(length=253), nullable=False),
        sa.ForeignKeyConstraint(
            ["source_id"], ["sources.source_id"], name=op.f("fk_resources_source_id_sources")
        ),
        sa.PrimaryKeyConstraint("resource_id", name=op.f("pk_resources")),
        sa.UniqueConstraint(
            "source_id",
            "api_version",
            "kind",
            "namespace",
            "name",
            name=op.f("uq_resources_source_id_api_version_kind_namespace_name"),
        ),
    )
    op.create_table(
        "run_policies",
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("policy_id", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["policy_id"], ["policies.policy_id"], name=op.f("fk_run_policies_policy_id_policies")
        ),
        sa.ForeignKeyConstraint(
            ["run_id"],
            ["runs.run_id"],
            name=op.f("fk_run_policies_run_id_runs"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("run_id", "policy_id", name=op.f("pk_run_policies")),
    )
    with op.batch_alter_table("run_policies", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_run_policies_policy_id"), ["policy_id"], unique=False)

    op.create_table(
        "run_sources",
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("source_id", sa.Integer(), nullable=False),
        sa.Column("url", sa.Text(), nullable=False),
        sa.Column("ref", sa.String(length=255), nullable=False),
        sa.Column("commit_sha", sa.String(length=64), nullable=False),
        sa.Column("commit_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("error", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(
            ["run_id"], ["runs.run_id"], name=op.f("fk_run_sources_run_id_runs"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["source_id"], ["sources.source_id"], name=op.f("fk_run_sources_source_id_sources")
        ),
        sa.PrimaryKeyConstraint("run_id", "source_id", name=op.f("pk_run_sources")),
    )
    with op.batch_alter_table("run_sources", schema=None) as batch_op:
        batch_op.create_index(
            "ix_run_sources_source_id_run_id", ["source_id", "run_id"], unique=False
        )

    op.create_table(
        "run_tallies",
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("source_id", sa.Integer(), nullable=False),
        sa.Column("check_id", sa.Integer(), nullable=False),
        sa.Column("namespace", sa.String(length=253), nullable=False),
        sa.Column("status", sa.String(length=8), nullable=False),
        sa.Column("policy_id", sa.Integer(), nullable=False),
        sa.Column("count", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["check_id"], ["checks.check_id"], name=op.f("fk_run_tallies_check_id_checks")
        ),
        sa.ForeignKeyConstraint(
            ["policy_id"], ["policies.policy_id"], name=op.f("fk_run_tallies_policy_id_policies")
        ),
        sa.ForeignKeyConstraint(
            ["run_id"], ["runs.run_id"], name=op.f("fk_run_tallies_run_id_runs"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["source_id"], ["sources.source_id"], name=op.f("fk_run_tallies_source_id_sources")
        ),
        sa.PrimaryKeyConstraint(
            "run_id", "source_id", "check_id", "namespace", "status", name=op.f("pk_run_tallies")
        ),
    )
    with op.batch_alter_table("run_tallies", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_run_tallies_check_id"), ["check_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_run_tallies_policy_id"), ["policy_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_run_tallies_source_id"), ["source_id"], unique=False)

    op.create_table(
        "scan_errors",
        sa.Column("error_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("source_id", sa.Integer(), nullable=True),
        sa.Column("kind", sa.String(length=32), nullable=False),
        sa.Column("path", sa.Text(), nullable=False),
        sa.Column("line", sa.Integer(), nullable=True),
        sa.Column("message", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(
            ["run_id"], ["runs.run_id"], name=op.f("fk_scan_errors_run_id_runs"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["source_id"], ["sources.source_id"], name=op.f("fk_scan_errors_source_id_sources")
        ),
        sa.PrimaryKeyConstraint("error_id", name=op.f("pk_scan_errors")),
    )
    with op.batch_alter_table("scan_errors", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_scan_errors_run_id"), ["run_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_scan_errors_source_id"), ["source_id"], unique=False)

    op.create_table(
        "findings",
        sa.Column(
            "finding_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False
        ),
        sa.Column("source_id", sa.Integer(), nullable=False),
        sa.Column("resource_id", sa.Integer(), nullable=False),
        sa.Column("check_id", sa.Integer(), nullable=False),
        sa.Column("policy_id", sa.Integer(), nullable=False),
        sa.Column("first_run_id", sa.Integer(), nullable=True),
        sa.Column("first_seen_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_run_id", sa.Integer(), nullable=True),
        sa.Column("last_seen_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("resolved_run_id", sa.Integer(), nullable=True),
        sa.Column("resolved_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("end_reason", sa.String(length=16), nullable=True),
        sa.CheckConstraint(
            "end_reason IN ('fixed', 'resource_gone', 'policy_changed', 'policy_removed')",
            name=op.f("ck_findings_end_reason"),
        ),
        sa.ForeignKeyConstraint(
            ["check_id"], ["checks.check_id"], name=op.f("fk_findings_check_id_checks")
        ),
        sa.ForeignKeyConstraint(
            ["first_run_id"],
            ["runs.run_id"],
            name=op.f("fk_findings_first_run_id_runs"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["last_run_id"],
            ["runs.run_id"],
            name=op.f("fk_findings_last_run_id_runs"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["policy_id"], ["policies.policy_id"], name=op.f("fk_findings_policy_id_policies")
        ),
        sa.ForeignKeyConstraint(
            ["resolved_run_id"],
            ["runs.run_id"],
            name=op.f("fk_findings_resolved_run_id_runs"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["resource_id"],
            ["resources.resource_id"],
            name=op.f("fk_findings_resource_id_resources"),
        ),
        sa.ForeignKeyConstraint(
            ["source_id"], ["sources.source_id"], name=op.f("fk_findings_source_id_sources")
        ),
        sa.PrimaryKeyConstraint("finding_id", name=op.f("pk_findings")),
    )
    with op.batch_alter_table("findings", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_findings_check_id"), ["check_id"], unique=False)
        batch_op.create_index(
            batch_op.f("ix_findings_first_run_id"), ["first_run_id"], unique=False
        )
        batch_op.create_index(batch_op.f("ix_findings_last_run_id"), ["last_run_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_findings_policy_id"), ["policy_id"], unique=False)
        batch_op.create_index(
            batch_op.f("ix_findings_resolved_run_id"), ["resolved_run_id"], unique=False
        )
        batch_op.create_index(
            "ix_findings_resource_id_check_id", ["resource_id", "check_id"], unique=False
        )
        batch_op.create_index(
            "ix_findings_source_id_resolved_at", ["source_id", "resolved_at"], unique=False
        )

    op.create_table(
        "resource_observations",
        sa.Column(
            "observation_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False
        ),
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("resource_id", sa.Integer(), nullable=False),
        sa.Column("path", sa.Text(), nullable=False),
        sa.Column("document_index", sa.Integer(), nullable=False),
        sa.Column("item_index", sa.Integer(), nullable=True),
        sa.Column("line", sa.Integer(), nullable=True),
        sa.Column("commit_sha", sa.String(length=64), nullable=False),
        sa.ForeignKeyConstraint(
            ["resource_id"],
            ["resources.resource_id"],
            name=op.f("fk_resource_observations_resource_id_resources"),
        ),
        sa.ForeignKeyConstraint(
            ["run_id"],
            ["runs.run_id"],
            name=op.f("fk_resource_observations_run_id_runs"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("observation_id", name=op.f("pk_resource_observations")),
    )
    with op.batch_alter_table("resource_observations", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_resource_observations_resource_id"), ["resource_id"], unique=False
        )
        batch_op.create_index(
            "ix_resource_observations_run_id_resource_id", ["run_id", "resource_id"], unique=False
        )



def downgrade() -> None:
    with op.batch_alter_table("resource_observations", schema=None) as batch_op:
        batch_op.drop_index("ix_resource_observations_run_id_resource_id")
        batch_op.drop_index(batch_op.f("ix_resource_observations_resource_id"))

    op.drop_table("resource_observations")
    with op.batch_alter_table("findings", schema=None) as batch_op:
        batch_op.drop_index("ix_findings_source_id_resolved_at")
        batch_op.drop_index("ix_findings_resource_id_check_id")
        batch_op.drop_index(batch_op.f("ix_findings_resolved_run_id"))
        batch_op.drop_index(batch_op.f("ix_findings_policy_id"))
        batch_op.drop_index(batch_op.f("ix_findings_last_run_id"))
        batch_op.drop_index(batch_op.f("ix_findings_first_run_id"))
        batch_op.drop_index(batch_op.f("ix_findings_check_id"))

    op.drop_table("findings")
    with op.batch_alter_table("scan_errors", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_scan_errors_source_id"))
        batch_op.drop_index(batch_op.f("ix_scan_errors_run_id"))

    op.drop_table("scan_errors")
    with op.batch_alter_table("run_tallies", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_run_tallies_source_id"))
        batch_op.drop_index(batch_op.f("ix_run_tallies_policy_id"))
        batch_op.drop_index(batch_op.f("ix_run_tallies_check_id"))

    op.drop_table("run_tallies")
    with op.batch_alter_table("run_sources", schema=None) as batch_op:
        batch_op.drop_index("ix_run_sources_source_id_run_id")

    op.drop_table("run_sources")
    with op.batch_alter_table("run_policies", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_run_policies_policy_id"))

    op.drop_table("run_policies")
    op.drop_table("resources")
    op.drop_table("sources")
    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_runs_status"))
        batch_op.drop_index(batch_op.f("ix_runs_started_at"))

    op.drop_table("runs")
    with op.batch_alter_table("results", schema=None) as batch_op:
        batch_op.drop_index("ix_results_run_id_status_resource_id_check_id")

    op.drop_table("results")
    op.drop_table("policies")
    op.drop_table("checks")
