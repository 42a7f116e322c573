"""``scanner scan``'s progress on stderr: lines at least every ``interval`` seconds without a
terminal, a redrawn bar with resources, an estimated total and the time left on one."""

from __future__ import annotations

import io

import pytest

from scanner.commands.progress import Estimate, ScanProgress, eta_text


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@pytest.mark.parametrize(("parts", "done", "resources", "spent", "text"), [
    pytest.param(4, 0, 50, 3.0, "50 resources, 0/4 parts", id="nothing-done-no-estimate"),
    pytest.param(4, 1, 50, 3.0, "50 / ~200 resources, 1/4 parts, about 9s left", id="one-part-of-four-extrapolates"),
    pytest.param(4, 3, 150, 90.0, "150 / ~200 resources, 3/4 parts, about 30s left", id="three-parts-of-four"),
    pytest.param(4, 4, 207, 120.0, "207 / 207 resources, 4/4 parts", id="every-part-done-is-exact"),
    pytest.param(2, 1, 10, 125.0, "10 / ~20 resources, 1/2 parts, about 2m 05s left", id="minutes-and-seconds"),
])
def test_estimate_text(parts: int, done: int, resources: int, spent: float, text: str) -> None:
    clock = Clock()
    estimate = Estimate(clock)
    estimate.start(parts)
    estimate.parts_done, estimate.resources = done, resources
    clock.now += spent
    assert estimate.text() == text


def test_eta_text_unknown_is_empty() -> None:
    assert eta_text(None) == ""


@pytest.mark.parametrize(("gaps", "lines"), [
    pytest.param([1.0] * 5, 0, id="within-ten-seconds-no-line"),
    pytest.param([4.0] * 5, 1, id="twenty-seconds-one-line-at-ten"),
    pytest.param([10.0, 10.0, 10.0], 3, id="a-line-every-ten-seconds"),
    pytest.param([0.5] * 45, 2, id="idle-ticks-also-write-lines"),
])
def test_progress_without_terminal_writes_a_line_at_least_every_interval(gaps: list[float], lines: int) -> None:
    clock, stream = Clock(), io.StringIO()
    progress = ScanProgress(False, stream=stream, tty=False, clock=clock)
    progress.tasks(10)
    for i, gap in enumerate(gaps):
        clock.now += gap
        progress.resources(3) if i % 2 else progress.idle()
    written = stream.getvalue().splitlines()
    assert len(written) == lines
    assert all(" resources, 0/10 parts" in line for line in written)


def test_progress_without_terminal_names_stages_and_reports() -> None:
    clock, stream = Clock(), io.StringIO()
    progress = ScanProgress(False, stream=stream, tty=False, clock=clock)
    progress.stage("loading policies")
    progress.tasks(2)
    progress.resources(5)
    progress.task_done()
    progress.resources(4)
    clock.now += 1.5
    progress.task_done()  # the last part: a line whatever the time
    progress.stage("rendering reports")
    progress.report("html", "reports/scanner-run-1.html")
    progress.report("json", "reports/scanner-run-1.json")
    assert stream.getvalue().splitlines() == [
        "[   0.0s] loading policies",
        "[   1.5s] 9 / 9 resources, 2/2 parts",
        "[   1.5s] rendering reports",
        "[   1.5s] html report written: reports/scanner-run-1.html",
        "[   1.5s] json report written: reports/scanner-run-1.json",
    ]


def test_progress_quiet_writes_nothing() -> None:
    stream = io.StringIO()
    progress = ScanProgress(True, stream=stream, tty=True, clock=Clock())
    progress.stage("loading policies")
    progress.tasks(2)
    progress.resources(5)
    progress.task_done()
    progress.report("html", "x.html")
    progress.close()
    assert stream.getvalue() == ""


def test_progress_on_terminal_draws_a_bar_with_resources_and_time_left() -> None:
    clock, stream = Clock(), io.StringIO()
    progress = ScanProgress(False, stream=stream, tty=True, clock=clock)
    progress.tasks(4)
    progress.resources(50)
    clock.now += 3.0
    progress.task_done()
    drawn = stream.getvalue()
    assert "reading and evaluating" in drawn and "50 / ~200 resources, 1/4 parts, about 9s left" in drawn
    progress.stage("finishing the run")
    assert stream.getvalue().rstrip().endswith("finishing the run")
    assert "50 / ~200 resources, 1/4 parts" in stream.getvalue().splitlines()[-2]
