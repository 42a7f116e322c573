-- The SQLite schema at revision 0011, as the migrations create it.
-- A new SQLite database is made from this file; written by scripts/write_sqlite_schema.py,
-- checked against the migrations by tests/store/test_schema.py.

CREATE TABLE scanner_schema_version (
	version_num VARCHAR(32) NOT NULL, 
	CONSTRAINT scanner_schema_version_pkc PRIMARY KEY (version_num)
);

CREATE TABLE run_policies (
	run_id INTEGER NOT NULL, 
	policy_id INTEGER NOT NULL, 
	CONSTRAINT pk_run_policies PRIMARY KEY (run_id, policy_id), 
	CONSTRAINT fk_run_policies_policy_id_policies FOREIGN KEY(policy_id) REFERENCES policies (policy_id), 
	CONSTRAINT fk_run_policies_run_id_runs FOREIGN KEY(run_id) REFERENCES runs (run_id) ON DELETE CASCADE
);

CREATE INDEX ix_run_policies_policy_id ON run_policies (policy_id);

CREATE TABLE scan_errors (
	error_id INTEGER NOT NULL, 
	run_id INTEGER NOT NULL, 
	source_id INTEGER, 
	kind VARCHAR(32) NOT NULL, 
	path TEXT NOT NULL, 
	line INTEGER, 
	message TEXT NOT NULL, 
	CONSTRAINT pk_scan_errors PRIMARY KEY (error_id), 
	CONSTRAINT fk_scan_errors_run_id_runs FOREIGN KEY(run_id) REFERENCES runs (run_id) ON DELETE CASCADE, 
	CONSTRAINT fk_scan_errors_source_id_sources FOREIGN KEY(source_id) REFERENCES sources (source_id)
);

CREATE INDEX ix_scan_errors_run_id ON scan_errors (run_id);

CREATE INDEX ix_scan_errors_source_id ON scan_errors (source_id);

CREATE TABLE locks (
	name VARCHAR(255) NOT NULL, 
	owner VARCHAR(255) NOT NULL, 
	owner_host VARCHAR(255) NOT NULL, 
	owner_pid INTEGER NOT NULL, 
	acquired_at DATETIME NOT NULL, 
	expires_at DATETIME NOT NULL, 
	CONSTRAINT pk_locks PRIMARY KEY (name)
);

CREATE TABLE run_policy_tallies (
	run_id INTEGER NOT NULL, 
	source_id INTEGER NOT NULL, 
	policy_id INTEGER NOT NULL, 
	status VARCHAR(8) NOT NULL, 
	count INTEGER NOT NULL, 
	CONSTRAINT pk_run_policy_tallies PRIMARY KEY (run_id, source_id, policy_id, status), 
	CONSTRAINT fk_run_policy_tallies_policy_id_policies FOREIGN KEY(policy_id) REFERENCES policies (policy_id), 
	CONSTRAINT fk_run_policy_tallies_run_id_runs FOREIGN KEY(run_id) REFERENCES runs (run_id) ON DELETE CASCADE, 
	CONSTRAINT fk_run_policy_tallies_source_id_sources FOREIGN KEY(source_id) REFERENCES sources (source_id)
);

CREATE INDEX ix_run_policy_tallies_policy_id ON run_policy_tallies (policy_id);

CREATE INDEX ix_run_policy_tallies_source_id ON run_policy_tallies (source_id);

CREATE TABLE "sources" (
	source_id INTEGER NOT NULL, 
	name TEXT NOT NULL, 
	type VARCHAR(16) NOT NULL, 
	findings_run_id INTEGER, 
	CONSTRAINT pk_sources PRIMARY KEY (source_id), 
	CONSTRAINT uq_sources_name UNIQUE (name), 
	CONSTRAINT fk_sources_findings_run_id_runs FOREIGN KEY(findings_run_id) REFERENCES runs (run_id) ON DELETE SET NULL
);

CREATE TABLE "run_sources" (
	run_id INTEGER NOT NULL, 
	source_id INTEGER NOT NULL, 
	url TEXT NOT NULL, 
	ref TEXT NOT NULL, 
	commit_sha VARCHAR(64) NOT NULL, 
	commit_at DATETIME, 
	error TEXT NOT NULL, 
	previous_run_id INTEGER, 
	CONSTRAINT pk_run_sources PRIMARY KEY (run_id, source_id), 
	CONSTRAINT fk_run_sources_run_id_runs FOREIGN KEY(run_id) REFERENCES runs (run_id) ON DELETE CASCADE, 
	CONSTRAINT fk_run_sources_previous_run_id_runs FOREIGN KEY(previous_run_id) REFERENCES runs (run_id) ON DELETE SET NULL, 
	CONSTRAINT fk_run_sources_source_id_sources FOREIGN KEY(source_id) REFERENCES sources (source_id)
);

