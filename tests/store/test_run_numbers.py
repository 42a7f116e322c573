"""The numbers of a run as the store gives them, on every backend: distinct resources and the
documents read, policies not evaluated (never errors), severities grouped in lower case."""

from __future__ import annotations

from dataclasses import replace

import pytest

from scanner.engine.types import RuleStatus
from scanner.store import ErrorRecord, Store
from scanner.store.records import NOT_EVALUATED, UNSUPPORTED

from .conftest import day
from .scan_helpers import pod, policy, scan

P = RuleStatus.PASS
F = RuleStatus.FAIL


@pytest.mark.parametrize(("outcome", "resources", "documents"), [
    pytest.param({pod("a"): {("require-labels", "r"): P}, pod("b"): {("require-labels", "r"): F}}, 2, 2,
                 id="two-objects-two-documents"),
    pytest.param({pod("a"): {("require-labels", "r"): P},
                  pod("a", path="overlays/prod/a.yaml"): {("require-labels", "r"): P}}, 1, 2,
                 id="one-object-in-two-files-is-one-resource-two-documents"),
    pytest.param({pod("a"): {}}, 1, 1, id="a-document-without-results-is-read"),
])
def test_run_detail_counts_distinct_resources_and_documents_read(store: Store, outcome: dict, resources: int,
                                                                  documents: int) -> None:
    run_id = scan(store, day(0), outcome, policies=[policy("require-labels")])
    detail = store.get_run(run_id)
    assert (detail.run.resources, detail.documents) == (resources, documents)
    assert store.list_runs(limit=1)[0].resources == resources


@pytest.mark.parametrize(("kinds", "error_records", "not_evaluated"), [
    pytest.param([NOT_EVALUATED], 0, 1, id="not-evaluated-is-no-error"),
    pytest.param([NOT_EVALUATED, NOT_EVALUATED, "policy"], 1, 2, id="policy-error-counted-notices-not"),
    pytest.param([UNSUPPORTED, "manifest"], 2, 0, id="unsupported-kind-is-an-error"),
])
def test_run_errors_count_everything_but_policies_not_evaluated(store: Store, kinds: list[str], error_records: int,
                                                                 not_evaluated: int) -> None:
    errors = [ErrorRecord(message=f"{kind} {i}", kind=kind, path=f"policies/p{i}.yaml", line=i + 1)
              for i, kind in enumerate(kinds)]
    run_id = scan(store, day(0), {pod("a"): {("require-labels", "r"): P}}, errors=errors)
    detail = store.get_run(run_id)
    assert (detail.run.error_records, detail.not_evaluated) == (error_records, not_evaluated)
    assert [(e.kind, e.path, e.line) for e in store.run_errors(run_id)] == [
        (kind, f"policies/p{i}.yaml", i + 1) for i, kind in enumerate(kinds)]


@pytest.mark.parametrize("written", [
    pytest.param(["Medium", "medium"], id="capitalised-and-lower-case-are-one-severity"),
    pytest.param(["HIGH ", "high"], id="upper-case-with-space-is-one-severity"),
])
def test_summary_and_trend_group_severity_in_lower_case(store: Store, written: list[str]) -> None:
    """Policies stored before severities were lower-cased on writing still group as one."""
    policies = [replace(policy(f"p{i}"), severity=severity) for i, severity in enumerate(written)]
    outcome = {pod("a"): {(p.name, "r"): F for p in policies}}
    scan(store, day(0), outcome, policies=policies)
    run_id = store.latest_run_id()
    summary = store.summarize_run(run_id)
    expected = written[-1].strip().lower()
    assert [(g.key, g.counts.failed) for g in summary.by_severity] == [((expected,), len(written))]
    points = store.trend(since=day(-1), group_by="severity", statuses=["fail"])
    assert [(p.key, p.counts.failed) for p in points] == [(expected, len(written))]
