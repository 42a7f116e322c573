"""render_report: formats, output paths, and the errors a user can cause."""

from __future__ import annotations

import dataclasses
import os
import stat
from collections.abc import Callable
from pathlib import Path

import pytest

from scanner.errors import ReportError
from scanner.report.data import ReportData
from scanner.report.render import FORMATS, render_report, render_text
from scanner.scan import finish, forked
from scanner.scan.finish import render_reports


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


@pytest.mark.parametrize("existing", [pytest.param(True, id="link-to-a-file"),
                                      pytest.param(False, id="dangling-link")])
def test_render_report_writes_the_file_a_symlink_names(existing: bool, sample_data: ReportData,
                                                       tmp_path: Path) -> None:
    real = tmp_path / "kept" / "report.json"
    real.parent.mkdir()
    if existing:
        real.write_text("stale")
    link = tmp_path / "latest.json"
    link.symlink_to(real)
    assert render_report(sample_data, "json", link) == link
    assert link.is_symlink() and link.readlink() == real
    assert real.read_text(encoding="utf-8") == render_text(sample_data, "json")
    assert [p.name for p in real.parent.iterdir()] == ["report.json"]  # no temporary file left


@pytest.mark.parametrize("through_link", [pytest.param(False, id="fifo"),
                                          pytest.param(True, id="symlink-to-fifo")])
def test_render_report_writes_into_a_fifo_and_keeps_it(through_link: bool, sample_data: ReportData,
                                                       tmp_path: Path) -> None:
    fifo = tmp_path / "report.pipe"
    os.mkfifo(fifo)
    target = tmp_path / "report.xml"
    if through_link:
        target.symlink_to(fifo)
    else:
        target = fifo
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # so that the writer's open does not wait
    try:
        render_report(sample_data, "junit", target)  # a few kB: the pipe holds it all
        received = b""
        while chunk := os.read(reader, 65536):
            received += chunk
    finally:
        os.close(reader)
    assert stat.S_ISFIFO(fifo.lstat().st_mode) and target.is_symlink() is through_link
    assert received.decode() == render_text(sample_data, "junit")
    assert len(list(tmp_path.iterdir())) == 1 + through_link  # no temporary file left


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc")
def test_render_report_writes_into_a_pipe_a_proc_link_names(sample_data: ReportData) -> None:
    """What ``--out /dev/stdout`` reaches when standard output is a pipe: a link to no path."""
    read_end, write_end = os.pipe()
    try:
        render_report(sample_data, "junit", Path(f"/proc/self/fd/{write_end}"))
    finally:
        os.close(write_end)
    with os.fdopen(read_end, "rb") as reader:
        assert reader.read().decode() == render_text(sample_data, "junit")


FORMATS_AT_ONCE = ["html", "json", "sarif", "junit"]


@pytest.fixture
def alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """No other thread in this process (a thread pool an earlier test left does not count)."""
    monkeypatch.setattr(forked.threading, "active_count", lambda: 1)


@pytest.mark.usefixtures("alone")
def test_render_reports_at_once_write_what_each_renders_alone(sample_data: ReportData, tmp_path: Path) -> None:
    together, one_by_one = tmp_path / "together", tmp_path / "one-by-one"
    together.mkdir()
    one_by_one.mkdir()
    written = render_reports(sample_data, FORMATS_AT_ONCE, together)
    assert written == [together / f"scanner-run-42{FORMATS[fmt][1]}" for fmt in FORMATS_AT_ONCE]
    for fmt in FORMATS_AT_ONCE:
        render_report(sample_data, fmt, one_by_one)
    assert ({p.name: p.read_bytes() for p in together.iterdir()}
            == {p.name: p.read_bytes() for p in one_by_one.iterdir()})


@pytest.mark.usefixtures("alone")
@pytest.mark.parametrize("formats", [["junit", "html", "json"], ["html", "junit", "json"], ["html", "json", "junit"]],
                         ids=["first", "second", "last"])
def test_render_reports_at_once_raise_the_error_of_any_and_write_the_others(
        formats: list[str], sample_data: ReportData, tmp_path: Path) -> None:
    findings_only = dataclasses.replace(sample_data, findings_only=True)  # junit lists every result
    with pytest.raises(ReportError, match="the junit report lists every result, but only the findings were read"):
        render_reports(findings_only, formats, tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["scanner-run-42.html", "scanner-run-42.json"]


def test_render_reports_fork_only_without_other_threads(sample_data: ReportData, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    def no_fork() -> int:
        raise AssertionError("forked")

    monkeypatch.setattr(os, "fork", no_fork)
    monkeypatch.setattr(forked.threading, "active_count", lambda: 2)
    assert len(render_reports(sample_data, ["html", "json"], tmp_path)) == 2
    monkeypatch.setattr(forked.threading, "active_count", lambda: 1)
    with pytest.raises(AssertionError, match="forked"):
        render_reports(sample_data, ["html", "json"], tmp_path)


@pytest.mark.usefixtures("alone")
@pytest.mark.parametrize("cpus", [1, 2])
def test_render_reports_render_in_as_many_children_at_a_time_as_there_are_cpus(
        cpus: int, sample_data: ReportData, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # each child copies what it reads of the data: no more of them at once than CPUs to run them
    running: list[int] = []
    most = 0
    start = forked.start

    def counted(call: Callable[[], Path], lost: Callable[[str], BaseException]) -> forked.Forked[Path]:
        nonlocal most
        child = start(call, lost)
        running.append(id(child))
        most = max(most, len(running))
        result = child.result

        def collected() -> Path:
            running.remove(id(child))
            return result()

        child.result = collected  # type: ignore[method-assign]
        return child

    monkeypatch.setattr(finish, "usable_cpus", lambda: cpus)
    monkeypatch.setattr(forked, "start", counted)
    formats = ["html", "json", "junit", "sarif", "policy-report", "audit-json"]
    assert render_reports(sample_data, formats, tmp_path) == [
        tmp_path / f"scanner-run-42{FORMATS[fmt][1]}" for fmt in formats]
    assert most == cpus
