"""``reports.keep`` and ``reports.keep_days``: the reports folder keeps the newest runs' report
files, and those written in the last days, and nothing the scanner did not write is touched."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from scanner.config import load_config
from scanner.errors import ConfigError, ReportError
from scanner.report.keep import prune_reports, report_run_id

SCANNER_FILES = {
    3: ["scanner-run-3.html", "scanner-run-3.json", "scanner-run-3.audit.json", "scanner-run-3.audit.json.sig"],
    12: ["scanner-run-12.sarif", "scanner-run-12.junit.xml", "scanner-run-12.policyreport.yaml"],
    20: ["scanner-run-20.openreports.yaml", "scanner-run-20.audit.html", "scanner-run-20.audit.html.sig"],
    100: ["scanner-run-100.html", "scanner-run-100.json"],
}
OTHER_FILES = [
    "scanner-run-1.pdf", "scanner-run-1.json.sig", "scanner-run-01.html", "scanner-run-x.html",
    "Scanner-run-1.html", "scanner-run-1.html.bak", "notes.txt", ".scanner-run-1.html.abc.tmp",
    "my-scanner-run-1.html", "scanner-run-1", "scanner-run-.html",
]


@pytest.mark.parametrize(("name", "run_id"), [
    *[pytest.param(name, run, id=name) for run, names in SCANNER_FILES.items() for name in names],
    *[pytest.param(name, None, id=f"not-{name}") for name in OTHER_FILES],
])
def test_report_run_id_knows_the_scanners_file_names_only(name: str, run_id: int | None) -> None:
    assert report_run_id(name) == run_id


def _folder(tmp_path: Path) -> Path:
    folder = tmp_path / "reports"
    folder.mkdir()
    for name in [n for names in SCANNER_FILES.values() for n in names] + OTHER_FILES:
        (folder / name).write_text(name)
    (folder / "scanner-run-2.html").mkdir()  # a folder of a report's name stays
    return folder


@pytest.mark.parametrize(("keep", "current", "kept_runs"), [
    pytest.param(1, None, [100], id="keep-1"),
    pytest.param(2, None, [20, 100], id="keep-2"),
    pytest.param(4, None, [3, 12, 20, 100], id="keep-all-there-are"),
    pytest.param(10, None, [3, 12, 20, 100], id="keep-more-than-there-are"),
    pytest.param(1, 3, [3], id="current-run-kept-whatever-its-id"),
    pytest.param(2, 3, [3, 100], id="current-run-counts-as-newest"),
    pytest.param(2, 7, [20, 100], id="current-run-without-files"),
])
def test_prune_keeps_the_newest_runs_files_and_every_other_file(
        tmp_path: Path, keep: int, current: int | None, kept_runs: list[int]) -> None:
    folder = _folder(tmp_path)
    removed = prune_reports(folder, keep, current=current)
    left = sorted(p.name for p in folder.iterdir())
    expected = sorted([n for run in kept_runs for n in SCANNER_FILES[run]] + OTHER_FILES + ["scanner-run-2.html"])
    assert left == expected
    assert sorted(p.name for p in removed) == sorted(
        n for run, names in SCANNER_FILES.items() if run not in kept_runs for n in names)
    assert (folder / "scanner-run-2.html").is_dir()


def test_prune_removes_a_link_not_what_it_leads_to(tmp_path: Path) -> None:
    folder = tmp_path / "reports"
    folder.mkdir()
    target = tmp_path / "elsewhere.html"
    target.write_text("kept")
    os.symlink(target, folder / "scanner-run-1.html")
    (folder / "scanner-run-2.html").write_text("new")
    assert prune_reports(folder, 1) == [folder / "scanner-run-1.html"]
    assert target.read_text() == "kept"


def test_prune_of_a_missing_folder_removes_nothing(tmp_path: Path) -> None:
    assert prune_reports(tmp_path / "missing", 1) == []


def test_prune_names_a_file_it_cannot_remove(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "reports"
    folder.mkdir()
    for run in (1, 2):
        (folder / f"scanner-run-{run}.json").write_text("{}")

    def refused(path: Path, missing_ok: bool = False) -> None:
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(Path, "unlink", refused)
    with pytest.raises(ReportError) as info:
        prune_reports(folder, 1)
    assert "Permission denied" in str(info.value)
    assert info.value.location is not None and info.value.location.path == str(folder / "scanner-run-1.json")


NOW = 1_900_000_000.0
DAY = 86_400


def _aged(folder: Path, days: dict[int, float]) -> None:
    """Each run's report files written ``days[run]`` days before ``NOW``."""
    for run, names in SCANNER_FILES.items():
        for name in names:
            os.utime(folder / name, (NOW - days[run] * DAY, NOW - days[run] * DAY))


