"""Finding lifecycles across runs, and retention."""

from __future__ import annotations

import pytest
from sqlalchemy import text

from scanner.engine.types import RuleStatus
from scanner.store import (
    EndReason,
    ResourceRef,
    RunStart,
    RunStatus,
    SourceRecord,
    SourceType,
    Store,
    finish,
)
from tests.store.conftest import day
from tests.store.scan_helpers import pod, policy, scan

P, F = RuleStatus.PASS, RuleStatus.FAIL
LABELS, LATEST = ("require-labels", "check-labels"), ("disallow-latest", "check-tag")
WEB, DB, API = pod("web"), pod("db"), pod("api")


def _findings(store: Store) -> dict[tuple[str, str], list[tuple[object, ...]]]:
    out: dict[tuple[str, str], list[tuple[object, ...]]] = {}
    for f in sorted(store.list_findings(), key=lambda f: f.finding_id):
        out.setdefault((f.resource.name, f.policy), []).append(
            (f.first_run_id, f.last_run_id, f.resolved_run_id, f.end_reason))
    return out


def test_lifecycle_findings_open_continue_and_end_for_each_reason(store: Store) -> None:
    both = [policy("require-labels"), policy("disallow-latest")]
    r1 = scan(store, day(0), {WEB: {LABELS: F, LATEST: F}, DB: {LABELS: F}, API: {LABELS: F}},
              policies=both)
    r2 = scan(store, day(1), {WEB: {LABELS: P, LATEST: F}, API: {LABELS: F}},
              policies=[policy("require-labels"), policy("disallow-latest", digest="v2")])
    # web/require-labels fixed; db gone; web/disallow-latest continues under a new version
    r3 = scan(store, day(2), {WEB: {LABELS: F}, API: {LABELS: F}},
              policies=[policy("require-labels")])
    # disallow-latest removed; web/require-labels fails again: a new finding
    r4 = scan(store, day(3), {WEB: {LABELS: F}, API: {LABELS: P}},
              policies=[policy("require-labels", digest="v2")])
    assert _findings(store) == {
        ("web", "require-labels"): [(r1, r1, r2, EndReason.FIXED), (r3, r4, None, None)],
        ("web", "disallow-latest"): [(r1, r2, r3, EndReason.POLICY_REMOVED)],
        ("db", "require-labels"): [(r1, r1, r2, EndReason.RESOURCE_GONE)],
        ("api", "require-labels"): [(r1, r3, r4, EndReason.POLICY_CHANGED)],
    }
    [open_one] = store.list_findings(state="open")
    assert (open_one.first_seen_at, open_one.last_seen_at) == (day(2), day(3))
    assert {f.resource.name for f in store.list_findings(state="resolved",
                                                         policy="require-labels")} == {
        "web", "db", "api"}
    assert [f.end_reason for f in store.list_findings(resource=DB_REF)] == [
        EndReason.RESOURCE_GONE]


DB_REF = ResourceRef("repo", "v1", "Pod", "default", "db")


def test_lifecycle_failed_source_or_run_leaves_findings_open(store: Store) -> None:
    r1 = scan(store, day(0), {WEB: {LABELS: F}})
    scan(store, day(1), {}, sources=[SourceRecord(name="repo", type=SourceType.GIT,
                                                  error="clone failed")])
    scan(store, day(2), {WEB: {LABELS: P}}, status=RunStatus.FAILED)
    [finding] = store.list_findings()
    assert (finding.first_run_id, finding.last_run_id, finding.resolved_at) == (r1, r1, None)


def test_lifecycle_prune_deletes_old_runs_and_orphans(store: Store) -> None:
    old = scan(store, day(0), {pod("gone"): {LABELS: F}, WEB: {LABELS: F}},
               policies=[policy("require-labels", digest="old")])
    scan(store, day(1), {WEB: {LABELS: F}}, policies=[policy("require-labels", digest="old")])
    kept = scan(store, day(10), {WEB: {LABELS: F}})
    running = store.begin_run(RunStart(started_at=day(-5)))
    result = store.prune(keep_days=5, now=day(12))
    # the running scan may still use what no finished run references: kept for now
    assert (result.runs, result.resources, result.policies, result.findings, result.orphans_kept) == (
        2, 0, 0, 1, True)
    assert [r.run_id for r in store.list_runs()] == [running.run_id, kept]
    assert old not in [r.run_id for r in store.list_runs()]
    [finding] = store.list_findings()
    assert (finding.resource.name, finding.first_run_id, finding.first_seen_at) == (
        "web", None, day(0))
    assert store.summarize_run(kept).by_status.failed == 1
    running.finish()
    result = store.prune(keep_days=5, now=day(12))
    assert (result.runs, result.resources, result.policies, result.orphans_kept) == (1, 1, 1, False)


@pytest.mark.parametrize("database_url", ["postgres"], indirect=True)
@pytest.mark.postgres
@pytest.mark.parametrize(("threshold", "analyzed"), [
    pytest.param(1, {"result_rows", "observation_rows", "run_observation_blocks", "resources", "findings",
                     "tally_rows", "run_tally_blocks",
                     "run_policy_tallies", "run_sources", "run_policies", "sources", "checks", "policies"},
                 id="big-run-refreshes"),
    pytest.param(10**9, set(), id="small-run-leaves-them"),
])
def test_lifecycle_big_run_refreshes_postgres_statistics(
        store: Store, monkeypatch: pytest.MonkeyPatch, threshold: int,
        analyzed: set[str]) -> None:
    monkeypatch.setattr(finish, "ANALYZE_AFTER", threshold)
    scan(store, day(0), {WEB: {LABELS: F}, DB: {LABELS: P}})
    with store.engine.connect() as connection:
        fresh = {row[0] for row in connection.execute(text(
            "SELECT relname FROM pg_stat_user_tables "
            "WHERE schemaname = current_schema() AND last_analyze IS NOT NULL"))}
    assert fresh == analyzed
