"""JUnit XML for CI systems: one test suite per policy, one test case per resource x rule.

``fail`` becomes ``<failure>``, ``error`` becomes ``<error>``, ``skip`` becomes ``<skipped>``;
``warn`` is a passing case (warnings do not fail a build) that carries the warning in
``<system-out>``. Inputs the run could not read (a source that failed, an unreadable file)
are ``<error>`` cases of one more suite, ``scanner inputs``, so they fail the build too.
Characters XML 1.0 cannot carry are replaced with U+FFFD.
"""

from __future__ import annotations

import io
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from itertools import groupby
from typing import TextIO

from scanner.engine.types import RuleStatus
from scanner.report.data import FINDING_STATUSES, ErrorEntry, ReportData, ResourceInfo, ResultRecord
from scanner.report.formatting import PerResource, xml_safe

INPUTS_SUITE = "scanner inputs"


def _case(suite: ET.Element, result: ResultRecord) -> None:
    resource = result.resource
    attrs = {
        "classname": xml_safe(f"{result.policy}.{result.rule}"),
        "name": xml_safe(f"{resource.source}:{resource.key}"),
        "file": xml_safe(resource.path),
        "time": "0",
    }
    if resource.line is not None:
        attrs["line"] = str(resource.line)
    case = ET.SubElement(suite, "testcase", attrs)
    message = xml_safe(result.message)
    where = xml_safe(f"{resource.source}: {resource.location}"
                     + (f" ({resource.via})" if resource.overlay else "")
                     + (f" @ {resource.commit}" if resource.commit else ""))
    if result.status is RuleStatus.FAIL:
        node = ET.SubElement(case, "failure", {"message": message, "type": result.action.value})
        node.text = f"{message}\n{where}"
    elif result.status is RuleStatus.ERROR:
        node = ET.SubElement(case, "error", {"message": message, "type": "evaluation-error"})
        node.text = f"{message}\n{where}"
    elif result.status is RuleStatus.SKIP:
        skip_reason = (f"exception {result.exception}" if result.exception else message)
        ET.SubElement(case, "skipped", {"message": xml_safe(skip_reason)})
    elif result.status is RuleStatus.WARN:
        out = ET.SubElement(case, "system-out")
        out.text = f"warning: {message}\n{where}"


def _input_case(suite: ET.Element, error: ErrorEntry) -> None:
    where = xml_safe(": ".join(part for part in (error.source, error.location) if part))
    case = ET.SubElement(suite, "testcase", {"classname": INPUTS_SUITE, "name": where or "input",
                                             "time": "0"})
    message = xml_safe(error.message)
    node = ET.SubElement(case, "error", {"message": message, "type": "input-error"})
    node.text = f"{message}\n{where}"


def _listed(data: ReportData, findings_only: bool) -> Iterable[ResultRecord]:
    return (r for r in data.results if r.status in FINDING_STATUSES) if findings_only else data.results


def junit_tree(data: ReportData, *, findings_only: bool = False) -> ET.Element:
    """The report as an element tree (with ``findings_only``, a case per fail, warn and error
    result only)."""
    timestamp = data.run.started_at.strftime("%Y-%m-%dT%H:%M:%S")
    root = ET.Element("testsuites", {"name": f"scanner run {data.run.run_id}"})
    totals = dict.fromkeys(("tests", "failures", "errors", "skipped"), 0)

    def suite(name: str, counts: dict[str, int]) -> ET.Element:
        for key, value in counts.items():
            totals[key] += value
        return ET.SubElement(root, "testsuite", {
            "name": xml_safe(name), **{k: str(v) for k, v in counts.items()},
            "time": "0", "timestamp": timestamp})

    if data.errors:
        errors = len(data.errors)
        inputs = suite(INPUTS_SUITE, {"tests": errors, "failures": 0, "errors": errors, "skipped": 0})
        for error in data.errors:
            _input_case(inputs, error)
    for policy, items in groupby(_listed(data, findings_only), key=lambda r: r.policy):
        results = list(items)
        policy_suite = suite(policy, _suite_counts(results))
        for result in results:
            _case(policy_suite, result)
    root.attrib.update({k: str(v) for k, v in totals.items()})
    duration = data.run.duration_seconds
    root.set("time", f"{duration:.3f}" if duration is not None else "0")
    return root


def _suite_counts(results: list[ResultRecord]) -> dict[str, int]:
    return {"tests": len(results),
            "failures": sum(r.status is RuleStatus.FAIL for r in results),
            "errors": sum(r.status is RuleStatus.ERROR for r in results),
            "skipped": sum(r.status is RuleStatus.SKIP for r in results)}


def _attr(text: str) -> str:
    """An attribute value as ElementTree writes it."""
    return ET._escape_attrib(text)  # type: ignore[attr-defined]


def _text(text: str) -> str:
    """Character data as ElementTree writes it."""
    return ET._escape_cdata(text)  # type: ignore[attr-defined]


