"""JUnit XML for CI systems: one test suite per policy, one test case per resource x rule.

``fail`` becomes ``<failure>``, ``error`` becomes ``<error>``, ``skip`` becomes ``<skipped>``;
``warn`` is a passing case (warnings do not fail a build) that carries the warning in
``<system-out>``. Characters XML 1.0 cannot carry are replaced with U+FFFD.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from itertools import groupby

from scanner.engine.types import RuleStatus
from scanner.report.data import ReportData, ResultRecord
from scanner.report.formatting import xml_safe


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


def junit_tree(data: ReportData) -> ET.Element:
    timestamp = data.run.started_at.strftime("%Y-%m-%dT%H:%M:%S")
    root = ET.Element("testsuites", {"name": f"scanner run {data.run.run_id}"})
    totals = dict.fromkeys(("tests", "failures", "errors", "skipped"), 0)
    for policy, items in groupby(data.results, key=lambda r: r.policy):
        results = list(items)
        counts = {
            "tests": len(results),
            "failures": sum(r.status is RuleStatus.FAIL for r in results),
            "errors": sum(r.status is RuleStatus.ERROR for r in results),
            "skipped": sum(r.status is RuleStatus.SKIP for r in results),
        }
        suite = ET.SubElement(root, "testsuite", {
            "name": xml_safe(policy), **{k: str(v) for k, v in counts.items()},
            "time": "0", "timestamp": timestamp})
        for result in results:
            _case(suite, result)
        for key, value in counts.items():
            totals[key] += value
    root.attrib.update({k: str(v) for k, v in totals.items()})
    duration = data.run.duration_seconds
    root.set("time", f"{duration:.3f}" if duration is not None else "0")
    return root


def render_junit(data: ReportData) -> str:
    root = junit_tree(data)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(
        root, encoding="unicode") + "\n"
