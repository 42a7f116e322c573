"""History that grows with change: a run shares the rows of the run before it that it found the same.

A run's observations (with their results) and tallies were copied into each run, however little
changed. They are now stored once (``observation_rows``, ``result_rows``, ``tally_rows``) and
belong to the runs whose blocks mark their ids (``run_observation_blocks``, ``run_tally_blocks``:
per 32 ids, the mask of those a run has). ``resource_observations``, ``results`` and
``run_tallies`` become views that give each run its rows as before, with the same ids and
values: every stored run reads, renders and verifies (its chain digests) exactly as it did. An
observation's commit is stored only where it is not the commit the run saw of its source; the
existing ones keep theirs.

A stored shard output now names its slot (the source and the shard's place in it): the output
a later scan stores for the same slot replaces it, rather than staying until retention.

Upgrading copies the three tables into the new ones once; downgrading copies the views back
into tables, and is refused while two runs share rows (the older schema cannot hold that).

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-29
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BIG_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
STATUS_CHECK = "status = 'pass' OR status = 'fail' OR status = 'warn' OR status = 'error' OR status = 'skip'"

VIEWS = {
    "resource_observations": """
SELECT o.observation_id, m.run_id, o.resource_id, o.path, o.document_index, o.item_index, o.line,
       COALESCE(o.commit_sha, (SELECT rs.commit_sha FROM resources r
                               JOIN run_sources rs ON rs.source_id = r.source_id
                               WHERE r.resource_id = o.resource_id AND rs.run_id = m.run_id), '') AS commit_sha,
       o.overlay, o.patches
FROM run_observation_blocks m JOIN observation_rows o
  ON o.observation_id BETWEEN m.block * 32 AND m.block * 32 + 31 AND m.block = (o.observation_id >> 5)
 AND ((m.bits >> CAST(o.observation_id & 31 AS INTEGER)) & 1) = 1""",
    "results": """
SELECT r.observation_id, r.check_id, m.run_id, r.resource_id, r.policy_id, r.status, r.action, r.message, r.path
FROM run_observation_blocks m JOIN result_rows r
  ON r.observation_id BETWEEN m.block * 32 AND m.block * 32 + 31 AND m.block = (r.observation_id >> 5)
 AND ((m.bits >> CAST(r.observation_id & 31 AS INTEGER)) & 1) = 1""",
    "run_tallies": """
