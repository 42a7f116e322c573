"""Format-specific behaviour: SARIF identities, JUnit cases, policy reports, audit digests."""

from __future__ import annotations

import dataclasses
import json
import xml.etree.ElementTree as ET
from collections import Counter
from datetime import timedelta

import pytest

from scanner.engine.types import FailureAction, RuleStatus
from scanner.report.assemble import assemble_report
from scanner.report.audit import audit_document, verify_audit_document
from scanner.report.data import ReportData, ResourceInfo, ResultRecord, SourceInfo
from scanner.report.html import _FindingRows, render_audit_html, render_html_report
from scanner.report.json_report import report_document
from scanner.report.junit import INPUTS_SUITE, render_junit
from scanner.report.policyreport import OPENREPORTS, WGPOLICY, policy_reports
from scanner.report.sarif import FINGERPRINT_KEY, sarif_document
from tests.report.fixtures import PAYLOADS, PLATFORM_SHA, hostile_report_data


def _later_run(data: ReportData) -> ReportData:
    """The same findings one day later, with new messages and commits."""
    run = dataclasses.replace(data.run, run_id=43,
                              started_at=data.run.started_at + timedelta(days=1),
                              finished_at=data.run.finished_at + timedelta(days=1))
    results = [dataclasses.replace(r, message=r.message + " (again)",
                                   resource=dataclasses.replace(r.resource, commit="f" * 40,
                                                                line=(r.resource.line or 0) + 5))
               for r in data.results]
    return assemble_report(run=run, policies=data.policies, results=results)


def _fingerprints(data: ReportData) -> dict[tuple[str, str], str]:
    run = sarif_document(data)["runs"][0]
    return {(r["ruleId"], r["locations"][0]["logicalLocations"][0]["fullyQualifiedName"]):
            r["partialFingerprints"][FINGERPRINT_KEY] for r in run["results"]}


def test_sarif_fingerprints_stable_across_runs(sample_data: ReportData) -> None:
    first, second = _fingerprints(sample_data), _fingerprints(_later_run(sample_data))
    assert first == second
    assert len(set(first.values())) == len(first) == 5


def test_sarif_one_rule_per_policy_rule_and_located_results(sample_data: ReportData) -> None:
    run = sarif_document(sample_data)["runs"][0]
    rules = [r["id"] for r in run["tool"]["driver"]["rules"]]
    assert rules == ["disallow-privileged/privileged-containers",
                     "require-labels/check-app-label", "require-labels/check-team",
                     "require-limits/validate-resources", "team-naming/name-prefix"]
    located = {(r["ruleId"], r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
                r["locations"][0]["physicalLocation"]["region"]["startLine"], r["level"])
               for r in run["results"]}
    assert located == {
        ("disallow-privileged/privileged-containers", "tools/debug.yaml", 3, "error"),
        ("require-labels/check-app-label", "apps/shop/db.yaml", 12, "warning"),
        ("require-labels/check-team", "apps/shop/web.yaml", 1, "warning"),
        ("require-limits/validate-resources", "apps/shop/web.yaml", 1, "note"),
        ("team-naming/name-prefix", "namespaces.yaml", 1, "warning"),
    }
    for result in run["results"]:
        assert rules[result["ruleIndex"]] == result["ruleId"]
    assert {p["mappedTo"]["uriBaseId"]: p["revisionId"] for p in
            run["versionControlProvenance"]} == {
        "platform": "3f9a1c2b7d4e5f60718293a4b5c6d7e8f9012345",
        "apps": "b1e2d3c4a5f60718293a4b5c6d7e8f9012345678"}
    assert run["invocations"][0]["executionSuccessful"] is False


def test_junit_one_case_per_resource_and_rule(sample_data: ReportData) -> None:
    root = ET.fromstring(render_junit(sample_data))
    cases = {}
    for suite in root.iter("testsuite"):
        for case in suite.iter("testcase") if suite.get("name") != INPUTS_SUITE else ():
            outcome = next((c.tag for c in case if c.tag != "system-out"), "passed")
            cases[(case.get("classname"), case.get("name"))] = outcome
    assert len(cases) == len(sample_data.results)
    assert cases[("disallow-privileged.privileged-containers", "apps:Pod/tools/debug")] == "failure"
    assert cases[("require-limits.validate-resources", "platform:Deployment/shop/db")] == "error"
    assert cases[("require-labels.check-app-label", "apps:Pod/tools/debug")] == "skipped"
    assert cases[("require-labels.check-team", "platform:Deployment/shop/web")] == "passed"
    assert (root.get("tests"), root.get("failures"), root.get("errors"), root.get("skipped")) == (
        "14", "4", "4", "1")  # 11 results and 3 inputs that could not be read (2 files, 1 policy)


