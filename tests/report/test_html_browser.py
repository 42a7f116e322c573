"""The HTML reports in real headless Chromium: payloads stay text, nothing fetched, no errors."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from scanner.engine.types import RuleStatus
from scanner.report.data import ReportData, ResourceInfo, ResultRecord
from scanner.report.render import render_report
from tests.report.browser import Chromium
from tests.report.conftest import keep_screenshot
from tests.report.fixtures import PAYLOADS, overlay_report_data, reassembled

INJECTION_PROBE = """(() => ({
  title: document.title,
  pwned: typeof window.__pwned !== "undefined",
  scripts: document.scripts.length,
  injected: document.querySelectorAll("img, iframe, svg [onload], [onerror], [onload]").length,
  text: document.body.innerText,
}))()"""


@pytest.mark.parametrize("fmt", [pytest.param("html", id="report-html"),
                                 pytest.param("audit-html", id="audit-html")])
def test_html_report_payloads_do_not_execute_in_chromium(
        fmt: str, hostile_data: ReportData, chromium: Chromium, tmp_path: Path) -> None:
    page = render_report(hostile_data, fmt, tmp_path / f"hostile-{fmt}.html")
    tab = chromium.open(page.as_uri())
    tab.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
    probe = tab.evaluate(INJECTION_PROBE)
    shot = tab.screenshot(tmp_path / f"hostile-{fmt}.png")
    keep_screenshot(shot)
    record = tab.load_record()
    assert probe["pwned"] is False
    assert "PWNED" not in probe["title"]
    assert probe["title"].startswith(("Compliance report", "Audit record"))
    assert probe["scripts"] == 1
    assert probe["injected"] == 0
    for payload in PAYLOADS[:5]:
        assert payload in probe["text"], f"payload not shown as text: {payload}"
    assert record.console_errors == []
    assert record.requests == [page.as_uri()]
    assert shot.stat().st_size > 10_000


def test_html_report_renders_cleanly_with_and_without_scripts(
        sample_data: ReportData, chromium: Chromium, tmp_path: Path) -> None:
    page = render_report(sample_data, "html", tmp_path / "sample.html")
    with_js = chromium.open(page.as_uri())
    keep_screenshot(with_js.screenshot(tmp_path / "sample-report.png"))
    assert with_js.load_record().console_errors == []
    assert with_js.load_record().requests == [page.as_uri()]
    assert with_js.evaluate("document.getElementById('f-text').offsetParent !== null")
    assert with_js.evaluate("document.querySelectorAll('button.sort').length") > 10

    without_js = chromium.open(page.as_uri(), scripts=False)
    keep_screenshot(without_js.screenshot(tmp_path / "sample-report-noscript.png"))
    text = without_js.evaluate("document.body.innerText")
    for expected in ("Compliance report", "Disallow Privileged Containers", "tools/debug.yaml:3",
                     "New findings", "Resolved findings", "clone failed: repository not found"):
        assert expected in text
    # the filter controls need the script: hidden, not broken, when scripts are off
    assert without_js.evaluate("document.getElementById('f-text').offsetParent") is None
    assert without_js.load_record().console_errors == []


def test_html_report_filter_and_sort_work_in_chromium(sample_data: ReportData,
                                                      chromium: Chromium,
                                                      tmp_path: Path) -> None:
    page = render_report(sample_data, "html", tmp_path / "filter.html")
    tab = chromium.open(page.as_uri())
    visible = ("Array.from(document.querySelectorAll('table.findings tbody tr'))"
               ".filter(r => !r.hidden && !r.closest('details').hidden)"
               ".map(r => r.cells[1].innerText.split('\\n')[0] + ' ' + r.cells[2].innerText)")
    assert len(tab.evaluate(visible)) == 6
    tab.evaluate("(() => { const s = document.getElementById('f-status'); s.value = 'fail';"
                 " s.dispatchEvent(new Event('change')); })()")
    assert sorted(tab.evaluate(visible)) == sorted([
        "Pod tools/debug app=debug team=sre privileged-containers",
        "Deployment shop/db check-app-label",
        "Deployment shop/web app=web validate-resources",
        "Namespace shop name-prefix"])
    tab.evaluate("(() => { const t = document.getElementById('f-text'); t.value = 'LIMITS';"
                 " t.dispatchEvent(new Event('input')); })()")
    assert tab.evaluate(visible) == ["Deployment shop/web app=web validate-resources"]
    assert tab.evaluate("document.getElementById('f-count').textContent") == "1 finding shown"
    tab.evaluate("document.getElementById('f-reset').click()")
    assert len(tab.evaluate(visible)) == 6
    order = ("Array.from(document.querySelectorAll('#by-namespace + table tbody tr'))"
             ".map(r => r.cells[0].innerText)")
    tab.evaluate("document.querySelector('#by-namespace + table th button').click()")
    assert tab.evaluate(order) == ["(cluster)", "shop", "tools"]
    tab.evaluate("document.querySelector('#by-namespace + table th button').click()")
    assert tab.evaluate(order) == ["tools", "shop", "(cluster)"]
    assert tab.load_record().console_errors == []


GROUPS = ("Array.from(document.querySelectorAll('details.group[data-sev]')).map(g =>"
          " [g.querySelector('summary .mono').textContent, g.hidden ? 'hidden' : g.open ? 'open' : 'closed',"
          " g.querySelector('summary .counts').textContent.trim()])")


def _set(tab, element: str, value: str) -> None:
    event = "input" if element == "f-text" else "change"
    tab.evaluate(f"(() => {{ const e = document.getElementById('{element}'); e.value = '{value}';"
                 f" e.dispatchEvent(new Event('{event}')); }})()")


def test_html_report_filters_open_matching_groups_and_count_their_matches(
        sample_data: ReportData, chromium: Chromium, tmp_path: Path) -> None:
    tools = ResourceInfo(api_version="v1", kind="Namespace", namespace="", name="tools", source="platform",
                         path="namespaces.yaml", line=5)
    extra = ResultRecord("team-naming", "name-prefix", RuleStatus.FAIL, "namespace name must start with team-", tools)
    data = reassembled(sample_data, results=(*sample_data.results, extra))
    page = render_report(data, "html", tmp_path / "groups.html")
    tab = chromium.open(page.as_uri())
    # as a reader left them: only one group open
    tab.evaluate("document.querySelectorAll('details.group[data-sev]').forEach(g =>"
                 " g.open = g.querySelector('summary .mono').textContent === 'require-labels')")
    before = [["disallow-privileged", "closed", "1 fail"], ["require-labels", "open", "1 fail 1 warn"],
              ["require-limits", "closed", "1 fail 1 error"], ["team-naming", "closed", "2 fail"]]
    assert tab.evaluate(GROUPS) == before

    _set(tab, "f-text", "tools")
    assert tab.evaluate(GROUPS) == [["disallow-privileged", "open", "1 of 1 fail"],
                                    ["require-labels", "hidden", ""],
                                    ["require-limits", "hidden", ""],
                                    ["team-naming", "open", "1 of 2 fail"]]
    assert tab.evaluate("document.getElementById('f-count').textContent") == "2 findings shown"
    _set(tab, "f-text", "")
    _set(tab, "f-severity", "low")
    assert tab.evaluate(GROUPS)[2] == ["require-limits", "open", "1 of 1 fail 1 of 1 error"]
    _set(tab, "f-status", "error")
    assert tab.evaluate(GROUPS)[2] == ["require-limits", "open", "1 of 1 error"]
    assert tab.evaluate("document.getElementById('f-count').textContent") == "1 finding shown"

    tab.evaluate("document.getElementById('f-reset').click()")
    assert tab.evaluate(GROUPS) == before
    assert tab.evaluate("document.getElementById('f-count').textContent") == "7 findings shown"
    assert tab.load_record().console_errors == []


OVERFLOW = "[document.documentElement.scrollWidth, window.innerWidth]"


@pytest.mark.parametrize("fmt", [pytest.param("html", id="report-html"),
                                 pytest.param("audit-html", id="audit-html")])
@pytest.mark.parametrize("scripts", [pytest.param(True, id="scripts"), pytest.param(False, id="no-scripts")])
def test_html_pages_do_not_scroll_sideways_on_a_phone(fmt: str, scripts: bool, sample_data: ReportData,
                                                      chromium: Chromium, tmp_path: Path) -> None:
    page = render_report(sample_data, fmt, tmp_path / f"narrow-{fmt}.html")
    tab = chromium.open(page.as_uri(), scripts=scripts, width=390, height=900)
    tab.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
    keep_screenshot(tab.screenshot(tmp_path / f"narrow-{fmt}-{'js' if scripts else 'nojs'}.png"))
    width, viewport = tab.evaluate(OVERFLOW)
    assert width <= viewport
    # the wide tables scroll in their own box, with readable columns rather than a few letters wide
    tables = tab.evaluate("Array.from(document.querySelectorAll('main table:not(.kv)'))"
                          ".filter(t => t.scrollWidth > t.clientWidth + 1).length")
    assert tables >= 3
    widths = tab.evaluate("Array.from(document.querySelectorAll('td.wrap')).map(c =>"
                          " c.getBoundingClientRect().width)")
    assert min(widths) >= 9 * 12.5  # 9em of the smallest (monospace) text
    if fmt == "html":
        chart = tab.evaluate("document.querySelector('svg.trend').getBoundingClientRect().width")
        assert chart >= 640  # its 11px labels drawn at 9px or more, the chart scrolling in its box
        assert tab.evaluate("document.querySelector('.chart').scrollWidth") > viewport
    assert tab.load_record().console_errors == []


def test_html_long_rule_names_wrap_and_leave_the_message_room(sample_data: ReportData, chromium: Chromium,
                                                              tmp_path: Path) -> None:
    long_rule = "r" + "x" * 90
    results = [dataclasses.replace(r, rule=long_rule) if r.rule == "check-app-label" else r
               for r in sample_data.results]
    changes = [dataclasses.replace(c, policy="p" * 60, rule=long_rule) for c in sample_data.new_findings]
    data = reassembled(sample_data, results=results, new_findings=changes)
    page = render_report(data, "html", tmp_path / "long-rule.html")
    tab = chromium.open(page.as_uri(), width=1024, height=900)
    width, viewport = tab.evaluate(OVERFLOW)
    assert width <= viewport
    # in the findings (status, resource, rule, message...) and the changes (policy, rule, resource...)
    cells = tab.evaluate("Array.from(document.querySelectorAll('td')).filter(c => c.textContent.length > 50"
                         " && /^[px]+$/.test(c.textContent.slice(1))).map(c => [c.cellIndex, c.getBoundingClientRect().width])")
    assert sorted(index for index, _ in cells) == [0, 1, 2]
    assert max(width for _, width in cells) < 320
    message = tab.evaluate(f"Array.from(document.querySelectorAll('table.findings td')).find(c => c.textContent"
                           f" === '{long_rule}').nextElementSibling.getBoundingClientRect().width")
    assert message >= 14 * 14
    assert tab.load_record().console_errors == []


def test_html_report_prints_to_pdf_with_all_findings(sample_data: ReportData,
                                                     chromium: Chromium,
                                                     tmp_path: Path) -> None:
    page = render_report(sample_data, "html", tmp_path / "print.html")
    tab = chromium.open(page.as_uri())
    pdf = tab.print_pdf()
    (tmp_path / "print.pdf").write_bytes(pdf)
    assert pdf.startswith(b"%PDF-")
    assert len(pdf) > 20_000
    assert tab.load_record().console_errors == []


COVERAGE_PROBE = """Array.from(document.querySelectorAll('#coverage ~ table.coverage tbody tr')).map(r =>
  [r.dataset.kind, r.cells[1].innerText, Number(r.cells[2].innerText), r.offsetParent !== null])"""


@pytest.mark.parametrize("width", [pytest.param(1280, id="desktop"), pytest.param(390, id="phone")])
def test_html_report_coverage_shows_what_rendered_each_source_and_what_was_not_scanned(
        chromium: Chromium, tmp_path: Path, width: int) -> None:
    page = render_report(overlay_report_data(), "html", tmp_path / "coverage.html")
    tab = chromium.open(page.as_uri(), width=width, height=900)
    keep_screenshot(tab.screenshot(tmp_path / f"coverage-{width}.png"))
    rows = tab.evaluate(COVERAGE_PROBE)
    assert [(kind, resources, shown) for kind, _, resources, shown in rows] == [
        ("files", 1, True), ("kustomize", 1, True), ("kustomize", 1, True), ("chart", 3, True), ("chart", 4, True),
        ("gitops", 2, True)]
    assert rows[5][1] == "Application argocd/guestbook (argo/apps.yaml:1)"
    text = tab.evaluate("document.getElementById('coverage').parentElement.innerText")
    assert "platform · 12 resources" in text
    assert "2 Kustomize entry points, 2 charts, 1 GitOps entry point, 1 not scanned" in text
    assert "not scanned: https://charts.example/stable chart redis" in text
    assert "a YAML error is not a coverage gap" not in tab.evaluate(
        "Array.from(document.querySelectorAll('table.not-scanned')).map(t => t.innerText).join()")
    assert tab.evaluate(OVERFLOW)[0] <= tab.evaluate(OVERFLOW)[1]
    assert tab.load_record().console_errors == []