SELECT m.run_id, x.source_id, x.check_id, x.namespace, x.status, x.policy_id, x.count
FROM run_tally_blocks m JOIN tally_rows x
  ON x.tally_id BETWEEN m.block * 32 AND m.block * 32 + 31 AND m.block = (x.tally_id >> 5)
 AND ((m.bits >> CAST(x.tally_id & 31 AS INTEGER)) & 1) = 1""",
}
"""As ``scanner.store.tables.VIEWS`` (a test keeps them equal)."""


def _blocks_table(name: str) -> None:
    op.create_table(
        name,
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("block", BIG_ID, autoincrement=False, nullable=False),
        sa.Column("bits", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(["run_id"], ["runs.run_id"], name=op.f(f"fk_{name}_run_id_runs"), ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("run_id", "block", name=op.f(f"pk_{name}")),
    )
    op.create_index(op.f(f"ix_{name}_block"), name, ["block"], unique=False)


def _create_shared_tables() -> None:
    op.create_table(
        "observation_rows",
        sa.Column("observation_id", BIG_ID, nullable=False),
        sa.Column("resource_id", sa.Integer(), nullable=False),
        sa.Column("path", sa.Text(), nullable=False),
        sa.Column("document_index", sa.Integer(), nullable=False),
        sa.Column("item_index", sa.Integer(), nullable=True),
        sa.Column("line", sa.Integer(), nullable=True),
        sa.Column("commit_sha", sa.String(length=64), nullable=True),
        sa.Column("overlay", sa.Text(), nullable=True),
        sa.Column("patches", sa.Text(), nullable=True),
        sa.Column("content_digest", sa.String(length=64), nullable=True),
        sa.ForeignKeyConstraint(["resource_id"], ["resources.resource_id"],
                                name=op.f("fk_observation_rows_resource_id_resources")),
        sa.PrimaryKeyConstraint("observation_id", name=op.f("pk_observation_rows")),
    )
    op.create_index(op.f("ix_observation_rows_resource_id"), "observation_rows", ["resource_id"], unique=False)
    op.create_table(
        "result_rows",
        sa.Column("observation_id", BIG_ID, nullable=False),
        sa.Column("check_id", sa.Integer(), nullable=False),
        sa.Column("resource_id", sa.Integer(), nullable=False),
        sa.Column("policy_id", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(length=8), nullable=False),
        sa.Column("action", sa.String(length=8), nullable=False),
        sa.Column("message", sa.Text(), nullable=False),
        sa.Column("path", sa.Text(), nullable=False),
        sa.CheckConstraint(STATUS_CHECK, name=op.f("ck_result_rows_status")),
        sa.PrimaryKeyConstraint("observation_id", "check_id", name=op.f("pk_result_rows")),
        sqlite_with_rowid=False,
    )
    op.create_index(op.f("ix_result_rows_resource_id_check_id"), "result_rows", ["resource_id", "check_id"],
                    unique=False)
    _blocks_table("run_observation_blocks")
    op.create_table(
        "tally_rows",
        sa.Column("tally_id", BIG_ID, nullable=False),
        sa.Column("source_id", sa.Integer(), nullable=False),
        sa.Column("check_id", sa.Integer(), nullable=False),
        sa.Column("namespace", sa.Text(), nullable=False),
        sa.Column("status", sa.String(length=8), nullable=False),
        sa.Column("policy_id", sa.Integer(), nullable=False),
        sa.Column("count", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(["check_id"], ["checks.check_id"], name=op.f("fk_tally_rows_check_id_checks")),
        sa.ForeignKeyConstraint(["policy_id"], ["policies.policy_id"],
                                name=op.f("fk_tally_rows_policy_id_policies")),
        sa.ForeignKeyConstraint(["source_id"], ["sources.source_id"], name=op.f("fk_tally_rows_source_id_sources")),
        sa.PrimaryKeyConstraint("tally_id", name=op.f("pk_tally_rows")),
    )
    for column in ("check_id", "policy_id", "source_id"):
        op.create_index(op.f(f"ix_tally_rows_{column}"), "tally_rows", [column], unique=False)
    _blocks_table("run_tally_blocks")


# each run's ids as blocks of 32: per block, the sum of the distinct ids' bits (their OR)
_BLOCKS = """
INSERT INTO {table} (run_id, block, bits)
SELECT run_id, id >> 5, SUM(CAST(1 AS BIGINT) << CAST(id & 31 AS INTEGER)) FROM {source}
GROUP BY run_id, id >> 5
"""


def upgrade() -> None:
    _create_shared_tables()
    op.execute("INSERT INTO observation_rows (observation_id, resource_id, path, document_index, item_index, line, "
               "commit_sha, overlay, patches) SELECT observation_id, resource_id, path, document_index, item_index, "
               "line, commit_sha, overlay, patches FROM resource_observations")
    op.execute("INSERT INTO result_rows (observation_id, check_id, resource_id, policy_id, status, action, message, "
               "path) SELECT observation_id, check_id, resource_id, policy_id, status, action, message, path "
               "FROM results")
    # (the results' ids too: each run keeps every row it had)
    op.execute(_BLOCKS.format(table="run_observation_blocks",
                              source="(SELECT run_id, observation_id AS id FROM resource_observations UNION "
                                     "SELECT run_id, observation_id FROM results) AS ids"))
    op.execute("INSERT INTO tally_rows (tally_id, source_id, check_id, namespace, status, policy_id, count) "
               "SELECT ROW_NUMBER() OVER (ORDER BY run_id, source_id, check_id, namespace, status), "
               "source_id, check_id, namespace, status, policy_id, count FROM run_tallies")
    op.execute(_BLOCKS.format(table="run_tally_blocks",
                              source="(SELECT run_id, ROW_NUMBER() OVER (ORDER BY run_id, source_id, check_id, "
                                     "namespace, status) AS id FROM run_tallies) AS ids"))
    op.drop_table("results")
    op.drop_table("resource_observations")
    op.drop_table("run_tallies")
    if op.get_bind().dialect.name == "postgresql":  # new ids continue after the ones copied
        for table, column in (("observation_rows", "observation_id"), ("tally_rows", "tally_id")):
            op.execute(f"SELECT setval(pg_get_serial_sequence('{table}', '{column}'), "
                       f"COALESCE((SELECT MAX({column}) FROM {table}), 0) + 1, false)")
    for name, select in VIEWS.items():
        op.execute(f"CREATE VIEW {name} AS{select}")
    with op.batch_alter_table("shard_cache", schema=None) as batch_op:
        batch_op.add_column(sa.Column("slot", sa.String(length=64), nullable=True))
        batch_op.create_index(batch_op.f("ix_shard_cache_slot"), ["slot"], unique=False)


_SHARED = """
SELECT a.run_id, b.run_id FROM run_observation_blocks a JOIN run_observation_blocks b
  ON a.block = b.block AND a.run_id < b.run_id WHERE (a.bits & b.bits) <> 0
