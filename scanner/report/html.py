"""The HTML reports: one self-contained file each (inline CSS, SVG and script, no fetches).

Templates run with ``autoescape=True`` and ``StrictUndefined``. User-controlled text only ever
reaches the page escaped (by template expressions, or by ``markupsafe.escape`` in the one table
built here: the findings' rows), never inside the script or the style;
a Content-Security-Policy allows exactly the inline script and style this module wrote (by
their SHA-256) and nothing else, so even markup that slipped through could not run.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import re
from dataclasses import dataclass
from functools import cache
from itertools import groupby
from operator import attrgetter
from pathlib import Path
from typing import Any, TextIO

import jinja2
from markupsafe import Markup, escape

from scanner.engine.types import RuleStatus
from scanner.errors import ReportError
from scanner.report.assemble import finding_groups
from scanner.report.audit import audit_digest
from scanner.report.chart import trend_chart
from scanner.report.data import (
    FINDING_STATUSES,
    SEVERITY_ORDER,
    STATUS_ORDER,
    FindingGroup,
    ReportData,
    ResourceInfo,
    ResultRecord,
    describe_via,
)
from scanner.report.formatting import duration_text, iso_time, short_sha

TEMPLATE_DIR = Path(__file__).with_name("templates")
ANNOTATION_TITLE_LIMIT = 600


@dataclass(frozen=True, slots=True)
class MatrixBlock:
    """The audit matrix rows of one (policy, rule)."""

    policy: str
    rule: str
    severity: str
    counts: dict[str, int]
    results: tuple[ResultRecord, ...]


def _annotations(resource: ResourceInfo) -> str:
    text = "\n".join(f"{k}: {v}" for k, v in resource.annotations)
    if len(text) > ANNOTATION_TITLE_LIMIT:
        text = text[:ANNOTATION_TITLE_LIMIT] + "…"
    return text


class _Escaped:
    """Values escaped as autoescape does, each distinct value once per report."""

    def __init__(self) -> None:
        # keyed by class and value: equal values of other types (an enum and its text) may print differently
        self.escaped: dict[tuple[type, Any], str] = {}

    def e(self, value: Any) -> str:
        key = (value.__class__, value)
        text = self.escaped.get(key)
        if text is None:
            text = self.escaped[key] = str(escape(value))
        return text


class _FindingRows(_Escaped):
    """The rows of the findings tables of one report, one call per policy's table: a row per
    defect (``FindingGroup``), holding the resources of every overlay that renders it.

    Built here rather than in ``_failures.html.j2``: a report can hold tens of thousands of
    findings with a dozen values each, most of them repeated (statuses, rules, messages, the
    resources failing several rules, in the tables of several policies), and escaping each
    distinct value once, and building each resource's cells once per report, is several times
    faster than escaping every template expression. Values are escaped as autoescape does.
    """

    def __init__(self) -> None:
        super().__init__()
        self.cells: dict[int, tuple[str, str]] = {}  # id of a resource -> its cell, its source line

    def _resource(self, res: ResourceInfo) -> tuple[str, str]:
        cells = self.cells.get(id(res))
        if cells is None:
            e = self.e
            namespace = f"{e(res.namespace)}/" if res.namespace else ""
            labels = "".join(f' <span class="lb">{e(k)}={e(v)}</span>' for k, v in res.labels)
            commit = (f' @ <span title="{e(res.commit)}">{e(short_sha(res.commit))}</span>'
                      if res.commit else "")
            title = f' title="{e(_annotations(res))}"' if res.annotations else ""
            cells = self.cells[id(res)] = (
                f'<span class="k">{e(res.kind)}</span> {namespace}<b{title}>{e(res.name)}</b>{labels}',
                f'<span class="muted">{e(res.source)}{commit}</span>')
        return cells

    def _via(self, res: ResourceInfo) -> str:
        return f'<span class="via">{self.e(res.via)}</span>' if res.overlay else ""

    def __call__(self, findings: tuple[ResultRecord, ...], groups: tuple[FindingGroup, ...] = ()) -> Markup:
        """The rows of one policy's ``findings``, grouped by defect (``groups``, when given)."""
        e = self.e
        rows = []
        for group in groups or finding_groups(findings):
            first = group.findings[0]
            status = e(group.status)
            if len(group.findings) == 1:  # (most groups: their one finding's values as they are)
                resource, source = self._resource(first.resource)
                vias = self._via(first.resource)
                messages, actions, exceptions = e(first.message), e(first.action), first.exception
            else:  # one defect rendered by several overlays: each resource with its overlay
                resource = "<br>".join(
                    self._resource(r.resource)[0]
                    + (f' <span class="muted">({e(r.resource.via)})</span>' if r.resource.overlay else "")
                    for r in group.findings)
                source = self._resource(first.resource)[1]
                overlays = group.overlays
                vias = (f'<span class="via">via {len(overlays)} entry points: {e(", ".join(overlays))}</span>'
                        if len(overlays) > 1 else self._via(first.resource))
                messages = "<br>".join(e(m) for m in dict.fromkeys(r.message for r in group.findings))
                exceptions = ", ".join(dict.fromkeys(r.exception for r in group.findings if r.exception))
                actions = ", ".join(e(a) for a in dict.fromkeys(r.action for r in group.findings))
            exception = f' <span class="muted">(exception {e(exceptions)})</span>' if exceptions else ""
            rows.append(f'<tr data-st="{status}"><td><span class="b {status}">{status}</span></td>'
                        f'<td class="res wrap">{resource}</td>'
                        f'<td class="wrap">{e(group.rule)}</td><td class="msg wrap">{messages}{exception}</td>'
                        f'<td class="loc wrap">{e(group.location)}{"<br>" + vias if vias else ""}<br>{source}</td>'
                        f'<td>{actions}</td></tr>\n')
        return Markup("".join(rows))


