"""Where a scan reports what it is doing."""

from __future__ import annotations

from typing import Protocol


class ScanProgress(Protocol):
    """Where a scan reports what it is doing (a terminal progress bar, log lines, nothing).
    Called from the scan's one thread only (a progress thread would keep the scan from forking)."""

    def stage(self, message: str) -> None: ...

    def tasks(self, total: int) -> None:
        """The sources are dealt out into ``total`` parts, read and evaluated from now on."""

    def resources(self, count: int) -> None:
        """``count`` more resource documents were read and evaluated."""

    def task_done(self) -> None:
        """One more part is read and evaluated."""

    def idle(self) -> None:
        """Nothing arrived for a while (about half a second): a chance to say the scan still runs."""

    def report(self, fmt: str, path: str) -> None:
        """The report in format ``fmt`` is written to ``path``."""


class Silent:
    """A progress that shows nothing."""

    def stage(self, message: str) -> None:
        pass

    def tasks(self, total: int) -> None:
        pass

    def resources(self, count: int) -> None:
        pass

    def task_done(self) -> None:
        pass

    def idle(self) -> None:
        pass

    def report(self, fmt: str, path: str) -> None:
        pass
