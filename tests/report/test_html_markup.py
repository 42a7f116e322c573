"""The HTML reports' markup and style: what each page says and how its cells and badges are built."""

from __future__ import annotations

import dataclasses
import re

import pytest

from scanner.engine.types import FailureAction, RuleStatus
from scanner.report.data import PolicyInfo, ReportData, ResourceInfo, ResultRecord, Severity
from scanner.report.html import TEMPLATE_DIR, _counted, policy_rules, render_audit_html, render_html_report
from tests.report.fixtures import reassembled

NOTHING_EVALUATED = "Nothing was evaluated"
NO_FINDINGS = "No findings: every evaluated rule passed or was skipped."
HEX = "#[0-9a-f]{6}|#[0-9a-f]{3}"
CSS = (TEMPLATE_DIR / "report.css").read_text(encoding="utf-8")


def _as_stored(data: ReportData) -> ReportData:
    """The run as the store gives it back: no policy files or rule lists, no labels or annotations."""
    bare: dict[int, ResourceInfo] = {}

    def resource(res: ResourceInfo) -> ResourceInfo:
        return bare.setdefault(id(res), dataclasses.replace(res, labels=(), annotations=()))

    return reassembled(data, policies=[dataclasses.replace(p, path="", rules=()) for p in data.policies],
                       results=[dataclasses.replace(r, resource=resource(r.resource)) for r in data.results])


