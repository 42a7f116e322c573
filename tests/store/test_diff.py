"""Diffs read from the findings agree with diffs that compare results, and are used whenever
the head run continued the findings of every common source from the base run."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import timedelta

import pytest
from sqlalchemy import update

from scanner.engine.types import RuleStatus
from scanner.store import PolicyRecord, RunStatus, SourceRecord, SourceType, Store
from scanner.store.diff import diff_runs, plan_diff
from scanner.store.models import Run
from scanner.store.records import EndReason
from tests.store.conftest import day
from tests.store.scan_helpers import Outcome, pod, policy, scan

P, F, W, E = RuleStatus.PASS, RuleStatus.FAIL, RuleStatus.WARN, RuleStatus.ERROR
LABELS, LATEST = ("require-labels", "check-labels"), ("disallow-latest", "check-tag")
WEB, DB, NEW = pod("web"), pod("db"), pod("new")
WEB_A, WEB_B = pod("web", path="overlays/a/web.yaml"), pod("web", path="overlays/b/web.yaml")
CACHE, QUEUE = pod("cache", source="export"), pod("queue", source="export")
REPO_DOWN = [SourceRecord(name="repo", type=SourceType.GIT, error="clone failed"),
             SourceRecord(name="export", type=SourceType.EXPORT)]


@dataclass(frozen=True)
class Step:
    """One scan of a scenario."""

    outcome: Outcome
    policies: Sequence[PolicyRecord] | None = None
    sources: Sequence[SourceRecord] = field(default_factory=tuple)
    status: RunStatus | None = None


def _run(store: Store, steps: Sequence[Step]) -> list[int]:
    return [scan(store, day(n), step.outcome, policies=step.policies, sources=step.sources,
                 status=step.status) for n, step in enumerate(steps)]


SCENARIOS = [
    pytest.param([Step({WEB: {LABELS: F, LATEST: F}, DB: {LABELS: F, LATEST: P}}),
                  Step({WEB: {LABELS: F, LATEST: P}, DB: {LABELS: W, LATEST: F},
                        NEW: {LABELS: F}})],
                 (0, 1), "findings", (2, 1, 2), id="consecutive-runs"),
    pytest.param([Step({WEB_A: {LABELS: P}, WEB_B: {LABELS: P}, DB: {LABELS: F}}),
                  Step({WEB_A: {LABELS: F}, WEB_B: {LABELS: F}, DB: {LABELS: P}})],
                 (0, 1), "findings", (2, 1, 0), id="resource-found-twice-failing-twice"),
    pytest.param([Step({WEB_A: {LABELS: F}, WEB_B: {LABELS: P}, DB: {LABELS: F}}),
                  Step({WEB_A: {LABELS: P}, WEB_B: {LABELS: F}, DB: {LABELS: P},
                        NEW: {LABELS: E}})],
                 (0, 1), "findings", (1, 1, 1), id="failure-moving-between-copies"),
    pytest.param([Step({WEB: {LABELS: E, LATEST: W}, DB: {LABELS: F}}),
                  Step({WEB: {LABELS: P, LATEST: F}, DB: {LABELS: F}},
                       policies=[policy("require-labels", digest="v2"),
                                 policy("disallow-latest")])],
                 (0, 1), "findings", (0, 1, 2), id="error-status-and-new-policy-version"),
    pytest.param([Step({WEB: {LABELS: F}}),
                  Step({}, sources=[SourceRecord(name="repo", type=SourceType.GIT,
                                                 error="clone failed")]),
                  Step({WEB: {LABELS: P}, DB: {LABELS: F}})],
                 (0, 2), "findings", (1, 1, 0), id="source-failed-in-between"),
    pytest.param([Step({WEB: {LABELS: F}}),
                  Step({WEB: {LABELS: P}}, status=RunStatus.FAILED),
                  Step({WEB: {LABELS: F}, DB: {LABELS: F}})],
                 (0, 2), "findings", (1, 0, 1), id="failed-run-in-between"),
    pytest.param([Step({WEB: {LABELS: F}, CACHE: {LABELS: F}}),
                  Step({CACHE: {LABELS: P}, QUEUE: {LABELS: F}}, sources=REPO_DOWN)],
                 (0, 1), "findings", (1, 1, 0), id="source-failed-in-head"),
    pytest.param([Step({WEB: {LABELS: F}}), Step({WEB: {LABELS: P}}),
                  Step({WEB: {LABELS: F}, DB: {LABELS: F}})],
                 (0, 2), "results", (1, 0, 1), id="run-in-between"),
    pytest.param([Step({WEB: {LABELS: F}}), Step({WEB: {LABELS: P}, DB: {LABELS: F}})],
                 (1, 0), "results", (1, 1, 0), id="head-before-base"),
]


@pytest.mark.parametrize(("steps", "pair", "method", "counts"), SCENARIOS)
def test_diff_from_findings_equals_diff_from_results(store: Store, steps: list[Step],
                                                     pair: tuple[int, int], method: str,
                                                     counts: tuple[int, int, int]) -> None:
    ids = _run(store, steps)
    base, head = ids[pair[0]], ids[pair[1]]
    with store.engine.connect() as connection:
        assert plan_diff(connection, base, head).method == method
        for limit in (None, 1, 0):
            chosen = diff_runs(connection, base, head, limit=limit, include_still_failing=True)
            compared = diff_runs(connection, base, head, limit=limit,
                                 include_still_failing=True, method="results")
            assert chosen == compared
            assert (chosen.new_count, chosen.resolved_count,
                    chosen.still_failing_count) == counts
            listed = counts[0] if limit is None else min(counts[0], limit)
            assert len(chosen.new) == listed
        compared = diff_runs(connection, base, head, limit=1, method="results")
    assert store.diff_runs(base, head, limit=1) == compared


def test_diff_findings_method_refused_when_head_did_not_continue_from_base(
        store: Store) -> None:
    first, _, third = _run(store, [Step({WEB: {LABELS: F}})] * 3)
    with store.engine.connect() as connection, pytest.raises(
            ValueError, match=rf"run {third} did not continue from run {first}"):
        diff_runs(connection, first, third, method="findings")


def test_diff_follows_the_order_runs_finished_in_not_their_clocks(store: Store) -> None:
    first = scan(store, day(0), {WEB: {LABELS: F}})
    second = scan(store, day(1), {WEB: {LABELS: P}, DB: {LABELS: F}})
    with store.engine.begin() as connection:  # the first run's host clock ran a day ahead
        connection.execute(update(Run).where(Run.run_id == first)
                           .values(finished_at=day(3) + timedelta(days=1)))
    third = scan(store, day(2), {DB: {LABELS: P}, NEW: {LABELS: F}})
    with store.engine.connect() as connection:
        assert plan_diff(connection, second, third).method == "findings"
        chosen = diff_runs(connection, second, third)
        assert chosen == diff_runs(connection, second, third, method="results")
    assert (chosen.new_count, chosen.resolved_count, chosen.still_failing_count) == (1, 1, 0)
    ended = {f.resource.name: f for f in store.list_findings(state="resolved")}
    assert (ended["db"].last_run_id, ended["db"].resolved_run_id,
            ended["db"].end_reason) == (second, third, EndReason.FIXED)
