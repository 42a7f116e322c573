"""Every report format rendered from a stored run (SQLite and PostgreSQL): the formats written as
text give their reference serialisers' bytes, and the findings-only variants read from the
findings alone equal those read from every result."""

from __future__ import annotations

import io
import xml.etree.ElementTree as ET

import pytest
import yaml

from scanner.engine.types import RuleStatus
from scanner.errors import ReportError
from scanner.report.assemble import assemble_report
from scanner.report.audit import audit_digest, audit_document, write_audit_json
from scanner.report.data import ResultRecord
from scanner.report.json_report import dump_json
from scanner.report.junit import junit_tree
from scanner.report.policyreport import OPENREPORTS, WGPOLICY, policy_reports
from scanner.report.render import FORMATS, render_text
from scanner.report.yamltext import DUMP_OPTIONS
from scanner.scan.report_data import build_report_data
from scanner.store import Store
from tests.store.conftest import day
from tests.store.scan_helpers import pod, policy, scan

FAIL, PASS, WARN, SKIP, ERROR = RuleStatus.FAIL, RuleStatus.PASS, RuleStatus.WARN, RuleStatus.SKIP, RuleStatus.ERROR


def _run(store: Store) -> int:
    outcome = {
        pod("web", "shop", line=3): {("require-labels", "check"): FAIL, ("disallow-latest", "tag"): PASS},
        pod("db", "shop", path="apps/db: main.yaml", line=12): {("require-labels", "check"): WARN,
                                                                ("disallow-latest", "tag"): SKIP},
        pod("yes", "null"): {("require-labels", "check"): ERROR, ("disallow-latest", "tag"): FAIL},
        pod("1:20", "tools", source="other"): {("require-labels", "check"): PASS},
    }
    scan(store, day(0), {pod("web", "shop"): {("require-labels", "check"): PASS}})
    return scan(store, day(1), outcome)


def test_stored_run_formats_equal_their_reference_serialisers(store: Store) -> None:
    run_id = _run(store)
    data = build_report_data(store, run_id)
    assert len(data.results) == 7
    for flavour, fmt in ((WGPOLICY, "policy-report"), (OPENREPORTS, "openreports")):
        assert render_text(data, fmt) == yaml.dump_all(policy_reports(data, flavour), explicit_start=True,
                                                       **DUMP_OPTIONS)
    root = junit_tree(data)
    ET.indent(root)
    assert render_text(data, "junit") == ('<?xml version="1.0" encoding="UTF-8"?>\n'
                                          + ET.tostring(root, encoding="unicode") + "\n")
    out = io.StringIO()
    write_audit_json(data, out)
    document = audit_document(data)
    assert out.getvalue() == render_text(data, "audit-json") == dump_json(document)
    assert audit_digest(data) == document["content_digest"]
    assert document["content_digest"] in render_text(data, "audit-html")


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_findings_only_reading_renders_what_reading_every_result_does(store: Store, fmt: str) -> None:
    run_id = _run(store)
    every = build_report_data(store, run_id)
    if not fmt.startswith("audit-"):
        findings = build_report_data(store, run_id, findings_only=True)
        assert render_text(findings, fmt, findings_only=True) == render_text(every, fmt, findings_only=True)
    else:  # the audit record is every result, always
        with pytest.raises(ReportError, match="lists every result"):
            render_text(build_report_data(store, run_id, findings_only=True), fmt, findings_only=True)


def test_stored_results_come_in_the_order_reports_sort_them(store: Store) -> None:
    # names a database collation orders otherwise than code points ("-" and "/", case, accents,
    # a cluster-scoped resource, one resource at two lines): read in the order ``assemble_report``
    # sorts results in, which it then keeps
    outcome = {
        pod("Web", "shop"): {("require-labels", "check"): FAIL, ("teamz", "r"): PASS},
        pod("web", "shop", line=9): {("require-labels", "check"): PASS, ("Zeta", "r"): SKIP},
        pod("web", "shop", line=2): {("require-labels", "check"): WARN},
        pod("éclair", "shop"): {("require-labels", "check"): PASS, ("teamz", "r"): FAIL},
        pod("api", "shop-a"): {("require-labels", "check"): PASS, ("Zeta", "R"): FAIL},
        pod("api", "Shop"): {("require-labels", "check"): PASS},
        pod("api", "", source="a-repo"): {("require-labels", "check"): ERROR, ("Zeta", "r"): PASS},
    }
    policies = [policy("require-labels"), policy("teamz"), policy("Zeta"), policy("ns-policy", namespace="team")]
    outcome[pod("db", "shop")] = {("team/ns-policy", "check"): FAIL, ("require-labels", "check"): PASS}
    run_id = scan(store, day(0), outcome, policies=policies)
    data = build_report_data(store, run_id)

    def key(r: ResultRecord) -> tuple[object, ...]:
        res = r.resource
        return r.policy, r.rule, res.namespace, res.kind, res.name, res.source, res.path, res.line or 0

    assert [key(r) for r in data.results] == sorted(key(r) for r in data.results)
    assert len(data.results) == 14
    assert data == assemble_report(
        run=data.run, policies=data.policies, results=reversed(data.results), errors=data.errors,
        previous_run_id=data.previous_run_id, trend=data.trend, exceptions=data.exceptions,
        not_evaluated=data.not_evaluated, coverage=data.coverage)
