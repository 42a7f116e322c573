"""Queries: summaries, diffs, trends, resource history, latest runs, report data."""

from __future__ import annotations

import pytest

from scanner.engine.types import FailureAction, RuleStatus
from scanner.errors import StoreError
from scanner.store import ResourceRecord, ResourceRef, SourceRecord, SourceType, Store
from tests.store.conftest import day
from tests.store.scan_helpers import pod, policy, scan

P, F, W, S = RuleStatus.PASS, RuleStatus.FAIL, RuleStatus.WARN, RuleStatus.SKIP
NONE = {"pass": 0, "fail": 0, "warn": 0, "error": 0, "skip": 0}
LABELS, LATEST = ("require-labels", "check-labels"), ("disallow-latest", "check-tag")
WEB, DB, NODE = pod("web"), pod("db", namespace="data"), pod("cache", namespace="data",
                                                             source="export")


def _counts(groups: object) -> dict[tuple[str, ...], dict[str, int]]:
    return {g.key: {k: v for k, v in g.counts.as_dict().items() if v}  # type: ignore[attr-defined]
            for g in groups}  # type: ignore[attr-defined]


def test_queries_summary_counts_by_every_dimension(store: Store) -> None:
    run_id = scan(store, day(0), {WEB: {LABELS: F, LATEST: P}, DB: {LABELS: P, LATEST: W},
                                  NODE: {LABELS: F, LATEST: S}})
    summary = store.summarize_run(run_id)
    assert summary.by_status.as_dict() == {"pass": 2, "fail": 2, "warn": 1, "error": 0,
                                           "skip": 1}
    assert _counts(summary.by_policy) == {("disallow-latest",): {"pass": 1, "warn": 1, "skip": 1},
                                          ("require-labels",): {"pass": 1, "fail": 2}}
    assert _counts(summary.by_rule) == {
        ("disallow-latest", "check-tag"): {"pass": 1, "warn": 1, "skip": 1},
        ("require-labels", "check-labels"): {"pass": 1, "fail": 2}}
    assert _counts(summary.by_namespace) == {("data",): {"pass": 1, "fail": 1, "warn": 1,
                                                         "skip": 1},
                                             ("default",): {"pass": 1, "fail": 1}}
    assert _counts(summary.by_severity) == {("high",): {"pass": 1, "warn": 1, "skip": 1},
                                            ("medium",): {"pass": 1, "fail": 2}}
    assert _counts(summary.by_source) == {("export",): {"fail": 1, "skip": 1},
                                          ("repo",): {"pass": 2, "fail": 1, "warn": 1}}


def _diff_keys(entries: object) -> dict[tuple[str, str, str], tuple[str | None, str | None]]:
    return {(e.resource.name, e.policy, e.rule): (e.status_before, e.status_after)  # type: ignore[attr-defined]
            for e in entries}  # type: ignore[attr-defined]


def test_queries_diff_reports_new_resolved_and_still_failing(store: Store) -> None:
    base = scan(store, day(0), {WEB: {LABELS: F, LATEST: F}, DB: {LABELS: F, LATEST: P}})
    head = scan(store, day(1), {WEB: {LABELS: F, LATEST: P}, DB: {LABELS: W, LATEST: F},
                                pod("new"): {LABELS: F}})
    diff = store.diff_runs(base, head, include_still_failing=True)
    assert (diff.new_count, diff.resolved_count, diff.still_failing_count) == (2, 1, 2)
    assert _diff_keys(diff.new) == {("db", "disallow-latest", "check-tag"): (P, F),
                                    ("new", "require-labels", "check-labels"): (None, F)}
    assert _diff_keys(diff.resolved) == {("web", "disallow-latest", "check-tag"): (F, P)}
    assert _diff_keys(diff.still_failing) == {("web", "require-labels", "check-labels"): (F, F),
                                              ("db", "require-labels", "check-labels"): (F, W)}
    assert diff.new[0].file == "apps/db.yaml"
    assert len(store.diff_runs(base, head, limit=1).new) == 1
    assert store.diff_runs(base, head).still_failing == ()


def test_queries_diff_ignores_sources_that_failed_in_either_run(store: Store) -> None:
    base = scan(store, day(0), {WEB: {LABELS: F}, NODE: {LABELS: F}})
    head = scan(store, day(1), {WEB: {LABELS: F}}, sources=[
        SourceRecord(name="repo", type=SourceType.GIT),
        SourceRecord(name="export", type=SourceType.EXPORT, error="file not found")])
    diff = store.diff_runs(base, head)
    assert (diff.new_count, diff.resolved_count, diff.still_failing_count) == (0, 0, 1)


