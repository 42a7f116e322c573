"""JUnit XML for CI systems: one test suite per policy, one test case per resource x rule.

``fail`` becomes ``<failure>``, ``error`` becomes ``<error>``, ``skip`` becomes ``<skipped>``;
``warn`` is a passing case (warnings do not fail a build) that carries the warning in
``<system-out>``. Inputs the run could not read (a source that failed, an unreadable file)
are ``<error>`` cases of one more suite, ``scanner inputs``, so they fail the build too.
Characters XML 1.0 cannot carry are replaced with U+FFFD.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from itertools import groupby

from scanner.engine.types import RuleStatus
from scanner.report.data import ErrorEntry, ReportData, ResultRecord
from scanner.report.formatting import xml_safe

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


def junit_tree(data: ReportData) -> ET.Element:
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
    for policy, items in groupby(data.results, key=lambda r: r.policy):
        results = list(items)
        policy_suite = suite(policy, {
            "tests": len(results),
            "failures": sum(r.status is RuleStatus.FAIL for r in results),
            "errors": sum(r.status is RuleStatus.ERROR for r in results),
            "skipped": sum(r.status is RuleStatus.SKIP for r in results),
        })
        for result in results:
            _case(policy_suite, result)
    root.attrib.update({k: str(v) for k, v in totals.items()})
    duration = data.run.duration_seconds
    root.set("time", f"{duration:.3f}" if duration is not None else "0")
    return root


def render_junit(data: ReportData) -> str:
    root = junit_tree(data)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(
        root, encoding="unicode") + "\n"
