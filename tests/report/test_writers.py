"""The formats written as text (policy reports, JUnit, the audit record) give the bytes of
their reference serialisers (PyYAML, ElementTree, the audit document), for values of every
kind YAML and XML must quote or escape; and their findings-only variants."""

from __future__ import annotations

import dataclasses
import hashlib
import io
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from scanner.engine.types import RuleStatus
from scanner.report.audit import audit_digest, audit_document, write_audit_json
from scanner.report.data import FINDING_STATUSES, ReportData
from scanner.report.formatting import FindingIds, finding_id
from scanner.report.json_report import dump_json, report_document, write_json_report
from scanner.report.junit import junit_tree, render_junit
from scanner.report.policyreport import OPENREPORTS, WGPOLICY, ReportFlavour, policy_reports, render_policy_reports
from scanner.report.render import render_report, render_text
from scanner.report.sarif import sarif_document, write_sarif
from scanner.report.yamltext import DUMP_OPTIONS, ScalarText
from tests.report.fixtures import hostile_report_data, overlay_report_data, reassembled, sample_report_data

# values a YAML emitter writes otherwise than as they are: words that resolve to other types,
# indicators, breaks, leading and trailing spaces, characters that need escapes, long lines
TRICKY = (
    "", "yes", "No", "null", "~", "true", "123", "0o17", "0x1F", "1:20", "1.5", ".inf", "2024-03-01",
    "- item", "a: b", "a #b", "#c", "[x]", "{y}", "*ref", "&anchor", "!tag", "'quoted'", '"double"',
    " leading", "trailing ", "line\nbreak", "  indented\n  lines\n", "tab\there", "bell\x07", "nul\x00",
    "dél\u00e9gué", "emoji \U0001F600", "bom\ufeff", "line\u2028separator", "x" * 2000,
    "word " * 25_000, "a/b.c_d-e", "0" * 64, "1e5", "=", "<<", "?", ":", "-",
)


def _tricky_data() -> ReportData:
    """The sample run with tricky values in every place a result and its resource write text."""
    sample = sample_report_data()
    results = []
    for i, result in enumerate(sample.results * 4):
        value = TRICKY[i % len(TRICKY)]
        resource = dataclasses.replace(result.resource, name=value or "n", path=value, commit=value,
                                       source=value, overlay=value if i % 3 else "",
                                       patches=(value, "p.yaml") if i % 2 else (),
                                       line=None if i % 5 == 0 else i)
        results.append(dataclasses.replace(result, message=value, resource=resource,
                                           exception=f"ns/{value}" if result.status is RuleStatus.SKIP else ""))
    return reassembled(sample, results=results)


DATA: list[tuple[str, Callable[[], ReportData]]] = [
    ("sample", sample_report_data), ("overlay", overlay_report_data), ("hostile", hostile_report_data),
    ("tricky", _tricky_data),
]
DATA_IDS = [name for name, _ in DATA]


@pytest.mark.parametrize("make", [m for _, m in DATA], ids=DATA_IDS)
@pytest.mark.parametrize("flavour", [WGPOLICY, OPENREPORTS], ids=["wgpolicy", "openreports"])
@pytest.mark.parametrize("findings_only", [False, True], ids=["every-result", "findings-only"])
def test_policy_reports_text_is_what_pyyaml_dumps(make: Callable[[], ReportData], flavour: ReportFlavour,
                                                 findings_only: bool) -> None:
    data = make()
    expected = yaml.dump_all(policy_reports(data, flavour, findings_only=findings_only), explicit_start=True,
                             **DUMP_OPTIONS)
    assert render_policy_reports(data, flavour, findings_only=findings_only) == expected


@pytest.mark.parametrize("make", [m for _, m in DATA], ids=DATA_IDS)
@pytest.mark.parametrize("findings_only", [False, True], ids=["every-result", "findings-only"])
def test_junit_text_is_what_element_tree_writes(make: Callable[[], ReportData], findings_only: bool) -> None:
    data = make()
    root = junit_tree(data, findings_only=findings_only)
    ET.indent(root)
    expected = '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
    assert render_junit(data, findings_only=findings_only) == expected


@pytest.mark.parametrize("make", [m for _, m in DATA], ids=DATA_IDS)
@pytest.mark.parametrize("chain", ["", "sha256:" + "c" * 64], ids=["no-chain", "chained"])
def test_audit_record_written_row_by_row_is_the_document(make: Callable[[], ReportData], chain: str) -> None:
    data = make()
    data = dataclasses.replace(data, run=dataclasses.replace(data.run, chain_digest=chain))
    document = audit_document(data)
    out = io.StringIO()
    write_audit_json(data, out)
    assert out.getvalue() == dump_json(document)
    assert audit_digest(data) == document["content_digest"]


