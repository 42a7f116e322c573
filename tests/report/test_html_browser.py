"""The HTML reports in real headless Chromium: payloads stay text, nothing fetched, no errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from scanner.report.data import ReportData
from scanner.report.render import render_report
from tests.report.browser import Chromium
from tests.report.conftest import keep_screenshot
from tests.report.fixtures import PAYLOADS

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
    assert tab.evaluate("document.getElementById('f-count').textContent") == "1 findings shown"
    tab.evaluate("document.getElementById('f-reset').click()")
    assert len(tab.evaluate(visible)) == 6
    order = ("Array.from(document.querySelectorAll('#by-namespace + table tbody tr'))"
             ".map(r => r.cells[0].innerText)")
    tab.evaluate("document.querySelector('#by-namespace + table th button').click()")
    assert tab.evaluate(order) == ["(cluster)", "shop", "tools"]
    tab.evaluate("document.querySelector('#by-namespace + table th button').click()")
    assert tab.evaluate(order) == ["tools", "shop", "(cluster)"]
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
