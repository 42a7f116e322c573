"""Render a ``ReportData`` in one of the report formats to a file."""

from __future__ import annotations

import io
import os
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from scanner.errors import Location, ReportError
from scanner.report.audit import write_audit_json
from scanner.report.data import ReportData
from scanner.report.html import write_audit_html, write_html_report
from scanner.report.json_report import write_json_report
from scanner.report.junit import write_junit
from scanner.report.policyreport import OPENREPORTS, WGPOLICY, write_policy_reports
from scanner.report.sarif import write_sarif

# writes a report of the data to an open text file; the flag asks for the findings-only variant
# (``FINDINGS_VARIANT_FORMATS``), which the formats that list only findings anyway ignore
Writer = Callable[[ReportData, TextIO, bool], None]


def _findings_anyway(write: Callable[[ReportData, TextIO], None]) -> Writer:
    return lambda data, out, findings_only: write(data, out)


# format name -> (writer, file suffix used when ``out`` is a directory)
FORMATS: dict[str, tuple[Writer, str]] = {
    "html": (_findings_anyway(write_html_report), ".html"),
    "json": (_findings_anyway(write_json_report), ".json"),
    "sarif": (_findings_anyway(write_sarif), ".sarif"),
    "junit": (lambda d, out, findings_only: write_junit(d, out, findings_only=findings_only), ".junit.xml"),
    "policy-report": (lambda d, out, findings_only: write_policy_reports(d, out, WGPOLICY,
                                                                         findings_only=findings_only),
                      ".policyreport.yaml"),
    "openreports": (lambda d, out, findings_only: write_policy_reports(d, out, OPENREPORTS,
                                                                       findings_only=findings_only),
                    ".openreports.yaml"),
    "audit-html": (_findings_anyway(write_audit_html), ".audit.html"),
    "audit-json": (_findings_anyway(write_audit_json), ".audit.json"),
}


# formats that list every result (passes and skips too); the others list only findings
EVERY_RESULT_FORMATS = frozenset({"junit", "policy-report", "openreports", "audit-html", "audit-json"})
# of those, the ones with a findings-only variant (``reports.findings_only``): the audit
# record is the whole matrix, always
FINDINGS_VARIANT_FORMATS = frozenset({"junit", "policy-report", "openreports"})


def lists_every_result(fmt: str, findings_only: bool = False) -> bool:
    """Whether the report in format ``fmt`` (its findings-only variant with ``findings_only``)
    needs every result of the run read, or its findings only."""
    return fmt in EVERY_RESULT_FORMATS and not (findings_only and fmt in FINDINGS_VARIANT_FORMATS)


def default_file_name(data: ReportData, fmt: str) -> str:
    """``scanner-run-<id><suffix>``, the name used when ``out`` is a directory."""
    return f"scanner-run-{data.run.run_id}{FORMATS[fmt][1]}"


def _write_atomically(target: Path, write: Callable[[TextIO], None]) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n", buffering=1 << 20) as handle:
            write(handle)
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _write_file(target: Path, write: Callable[[TextIO], None]) -> None:
    """Write to ``target``: a file that is not regular (a FIFO, a device) as it is, once the
    whole text is made (a failure writes nothing there), and a regular file atomically, as the
    text is made, where a symbolic link leads (the link stays)."""
    try:
        regular = stat.S_ISREG(os.stat(target).st_mode)  # through links, as opening it would
    except FileNotFoundError:
        regular = True  # a new file, or one a dangling link names
    if not regular:
        text = io.StringIO()
        write(text)
        with open(target, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text.getvalue())
        return
    _write_atomically(Path(os.path.realpath(target)), write)


def _writer(data: ReportData, fmt: str, findings_only: bool) -> Callable[[TextIO], None]:
    """What writes the report in format ``fmt``. Raises ``ReportError`` for an unknown format, or
    a format the data cannot give (every result, when only the findings were read)."""
    if fmt not in FORMATS:
        raise ReportError(f"unknown report format {fmt!r} "
                          f"(choose one of: {', '.join(sorted(FORMATS))})")
    if data.findings_only and lists_every_result(fmt, findings_only):
        raise ReportError(f"the {fmt} report lists every result, but only the findings were read")
    write, _ = FORMATS[fmt]
    return lambda out: write(data, out, findings_only)


def render_text(data: ReportData, fmt: str, *, findings_only: bool = False) -> str:
    """The report in format ``fmt`` (its findings-only variant with ``findings_only``, where
    the format has one). Raises ``ReportError`` for an unknown format, a format the data
    cannot give (every result, when only the findings were read), a template failure."""
    write = _writer(data, fmt, findings_only)
    out = io.StringIO()
    write(out)
    return out.getvalue()


def render_report(data: ReportData, fmt: str, out: Path, *, findings_only: bool = False) -> Path:
    """Write the report in format ``fmt`` to ``out`` (a file, or a directory to write into).

    Returns the file written. Raises ``ReportError`` as ``render_text`` does, and for an output
    path that cannot be written (the error names the path).
    """
    write = _writer(data, fmt, findings_only)
    out = Path(out)
    target = out / default_file_name(data, fmt) if out.is_dir() else out
    try:
        _write_file(target, write)
    except OSError as e:
        reason = e.strerror or e.__class__.__name__
        raise ReportError(f"cannot write {fmt} report: {reason}",
                          Location(path=str(target))) from e
    return target
