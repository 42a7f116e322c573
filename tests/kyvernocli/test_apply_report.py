"""``scanner apply --output policy-report``: the documents Kyverno's CLI prints for the same results."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from scanner.engine.exceptions import SKIP_MESSAGE
from scanner.engine.policy import Policy, parse_policy
from scanner.engine.types import RuleResult, RuleStatus
from scanner.kyvernocli.apply_report import policy_reports
from scanner.kyvernocli.resource_files import LoadedResource
from tests.report.test_schemas import crd_validator

NOW = 1709272800.75


def _policy(kind: str, name: str, annotations: dict[str, str] | None = None, *, namespace: str = "",
            background: bool = True) -> Policy:
    metadata: dict[str, Any] = {"name": name, "annotations": annotations or {}}
    if namespace:
        metadata["namespace"] = namespace
    rule = {"name": "check", "match": {"any": [{"resources": {"kinds": ["Pod", "Namespace"]}}]},
            "validate": {"pattern": {"metadata": {"labels": {"team": "?*"}}}}}
    return parse_policy({"apiVersion": "kyverno.io/v1", "kind": kind, "metadata": metadata,
                         "spec": {"background": background, "rules": [rule]}})


def _loaded(kind: str, name: str, namespace: str = "", **metadata: str) -> LoadedResource:
    meta = {"name": name, **({"namespace": namespace} if namespace else {}), **metadata}
    return LoadedResource(resource={"apiVersion": "v1", "kind": kind, "metadata": meta},
                          path="r.yaml", document=0, item=None, line=1)


def _evaluated(policy: Policy, loaded: LoadedResource, status: RuleStatus = RuleStatus.FAIL,
               message: str = "label team is required") -> tuple[LoadedResource, Policy, RuleResult]:
    return loaded, policy, RuleResult(policy=policy.key, rule="check", status=status, message=message)


CLUSTER = _policy("ClusterPolicy", "require-team")
POD = _loaded("Pod", "web", "shop")


def test_apply_report_one_policy_report_per_namespaced_policy_named_like_it() -> None:
    shop_a = _policy("Policy", "team-a", namespace="shop")
    shop_b = _policy("Policy", "team-b", namespace="shop")
    reports = policy_reports([_evaluated(shop_b, POD), _evaluated(shop_a, POD),
                              _evaluated(shop_a, _loaded("Pod", "db", "shop"), RuleStatus.PASS, "")], NOW)
    assert [(r["kind"], r["metadata"]) for r in reports] == [
        ("PolicyReport", {"name": "team-a", "namespace": "shop"}),
        ("PolicyReport", {"name": "team-b", "namespace": "shop"})]
    assert [x["policy"] for x in reports[0]["results"]] == ["shop/team-a", "shop/team-a"]
    assert reports[0]["summary"] == {"pass": 1, "fail": 1, "warn": 0, "error": 0, "skip": 0}


def test_apply_report_no_cluster_report_without_cluster_policy_results() -> None:
    assert policy_reports([], NOW) == []
    assert [r["metadata"]["name"] for r in policy_reports([_evaluated(CLUSTER, POD)], NOW)] == ["merged"]


def test_apply_report_resource_reference_leaves_out_empty_fields() -> None:
    namespace = _loaded("Namespace", "shop")
    pod = _loaded("Pod", "web", "shop", uid="1234-abcd", resourceVersion="42")
    [report] = policy_reports([_evaluated(CLUSTER, namespace), _evaluated(CLUSTER, pod)], NOW)
    assert [x["resources"] for x in report["results"]] == [
        [{"apiVersion": "v1", "kind": "Namespace", "name": "shop"}],
        [{"apiVersion": "v1", "kind": "Pod", "name": "web", "namespace": "shop", "uid": "1234-abcd",
          "resourceVersion": "42"}]]


@pytest.mark.parametrize(("annotations", "expected"), [
    pytest.param({"policies.kyverno.io/severity": "high", "policies.kyverno.io/category": "Security"},
                 {"severity": "high", "category": "Security"}, id="valid-severity-and-category-kept"),
    pytest.param({"policies.kyverno.io/severity": "High"}, {}, id="severity-in-capitals-left-out"),
    pytest.param({"policies.kyverno.io/severity": "urgent"}, {}, id="unknown-severity-left-out"),
])
def test_apply_report_severity_only_when_kyverno_knows_it(annotations: dict[str, str],
                                                         expected: dict[str, str]) -> None:
    [report] = policy_reports([_evaluated(_policy("ClusterPolicy", "p", annotations), POD)], NOW)
    [result] = report["results"]
    assert {k: result[k] for k in ("severity", "category") if k in result} == expected


def test_apply_report_result_fields_as_kyverno_writes_them() -> None:
    admission_only = _policy("ClusterPolicy", "admission-only", background=False)
    skip = SKIP_MESSAGE + "shop/allow-web, ops/allow-all"
    [report] = policy_reports([_evaluated(CLUSTER, POD, RuleStatus.PASS, ""),
                               _evaluated(admission_only, POD, RuleStatus.SKIP, skip)], NOW)
    passed, skipped = report["results"]
    assert "message" not in passed
    assert passed["timestamp"] == {"seconds": 1709272800, "nanos": 0}
    assert passed["properties"] == {"process": "background scan"}
    assert skipped["properties"] == {"process": "admission review", "exceptions": "allow-web,allow-all"}


def test_apply_report_unscored_failure_is_a_warning() -> None:
    """Kyverno's ToPolicyReportResult: a fail of a policy with ``scored: "false"`` is reported as warn."""
    unscored = _policy("ClusterPolicy", "p", {"policies.kyverno.io/scored": "false"})
    [report] = policy_reports([_evaluated(unscored, POD)], NOW)
    assert (report["results"][0]["result"], report["results"][0]["scored"]) == ("warn", False)
    assert report["summary"] == {"pass": 0, "fail": 0, "warn": 1, "error": 0, "skip": 0}


def test_apply_report_validates_against_crd_schema() -> None:
    namespaced = _policy("Policy", "team-a", {"policies.kyverno.io/severity": "High"}, namespace="shop")
    evaluated = [_evaluated(CLUSTER, _loaded("Namespace", "shop")),
                 _evaluated(namespaced, POD, RuleStatus.SKIP, SKIP_MESSAGE + "shop/allow-web")]
    validator = crd_validator("wgpolicyk8s.io_policyreports.yaml")
    for report in yaml.safe_load_all(yaml.safe_dump_all(policy_reports(evaluated, NOW))):
        validator.validate(report)