def _results_dropped(data: ReportData) -> ReportData:
    return assemble_report(run=data.run, policies=data.policies, results=[], errors=data.errors)


@pytest.mark.parametrize("make", [pytest.param(lambda d: d, id="with-results"),
                                  pytest.param(_results_dropped, id="inputs-only")])
def test_junit_input_errors_are_error_cases(make, sample_data: ReportData) -> None:
    data = make(sample_data)
    root = ET.fromstring(render_junit(data))
    inputs = [s for s in root.iter("testsuite") if s.get("name") == INPUTS_SUITE]
    assert len(inputs) == 1
    assert [(c.get("classname"), c.get("name"), c.find("error").get("message"))
            for c in inputs[0].iter("testcase")] == [
        (INPUTS_SUITE, "policies/bad.yaml:9:11", "invalid policy bad: at least one kind is required"),
        (INPUTS_SUITE, "apps: tools/broken.yaml:7:3",
         "invalid YAML: mapping values are not allowed here"),
        (INPUTS_SUITE, "legacy: legacy", "clone failed: repository not found")]
    for node in (root, *root.iter("testsuite")):  # every count is the count of its cases
        cases = list(node.iter("testcase"))
        assert int(node.get("tests")) == len(cases)
        for attr, tag in (("failures", "failure"), ("errors", "error"), ("skipped", "skipped")):
            assert int(node.get(attr)) == sum(c.find(tag) is not None for c in cases), (node.get("name"), attr)
    assert int(root.get("errors")) >= len(data.errors) == 3


@pytest.mark.parametrize(("path", "uri"), [
    pytest.param("apps/shop/web.yaml", "apps/shop/web.yaml", id="plain-path-unchanged"),
    pytest.param("weird dir/pod \u00fc#1.yaml", "weird%20dir/pod%20%C3%BC%231.yaml",
                 id="space-non-ascii-hash-encoded"),
    pytest.param("a:b/50%?.yaml", "a%3Ab/50%25%3F.yaml", id="colon-percent-question-encoded"),
])
def test_sarif_artifact_uri_is_a_percent_encoded_uri_reference(path: str, uri: str,
                                                                sample_data: ReportData) -> None:
    results = [dataclasses.replace(r, resource=dataclasses.replace(r.resource, path=path))
               for r in sample_data.results]
    run = sarif_document(assemble_report(run=sample_data.run, policies=sample_data.policies,
                                         results=results))["runs"][0]
    locations = [loc for r in run["results"] for loc in r["locations"]]
    locations += [loc for n in run["invocations"][0]["toolExecutionNotifications"]
                  for loc in n.get("locations", ())]
    assert len(locations) == 6  # five findings and one evaluation error
    assert {loc["physicalLocation"]["artifactLocation"]["uri"] for loc in locations} == {uri}


def _provenance(data: ReportData, url: str, ref: str) -> list[dict]:
    source = SourceInfo(name="repo", type="git", url=url, ref=ref, commit_sha=PLATFORM_SHA)
    run = dataclasses.replace(data.run, sources=(source,))
    return sarif_document(dataclasses.replace(data, run=run))["runs"][0].get("versionControlProvenance", [])


@pytest.mark.parametrize(("url", "uri"), [
    pytest.param("https://git.example.com/platform.git", "https://git.example.com/platform.git", id="https"),
    pytest.param("ssh://git@git.example.com/apps.git", "ssh://git@git.example.com/apps.git", id="ssh"),
    pytest.param("git://git.example.com/apps.git", "git://git.example.com/apps.git", id="git"),
    pytest.param("file:///srv/git/apps.git", "file:///srv/git/apps.git", id="file"),
    pytest.param("git@host:org/repo.git", "ssh://git@host/org/repo.git", id="scp-like"),
    pytest.param("host:/srv/repo.git", "ssh://host/srv/repo.git", id="scp-like-absolute-no-user"),
    pytest.param("/work/main", "file:///work/main", id="local-path"),
    pytest.param("/srv/my repos/apps", "file:///srv/my%20repos/apps", id="local-path-with-space"),
    pytest.param("relative/repo", None, id="relative-path-left-out"),
])
def test_sarif_repository_uri_is_absolute(url: str, uri: str | None, sample_data: ReportData) -> None:
    provenance = _provenance(sample_data, url, "main")
    assert [p["repositoryUri"] for p in provenance] == ([uri] if uri else [])