CREATE INDEX ix_run_sources_source_id_run_id ON run_sources (source_id, run_id);

CREATE TABLE "policies" (
	policy_id INTEGER NOT NULL, 
	kind VARCHAR(64) NOT NULL, 
	namespace TEXT NOT NULL, 
	name TEXT NOT NULL, 
	digest VARCHAR(128) NOT NULL, 
	title TEXT NOT NULL, 
	category TEXT NOT NULL, 
	severity TEXT NOT NULL, 
	description TEXT NOT NULL, 
	failure_action VARCHAR(16) NOT NULL, 
	scored BOOLEAN NOT NULL, 
	CONSTRAINT pk_policies PRIMARY KEY (policy_id), 
	CONSTRAINT uq_policies_kind_namespace_name_digest UNIQUE (kind, namespace, name, digest)
);

CREATE TABLE "checks" (
	check_id INTEGER NOT NULL, 
	policy_kind VARCHAR(64) NOT NULL, 
	policy_namespace TEXT NOT NULL, 
	policy_name TEXT NOT NULL, 
	rule TEXT NOT NULL, 
	declared_rule TEXT NOT NULL, 
	CONSTRAINT pk_checks PRIMARY KEY (check_id), 
	CONSTRAINT uq_checks_policy_kind_policy_namespace_policy_name_rule UNIQUE (policy_kind, policy_namespace, policy_name, rule)
);

CREATE TABLE "resources" (
	resource_id INTEGER NOT NULL, 
	source_id INTEGER NOT NULL, 
	api_version TEXT NOT NULL, 
	kind TEXT NOT NULL, 
	namespace TEXT NOT NULL, 
	name TEXT NOT NULL, 
	CONSTRAINT pk_resources PRIMARY KEY (resource_id), 
	CONSTRAINT fk_resources_source_id_sources FOREIGN KEY(source_id) REFERENCES sources (source_id), 
	CONSTRAINT uq_resources_source_id_api_version_kind_namespace_name UNIQUE (source_id, api_version, kind, namespace, name)
);

CREATE TABLE "findings" (
	finding_id INTEGER NOT NULL, 
	source_id INTEGER NOT NULL, 
	resource_id INTEGER NOT NULL, 
	check_id INTEGER NOT NULL, 
	policy_id INTEGER NOT NULL, 
	first_run_id INTEGER, 
	first_seen_at DATETIME NOT NULL, 
	last_run_id INTEGER, 
	last_seen_at DATETIME, 
	resolved_run_id INTEGER, 
	resolved_at DATETIME, 
	end_reason VARCHAR(16), 
	CONSTRAINT pk_findings PRIMARY KEY (finding_id), 
	CONSTRAINT fk_findings_last_run_id_runs FOREIGN KEY(last_run_id) REFERENCES runs (run_id) ON DELETE SET NULL, 
	CONSTRAINT fk_findings_policy_id_policies FOREIGN KEY(policy_id) REFERENCES policies (policy_id), 
	CONSTRAINT fk_findings_source_id_sources FOREIGN KEY(source_id) REFERENCES sources (source_id), 
	CONSTRAINT fk_findings_resolved_run_id_runs FOREIGN KEY(resolved_run_id) REFERENCES runs (run_id) ON DELETE SET NULL, 
	CONSTRAINT fk_findings_resource_id_resources FOREIGN KEY(resource_id) REFERENCES resources (resource_id), 
	CONSTRAINT fk_findings_check_id_checks FOREIGN KEY(check_id) REFERENCES checks (check_id), 
	CONSTRAINT fk_findings_first_run_id_runs FOREIGN KEY(first_run_id) REFERENCES runs (run_id) ON DELETE SET NULL, 
	CONSTRAINT ck_findings_end_reason CHECK (end_reason = 'fixed' OR end_reason = 'resource_gone' OR end_reason = 'policy_changed' OR end_reason = 'policy_removed')
);

CREATE INDEX ix_findings_check_id ON findings (check_id);

CREATE INDEX ix_findings_resolved_run_id ON findings (resolved_run_id);

CREATE INDEX ix_findings_first_run_id ON findings (first_run_id);

CREATE INDEX ix_findings_resource_id_check_id ON findings (resource_id, check_id);