def test_audit_record_of_a_run_without_results() -> None:
    data = reassembled(sample_report_data(), results=[])
    out = io.StringIO()
    write_audit_json(data, out)
    assert out.getvalue() == dump_json(audit_document(data))
    assert '"matrix": []' in out.getvalue()


@pytest.mark.parametrize("fmt", ["policy-report", "openreports", "junit"])
def test_findings_only_variants_list_only_fail_warn_and_error(fmt: str) -> None:
    data = sample_report_data()
    every, findings = render_text(data, fmt), render_text(data, fmt, findings_only=True)
    assert len(findings) < len(every)
    listed = [r for r in data.results if r.status in FINDING_STATUSES]
    if fmt == "junit":
        cases = ET.fromstring(findings).findall(".//testcase")
        assert len(cases) == len(listed) + len(data.errors)
        assert not ET.fromstring(findings).findall(".//skipped")
    else:
        reports = list(yaml.safe_load_all(findings))
        statuses = [entry["result"] for report in reports for entry in report["results"]]
        assert len(statuses) == len(listed)
        assert set(statuses) <= {"fail", "warn", "error"}
        assert all(report["summary"]["pass"] == report["summary"]["skip"] == 0 for report in reports)


@pytest.mark.parametrize("fmt", ["html", "json", "sarif", "audit-json", "audit-html"])
def test_formats_without_a_variant_are_the_same_with_findings_only(fmt: str) -> None:
    data = sample_report_data()
    assert render_text(data, fmt, findings_only=True) == render_text(data, fmt)


@pytest.mark.parametrize("path", [("results", 0, "message"), ("metadata", "labels", "scanner/run-id"), ("kind",)])
@pytest.mark.parametrize("value", TRICKY)
def test_scalar_text_is_the_dumped_scalar(path: tuple[str | int, ...], value: str) -> None:
    document: object = value
    for step in reversed(path):
        document = [document] if isinstance(step, int) else {step: document}
    dumped = yaml.dump(document, **DUMP_OPTIONS)
    text = ScalarText(path)(value)
    assert dumped.endswith(text + "\n")
    assert yaml.safe_load(dumped) == document


@pytest.mark.parametrize("digest", [
    hashlib.sha256(b"a").hexdigest(), "0" * 64, "7" * 64, "1234567890" * 6 + "1234", "0777", "0b0101",
    "0b012", "1e10", "123abc", "abcdef", "deadbeef" * 8, "01f"])
def test_a_hex_digest_is_written_as_any_scalar(digest: str) -> None:
    place = ScalarText(("results", 0, "properties", "result_id"))
    assert place.hex_digest(digest) == ScalarText(("results", 0, "properties", "result_id"))(digest)


def test_finding_ids_are_finding_id() -> None:
    data = hostile_report_data()
    ids = FindingIds()
    for r in data.results:
        assert ids(r.resource, r.policy, r.rule) == finding_id(r.resource, r.policy, r.rule)


@pytest.mark.parametrize("make", [m for _, m in DATA], ids=DATA_IDS)
@pytest.mark.parametrize("fmt", ["audit-json", "json", "sarif"])
def test_a_file_written_through_its_bytes_holds_the_text(make: Callable[[], ReportData], fmt: str,
                                                         tmp_path: Path) -> None:
    # JSON written to a file's UTF-8 bytes as orjson gives them, between text written to the file
    data = make()
    path = render_report(data, fmt, tmp_path / "report")
    assert path.read_text(encoding="utf-8") == render_text(data, fmt)


@pytest.mark.parametrize("make", [m for _, m in DATA] + [lambda: reassembled(sample_report_data(), results=[])],
                         ids=[*DATA_IDS, "no-results"])
def test_json_report_written_a_policy_at_a_time_is_the_document(make: Callable[[], ReportData]) -> None:
    data = make()
    out = io.StringIO()
    write_json_report(data, out)
    assert out.getvalue() == dump_json(report_document(data))


def _many_results() -> ReportData:
    # more results than a batch, and rules the policies do not list (as autogen rules are not)
    data = sample_report_data()
    return reassembled(data, results=[
        dataclasses.replace(r, rule=f"autogen-{r.rule}" if n % 3 else r.rule,
                            resource=dataclasses.replace(r.resource, name=f"{r.resource.name}-{n}"))
        for n in range(3000 // len(data.results) + 1) for r in data.results])


@pytest.mark.parametrize("make", [m for _, m in DATA] + [lambda: reassembled(sample_report_data(), results=[]),
                                                         _many_results], ids=[*DATA_IDS, "no-results", "many"])
def test_sarif_log_written_a_batch_of_results_at_a_time_is_the_document(make: Callable[[], ReportData]) -> None:
    data = make()
    out = io.StringIO()
    write_sarif(data, out)
    assert out.getvalue() == dump_json(sarif_document(data))