@pytest.mark.parametrize(("keep", "keep_days", "current", "kept_runs"), [
    pytest.param(None, 30, None, [20, 100], id="days"),
    pytest.param(None, 400, None, [3, 12, 20, 100], id="days-all-younger"),
    pytest.param(None, 1, None, [100], id="day-1"),
    pytest.param(None, 30, 3, [3, 20, 100], id="current-run-kept-whatever-its-age"),
    pytest.param(1, 30, None, [100], id="fewer-runs-than-days-keep"),
    pytest.param(3, 30, None, [20, 100], id="fewer-days-than-runs-keep"),
])
def test_prune_keeps_the_runs_written_in_the_last_days(
        tmp_path: Path, keep: int | None, keep_days: int, current: int | None, kept_runs: list[int]) -> None:
    # run 12 is newer by id than run 3 but its files are older: age is the files' own
    folder = _folder(tmp_path)
    _aged(folder, {3: 40, 12: 90, 20: 29.9, 100: 0.5})
    prune_reports(folder, keep, current=current, keep_days=keep_days, now=NOW)
    left = sorted(p.name for p in folder.iterdir())
    assert left == sorted([n for run in kept_runs for n in SCANNER_FILES[run]] + OTHER_FILES + ["scanner-run-2.html"])


def test_a_run_is_as_young_as_its_newest_report_file(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    _aged(folder, {3: 40, 12: 40, 20: 40, 100: 40})
    os.utime(folder / "scanner-run-3.audit.json.sig", (NOW - DAY, NOW - DAY))  # signed again lately
    prune_reports(folder, None, keep_days=30, now=NOW)
    assert sorted(p.name for p in folder.iterdir() if p.name in SCANNER_FILES[3]) == sorted(SCANNER_FILES[3])
    assert not any((folder / n).exists() for run in (12, 20, 100) for n in SCANNER_FILES[run])


CONFIG = """\
database: {url: "sqlite:///scan.db"}
policies: [{path: policies}]
sources: [{name: apps, directory: {path: apps}}]
"""


@pytest.mark.parametrize("key", ["keep", "keep_days"])
@pytest.mark.parametrize("value", [0, -1, "30d", 1.5, True], ids=["zero", "negative", "text", "float", "bool"])
def test_config_rejects_a_keep_that_is_not_a_positive_integer(tmp_path: Path, key: str, value: object) -> None:
    config = tmp_path / "scanner.yaml"
    config.write_text(CONFIG + f"reports: {{{key}: {value!r}}}\n".replace("'", '"'))
    with pytest.raises(ConfigError) as info:
        load_config(config, env={})
    assert f"reports.{key}:" in str(info.value)


@pytest.mark.parametrize(("text", "keep", "keep_days", "findings_only"), [
    pytest.param("reports: {out: r}\n", None, None, False, id="defaults"),
    pytest.param("reports: {keep: 7, keep_days: 365, findings_only: true}\n", 7, 365, True, id="given"),
])
def test_config_reads_keep_and_findings_only(tmp_path: Path, text: str, keep: int | None, keep_days: int | None,
                                             findings_only: bool) -> None:
    config = tmp_path / "scanner.yaml"
    config.write_text(CONFIG + text)
    reports = load_config(config, env={}).reports
    assert (reports.keep, reports.keep_days, reports.findings_only) == (keep, keep_days, findings_only)