"""


def downgrade() -> None:
    bind = op.get_bind()
    with op.batch_alter_table("shard_cache", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_shard_cache_slot"))
        batch_op.drop_column("slot")
    # each run had observations of its own before (tallies are copied per run as they were)
    shared = bind.execute(sa.text(_SHARED)).first()
    if shared is not None:
        raise RuntimeError(f"cannot downgrade below revision 0011: runs {shared[0]} and {shared[1]} share "
                               "stored rows, which the older schema cannot hold; prune the runs before the "
                               "newest (`scanner db prune`) or keep this revision")
    for name in VIEWS:
        op.execute(f"DROP VIEW {name}")
    op.create_table(
        "resource_observations",
        sa.Column("observation_id", BIG_ID, nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("resource_id", sa.Integer(), nullable=False),
        sa.Column("path", sa.Text(), nullable=False),
        sa.Column("document_index", sa.Integer(), nullable=False),
        sa.Column("item_index", sa.Integer(), nullable=True),
        sa.Column("line", sa.Integer(), nullable=True),
        sa.Column("commit_sha", sa.String(length=64), nullable=False),
        sa.Column("overlay", sa.Text(), nullable=True),
        sa.Column("patches", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(["resource_id"], ["resources.resource_id"],
                                name=op.f("fk_resource_observations_resource_id_resources")),
        sa.ForeignKeyConstraint(["run_id"], ["runs.run_id"], name=op.f("fk_resource_observations_run_id_runs"),
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("observation_id", name=op.f("pk_resource_observations")),
    )
    op.create_table(
        "results",
        sa.Column("observation_id", BIG_ID, nullable=False),
        sa.Column("check_id", sa.Integer(), nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("resource_id", sa.Integer(), nullable=False),
        sa.Column("policy_id", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(length=8), nullable=False),
        sa.Column("action", sa.String(length=8), nullable=False),
        sa.Column("message", sa.Text(), nullable=False),
        sa.Column("path", sa.Text(), nullable=False),
        sa.CheckConstraint(STATUS_CHECK, name=op.f("ck_results_status")),
        sa.PrimaryKeyConstraint("observation_id", "check_id", name=op.f("pk_results")),
        sqlite_with_rowid=False,
    )
    op.create_table(
        "run_tallies",
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("source_id", sa.Integer(), nullable=False),
        sa.Column("check_id", sa.Integer(), nullable=False),
        sa.Column("namespace", sa.Text(), nullable=False),
        sa.Column("status", sa.String(length=8), nullable=False),
        sa.Column("policy_id", sa.Integer(), nullable=False),
        sa.Column("count", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(["run_id"], ["runs.run_id"], name=op.f("fk_run_tallies_run_id_runs"),
                                ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["source_id"], ["sources.source_id"], name=op.f("fk_run_tallies_source_id_sources")),
        sa.ForeignKeyConstraint(["check_id"], ["checks.check_id"], name=op.f("fk_run_tallies_check_id_checks")),
        sa.ForeignKeyConstraint(["policy_id"], ["policies.policy_id"],
                                name=op.f("fk_run_tallies_policy_id_policies")),
        sa.PrimaryKeyConstraint("run_id", "source_id", "check_id", "namespace", "status", name=op.f("pk_run_tallies")),
    )
    for name, select in VIEWS.items():
        op.execute(f"INSERT INTO {name} SELECT * FROM ({select}) AS {name}_rows")
    for name in VIEWS:
        op.drop_table({"resource_observations": "observation_rows", "results": "result_rows",
                       "run_tallies": "tally_rows"}[name])
    op.drop_table("run_observation_blocks")
    op.drop_table("run_tally_blocks")
    for index, table, columns in (
            ("ix_resource_observations_resource_id", "resource_observations", ["resource_id"]),
            ("ix_resource_observations_run_id_resource_id", "resource_observations", ["run_id", "resource_id"]),
            ("ix_run_tallies_policy_id", "run_tallies", ["policy_id"]),
            ("ix_run_tallies_source_id", "run_tallies", ["source_id"]),
            ("ix_run_tallies_check_id", "run_tallies", ["check_id"]),
            ("ix_results_run_id_status_resource_id_check_id", "results", ["run_id", "status", "resource_id",
                                                                          "check_id"])):
        op.create_index(op.f(index), table, columns, unique=False)

