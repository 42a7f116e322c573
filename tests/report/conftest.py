"""Shared fixtures of the report tests: fixed data, golden files, headless Chromium."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from scanner.report.data import ReportData
from tests.report.browser import Chromium, find_chromium
from tests.report.fixtures import hostile_report_data, sample_report_data

GOLDEN_DIR = Path(__file__).with_name("golden")
DATA_DIR = Path(__file__).with_name("data")
SCREENSHOT_DIR = Path("/tmp/report-screenshots")
REFRESH = os.environ.get("SCANNER_REFRESH_GOLDEN") == "1"


@pytest.fixture
def sample_data() -> ReportData:
    return sample_report_data()


@pytest.fixture
def hostile_data() -> ReportData:
    return hostile_report_data()


def check_golden(name: str, actual: str) -> None:
    """Compare with ``golden/<name>``; ``SCANNER_REFRESH_GOLDEN=1`` rewrites it instead."""
    path = GOLDEN_DIR / name
    if REFRESH:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(actual, encoding="utf-8", newline="\n")
        return
    if not path.exists():
        pytest.fail(f"golden file {path} is missing: run with SCANNER_REFRESH_GOLDEN=1 "
                    "and review the new file")
    expected = path.read_text(encoding="utf-8")
    assert actual == expected, (f"{name} differs from its golden file; if the change is "
                                "intended, refresh with SCANNER_REFRESH_GOLDEN=1 and review")


@pytest.fixture(scope="session")
def chromium(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Chromium]:
    binary = find_chromium()
    if binary is None:
        reason = "chromium is not installed (run scripts/install-test-deps.sh)"
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    browser = Chromium(binary, tmp_path_factory.mktemp("chromium-profile"))
    try:
        yield browser
    finally:
        browser.close()


def keep_screenshot(path: Path) -> Path:
    """Copy a screenshot to /tmp/report-screenshots/ so it can be looked at after the run."""
    SCREENSHOT_DIR.mkdir(parents=True, exist_ok=True)
    return Path(shutil.copy2(path, SCREENSHOT_DIR / path.name))
