"""Reports rendered from ``scanner.report.data`` values: HTML, JSON, SARIF, JUnit XML,
PolicyReport/OpenReports and the audit record."""

from __future__ import annotations

from scanner.report.render import FORMATS, render_report

__all__ = ["FORMATS", "render_report"]
