"""Report data read from the store: the trend of the runs up to the rendered one."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from scanner.engine.types import RuleStatus
from scanner.scan.report_data import build_report_data, read_run_outcome, read_run_results, report_data
from scanner.store import ErrorRecord, PolicyRecord, ResourceRecord, RunStatus, Store
from tests.store.conftest import day
from tests.store.scan_helpers import pod, scan

FAIL, PASS = RuleStatus.FAIL, RuleStatus.PASS
CHECK = ("require-labels", "check")  # a medium severity policy


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store(f"sqlite:///{tmp_path / 'reports.db'}") as opened:
        yield opened


def _runs(store: Store, statuses: list[RunStatus | None]) -> list[int]:
    """One run a day, the i-th failing on i pods, ending with the given statuses."""
    return [scan(store, day(i), {pod(f"p{n}"): {CHECK: FAIL if n < i else PASS} for n in range(len(statuses))},
                 status=status) for i, status in enumerate(statuses)]


DONE, FAILED, INTERRUPTED = RunStatus.SUCCEEDED, RunStatus.FAILED, RunStatus.INTERRUPTED


@pytest.mark.parametrize(("statuses", "rendered", "history", "trend"), [
    pytest.param([DONE] * 6, 0, 1, [0], id="first-run-history-1"),
    pytest.param([DONE] * 6, 1, 30, [0, 1], id="old-run-keeps-earlier-runs-only"),
    pytest.param([DONE] * 6, 4, 2, [3, 4], id="old-run-last-2"),
    pytest.param([DONE] * 6, 5, 3, [3, 4, 5], id="latest-run-last-3"),
    pytest.param([DONE, FAILED, RunStatus.PARTIAL, INTERRUPTED, DONE, DONE], 4, 3, [0, 2, 4],
                 id="runs-that-did-not-complete-left-out"),
])
def test_trend_is_the_last_completed_runs_up_to_the_rendered_one(
        store: Store, statuses: list[RunStatus], rendered: int, history: int, trend: list[int]) -> None:
    ids = _runs(store, statuses)
    data = build_report_data(store, ids[rendered], history=history)
    assert [(p.run_id, p.total) for p in data.trend] == [(ids[i], i) for i in trend]


@pytest.mark.parametrize(("severity", "key"), [
    pytest.param("high", "high", id="known-severity"),
    pytest.param("moderate", "unset", id="unknown-severity-is-unset"),
    pytest.param("", "unset", id="no-severity-is-unset"),
])
@pytest.mark.parametrize("findings_only", [False, True], ids=["every-result", "findings-only"])
def test_trend_counts_severities_as_the_summary_does(store: Store, severity: str, key: str,
                                                     findings_only: bool) -> None:
    policy = PolicyRecord(kind="ClusterPolicy", name="p", digest="sha256:p", severity=severity)
    run_id = scan(store, day(0), {pod("a"): {("p", "r"): FAIL}, pod("b"): {("p", "r"): FAIL}},
                  policies=[policy])
    data = build_report_data(store, run_id, findings_only=findings_only)
    assert data.summary.failures_by_severity[key] == 2
    assert [dict(p.failures) for p in data.trend] == [{key: 2}]


def test_trend_leaves_out_a_run_that_read_nothing(store: Store) -> None:
    first, second = _runs(store, [DONE, DONE])
    empty = scan(store, day(3), {}, status=RunStatus.PARTIAL)  # its only source failed
    data = build_report_data(store, empty)
    assert [p.run_id for p in data.trend] == [first, second]


@pytest.mark.parametrize(("other_run", "outcome_findings_only"), [
    pytest.param(True, False, id="outcome-of-another-run"),
    pytest.param(False, True, id="outcome-with-tallies-for-every-result"),
])
def test_report_data_refuses_parts_that_do_not_match(store: Store, other_run: bool,
                                                     outcome_findings_only: bool) -> None:
    first, second = _runs(store, [DONE, DONE])
    read = read_run_results(store, second)
    outcome = read_run_outcome(store, first if other_run else second, findings_only=outcome_findings_only)
    with pytest.raises(ValueError, match="report data parts do not match"):
        report_data(read, outcome)
    assert report_data(read, read_run_outcome(store, second)) == build_report_data(store, second)


def _rendered(overlay: str, patches: str | None = None) -> ResourceRecord:
    return ResourceRecord(source="repo", api_version="v1", kind="Pod", name="api", namespace=overlay.rsplit("/")[-1],
                          path="base/pod.yaml", line=4, commit_sha="c0ffee", overlay=overlay, patches=patches)


@pytest.mark.parametrize("findings_only", [False, True], ids=["every-result", "findings-only"])
def test_report_groups_a_base_defect_across_its_overlays(store: Store, findings_only: bool) -> None:
    first = scan(store, day(0), {pod("web"): {CHECK: PASS}})
    second = scan(store, day(1), {pod("web"): {CHECK: FAIL}, _rendered("o/dev"): {CHECK: FAIL},
                                  _rendered("o/prod", "o/prod/p.yaml"): {CHECK: FAIL}})
    data = build_report_data(store, second, findings_only=findings_only)
    assert data.previous_run_id == first
    (group_of_policy,) = data.failures_by_policy
    assert [(g.location, g.overlays, len(g.findings)) for g in group_of_policy.groups] == [
        ("apps/web.yaml:1", (), 1), ("base/pod.yaml:4", ("o/dev", "o/prod"), 2)]
    prod = next(r.resource for r in data.results if r.resource.overlay == "o/prod")
    assert prod.via == "via overlay o/prod, patched by o/prod/p.yaml"
    assert sorted((c.name, c.namespace, c.location, c.commit, c.overlay) for c in data.new_findings) == [
        ("api", "dev", "base/pod.yaml:4", "c0ffee", "o/dev"), ("api", "prod", "base/pod.yaml:4", "c0ffee", "o/prod"),
        ("web", "default", "apps/web.yaml:1", "c0ffee", "")]


def _via(name: str, overlay: str, path: str) -> ResourceRecord:
    return ResourceRecord(source="repo", api_version="v1", kind="Pod", name=name, namespace="default", path=path,
                          line=1, commit_sha="c0ffee", overlay=overlay)


@pytest.mark.parametrize("findings_only", [False, True], ids=["every-result", "findings-only"])
def test_report_coverage_counts_what_rendered_each_resource_and_lists_what_was_not_scanned(
        store: Store, findings_only: bool) -> None:
    chart = "chart charts/web (release web in shop)"
    app = "Application argocd/guestbook (argo/app.yaml:3)"
    run_id = scan(store, day(0), {
        pod("raw"): {CHECK: PASS}, _rendered("o/dev"): {CHECK: FAIL},
        _via("web-a", chart, "charts/web/templates/a.yaml"): {CHECK: PASS},
        _via("web-b", chart, "charts/web/templates/b.yaml"): {CHECK: PASS},
        _via("ui", app, "guestbook/ui.yaml"): {CHECK: PASS}},
        errors=[ErrorRecord("not scanned: https://charts.example chart redis", "not-scanned", "repo", "argo/x.yaml", 7),
                ErrorRecord("helm template failed: boom", "render", "repo", "charts/bad/Chart.yaml", 1),
                ErrorRecord("bad YAML", "yaml", "repo", "broken.yaml", 2)])
    data = build_report_data(store, run_id, findings_only=findings_only)
    (coverage,) = data.coverage
    assert coverage.source == "repo"
    assert [(e.kind, e.label, e.resources, e.files) for e in coverage.entries] == [
        ("files", "files read as they are", 1, 1), ("kustomize", "overlay o/dev", 1, 1),
        ("chart", chart, 2, 2), ("gitops", app, 1, 1)]
    assert [(e.location, e.message) for e in coverage.not_scanned] == [
        ("argo/x.yaml:7", "not scanned: https://charts.example chart redis"),
        ("charts/bad/Chart.yaml:1", "helm template failed: boom")]