CREATE INDEX ix_findings_source_id_resolved_at ON findings (source_id, resolved_at);

CREATE INDEX ix_findings_last_run_id ON findings (last_run_id);

CREATE INDEX ix_findings_policy_id ON findings (policy_id);

CREATE TABLE "runs" (
	run_id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT, 
	status VARCHAR(16) NOT NULL, 
	"trigger" VARCHAR(16) NOT NULL, 
	started_at DATETIME NOT NULL, 
	finished_at DATETIME, 
	heartbeat_at DATETIME NOT NULL, 
	scanner_version VARCHAR(64) NOT NULL, 
	config_digest VARCHAR(128) NOT NULL, 
	owner_host VARCHAR(255) NOT NULL, 
	owner_pid INTEGER NOT NULL, 
	resource_count INTEGER DEFAULT '0' NOT NULL, 
	result_count INTEGER DEFAULT '0' NOT NULL, 
	pass_count INTEGER DEFAULT '0' NOT NULL, 
	fail_count INTEGER DEFAULT '0' NOT NULL, 
	warn_count INTEGER DEFAULT '0' NOT NULL, 
	error_count INTEGER DEFAULT '0' NOT NULL, 
	skip_count INTEGER DEFAULT '0' NOT NULL, 
	error_record_count INTEGER DEFAULT '0' NOT NULL, 
	CONSTRAINT ck_runs_status CHECK (status = 'running' OR status = 'succeeded' OR status = 'partial' OR status = 'failed' OR status = 'interrupted')
);

CREATE INDEX ix_runs_started_at ON runs (started_at);

CREATE INDEX ix_runs_status ON runs (status);

CREATE TABLE run_chain (
	position INTEGER NOT NULL, 
	run_id INTEGER NOT NULL, 
	previous_run_id INTEGER, 
	version INTEGER NOT NULL, 
	run_digest VARCHAR(80) NOT NULL, 
	sources_digest VARCHAR(80) NOT NULL, 
	policies_digest VARCHAR(80) NOT NULL, 
	results_digest VARCHAR(80) NOT NULL, 
	errors_digest VARCHAR(80) NOT NULL, 
	content_digest VARCHAR(80) NOT NULL, 
	chain_digest VARCHAR(80) NOT NULL, 
	pruned_at DATETIME, 
	CONSTRAINT pk_run_chain PRIMARY KEY (position)
);

CREATE INDEX ix_run_chain_run_id ON run_chain (run_id);

CREATE TABLE chain_anchors (
	anchor_id INTEGER NOT NULL, 
	run_id INTEGER NOT NULL, 
	position INTEGER NOT NULL, 
	chain_digest VARCHAR(80) NOT NULL, 
	pruned_at DATETIME NOT NULL, 
	CONSTRAINT pk_chain_anchors PRIMARY KEY (anchor_id)
);

CREATE TABLE result_cache (
	document_digest VARCHAR(64) NOT NULL, 
	entries BLOB NOT NULL, 
	last_run_id INTEGER NOT NULL, 
	CONSTRAINT pk_result_cache PRIMARY KEY (document_digest)
);

CREATE INDEX ix_result_cache_last_run_id ON result_cache (last_run_id);

CREATE TABLE shard_cache (
	shard_key VARCHAR(64) NOT NULL, 
	output BLOB NOT NULL, 
	last_run_id INTEGER NOT NULL, slot VARCHAR(64), 
	CONSTRAINT pk_shard_cache PRIMARY KEY (shard_key)
);

CREATE INDEX ix_shard_cache_last_run_id ON shard_cache (last_run_id);

CREATE TABLE observation_rows (
	observation_id INTEGER NOT NULL, 
	resource_id INTEGER NOT NULL, 
	path TEXT NOT NULL, 
	document_index INTEGER NOT NULL, 
	item_index INTEGER, 
	line INTEGER, 
	commit_sha VARCHAR(64), 
	overlay TEXT, 
	patches TEXT, 
	content_digest VARCHAR(64), 
	CONSTRAINT pk_observation_rows PRIMARY KEY (observation_id), 
	CONSTRAINT fk_observation_rows_resource_id_resources FOREIGN KEY(resource_id) REFERENCES resources (resource_id)
);

CREATE INDEX ix_observation_rows_resource_id ON observation_rows (resource_id);