@pytest.mark.parametrize(("ref", "branch"), [
    pytest.param("main", "main", id="branch"),
    pytest.param("refs/heads/release-1.4", "release-1.4", id="full-branch-ref"),
    pytest.param("", None, id="default-branch"),
    pytest.param("HEAD", None, id="head"),
    pytest.param("refs/tags/v1.0", None, id="tag-ref"),
    pytest.param(PLATFORM_SHA, None, id="commit"),
    pytest.param(PLATFORM_SHA[:10], None, id="short-commit"),
])
def test_sarif_branch_only_for_a_branch_name(ref: str, branch: str | None, sample_data: ReportData) -> None:
    [provenance] = _provenance(sample_data, "https://git.example.com/platform.git", ref)
    assert provenance.get("branch") == branch
    assert provenance["revisionId"] == PLATFORM_SHA


def test_junit_replaces_characters_xml_cannot_carry() -> None:
    text = render_junit(hostile_report_data())
    root = ET.fromstring(text)
    messages = [f.get("message") for f in root.iter("failure")]
    assert messages and all("\x00" not in m and "\ufffd\ufffd end" in m for m in messages)


def test_policy_reports_report_a_failure_of_an_unscored_policy_as_a_warning(sample_data: ReportData) -> None:
    """Kyverno's ToPolicyReportResult: ``scored: "false"`` turns a fail into a warn, in the summary too."""
    unscored = tuple(dataclasses.replace(p, scored=p.name != "require-limits") for p in sample_data.policies)
    reports = policy_reports(dataclasses.replace(sample_data, policies=unscored))
    shop = {(x["policy"], x["rule"], x["resources"][0]["name"]): x for x in reports[1]["results"]}
    web_limits = shop[("require-limits", "validate-resources", "web")]
    assert (web_limits["result"], web_limits["scored"]) == ("warn", False)
    assert shop[("require-labels", "check-team", "web")]["scored"] is True
    for report in reports:
        counted = Counter(x["result"] for x in report["results"])
        assert report["summary"] == {k: counted.get(k, 0) for k in ("pass", "fail", "warn", "error", "skip")}
    before = policy_reports(sample_data)
    assert sum(r["summary"]["warn"] for r in reports) > sum(r["summary"]["warn"] for r in before)


def test_policy_reports_name_skipping_exceptions_as_kyverno_does(sample_data: ReportData) -> None:
    results = [dataclasses.replace(r, exception="tools/allow-debug, platform/allow-all") if r.exception else r
               for r in sample_data.results]
    reports = policy_reports(dataclasses.replace(sample_data, results=tuple(results)))
    skipped = [x["properties"] for report in reports for x in report["results"] if x["result"] == "skip"]
    assert skipped and all(p["exceptions"] == "allow-debug,allow-all" and "exception" not in p
                           for p in skipped)


def test_policy_reports_timestamp_in_whole_seconds(sample_data: ReportData) -> None:
    run = dataclasses.replace(sample_data.run, started_at=sample_data.run.started_at + timedelta(seconds=1.25))
    reports = policy_reports(dataclasses.replace(sample_data, run=run))
    assert {tuple(x["timestamp"].values()) for report in reports for x in report["results"]} == {
        (1709272801, 0)}


@pytest.mark.parametrize(("flavour", "kinds"), [
    pytest.param(WGPOLICY, ["ClusterPolicyReport", "PolicyReport", "PolicyReport"],
                 id="wgpolicyk8s-kinds"),
    pytest.param(OPENREPORTS, ["ClusterReport", "Report", "Report"], id="openreports-kinds"),
])
def test_policy_reports_one_per_namespace_plus_cluster(flavour, kinds,
                                                       sample_data: ReportData) -> None:
    reports = policy_reports(sample_data, flavour)
    assert [r["kind"] for r in reports] == kinds
    assert [r["metadata"].get("namespace") for r in reports] == [None, "shop", "tools"]
    assert {r["apiVersion"] for r in reports} == {flavour.api_version}
    shop = {(x["policy"], x["rule"], x["resources"][0]["name"]): x for x in reports[1]["results"]}
    web_limits = shop[("require-limits", "validate-resources", "web")]
    assert web_limits["result"] == "fail" and web_limits["severity"] == "low"
    assert web_limits["scored"] is True
    assert web_limits["timestamp"] == {"seconds": 1709272800, "nanos": 0}
    assert web_limits["properties"]["path"] == "apps/shop/web.yaml"
    assert web_limits["properties"]["line"] == "1"
    assert shop[("require-labels", "check-team", "web")]["scored"] is True  # a warning of a scored policy
    assert reports[1]["summary"] == {"pass": 3, "fail": 2, "warn": 1, "error": 1, "skip": 0}
    json_ids = {f["id"] for g in report_document(sample_data)["failures_by_policy"]
                for f in g["findings"]}
    assert web_limits["properties"]["result_id"] in json_ids