def _contrast(foreground: str, background: str) -> float:
    """The WCAG 2 contrast ratio of two ``#rgb`` or ``#rrggbb`` colours."""
    def luminance(colour: str) -> float:
        digits = colour[1:] if len(colour) == 7 else "".join(c * 2 for c in colour[1:])
        channels = [int(digits[i:i + 2], 16) / 255 for i in (0, 2, 4)]
        r, g, b = (c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels)
        return 0.2126 * r + 0.7152 * g + 0.0722 * b

    light, dark = sorted((luminance(foreground), luminance(background)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def test_css_hidden_rule_is_a_top_level_rule() -> None:
    depth, top_level = 0, []
    for match in re.finditer(r"[{}]|\[hidden\]", CSS):
        if match.group() == "{":
            depth += 1
        elif match.group() == "}":
            depth -= 1
        else:
            top_level.append(depth == 0)
    assert depth == 0
    assert top_level == [True]
    assert "[hidden]{display:none!important}" in CSS


def test_css_badges_reach_wcag_aa_contrast() -> None:
    colours = dict(re.findall(rf"--([\w-]+):({HEX})", CSS))
    default_text = re.search(rf"\.b\{{[^}}]*;color:({HEX})", CSS).group(1)
    badges = re.findall(rf"\.b\.([\w-]+)\{{background:var\(--([\w-]+)\)(?:;color:({HEX}))?\}}", CSS)
    names = {name for name, _, _ in badges}
    assert {"fail", "error", "warn", "pass", "skip", "critical", "high", "medium", "low", "info", "unset"} <= names
    ratios = {name: round(_contrast(text or default_text, colours[var]), 2) for name, var, text in badges}
    assert {name: r for name, r in ratios.items() if r < 4.5} == {}, ratios
    assert ratios["low"] >= 4.5 and ratios["warn"] >= 4.5  # white on #1f6feb: 4.63, on #9a6700: 4.87


def test_html_rule_and_policy_cells_wrap(sample_data: ReportData) -> None:
    html = render_html_report(sample_data)
    assert '<td class="wrap">privileged-containers</td><td class="msg wrap">' in html  # a finding's rule
    assert '<tr><td class="wrap">require-limits</td><td class="wrap">validate-resources</td>' in html  # a change


@pytest.mark.parametrize("render", [pytest.param(render_html_report, id="report-html"),
                                    pytest.param(render_audit_html, id="audit-html")])
def test_html_run_without_results_says_nothing_was_evaluated(render, sample_data: ReportData) -> None:
    html = render(reassembled(sample_data, results=[]))
    assert NOTHING_EVALUATED in html
    assert '<a href="#sources">Sources</a> and <a href="#errors">Errors</a>' in html
    assert '<h3 id="sources">Sources</h3>' in html
    assert NO_FINDINGS not in html


def test_html_run_with_only_passes_says_no_findings(sample_data: ReportData) -> None:
    passes = [r for r in sample_data.results if r.status is RuleStatus.PASS]
    for render in (render_html_report, render_audit_html):
        assert NOTHING_EVALUATED not in render(reassembled(sample_data, results=passes))
    assert NO_FINDINGS in render_html_report(reassembled(sample_data, results=passes))


@pytest.mark.parametrize(("count", "noun", "plural", "text"), [
    pytest.param(0, "result", "", "0 results", id="zero-plural"),
    pytest.param(1, "failure", "", "1 failure", id="one-singular"),
    pytest.param(2, "failure", "", "2 failures", id="two-plural"),
    pytest.param(1, "policy", "policies", "1 policy", id="one-irregular"),
    pytest.param(3, "policy", "policies", "3 policies", id="three-irregular"),
])
def test_counted_pluralises(count: int, noun: str, plural: str, text: str) -> None:
    assert _counted(count, noun, plural) == text


def test_html_counts_of_one_are_singular(sample_data: ReportData) -> None:
    policy = PolicyInfo(name="p", title="P", category="", severity=Severity.LOW, description="",
                        action=FailureAction.AUDIT, digest="sha256:0")
    pod = ResourceInfo(api_version="v1", kind="Pod", namespace="a", name="web", source="repo", path="web.yaml")
    one = reassembled(sample_data, policies=[policy], new_findings=[], resolved_findings=[], exceptions=[],
                      not_evaluated=[],
                      results=[ResultRecord(policy="p", rule="r", status=RuleStatus.FAIL, message="m",
                                            resource=pod)])
    report, audit = render_html_report(one), render_audit_html(one)
    assert "<title>Compliance report · run #42 · 1 failure</title>" in report
    for html in (report, audit):
        assert ("<p>1 result for 1 resource document with results and 1 policy evaluated. The run read 7 resource "
                "documents of 6 distinct resources.</p>") in html
    assert "Result matrix (1 result)" in audit
    many = render_html_report(sample_data)
    assert "· 4 failures</title>" in many
    assert ("<p>11 results for 5 resource documents with results and 4 policies evaluated (1 not evaluated). "
                "The run read 7 resource documents of 6 distinct resources.</p>") in many
    assert "Result matrix (11 results)" in render_audit_html(sample_data)


def test_html_store_shaped_run_shows_no_empty_fields(sample_data: ReportData) -> None:
    stored = _as_stored(sample_data)
    report = render_html_report(stored)
    assert "Policy file" not in report
    assert 'title=""' not in report
    assert 'class="lb"' not in report
    assert '<p class="muted">Category: Best Practices · Action: Audit</p>' in report
    # the sample run knows its policy files and labels, and shows them
    full = render_html_report(sample_data)
    assert 'Policy file: <span class="loc">policies/require-labels.yaml</span>' in full
    assert '<span class="lb">app=web</span>' in full

    audit = render_audit_html(stored)
    assert "<th>Rules</th><th>Content digest</th></tr>" in audit  # no File column
    assert '<td class="wrap">check-app-label, check-team</td>' in audit  # rules named by the results
    assert policy_rules(stored) == policy_rules(sample_data) == {p.name: p.rules for p in sample_data.policies}
    assert "<th>Rules</th><th>Content digest</th><th>File</th>" in render_audit_html(sample_data)
    assert 'title=""' not in audit


def test_audit_html_without_results_has_no_empty_rules_column(sample_data: ReportData) -> None:
    audit = render_audit_html(_as_stored(reassembled(sample_data, results=[])))
    assert "<th>Rules</th>" not in audit
    assert "<th data-sort>Action</th><th>Content digest</th></tr>" in audit