CREATE TABLE result_rows (
	observation_id INTEGER NOT NULL, 
	check_id INTEGER NOT NULL, 
	resource_id INTEGER NOT NULL, 
	policy_id INTEGER NOT NULL, 
	status VARCHAR(8) NOT NULL, 
	action VARCHAR(8) NOT NULL, 
	message TEXT NOT NULL, 
	path TEXT NOT NULL, 
	CONSTRAINT pk_result_rows PRIMARY KEY (observation_id, check_id), 
	CONSTRAINT ck_result_rows_status CHECK (status = 'pass' OR status = 'fail' OR status = 'warn' OR status = 'error' OR status = 'skip')
)
 WITHOUT ROWID

;

CREATE INDEX ix_result_rows_resource_id_check_id ON result_rows (resource_id, check_id);

CREATE TABLE run_observation_blocks (
	run_id INTEGER NOT NULL, 
	block INTEGER NOT NULL, 
	bits BIGINT NOT NULL, 
	CONSTRAINT pk_run_observation_blocks PRIMARY KEY (run_id, block), 
	CONSTRAINT fk_run_observation_blocks_run_id_runs FOREIGN KEY(run_id) REFERENCES runs (run_id) ON DELETE CASCADE
);

CREATE INDEX ix_run_observation_blocks_block ON run_observation_blocks (block);

CREATE TABLE tally_rows (
	tally_id INTEGER NOT NULL, 
	source_id INTEGER NOT NULL, 
	check_id INTEGER NOT NULL, 
	namespace TEXT NOT NULL, 
	status VARCHAR(8) NOT NULL, 
	policy_id INTEGER NOT NULL, 
	count INTEGER NOT NULL, 
	CONSTRAINT pk_tally_rows PRIMARY KEY (tally_id), 
	CONSTRAINT fk_tally_rows_check_id_checks FOREIGN KEY(check_id) REFERENCES checks (check_id), 
	CONSTRAINT fk_tally_rows_policy_id_policies FOREIGN KEY(policy_id) REFERENCES policies (policy_id), 
	CONSTRAINT fk_tally_rows_source_id_sources FOREIGN KEY(source_id) REFERENCES sources (source_id)
);

CREATE INDEX ix_tally_rows_check_id ON tally_rows (check_id);

CREATE INDEX ix_tally_rows_policy_id ON tally_rows (policy_id);

CREATE INDEX ix_tally_rows_source_id ON tally_rows (source_id);

CREATE TABLE run_tally_blocks (
	run_id INTEGER NOT NULL, 
	block INTEGER NOT NULL, 
	bits BIGINT NOT NULL, 
	CONSTRAINT pk_run_tally_blocks PRIMARY KEY (run_id, block), 
	CONSTRAINT fk_run_tally_blocks_run_id_runs FOREIGN KEY(run_id) REFERENCES runs (run_id) ON DELETE CASCADE
);

CREATE INDEX ix_run_tally_blocks_block ON run_tally_blocks (block);

CREATE VIEW resource_observations AS
SELECT o.observation_id, m.run_id, o.resource_id, o.path, o.document_index, o.item_index, o.line,
       COALESCE(o.commit_sha, (SELECT rs.commit_sha FROM resources r
                               JOIN run_sources rs ON rs.source_id = r.source_id
                               WHERE r.resource_id = o.resource_id AND rs.run_id = m.run_id), '') AS commit_sha,
       o.overlay, o.patches
FROM run_observation_blocks m JOIN observation_rows o
  ON o.observation_id BETWEEN m.block * 32 AND m.block * 32 + 31 AND m.block = (o.observation_id >> 5)
 AND ((m.bits >> CAST(o.observation_id & 31 AS INTEGER)) & 1) = 1;

CREATE VIEW results AS
SELECT r.observation_id, r.check_id, m.run_id, r.resource_id, r.policy_id, r.status, r.action, r.message, r.path
FROM run_observation_blocks m JOIN result_rows r
  ON r.observation_id BETWEEN m.block * 32 AND m.block * 32 + 31 AND m.block = (r.observation_id >> 5)
 AND ((m.bits >> CAST(r.observation_id & 31 AS INTEGER)) & 1) = 1;

CREATE VIEW run_tallies AS
SELECT m.run_id, x.source_id, x.check_id, x.namespace, x.status, x.policy_id, x.count
FROM run_tally_blocks m JOIN tally_rows x
  ON x.tally_id BETWEEN m.block * 32 AND m.block * 32 + 31 AND m.block = (x.tally_id >> 5)
 AND ((m.bits >> CAST(x.tally_id & 31 AS INTEGER)) & 1) = 1;

CREATE INDEX ix_shard_cache_slot ON shard_cache (slot);