def test_queries_trend_per_run_and_per_day_grouped(store: Store) -> None:
    first = scan(store, day(0), {WEB: {LABELS: F, LATEST: F}})
    second = scan(store, day(0, hours=5), {WEB: {LABELS: F, LATEST: P}})
    third = scan(store, day(2), {WEB: {LABELS: P, LATEST: P}, NODE: {LATEST: F}})
    per_run = store.trend(since=day(-1))
    assert [(p.bucket, p.key, p.counts.failed, p.counts.passed) for p in per_run] == [
        (str(first), "", 2, 0), (str(second), "", 1, 1), (str(third), "", 1, 2)]
    per_day = store.trend(since=day(-1), bucket="day", group_by="severity")
    assert [(p.bucket, p.key, p.counts.failed, p.runs) for p in per_day] == [
        ("2024-03-01", "high", 1, (first, second)), ("2024-03-01", "medium", 2, (first, second)),
        ("2024-03-03", "high", 1, (third,)), ("2024-03-03", "medium", 0, (third,))]
    by_source = store.trend(since=day(1), group_by="source")
    assert [(p.key, p.counts.failed) for p in by_source] == [("export", 1), ("repo", 0)]
    by_policy = store.trend(since=day(-1), until=day(1), group_by="policy",
                            sources=["repo"])
    assert {(p.bucket, p.key): p.counts.failed for p in by_policy} == {
        (str(first), "disallow-latest"): 1, (str(first), "require-labels"): 1,
        (str(second), "disallow-latest"): 0, (str(second), "require-labels"): 1}
    failures = store.trend(since=day(-1), group_by="severity", statuses=["fail"])
    assert [(p.bucket, p.key, p.counts.as_dict()) for p in failures] == [
        (str(first), "high", {**NONE, "fail": 1}), (str(first), "medium", {**NONE, "fail": 1}),
        (str(second), "medium", {**NONE, "fail": 1}), (str(third), "high", {**NONE, "fail": 1})]


def test_queries_resource_history_lists_provenance_and_results(store: Store) -> None:
    first = scan(store, day(0), {pod("web", line=3): {LABELS: F}})
    second = scan(store, day(1), {pod("web", path="apps/moved.yaml", line=9): {LABELS: P}})
    history = store.resource_history(ResourceRef("repo", "v1", "Pod", "default", "web"))
    assert history is not None
    assert [(e.run_id, e.file, e.line, [(r.policy, r.rule, r.status) for r in e.results])
            for e in history.entries] == [
        (second, "apps/moved.yaml", 9, [("require-labels", "check-labels", P)]),
        (first, "apps/web.yaml", 3, [("require-labels", "check-labels", F)])]
    assert store.resource_history(ResourceRef("repo", "v1", "Pod", "default", "nope")) is None


def test_queries_report_results_follow_policy_rule_then_resource_order(store: Store) -> None:
    # (policy namespace, policy, rule), then (namespace, kind, name, source, file): stored in
    # another order, sorted by the ranks the database gives the checks and observations
    def node(name: str, source: str = "repo") -> ResourceRecord:
        return ResourceRecord(source=source, api_version="v1", kind="Node", name=name, namespace="",
                              path=f"nodes/{name}.yaml", line=1, commit_sha="c0ffee")

    web_b = pod("web", source="b-repo")
    web_again = pod("web", path="apps/z-web.yaml")
    local = ("team/ns-policy", "check-local")
    outcome = {web_again: {LABELS: F, local: P}, web_b: {LABELS: P}, node("n2"): {LABELS: P, LATEST: F},
               WEB: {LABELS: P, LATEST: P}, node("n1", source="b-repo"): {LABELS: W}, DB: {LABELS: P}}
    run_id = scan(store, day(0), outcome, policies=[policy("require-labels"), policy("disallow-latest"),
                                                    policy("ns-policy", namespace="team")],
                  sources=[SourceRecord(name=n, type=SourceType.GIT, url=f"https://git.example/{n}.git",
                                        commit_sha="c0ffee") for n in ("repo", "b-repo")])
    assert [(r.policy.name, r.rule, r.resource.namespace, r.resource.kind, r.resource.name, r.resource.source,
             r.file) for r in store.iter_run_results(run_id)] == [
        ("disallow-latest", "check-tag", "", "Node", "n2", "repo", "nodes/n2.yaml"),
        ("disallow-latest", "check-tag", "default", "Pod", "web", "repo", "apps/web.yaml"),
        ("require-labels", "check-labels", "", "Node", "n1", "b-repo", "nodes/n1.yaml"),
        ("require-labels", "check-labels", "", "Node", "n2", "repo", "nodes/n2.yaml"),
        ("require-labels", "check-labels", "data", "Pod", "db", "repo", "apps/db.yaml"),
        ("require-labels", "check-labels", "default", "Pod", "web", "b-repo", "apps/web.yaml"),
        ("require-labels", "check-labels", "default", "Pod", "web", "repo", "apps/web.yaml"),
        ("require-labels", "check-labels", "default", "Pod", "web", "repo", "apps/z-web.yaml"),
        ("ns-policy", "check-local", "default", "Pod", "web", "repo", "apps/z-web.yaml")]
    assert [(r.rule, r.resource.name, r.status) for r in store.iter_run_results(run_id, statuses=[F, W])] == [
        ("check-tag", "n2", F), ("check-labels", "n1", W), ("check-labels", "web", F)]