class _MatrixRows(_Escaped):
    """The rows of the audit record's result matrix, one call per (policy, rule) table: a row per
    result, built here for the reason ``_FindingRows`` is (every result of a run, with its
    resource's cells built once per report)."""

    def __init__(self) -> None:
        super().__init__()
        self.cells: dict[int, str] = {}  # id of a resource -> its resource and location cells
        self.starts: dict[str, str] = {}  # a status -> a row's start, up to the resource's cells

    def _resource(self, res: ResourceInfo) -> str:
        cells = self.cells.get(id(res))
        if cells is None:
            e = self.e
            commit = f" @ {e(short_sha(res.commit))}" if res.commit else ""
            cells = self.cells[id(res)] = (f'<td class="res wrap">{e(res.key)}</td>'
                                           f'<td class="loc wrap">{e(res.source)}: {e(res.location)}{commit}</td>')
        return cells

    def __call__(self, results: tuple[ResultRecord, ...]) -> Markup:
        e, cells, starts = self.e, self._resource, self.starts
        rows = []
        for r in results:
            status = f"{r.status}"  # (its value: cheaper than hashing the enumeration member)
            start = starts.get(status)
            if start is None:
                escaped = e(status)
                start = starts[status] = f'<tr data-st="{escaped}"><td><span class="b {escaped}">{escaped}</span></td>'
            exception = f" (exception {e(r.exception)})" if r.exception else ""
            rows.append(f'{start}{cells(r.resource)}<td class="msg wrap">{e(r.message)}{exception}</td></tr>\n')
        return Markup("".join(rows))


def _counted(count: int, noun: str, plural: str = "") -> str:
    """``1 failure``, ``2 failures``: ``plural`` for nouns that do not just take an ``s``."""
    return f"{count} {noun if count == 1 else plural or noun + 's'}"


def _is_web_url(value: str) -> bool:
    return value.lower().startswith(("https://", "http://"))


class _TemplateCache(jinja2.FileSystemBytecodeCache):
    """Compiled templates kept between runs, in a private folder of the temporary directory
    and checked against each template's source. A cache file that cannot be read or written
    (a full disk, a folder cleaned away, a damaged file) only means compiling again."""

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        try:
            super().load_bytecode(bucket)
        except Exception:  # any damage to a cache file means "not cached"
            bucket.reset()

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        with contextlib.suppress(OSError):
            super().dump_bytecode(bucket)


def _bytecode_cache() -> jinja2.BytecodeCache | None:
    """The template cache, or none where its folder cannot be made."""
    try:
        return _TemplateCache()
    except (OSError, RuntimeError):
        return None


@cache
def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATE_DIR),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=False,
        keep_trailing_newline=True,
        bytecode_cache=_bytecode_cache(),
    )
    env.filters.update({"iso": iso_time, "duration": duration_text, "short": short_sha,
                        "is_web_url": _is_web_url, "counted": _counted, "via": describe_via})
    return env


def _csp_hash(text: str) -> str:
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return "sha256-" + base64.b64encode(digest).decode("ascii")


@cache
def _assets() -> dict[str, str]:
    env = _environment()
    style = (TEMPLATE_DIR / "report.css").read_text(encoding="utf-8")
    script = env.get_template("script.js.j2").render()
    for name, text, tag in (("style", style, "</style"), ("script", script, "</script")):
        if tag in text.lower():
            raise ReportError(f"report {name} asset contains {tag}>")
    return {"style": style, "script": script, "style_hash": _csp_hash(style),
            "script_hash": _csp_hash(script)}


def _context(data: ReportData) -> dict[str, Any]:
    assets = _assets()
    return {
        "data": data,
        "style": Markup(assets["style"]),
        "script": Markup(assets["script"]),
        "style_hash": assets["style_hash"],
        "script_hash": assets["script_hash"],
        "statuses": STATUS_ORDER,
        "finding_statuses": [s for s in STATUS_ORDER if RuleStatus(s) in FINDING_STATUSES],
        "severities": SEVERITY_ORDER,
    }