def _element(tag: str, attrs: dict[str, str], indent: str, text: str | None = None) -> str:
    """One element without children, as ``ET.indent`` and ``ET.tostring`` write it."""
    attributes = "".join(f' {k}="{_attr(v)}"' for k, v in attrs.items())
    if text is None:
        return f"{indent}<{tag}{attributes} />\n"
    return f"{indent}<{tag}{attributes}>{_text(text)}</{tag}>\n"


class _CaseTexts:
    """``_case`` as text, for many results: each resource's attributes and location written
    once, each rule's class name once (the results of one resource share its object)."""

    def __init__(self) -> None:
        self.resources = PerResource(self._resource)
        self.classes: dict[tuple[str, str], str] = {}

    @staticmethod
    def _resource(resource: ResourceInfo) -> tuple[str, str]:
        """The resource's attributes after the class name, and where it is."""
        attrs = {"name": xml_safe(f"{resource.source}:{resource.key}"), "file": xml_safe(resource.path), "time": "0"}
        if resource.line is not None:
            attrs["line"] = str(resource.line)
        where = xml_safe(f"{resource.source}: {resource.location}"
                         + (f" ({resource.via})" if resource.overlay else "")
                         + (f" @ {resource.commit}" if resource.commit else ""))
        return "".join(f' {k}="{_attr(v)}"' for k, v in attrs.items()), where

    def __call__(self, result: ResultRecord) -> str:
        attributes, where = self.resources(result.resource)
        classname = self.classes.get((result.policy, result.rule))
        if classname is None:
            classname = self.classes[(result.policy, result.rule)] = (
                f' classname="{_attr(xml_safe(f"{result.policy}.{result.rule}"))}"')
        status = result.status
        if status is RuleStatus.PASS:
            return f"    <testcase{classname}{attributes} />\n"
        message = xml_safe(result.message)
        indent, text = "      ", f"{message}\n{where}"
        if status is RuleStatus.FAIL:
            child = _element("failure", {"message": message, "type": result.action.value}, indent, text)
        elif status is RuleStatus.ERROR:
            child = _element("error", {"message": message, "type": "evaluation-error"}, indent, text)
        elif status is RuleStatus.SKIP:
            reason = f"exception {result.exception}" if result.exception else message
            child = _element("skipped", {"message": xml_safe(reason)}, indent)
        elif status is RuleStatus.WARN:
            child = _element("system-out", {}, indent, f"warning: {message}\n{where}")
        else:
            return f"    <testcase{classname}{attributes} />\n"
        return f"    <testcase{classname}{attributes}>\n{child}    </testcase>\n"


def _input_case_text(error: ErrorEntry) -> str:
    """``_input_case`` as text."""
    where = xml_safe(": ".join(part for part in (error.source, error.location) if part))
    message = xml_safe(error.message)
    attributes = "".join(f' {k}="{_attr(v)}"' for k, v in
                         (("classname", INPUTS_SUITE), ("name", where or "input"), ("time", "0")))
    child = _element("error", {"message": message, "type": "input-error"}, "      ", f"{message}\n{where}")
    return f"    <testcase{attributes}>\n{child}    </testcase>\n"


def write_junit(data: ReportData, out: TextIO, *, findings_only: bool = False) -> None:
    """Write the report to ``out``: the text ``render_junit`` gives, a test suite at a time."""
    timestamp = data.run.started_at.strftime("%Y-%m-%dT%H:%M:%S")
    suites: list[tuple[str, list[ResultRecord]]] = [
        (policy, list(items)) for policy, items in groupby(_listed(data, findings_only), key=lambda r: r.policy)]
    counts = [_suite_counts(results) for _, results in suites]
    if data.errors:
        errors = len(data.errors)
        counts.insert(0, {"tests": errors, "failures": 0, "errors": errors, "skipped": 0})
    totals = {key: str(sum(c[key] for c in counts)) for key in ("tests", "failures", "errors", "skipped")}
    duration = data.run.duration_seconds
    root = {"name": f"scanner run {data.run.run_id}", **totals,
            "time": f"{duration:.3f}" if duration is not None else "0"}
    out.write('<?xml version="1.0" encoding="UTF-8"?>\n')
    if not counts:
        out.write(_element("testsuites", root, ""))
        return
    out.write(_element("testsuites", root, "")[:-len(" />\n")] + ">\n")
    suite_counts = iter(counts)

    def suite_start(name: str) -> str:
        attrs = {"name": xml_safe(name), **{k: str(v) for k, v in next(suite_counts).items()},
                 "time": "0", "timestamp": timestamp}
        return _element("testsuite", attrs, "  ")[:-len(" />\n")] + ">\n"

    if data.errors:
        out.write(suite_start(INPUTS_SUITE) + "".join(_input_case_text(e) for e in data.errors) + "  </testsuite>\n")
    case_text = _CaseTexts()
    for policy, results in suites:
        out.write(suite_start(policy))
        for start in range(0, len(results), 1024):
            out.write("".join([case_text(r) for r in results[start:start + 1024]]))
        out.write("  </testsuite>\n")
    out.write("</testsuites>\n")


def render_junit(data: ReportData, *, findings_only: bool = False) -> str:
    out = io.StringIO()
    write_junit(data, out, findings_only=findings_only)
    return out.getvalue()
