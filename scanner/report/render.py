"""Render a ``ReportData`` in one of the report formats to a file."""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path

from scanner import forked
from scanner.errors import Location, ReportError
from scanner.report.audit import render_audit_json
from scanner.report.data import ReportData
from scanner.report.html import render_audit_html, render_html_report
from scanner.report.json_report import render_json_report
from scanner.report.junit import render_junit
from scanner.report.policyreport import OPENREPORTS, WGPOLICY, render_policy_reports
from scanner.report.sarif import render_sarif

Renderer = Callable[[ReportData], str]

# format name -> (renderer, file suffix used when ``out`` is a directory)
FORMATS: dict[str, tuple[Renderer, str]] = {
    "html": (render_html_report, ".html"),
    "json": (render_json_report, ".json"),
    "sarif": (render_sarif, ".sarif"),
    "junit": (render_junit, ".junit.xml"),
    "policy-report": (lambda d: render_policy_reports(d, WGPOLICY), ".policyreport.yaml"),
    "openreports": (lambda d: render_policy_reports(d, OPENREPORTS), ".openreports.yaml"),
    "audit-html": (render_audit_html, ".audit.html"),
    "audit-json": (render_audit_json, ".audit.json"),
}


# formats that list every result (passes and skips too); the others list only findings
EVERY_RESULT_FORMATS = frozenset({"junit", "policy-report", "openreports", "audit-html", "audit-json"})


def default_file_name(data: ReportData, fmt: str) -> str:
    """``scanner-run-<id><suffix>``, the name used when ``out`` is a directory."""
    return f"scanner-run-{data.run.run_id}{FORMATS[fmt][1]}"


def _write_atomically(target: Path, text: str) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _write_file(target: Path, text: str) -> None:
    """Write ``text`` to ``target``: a file that is not regular (a FIFO, a device) as it is, and
    a regular file atomically, where a symbolic link leads (the link stays)."""
    try:
        regular = stat.S_ISREG(os.stat(target).st_mode)  # through links, as opening it would
    except FileNotFoundError:
        regular = True  # a new file, or one a dangling link names
    if not regular:
        with open(target, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
        return
    _write_atomically(Path(os.path.realpath(target)), text)


def render_text(data: ReportData, fmt: str) -> str:
    """The report in format ``fmt``. Raises ``ReportError`` for an unknown format, a format
    the data cannot give (every result, when only the findings were read), a template failure."""
    if fmt not in FORMATS:
        raise ReportError(f"unknown report format {fmt!r} "
                          f"(choose one of: {', '.join(sorted(FORMATS))})")
    if data.findings_only and fmt in EVERY_RESULT_FORMATS:
        raise ReportError(f"the {fmt} report lists every result, but only the findings were read")
    renderer, _ = FORMATS[fmt]
    return renderer(data)


def render_report(data: ReportData, fmt: str, out: Path) -> Path:
    """Write the report in format ``fmt`` to ``out`` (a file, or a directory to write into).

    Returns the file written. Raises ``ReportError`` as ``render_text`` does, and for an output
    path that cannot be written (the error names the path).
    """
    text = render_text(data, fmt)
    out = Path(out)
    target = out / default_file_name(data, fmt) if out.is_dir() else out
    try:
        _write_file(target, text)
    except OSError as e:
        reason = e.strerror or e.__class__.__name__
        raise ReportError(f"cannot write {fmt} report: {reason}",
                          Location(path=str(target))) from e
    return target


def render_reports(data: ReportData, formats: Sequence[str], out: Path,
                   written: Callable[[str, str], None] | None = None) -> list[Path]:
    """``render_report`` for each of ``formats``, in order; the first error raised. ``written``
    is told each format and its file as it is written.

    Each report is one core's work, and a scan ends with its workers' cores free: with
    several formats, all but the first render in forked processes meanwhile (where
    ``forked.can_fork``).
    """
    def told(fmt: str, path: Path) -> Path:
        if written is not None:
            written(fmt, str(path))
        return path

    if len(formats) < 2 or not forked.can_fork():
        return [told(fmt, render_report(data, fmt, out)) for fmt in formats]
    children = [forked.start(partial(render_report, data, fmt, out), partial(_lost, fmt)) for fmt in formats[1:]]
    outcomes: list[Path | Exception] = []
    calls: list[Callable[[], Path]] = [partial(render_report, data, formats[0], out),
                                       *(child.result for child in children)]
    for fmt, call in zip(formats, calls, strict=True):
        try:
            outcomes.append(told(fmt, call()))
        except Exception as exc:  # every child is waited for all the same
            outcomes.append(exc)
    for outcome in outcomes:
        if isinstance(outcome, Exception):
            raise outcome
    return outcomes  # type: ignore[return-value]


def _lost(fmt: str, how: str) -> ReportError:
    return ReportError(f"the process rendering the {fmt} report {how}")
