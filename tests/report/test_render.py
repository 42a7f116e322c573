"""render_report: formats, output paths, and the errors a user can cause."""

from __future__ import annotations

from pathlib import Path

import pytest

from scanner.errors import ReportError
from scanner.report.data import ReportData
from scanner.report.render import FORMATS, render_report


def test_render_report_unknown_format_lists_formats(sample_data: ReportData,
                                                    tmp_path: Path) -> None:
    with pytest.raises(ReportError) as info:
        render_report(sample_data, "pdf", tmp_path / "r.pdf")
    assert "unknown report format 'pdf'" in str(info.value)
    for fmt in FORMATS:
        assert fmt in str(info.value)
    assert not (tmp_path / "r.pdf").exists()


@pytest.mark.parametrize("make_target", [
    pytest.param(lambda tmp: tmp / "a-file" / "report.html", id="parent-is-a-file"),
    pytest.param(lambda tmp: tmp / "a-file" / "deeper" / "report.html",
                 id="ancestor-is-a-file"),
    pytest.param(lambda tmp: Path("/proc/version"), id="target-in-read-only-filesystem"),
])
def test_render_report_unwritable_path_names_it(make_target, sample_data: ReportData,
                                                tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("x")
    target = make_target(tmp_path)
    with pytest.raises(ReportError) as info:
        render_report(sample_data, "html", target)
    assert info.value.location is not None
    assert info.value.location.path == str(target)
    assert str(target) in str(info.value)


def test_render_report_into_directory_uses_run_file_name(sample_data: ReportData,
                                                         tmp_path: Path) -> None:
    written = render_report(sample_data, "sarif", tmp_path)
    assert written == tmp_path / "scanner-run-42.sarif"
    assert [p.name for p in tmp_path.iterdir()] == ["scanner-run-42.sarif"]


def test_render_report_creates_missing_parents_and_replaces(sample_data: ReportData,
                                                            tmp_path: Path) -> None:
    target = tmp_path / "reports" / "nightly" / "latest.json"
    render_report(sample_data, "json", target)
    target.write_text("stale")
    assert render_report(sample_data, "json", target) == target
    assert target.read_text().startswith("{")
    assert sorted(p.name for p in target.parent.iterdir()) == ["latest.json"]