def test_queries_latest_and_previous_runs(store: Store) -> None:
    first = scan(store, day(0), {WEB: {LABELS: P}, NODE: {LABELS: P}})
    second = scan(store, day(1), {WEB: {LABELS: F}})
    latest = {entry.source.name: entry.run.run_id for entry in store.latest_per_source()}
    assert latest == {"repo": second, "export": first}
    assert store.latest_run_id() == second
    assert store.latest_run_id("export") == first
    assert store.previous_run_id(second) == first
    assert store.previous_run_id(first) is None
    assert [r.run_id for r in store.list_runs(source="export")] == [first]
    with pytest.raises(StoreError, match=rf"run 99 does not exist; the latest runs are: "
                                         rf"{second}, {first}"):
        store.get_run(99)


def test_queries_report_results_are_joined_and_ordered(store: Store) -> None:
    run_id = scan(store, day(0), {WEB: {LABELS: F, LATEST: P}, DB: {LABELS: P}})
    rows = list(store.iter_run_results(run_id))
    assert [(r.policy.name, r.rule, r.resource.namespace, r.resource.name, r.status)
            for r in rows] == [("disallow-latest", "check-tag", "default", "web", P),
                               ("require-labels", "check-labels", "data", "db", P),
                               ("require-labels", "check-labels", "default", "web", F)]
    failing = list(store.iter_run_results(run_id, statuses=[F]))
    assert len(failing) == 1
    row = failing[0]
    assert (row.policy.severity, row.policy.title, row.policy.failure_action, row.file,
            row.line, row.commit_sha, row.message, row.path) == (
        "medium", "Require Labels", FailureAction.AUDIT, "apps/web.yaml", 1, "c0ffee",
        "check-labels fail", "/spec")
    assert [p.name for p in store.run_policies(run_id)] == ["disallow-latest", "require-labels"]


def test_queries_report_trend_counts_failures_per_severity_of_each_run(store: Store) -> None:
    from scanner.scan.report_data import build_report_data

    first = scan(store, day(0), {WEB: {LABELS: F, LATEST: F}, DB: {LABELS: W, LATEST: P}})
    second = scan(store, day(1), {WEB: {LABELS: P, LATEST: P}})
    third = scan(store, day(2), {WEB: {LABELS: F, LATEST: P}, NODE: {LATEST: F}})
    trend = build_report_data(store, third).trend
    assert [(p.run_id, {s: p.failures.get(s, 0) for s in ("high", "medium", "low")}) for p in trend] == [
        (first, {"high": 1, "medium": 1, "low": 0}), (second, {"high": 0, "medium": 0, "low": 0}),
        (third, {"high": 1, "medium": 1, "low": 0})]
    assert [p.run_id for p in build_report_data(store, second).trend] == [first, second]


def _rendered(name: str, overlay: str, patches: str | None) -> ResourceRecord:
    return ResourceRecord(source="repo", api_version="v1", kind="Pod", name=name, namespace=overlay.rsplit("/")[-1],
                          path="base/pod.yaml", line=7, commit_sha="c0ffee", overlay=overlay, patches=patches)


@pytest.mark.parametrize(("overlay", "patches", "expected_patches"), [
    pytest.param("overlays/dev", None, (), id="rendered-without-patches-keeps-its-overlay"),
    pytest.param("overlays/prod", "overlays/prod/a.yaml\noverlays/prod/b.yaml",
                 ("overlays/prod/a.yaml", "overlays/prod/b.yaml"), id="rendered-with-two-patches-keeps-both"),
])
def test_queries_rendered_resource_keeps_its_overlay_and_patches(
        store: Store, overlay: str, patches: str | None, expected_patches: tuple[str, ...]) -> None:
    first = scan(store, day(0), {WEB: {LABELS: P}})
    resource = _rendered("api", overlay, patches)
    second = scan(store, day(1), {WEB: {LABELS: P}, resource: {LABELS: F}})
    row = next(r for r in store.iter_run_results(second) if r.resource.name == "api")
    assert (row.file, row.line, row.overlay, row.patches) == ("base/pod.yaml", 7, overlay, expected_patches)
    plain = next(r for r in store.iter_run_results(second) if r.resource.name == "web")
    assert (plain.overlay, plain.patches) == ("", ())
    new = store.diff_runs(first, second).new
    assert [(e.file, e.line, e.commit_sha, e.overlay) for e in new] == [("base/pod.yaml", 7, "c0ffee", overlay)]