@pytest.mark.parametrize("edit", [
    pytest.param(lambda d: d["matrix"][0].update(status="fail"), id="changed-status-detected"),
    pytest.param(lambda d: d["policies"][0].update(digest="sha256:0"),
                 id="changed-policy-digest-detected"),
    pytest.param(lambda d: d["matrix"].pop(), id="removed-result-detected"),
])
def test_audit_digest_detects_edits(edit, sample_data: ReportData) -> None:
    document = json.loads(json.dumps(audit_document(sample_data)))
    assert verify_audit_document(document)
    edit(document)
    assert not verify_audit_document(document)


def test_audit_html_shows_digest_of_audit_json(sample_data: ReportData) -> None:
    digest = audit_document(sample_data)["content_digest"]
    assert digest.startswith("sha256:")
    assert digest in render_audit_html(sample_data)
    statuses = [row["status"] for row in audit_document(sample_data)["matrix"]]
    assert sorted(statuses) == sorted(r.status.value for r in sample_data.results)
    assert set(statuses) == {s.value for s in RuleStatus}


@pytest.mark.parametrize("render", [pytest.param(render_html_report, id="report-html"),
                                    pytest.param(render_audit_html, id="audit-html")])
def test_html_escapes_every_payload(render) -> None:
    html = render(hostile_report_data())
    assert html.count("<script") == 1
    for payload in PAYLOADS[:5]:
        assert payload not in html
    assert "&lt;script&gt;document.title=&#39;PWNED&#39;&lt;/script&gt;" in html
    assert 'href="javascript:' not in html
    assert "{{ 7*7 }}{% raw %}" in html


def test_html_finding_rows_keep_each_resource_and_value_apart() -> None:
    def pod(namespace: str) -> ResourceInfo:
        return ResourceInfo(api_version="v1", kind="Pod", namespace=namespace, name="web", source="repo",
                            path=f"{namespace}.yaml", line=3, commit="", labels=(("app", namespace),))

    first, second = pod("a"), pod("b")  # equal names: only the resource objects tell them apart
    findings = (
        ResultRecord(policy="p", rule="x", status=RuleStatus.FAIL, message="m <1>", resource=first),
        ResultRecord(policy="p", rule="x", status=RuleStatus.ERROR, message="m <1>", resource=second,
                     action=FailureAction.ENFORCE, exception="ns/allow"),
        ResultRecord(policy="p", rule="y", status=RuleStatus.FAIL, message="m &", resource=first),
    )
    rows = str(_FindingRows()(findings)).splitlines()
    assert rows == [
        '<tr data-st="fail"><td><span class="b fail">fail</span></td><td class="res wrap"><span class="k">Pod'
        '</span> a/<b>web</b> <span class="lb">app=a</span></td><td class="wrap">x</td><td class="msg wrap">'
        'm &lt;1&gt;</td><td class="loc wrap">a.yaml:3<br><span class="muted">repo</span></td><td>Audit</td></tr>',
        '<tr data-st="error"><td><span class="b error">error</span></td><td class="res wrap"><span class="k">Pod'
        '</span> b/<b>web</b> <span class="lb">app=b</span></td><td class="wrap">x</td><td class="msg wrap">'
        'm &lt;1&gt; <span class="muted">(exception ns/allow)</span></td><td class="loc wrap">b.yaml:3<br>'
        '<span class="muted">repo</span></td><td>Enforce</td></tr>',
        '<tr data-st="fail"><td><span class="b fail">fail</span></td><td class="res wrap"><span class="k">Pod'
        '</span> a/<b>web</b> <span class="lb">app=a</span></td><td class="wrap">y</td><td class="msg wrap">'
        'm &amp;</td><td class="loc wrap">a.yaml:3<br><span class="muted">repo</span></td><td>Audit</td></tr>',
    ]
