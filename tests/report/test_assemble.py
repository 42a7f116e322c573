"""assemble_report: the derived views follow from the results, in a fixed order."""

from __future__ import annotations

import random
from datetime import UTC, datetime

import pytest

from scanner.errors import ReportError
from scanner.report.assemble import assemble_report
from scanner.report.chart import _nice_step, trend_chart
from scanner.report.data import ReportData, ResultRecord, TrendPoint
from scanner.report.formatting import duration_text, iso_time
from tests.report.fixtures import sample_report_data


def test_assemble_report_groups_findings_by_policy(sample_data: ReportData) -> None:
    grouped = {g.policy.name: [(r.rule, r.resource.key, r.status.value) for r in g.findings]
               for g in sample_data.failures_by_policy}
    assert grouped == {
        "disallow-privileged": [("privileged-containers", "Pod/tools/debug", "fail")],
        "require-labels": [("check-app-label", "Deployment/shop/db", "fail"),
                           ("check-team", "Deployment/shop/web", "warn")],
        "require-limits": [("validate-resources", "Deployment/shop/db", "error"),
                           ("validate-resources", "Deployment/shop/web", "fail")],
        "team-naming": [("name-prefix", "Namespace/shop", "fail")],
    }
    assert [g.policy.name for g in sample_data.failures_by_policy] == [
        "disallow-privileged", "require-labels", "require-limits", "team-naming"]


def test_assemble_report_counts_by_status_severity_namespace_source(
        sample_data: ReportData) -> None:
    s = sample_data.summary
    assert dict(s.by_status) == {"fail": 4, "error": 1, "warn": 1, "pass": 4, "skip": 1}
    assert dict(s.failures_by_severity) == {"critical": 0, "high": 1, "medium": 1, "low": 1,
                                            "info": 0, "unset": 1}
    assert (s.resources, s.policies, s.results) == (5, 4, 11)
    assert {g.key: (g.counts["fail"], g.resources, g.failing_resources)
            for g in sample_data.by_namespace} == {
        "shop": (2, 2, 2), "tools": (1, 1, 1), "(cluster)": (1, 2, 1)}
    assert {g.key: (g.counts["fail"], g.counts["skip"]) for g in sample_data.by_source} == {
        "platform": (3, 0), "apps": (1, 1)}


def test_assemble_report_order_does_not_depend_on_input_order() -> None:
    data = sample_report_data()
    shuffled = list(data.results)
    random.Random(7).shuffle(shuffled)
    again = assemble_report(run=data.run, policies=reversed(data.policies), results=shuffled,
                            errors=reversed(data.errors), previous_run_id=41,
                            new_findings=data.new_findings,
                            resolved_findings=data.resolved_findings,
                            trend=reversed(data.trend), exceptions=data.exceptions,
                            not_evaluated=reversed(data.not_evaluated))
    assert again == data


def test_assemble_report_unknown_policy_is_report_error(sample_data: ReportData) -> None:
    stray = ResultRecord(policy="ghost", rule="r", status=sample_data.results[0].status,
                         message="", resource=sample_data.results[0].resource)
    with pytest.raises(ReportError, match="unknown policy 'ghost'"):
        assemble_report(run=sample_data.run, policies=sample_data.policies,
                        results=[*sample_data.results, stray])


@pytest.mark.parametrize(("maximum", "step"), [
    pytest.param(0, 1, id="no-failures-step-one"),
    pytest.param(4, 1, id="four-failures-step-one"),
    pytest.param(9, 5, id="nine-failures-step-five"),
    pytest.param(21, 10, id="twenty-one-failures-step-ten"),
    pytest.param(300_000, 100_000, id="large-counts-round-step"),
])
def test_chart_nice_step_covers_maximum(maximum: int, step: int) -> None:
    assert _nice_step(maximum) == step
    assert step * 4 >= maximum


def test_chart_bars_stack_severities_per_run() -> None:
    t = datetime(2024, 1, 1, tzinfo=UTC)
    chart = trend_chart((TrendPoint(1, t, {"high": 2, "low": 2}), TrendPoint(2, t, {})))
    assert [(b.severity, b.value) for b in chart.bars] == [("high", 2), ("low", 2)]
    high, low = chart.bars
    assert high.y + high.height == chart.plot_bottom
    assert low.y + low.height == pytest.approx(high.y)
    assert [label.text for label in chart.run_labels] == ["#1", "#2"]
    assert chart.severities == ("high", "low")


@pytest.mark.parametrize(("seconds", "text"), [
    pytest.param(None, "-", id="unknown-duration-dash"),
    pytest.param(4.24, "4.2s", id="seconds-one-decimal"),
    pytest.param(125, "2m 05s", id="minutes-and-seconds"),
    pytest.param(3723, "1h 02m 03s", id="hours-minutes-seconds"),
])
def test_formatting_duration_text(seconds: float | None, text: str) -> None:
    assert duration_text(seconds) == text


def test_formatting_iso_time_rejects_naive_datetime() -> None:
    with pytest.raises(ValueError, match="timezone-aware"):
        iso_time(datetime(2024, 1, 1))