# Control characters other than tab and line breaks: invalid in an HTML document (a NUL
# becomes U+FFFD, others may end a value early in some viewers). A page shows each as its
# Unicode control picture (U+2400 + its code, U+2421 for DEL): visible, and the text around
# it unchanged. The JSON report keeps the original characters.
_CONTROL_CODES = (*range(0x09), 0x0B, 0x0C, *range(0x0E, 0x20), 0x7F)
_CONTROLS = re.compile("[" + re.escape("".join(map(chr, _CONTROL_CODES))) + "]")


def _picture(match: re.Match[str]) -> str:
    code = ord(match.group())
    return "\u2421" if code == 0x7F else chr(0x2400 + code)


# The same characters as UTF-8 bytes (no other character's encoding holds a byte below 0x80):
# deleting them from a page's bytes, in C, finds whether it has any several times faster than a
# search of its text.
_CONTROL_BYTES = bytes(_CONTROL_CODES)


def visible_controls(text: str) -> str:
    """``text`` with each control character (but tab, CR and LF) shown as its control picture."""
    raw = text.encode("utf-8", "surrogatepass")
    return _CONTROLS.sub(_picture, text) if len(raw.translate(None, _CONTROL_BYTES)) != len(raw) else text


def _render(template: str, context: dict[str, Any]) -> str:
    try:
        return visible_controls(_environment().get_template(template).render(context))
    except jinja2.TemplateError as e:
        raise ReportError(f"template {template} failed: {e}") from e


def _write(template: str, context: dict[str, Any], out: TextIO) -> None:
    """``_render`` written to ``out`` as the template makes it, a batch of its pieces at a time
    (a control character is one piece's own: replacing them piece by piece changes nothing)."""
    try:
        batch: list[str] = []
        size = 0
        for piece in _environment().get_template(template).generate(context):
            batch.append(piece)
            size += len(piece)
            if size >= 1 << 20:
                out.write(visible_controls("".join(batch)))
                batch.clear()
                size = 0
        out.write(visible_controls("".join(batch)))
    except jinja2.TemplateError as e:
        raise ReportError(f"template {template} failed: {e}") from e


def _report_context(data: ReportData) -> dict[str, Any]:
    context = _context(data)
    context["chart"] = trend_chart(data.trend)
    context["total_findings"] = sum(len(g.findings) for g in data.failures_by_policy)
    context["finding_rows"] = _FindingRows()
    return context


def render_html_report(data: ReportData) -> str:
    """The compliance report of one run as a self-contained HTML document."""
    return _render("report.html.j2", _report_context(data))


def write_html_report(data: ReportData, out: TextIO) -> None:
    """``render_html_report`` written to ``out`` as it is made."""
    _write("report.html.j2", _report_context(data), out)


_STATUS = attrgetter("status")


def matrix_blocks(data: ReportData) -> list[MatrixBlock]:
    """The results grouped by (policy, rule), in the order of ``data.results``."""
    severity = {p.name: p.severity_key for p in data.policies}
    blocks = []
    for (policy, rule), items in groupby(data.results, key=lambda r: (r.policy, r.rule)):
        rows = tuple(items)
        counts = dict.fromkeys(STATUS_ORDER, 0)
        for status in map(str, map(_STATUS, rows)):  # (a status's value)
            counts[status] += 1
        blocks.append(MatrixBlock(policy=policy, rule=rule, severity=severity[policy],
                                  counts=counts, results=rows))
    return blocks


def policy_rules(data: ReportData) -> dict[str, tuple[str, ...]]:
    """Each policy's rules: as declared, or else (not stored with the run) those its results name."""
    named: dict[str, dict[str, None]] = {}
    for r in data.results:
        named.setdefault(r.policy, {})[r.rule] = None
    return {p.name: p.rules or tuple(named.get(p.name, ())) for p in data.policies}


def _audit_context(data: ReportData) -> dict[str, Any]:
    context = _context(data)
    context["content_digest"] = audit_digest(data)
    context["matrix"] = matrix_blocks(data)
    context["matrix_rows"] = _MatrixRows()
    context["policy_rules"] = rules = policy_rules(data)
    context["show_rules"] = any(rules.values())
    context["show_files"] = any(p.path for p in data.policies)
    return context


def render_audit_html(data: ReportData) -> str:
    """The audit record as HTML, showing the content digest of the audit JSON record."""
    return _render("audit.html.j2", _audit_context(data))


def write_audit_html(data: ReportData, out: TextIO) -> None:
    """``render_audit_html`` written to ``out`` as it is made."""
    _write("audit.html.j2", _audit_context(data), out)
