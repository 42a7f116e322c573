"""The end of a scan, one core per piece of work: the run finished in a forked child while this
process reads what finishing does not change, and the reports rendered one per child.

A scan ends with its workers' cores free and with pieces of work that need nothing of each
other. Where a fork is safe (``forked.can_fork``: no other thread runs), a child takes one;
else they run one after the other.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import TypeVar

from scanner.errors import ReportError, StoreError
from scanner.report.data import ReportData
from scanner.report.render import render_report
from scanner.scan import forked
from scanner.scan.processes import usable_cpus
from scanner.store.records import RunStatus
from scanner.store.writer import RunWriter

log = logging.getLogger(__name__)

T = TypeVar("T")
U = TypeVar("U")


def finish_while(writer: RunWriter, work: Callable[[], T], then: Callable[[], U], status: RunStatus | None = None,
                 aside: Callable[[], None] | None = None) -> tuple[RunStatus, T, U]:
    """``writer.finish`` and then ``then`` (reading what finishing gave) in a child, while this
    process does ``work``; ``aside`` (what may fail without failing the run: storing the shards'
    footprints) in a child of its own meanwhile, its failure logged. Returns the final status
    and what ``work`` and ``then`` returned; what any raised is raised (the finish's first)."""
    writer.stop_heartbeat()
    if not forked.can_fork() or not writer.can_finish_in_child():
        _aside(aside)
        status = writer.finish(status)
        return status, work(), then()
    writer.release_connections()
    beside = _start_aside(aside)
    try:
        child = forked.start(lambda: (_finish_linking_meanwhile(writer, status), then()), writer.lost)
        try:
            done = work()
        finally:
            final, after = child.result()
            writer.finished_elsewhere(final)
    finally:
        if beside is not None:
            _aside(beside.result)
    return final, done, after


def _aside(call: Callable[[], None] | None) -> None:
    """``call`` (or the result of the child running it), its failure logged."""
    if call is None:
        return
    try:
        call()
    except Exception as exc:
        _not_stored(exc)


def _not_stored(exc: Exception) -> None:
    log.warning("the shards' footprints were not stored (the next scan replays their outputs): %s", exc)


def _start_aside(aside: Callable[[], None] | None) -> forked.Forked[None] | None:
    """A child running ``aside``; None without one, or when no child can be started (logged)."""
    if aside is None:
        return None
    try:
        return forked.start(aside, _lost_aside)
    except OSError as exc:
        _not_stored(exc)
        return None


def _lost_aside(how: str) -> StoreError:
    return StoreError(f"the process storing the shards' footprints {how}")


def _finish_linking_meanwhile(writer: RunWriter, status: RunStatus | None) -> RunStatus:
    """In the child finishing the run: the digest of its results (for the chain link) read by a
    child of its own while this one writes the tallies and findings."""
    if not forked.can_fork():
        return writer.finish(status)
    digest = forked.start(writer.results_digest, writer.lost)  # (ends with this child if not waited for)
    return writer.finish(status, digest.result)


def render_reports(data: ReportData, formats: Sequence[str], out: Path,
                   written: Callable[[str, str], None] | None = None, *, findings_only: bool = False) -> list[Path]:
    """``render_report`` for each of ``formats``, in order, all but the first in children, as
    many at a time as there are CPUs (each copies the pages of the data it reads: more at once
    would cost memory, not time); the first error raised, every report attempted. ``written``
    is told each format and its file as it is written; ``findings_only`` asks for the
    findings-only variants."""
    def told(fmt: str, path: Path) -> Path:
        if written is not None:
            written(fmt, str(path))
        return path

    if len(formats) < 2 or not forked.can_fork():
        return [told(fmt, render_report(data, fmt, out, findings_only=findings_only)) for fmt in formats]
    render = partial(render_report, data, out=out, findings_only=findings_only)
    pending = iter(formats[1:])
    running: deque[forked.Forked[Path]] = deque()

    def start_next() -> None:
        fmt = next(pending, None)
        if fmt is not None:
            running.append(forked.start(partial(render, fmt), partial(_lost, fmt)))

    for _ in range(usable_cpus()):
        start_next()
    outcomes: list[Path | Exception] = []
    for n, fmt in enumerate(formats):
        try:
            if n == 0:
                outcomes.append(told(fmt, render(fmt)))
                continue
            child = running.popleft()
            try:
                outcomes.append(told(fmt, child.result()))
            finally:
                start_next()
        except Exception as exc:  # every report is attempted all the same
            outcomes.append(exc)
    for outcome in outcomes:
        if isinstance(outcome, Exception):
            raise outcome
    return outcomes  # type: ignore[return-value]


def _lost(fmt: str, how: str) -> ReportError:
    return ReportError(f"the process rendering the {fmt} report {how}")
