"""Outputs validate against their schemas: ours (JSON, audit), SARIF 2.1.0, the report CRDs."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

import jsonschema
import pytest
import yaml

from scanner.report.audit import audit_document
from scanner.report.data import ReportData
from scanner.report.json_report import SCHEMA_DIR, report_document
from scanner.report.policyreport import OPENREPORTS, WGPOLICY, ReportFlavour, policy_reports
from scanner.report.sarif import sarif_document
from tests.report.conftest import DATA_DIR
from tests.report.fixtures import hostile_report_data, overlay_report_data, sample_report_data

DATASETS = [pytest.param(sample_report_data, id="sample-run"),
            pytest.param(hostile_report_data, id="hostile-run"),
            pytest.param(overlay_report_data, id="overlay-run-with-coverage")]


def _our_validator() -> jsonschema.Draft202012Validator:
    schema = json.loads((SCHEMA_DIR / "report-1.schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def _strict(node: Any) -> Any:
    """An openAPIV3Schema as JSON Schema that rejects fields the API server would prune."""
    if isinstance(node, dict):
        out = {k: _strict(v) for k, v in node.items() if not k.startswith("x-kubernetes-")}
        if out.get("type") == "object" and "properties" in out:
            out.setdefault("additionalProperties", False)
        return out
    if isinstance(node, list):
        return [_strict(v) for v in node]
    return node


def crd_validator(file_name: str) -> jsonschema.Draft4Validator:
    crd = yaml.safe_load((DATA_DIR / file_name).read_text())
    schema = _strict(crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"])
    return jsonschema.Draft4Validator(schema)


@pytest.mark.parametrize("make", DATASETS)
@pytest.mark.parametrize("build", [pytest.param(report_document, id="json-report"),
                                   pytest.param(audit_document, id="audit-json")])
def test_json_documents_validate_against_shipped_schema(
        make: Callable[[], ReportData], build: Callable[[ReportData], dict]) -> None:
    document = json.loads(json.dumps(build(make())))
    _our_validator().validate(document)


@pytest.mark.parametrize(("mutate", "problem"), [
    pytest.param(lambda d: d["summary"]["by_status"].pop("fail"), "'fail' is a required",
                 id="missing-status-count-is-invalid"),
    pytest.param(lambda d: d["failures_by_policy"][0]["findings"][0].update(status="bad"),
                 "is not one of", id="unknown-status-is-invalid"),
    pytest.param(lambda d: d["run"].update(started_at="1 March"), "does not match",
                 id="non-iso-time-is-invalid"),
    pytest.param(lambda d: d.update(extra=1), "Additional properties",
                 id="unknown-top-level-key-is-invalid"),
])
def test_json_schema_rejects_broken_reports(mutate: Callable[[dict], Any], problem: str) -> None:
    document = json.loads(json.dumps(report_document(sample_report_data())))
    broken = copy.deepcopy(document)
    mutate(broken)
    errors = list(_our_validator().iter_errors(broken))
    assert errors
    assert any(problem in e.message for e in errors) or any(
        problem in sub.message for e in errors for sub in (e.context or []))


@pytest.mark.parametrize("make", DATASETS)
def test_sarif_validates_against_sarif_2_1_0_schema(make: Callable[[], ReportData]) -> None:
    schema = json.loads((DATA_DIR / "sarif-schema-2.1.0.json").read_text())
    document = json.loads(json.dumps(sarif_document(make())))
    jsonschema.Draft4Validator(schema).validate(document)


@pytest.mark.parametrize("make", DATASETS)
@pytest.mark.parametrize(("flavour", "crd"), [
    pytest.param(WGPOLICY, "wgpolicyk8s.io_policyreports.yaml", id="wgpolicyk8s-v1alpha2"),
    pytest.param(OPENREPORTS, "openreports.io_reports.yaml", id="openreports-v1alpha1"),
])
def test_policy_reports_validate_against_crd_schema(
        make: Callable[[], ReportData], flavour: ReportFlavour, crd: str) -> None:
    validator = crd_validator(crd)
    reports = yaml.safe_load_all(yaml.safe_dump_all(policy_reports(make(), flavour)))
    kinds = set()
    for report in reports:
        validator.validate(report)
        kinds.add(report["kind"])
    assert kinds <= {flavour.namespaced_kind, flavour.cluster_kind}


def test_crd_validator_rejects_unknown_result_field() -> None:
    validator = crd_validator("wgpolicyk8s.io_policyreports.yaml")
    report = policy_reports(sample_report_data())[0]
    report["results"][0]["resourceId"] = "x"
    with pytest.raises(jsonschema.ValidationError, match="resourceId"):
        validator.validate(report)
