"""Every format rendered from the fixed sample run equals its reviewed golden file."""

from __future__ import annotations

from pathlib import Path

import pytest

from scanner.report.data import ReportData
from scanner.report.render import FORMATS, render_report
from tests.report.conftest import check_golden
from tests.report.fixtures import overlay_report_data


@pytest.mark.parametrize("fmt", sorted(FORMATS), ids=[f"{f}-matches-golden" for f in
                                                     sorted(FORMATS)])
def test_render_report_matches_golden_file(fmt: str, sample_data: ReportData,
                                           tmp_path: Path) -> None:
    written = render_report(sample_data, fmt, tmp_path)
    check_golden(f"sample-run{FORMATS[fmt][1]}", written.read_text(encoding="utf-8"))


@pytest.mark.parametrize("fmt", sorted(FORMATS), ids=[f"{f}-is-deterministic" for f in
                                                     sorted(FORMATS)])
def test_render_report_is_deterministic(fmt: str, sample_data: ReportData,
                                        tmp_path: Path) -> None:
    first = render_report(sample_data, fmt, tmp_path / "a").read_bytes()
    second = render_report(sample_data, fmt, tmp_path / "b").read_bytes()
    assert first == second


OVERLAY_FORMATS = ("html", "json", "sarif", "junit", "policy-report")


@pytest.mark.parametrize("fmt", OVERLAY_FORMATS, ids=[f"{f}-overlay-run-matches-golden" for f in OVERLAY_FORMATS])
def test_render_overlay_report_matches_golden_file(fmt: str, tmp_path: Path) -> None:
    """A base rendered by two overlays: its file:line, "via overlay", one defect with both overlays."""
    written = render_report(overlay_report_data(), fmt, tmp_path)
    check_golden(f"overlay-run{FORMATS[fmt][1]}", written.read_text(encoding="utf-8"))
