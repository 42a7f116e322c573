"""What ``scanner scan`` shows on stderr while it runs: on a terminal, a bar of the parts read and
evaluated with the resources done, an estimate of the total and the time left; otherwise a line at
each stage and, while reading and evaluating, at least every ``interval`` seconds.

No thread: the scan forks its workers and its finishing step only while it runs alone, so the
bar is redrawn (at most ``redraws`` times a second) when the scan reports something, and the
scan's worker loop reports "idle" every half second when nothing else arrives.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any, TextIO


def eta_text(seconds: float | None) -> str:
    """``about 1m 05s left`` (``""`` while unknown)."""
    if seconds is None:
        return ""
    seconds = max(0, round(seconds))
    minutes, rest = divmod(seconds, 60)
    return f"about {minutes}m {rest:02d}s left" if minutes else f"about {rest}s left"


class Estimate:
    """Resources and parts done, the total resources estimated from the parts done (the parts are
    of about the same size), and the time left at the rate so far."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self.clock = clock
        self.parts = 0
        self.parts_done = 0
        self.resources = 0
        self.started: float | None = None

    def start(self, parts: int) -> None:
        self.parts, self.parts_done, self.started = parts, 0, self.clock()

    @property
    def total_resources(self) -> int | None:
        """The resources the scan will have read when every part is done (None until one is)."""
        if not self.parts_done or not self.parts:
            return None
        if self.parts_done >= self.parts:
            return self.resources
        return max(self.resources, round(self.resources * self.parts / self.parts_done))

    @property
    def seconds_left(self) -> float | None:
        if self.started is None or not self.parts_done or not self.parts:
            return None
        spent = self.clock() - self.started
        return spent * (self.parts - self.parts_done) / self.parts_done

    def text(self) -> str:
        total = self.total_resources
        of = "" if total is None else f" / {total}" if self.parts_done >= self.parts else f" / ~{total}"
        eta = eta_text(self.seconds_left) if self.parts_done < self.parts else ""
        return (f"{self.resources}{of} resources, {self.parts_done}/{self.parts} parts"
                + (f", {eta}" if eta else ""))


class ScanProgress:
    """``scanner.scan.ScanProgress`` on stderr (``quiet``: nothing but the reports written)."""

    def __init__(self, quiet: bool, *, stream: TextIO | None = None, tty: bool | None = None,
                 clock: Callable[[], float] = time.monotonic, interval: float = 10.0, redraws: float = 8.0) -> None:
        self.quiet, self.stream, self.clock = quiet, stream or sys.stderr, clock
        self.tty = self.stream.isatty() if tty is None else tty
        self.interval, self.redraw_every = interval, 1.0 / redraws
        self.start = clock()
        self.estimate = Estimate(clock)
        self.last_line = self.last_draw = self.start
        self.bar: Any = None  # a rich Progress while reading and evaluating on a terminal
        self.bar_task: Any = None

    def _line(self, text: str) -> None:
        self.last_line = self.clock()
        if self.bar is not None:
            self.bar.console.print(text, markup=False, highlight=False)
        else:
            self.stream.write(text + "\n")
            self.stream.flush()

    def _stamped(self, text: str) -> None:
        self._line(f"[{self.clock() - self.start:6.1f}s] {text}")

    def stage(self, message: str) -> None:
        self._stop_bar()
        if not self.quiet:
            self._stamped(message)

    def tasks(self, total: int) -> None:
        self.estimate.start(total)
        if self.quiet or not self.tty:
            return
        from rich.console import Console  # on a terminal only: the import takes a moment
        from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

        console = Console(file=self.stream, force_terminal=True)
        self.bar = Progress(TextColumn("  reading and evaluating"), BarColumn(), TextColumn("{task.description}"),
                            TimeElapsedColumn(), console=console, auto_refresh=False, transient=True)
        self.bar.start()
        self.bar_task = self.bar.add_task(self.estimate.text(), total=max(total, 1))
        self._draw(force=True)

    def resources(self, count: int) -> None:
        self.estimate.resources += count
        self._tick()

    def task_done(self) -> None:
        self.estimate.parts_done += 1
        self._tick(force=self.estimate.parts_done == self.estimate.parts)

    def idle(self) -> None:
        self._tick()

    def report(self, fmt: str, path: str) -> None:
        if not self.quiet:
            self._stamped(f"{fmt} report written: {path}")

    def close(self) -> None:
        self._stop_bar()

    def _tick(self, force: bool = False) -> None:
        if self.quiet:
            return
        if self.bar is not None:
            self._draw(force)
        elif self.clock() - self.last_line >= self.interval or force:
            self._stamped(self.estimate.text())

    def _draw(self, force: bool = False) -> None:
        now = self.clock()
        if not force and now - self.last_draw < self.redraw_every:
            return
        self.last_draw = now
        self.bar.update(self.bar_task, completed=self.estimate.parts_done, description=self.estimate.text())
        self.bar.refresh()

    def _stop_bar(self) -> None:
        if self.bar is not None:
            bar, self.bar = self.bar, None
            bar.stop()
            if not self.quiet and self.estimate.parts:
                self._stamped(self.estimate.text().split(", about")[0])
