"""``scanner test`` and ``scanner apply`` end to end, through the CLI entry point."""

from __future__ import annotations

import json
import pathlib

import pytest

from scanner.cli import main

CASES = pathlib.Path(__file__).resolve().parents[1] / "cases"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_test_command_json_rows_per_policy_rule_resource(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "test", str(CASES / "pattern-anchors"), "--output", "json")
    doc = json.loads(out)
    got = {(r["policy"], r["rule"], f'{r["kind"]}/{r["namespace"]}/{r["resource"]}'): r["actual"]
           for t in doc["tests"] for r in t["results"]}
    assert got == {
        ("image-rules", "latest-needs-always", "Pod/default/pinned"): "skip",
        ("image-rules", "latest-needs-always", "Pod/default/latest-always"): "pass",
        ("image-rules", "latest-needs-always", "Pod/team/latest-ifnotpresent"): "fail",
        ("image-rules", "autogen-latest-needs-always", "Deployment/default/web"): "fail",
        ("image-rules", "no-host-pid", "Pod/default/pinned"): "pass",
        ("image-rules", "no-host-pid", "Pod/default/latest-always"): "pass",
        ("image-rules", "no-host-pid", "Pod/team/latest-ifnotpresent"): "fail",
    }
    assert doc["summary"] == {"passed": 7, "failed": 0, "errors": 0}
    assert code == 0


def test_test_command_table_ends_with_counts(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "test", str(CASES))
    assert out.rstrip().splitlines()[-1] == "9 passed, 0 failed"
    assert code == 0


def test_test_command_mismatch_exits_1(tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    suite = tmp_path / "s"
    suite.mkdir()
    for name in ("policy.yaml", "resources.yaml"):
        (suite / name).write_text((CASES / "pattern-anchors" / name).read_text())
    (suite / "kyverno-test.yaml").write_text(
        "apiVersion: cli.kyverno.io/v1alpha1\nkind: Test\nmetadata: {name: s}\n"
        "policies: [policy.yaml]\nresources: [resources.yaml]\n"
        "results:\n- {policy: image-rules, rule: no-host-pid, kind: Pod, resources: [pinned], result: fail}\n")
    code, out, _ = run(capsys, "test", str(suite), "--output", "json")
    [row] = json.loads(out)["tests"][0]["results"]
    assert (row["actual"], row["ok"]) == ("pass", False)
    assert code == 1


def test_test_command_unloadable_suite_reports_error(tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "kyverno-test.yaml").write_text("apiVersion: cli.kyverno.io/v1alpha1\nkind: Test\nresults: [\n")
    code, out, _ = run(capsys, "test", str(tmp_path), "--output", "json")
    test = json.loads(out)["tests"][0]
    assert "kyverno-test.yaml:4" in test["error"] and test["results"] == []
    assert code == 1


def test_test_command_invalid_policy_is_reported_not_dropped(tmp_path: pathlib.Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "policy.yaml").write_text(
        "apiVersion: kyverno.io/v1\nkind: ClusterPolicy\nmetadata: {name: bad}\nspec:\n  rules:\n"
        "  - name: r\n    match: {any: [{resources: {names: [x]}}]}\n"
        "    validate: {pattern: {metadata: {name: x}}}\n")
    (tmp_path / "r.yaml").write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: x}\n")
    (tmp_path / "kyverno-test.yaml").write_text(
        "apiVersion: cli.kyverno.io/v1alpha1\nkind: Test\nmetadata: {name: t}\npolicies: [policy.yaml]\n"
        "resources: [r.yaml]\nresults:\n- {policy: bad, rule: r, kind: Pod, resources: [x], result: pass}\n")
    code, out, _ = run(capsys, "test", str(tmp_path))
    assert "policy.yaml:7:" in out and "at least one kind is required" in out
    assert "invalid policy" in out
    assert out.rstrip().splitlines()[-1] == "0 passed, 1 failed"
    assert code == 1


REFUSED_SUITE = ("apiVersion: cli.kyverno.io/v1alpha1\nkind: Test\nmetadata: {{name: t}}\npolicies: [policy.yaml]\n"
                 "resources: [r.yaml]\nresults:\n- {{policy: p, rule: r, kind: Pod, resources: [x], result: {result}}}\n")
REFUSED_POLICY = ("apiVersion: kyverno.io/v1\nkind: ClusterPolicy\nmetadata: {name: p}\nspec:\n  rules:\n"
                  "  - name: r\n    match: {any: [{resources: {kinds: [Pod]}}]}\n")


@pytest.mark.parametrize(
    ("validate", "expected"),
    [
        pytest.param("    validate:\n    - pattern: {metadata: {name: x}}\n", "skip",
                     id="validate-written-as-a-list-expected-skip"),
        pytest.param("    validate:\n    - pattern: {metadata: {name: x}}\n", "pass",
                     id="validate-written-as-a-list-expected-pass"),
        pytest.param("    validate: {message: '{{ nope }}', deny: {}}\n", "fail", id="undefined-variable"),
    ],
)
def test_test_command_refused_policy_fails_its_expectations(tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str],
                                                           validate: str, expected: str) -> None:
    (tmp_path / "policy.yaml").write_text(REFUSED_POLICY + validate)
    (tmp_path / "r.yaml").write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: x}\n")
    (tmp_path / "kyverno-test.yaml").write_text(REFUSED_SUITE.format(result=expected))
    code, out, _ = run(capsys, "test", str(tmp_path), "--output", "json")
    [row] = json.loads(out)["tests"][0]["results"]
    assert (row["actual"], row["ok"]) == ("invalid", False)
    assert "invalid policy p" in row["reason"]
    assert code == 1


def test_apply_validate_written_as_a_list_is_a_located_policy_error(tmp_path: pathlib.Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "policy.yaml").write_text(REFUSED_POLICY + "    validate:\n    - pattern: {metadata: {name: x}}\n")
    (tmp_path / "r.yaml").write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: x}\n")
    code, _, err = run(capsys, "apply", str(tmp_path / "policy.yaml"), "--resource", str(tmp_path / "r.yaml"))
    assert "policy.yaml:9:5 (/spec/rules/0/validate)" in err
    assert "cannot unmarshal array into Go struct field Rule.spec.rules.validate of type v1.Validation" in err
    assert code == 2


def test_apply_reports_failures_and_exits_1_on_enforce(capsys: pytest.CaptureFixture[str]) -> None:
    case = CASES / "pattern-anchors"
    code, out, _ = run(capsys, "apply", str(case / "policy.yaml"), "--resource", str(case / "resources.yaml"))
    assert "FAIL policy image-rules -> resource Pod/team/latest-ifnotpresent" in out
    assert "rule latest-needs-always failed at path /spec/containers/0/imagePullPolicy/" in out
    assert code == 1


def test_apply_policy_report_summary(capsys: pytest.CaptureFixture[str]) -> None:
    import yaml

    case = CASES / "pattern-anchors"
    _, out, _ = run(capsys, "apply", str(case / "policy.yaml"), "--resource", str(case / "resources.yaml"),
                       "-o", "policy-report")
    [report] = list(yaml.safe_load_all(out))
    assert report["kind"] == "ClusterPolicyReport"
    assert report["summary"] == {"pass": 4, "fail": 3, "warn": 0, "error": 0, "skip": 1}
    first = report["results"][0]
    assert set(first["timestamp"]) == {"seconds", "nanos"} and first["severity"] == "high"


def test_apply_broken_manifest_still_evaluates_the_rest(tmp_path: pathlib.Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    case = CASES / "pattern-anchors"
    (tmp_path / "a-broken.yaml").write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: [\n")
    (tmp_path / "b-good.yaml").write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: ok}\nspec: {hostPID: true}\n")
    code, out, err = run(capsys, "apply", str(case / "policy.yaml"), "--resource", str(tmp_path))
    assert "a-broken.yaml:4" in err
    assert "Pod/default/ok" in out
    assert code == 1


@pytest.mark.parametrize(("document", "message"), [
    ("apiVersion: [v1]\nkind: Pod\nmetadata: {name: a}", "a-bad.yaml:4: apiVersion must be a string, not a list"),
    ("apiVersion: v1\nkind: Pod\nmetadata: {name: a, namespace: {x: 1}}",
     "a-bad.yaml:4: metadata.namespace must be a string, not a mapping"),
])
def test_apply_object_with_ill_typed_fields_is_an_error_and_the_rest_evaluated(
        tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str], document: str, message: str) -> None:
    case = CASES / "pattern-anchors"
    (tmp_path / "a-bad.yaml").write_text(f"apiVersion: v1\nkind: ConfigMap\n---\n{document}\n")
    (tmp_path / "b-good.yaml").write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: ok}\nspec: {hostPID: true}\n")
    code, out, err = run(capsys, "apply", str(case / "policy.yaml"), "--resource", str(tmp_path))
    assert f"error: {tmp_path / message}" in err
    assert "Pod/default/ok" in out
    assert code == 1


def test_test_suite_resource_with_ill_typed_fields_is_a_suite_error(tmp_path: pathlib.Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    case = CASES / "pattern-anchors"
    for name in ("policy.yaml", "kyverno-test.yaml"):
        (tmp_path / name).write_text((case / name).read_text())
    (tmp_path / "resources.yaml").write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: [a]}\n")
    code, out, _ = run(capsys, "test", str(tmp_path))
    assert f"{tmp_path / 'resources.yaml'}: metadata.name must be a string, not a list" in out
    assert code == 1


def test_apply_serves_api_calls_and_namespace_labels_from_the_inputs(tmp_path: pathlib.Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "policy.yaml").write_text("""\
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: require-pdb}
spec:
  background: false
  rules:
  - name: pdb-exists
    match: {any: [{resources: {kinds: [Deployment], namespaceSelector: {matchLabels: {env: prod}}}}]}
    context:
    - name: pdbs
      apiCall:
        urlPath: "/apis/policy/v1/namespaces/{{request.namespace}}/poddisruptionbudgets"
        jmesPath: "items | length(@)"
    validate:
      message: a PodDisruptionBudget is required
      deny:
        conditions: {any: [{key: "{{ pdbs }}", operator: Equals, value: 0}]}
""")
    (tmp_path / "res.yaml").write_text("""\
apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Namespace, metadata: {name: shop, labels: {env: prod}}}
- {apiVersion: v1, kind: Namespace, metadata: {name: lab, labels: {env: dev}}}
- {apiVersion: v1, kind: Namespace, metadata: {name: pay, labels: {env: prod}}}
- {apiVersion: policy/v1, kind: PodDisruptionBudget, metadata: {name: web, namespace: shop}}
- {apiVersion: apps/v1, kind: Deployment, metadata: {name: web, namespace: shop}}
- {apiVersion: apps/v1, kind: Deployment, metadata: {name: api, namespace: pay}}
- {apiVersion: apps/v1, kind: Deployment, metadata: {name: toy, namespace: lab}}
""")
    _, out, _ = run(capsys, "apply", str(tmp_path / "policy.yaml"), "--resource", str(tmp_path / "res.yaml"),
                       "-o", "json")
    got = {r["resource"]["name"]: r["status"] for r in json.loads(out)}
    assert got == {"web": "pass", "api": "fail"}


def test_test_command_unmatched_rule_is_excluded_and_satisfies_any_expectation(
        tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    case = CASES / "pattern-anchors"
    (tmp_path / "policy.yaml").write_text((case / "policy.yaml").read_text())
    (tmp_path / "r.yaml").write_text("apiVersion: v1\nkind: Service\nmetadata: {name: svc}\n")
    (tmp_path / "kyverno-test.yaml").write_text(
        "apiVersion: cli.kyverno.io/v1alpha1\nkind: Test\nmetadata: {name: t}\npolicies: [policy.yaml]\n"
        "resources: [r.yaml]\nresults:\n- {policy: image-rules, rule: no-host-pid, kind: Service, resources: [svc], result: fail}\n")
    code, out, _ = run(capsys, "test", str(tmp_path), "--output", "json")
    [row] = json.loads(out)["tests"][0]["results"]
    assert (row["actual"], row["ok"], code) == ("excluded", True, 0)  # vector 35


HEADER = ("apiVersion: cli.kyverno.io/v1alpha1\nkind: Test\nmetadata: {name: s}\n"
          "policies: [policy.yaml]\nresources: [resources.yaml]\n")
ROW = "- {policy: image-rules, rule: no-host-pid, kind: Pod, resources: [pinned], result: pass}\n"


def _suite(tmp_path: pathlib.Path, test: str) -> pathlib.Path:
    suite = tmp_path / "s"
    suite.mkdir()
    for name in ("policy.yaml", "resources.yaml"):
        (suite / name).write_text((CASES / "pattern-anchors" / name).read_text())
    (suite / "kyverno-test.yaml").write_text(test)
    return suite


TEST_HEAD = "apiVersion: cli.kyverno.io/v1alpha1\nkind: Test\nmetadata: {name: t}\npolicies: [policy.yaml]\n"


def _run_suite(capsys: pytest.CaptureFixture[str], folder: pathlib.Path, files: dict[str, str]) -> list[dict]:
    """Write a suite's files, run it (it must pass) and return its result rows."""
    for name, text in files.items():
        (folder / name).write_text(text)
    code, out, _ = run(capsys, "test", str(folder), "--output", "json")
    assert code == 0, out
    return json.loads(out)["tests"][0]["results"]


@pytest.mark.parametrize(("test", "error"), [
    pytest.param(HEADER.replace("metadata: {name: s}", "metadata: s") + "results:\n" + ROW,
                 "metadata: must be a mapping", id="metadata-string"),
    pytest.param(HEADER.replace("[policy.yaml]", "policy.yaml") + "results:\n" + ROW,
                 "policies: must be a list of file names", id="policies-string"),
    pytest.param(HEADER + "variables: [values.yaml]\nresults:\n" + ROW, "variables: must be a file name", id="variables-list"),
    pytest.param(HEADER + "results: {policy: image-rules}\n", "results: must be a list", id="results-mapping"),
    pytest.param(HEADER + "results:\n- {policy: image-rules, resources: pinned, result: pass}\n",
                 "results[0].resources: must be a list of resource names", id="entry-resources-string"),
    pytest.param(HEADER + "results:\n- {policy: image-rules, resources: [pinned], result: pass, reslt: fail}\n",
                 "results[0].reslt: unknown field", id="entry-unknown-field"),
    pytest.param(HEADER + "results:\n- {policy: image-rules, resources: [pinned]}\n",
                 "results[0].result: is required", id="entry-without-result"),
    pytest.param(HEADER + "checks:\n- {match: {resource: {metadata: {name: pinned}}}, assert: {status: pass}}\n",
                 "checks: not supported: checks", id="checks"),
    pytest.param(HEADER + "results:\n- {policy: image-rules, resources: [pinned], result: pass, operation: update}\n",
                 "results[0].operation: invalid operation 'update', must be one of CREATE, UPDATE, DELETE",
                 id="entry-lowercase-operation"),
    pytest.param(HEADER + "values: {globalValues: {request.operation: PATCH}}\nresults:\n" + ROW,
                 "globalValues: invalid request.operation value 'PATCH'", id="global-operation"),
    pytest.param(HEADER + "values: {globalvalues: {a: b}}\nresults:\n" + ROW,
                 "globalvalues is not a known field", id="values-unknown-field"),
])
def test_test_command_malformed_suite_is_an_error(tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str],
                                                   test: str, error: str) -> None:
    code, out, _ = run(capsys, "test", str(_suite(tmp_path, test)))
    assert code == 1 and f"kyverno-test.yaml: {error}" in out and out.rstrip().endswith("0 passed, 0 failed, 1 not loaded")


def test_test_command_deprecated_result_fields(tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    test = HEADER + ("results:\n- {policy: image-rules, rule: no-host-pid, resource: latest-ifnotpresent,"
                     " namespace: team, status: fail}\n")
    code, out, _ = run(capsys, "test", str(_suite(tmp_path, test)), "--output", "json")
    rows = json.loads(out)["tests"][0]["results"]
    assert [(r["namespace"], r["resource"], r["expected"], r["actual"]) for r in rows] == [
        ("team", "latest-ifnotpresent", "fail", "fail")]
    assert code == 0


def _checked(tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str], entry: str) -> list[str]:
    """The resources one expectation was checked against, as ``namespace/name``, in row order."""
    _, out, _ = run(capsys, "test", str(_suite(tmp_path, HEADER + "results:\n" + entry)), "--output", "json")
    return [f'{r["namespace"]}/{r["resource"]}' for r in json.loads(out)["tests"][0]["results"]]


EVERY_RESOURCE = ["default/pinned", "default/latest-always", "team/latest-ifnotpresent", "default/web"]


@pytest.mark.parametrize(("selection", "checked"), [
    pytest.param("resources: [latest-ifnotpresent, pinned]", ["team/latest-ifnotpresent", "default/pinned"],
                 id="in-the-order-named"),
    pytest.param("resources: [pinned, pinned]", ["default/pinned", "default/pinned"], id="named-twice-checked-twice"),
    pytest.param("resources: [nowhere/pinned]", EVERY_RESOURCE, id="nothing-named-exists-checks-all"),
    pytest.param("resources: [], resourceSpecs: [{version: v1, namespace: team, name: latest-ifnotpresent}]",
                 ["team/latest-ifnotpresent"], id="spec-next-to-resources"),
    pytest.param("resourceSpecs: [{version: v1, namespace: team, name: latest-ifnotpresent}]", EVERY_RESOURCE,
                 id="spec-without-resources-is-ignored"),
    pytest.param("resources: [], resourceSpecs: [{group: apps, version: v1, namespace: team, name: latest-ifnotpresent}]",
                 EVERY_RESOURCE, id="spec-group-version-must-match"),
    pytest.param("resources: [], resourceSpecs: [{version: v1, name: pinned}]", EVERY_RESOURCE,
                 id="spec-without-namespace-is-cluster-scoped"),
])
def test_test_command_selects_the_resources_an_expectation_names(
        tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str], selection: str, checked: list[str]) -> None:
    entry = f"- {{policy: image-rules, rule: latest-needs-always, {selection}, result: skip}}\n"
    assert _checked(tmp_path, capsys, entry) == checked


def test_test_command_inline_values_win_over_the_variables_file(tmp_path: pathlib.Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    [row] = _run_suite(capsys, tmp_path, {
        "policy.yaml": "apiVersion: kyverno.io/v1\nkind: ClusterPolicy\nmetadata: {name: no-x}\nspec:\n  rules:\n"
                       "  - name: team\n    match: {any: [{resources: {kinds: [Pod]}}]}\n    validate:\n      deny:\n"
                       "        conditions:\n          any: [{key: '{{ request.object.metadata.labels.team }}', "
                       "operator: Equals, value: x}]\n",
        "r.yaml": "apiVersion: v1\nkind: Pod\nmetadata: {name: web, labels: {team: a}}\n",
        "values.yaml": "apiVersion: cli.kyverno.io/v1alpha1\nkind: Values\n"
                       "globalValues: {request.object.metadata.labels.team: a}\n",
        "kyverno-test.yaml": TEST_HEAD + "resources: [r.yaml]\nvariables: values.yaml\n"
                             "values: {globalValues: {request.object.metadata.labels.team: x}}\n"
                             "results:\n- {policy: no-x, rule: team, resources: [web], result: fail}\n",
    })
    assert row["actual"] == "fail"


@pytest.mark.parametrize("text", ["", "# nothing here\n", "- a\n"])
def test_test_command_file_without_a_test_document(tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str],
                                                    text: str) -> None:
    code, out, err = run(capsys, "test", str(_suite(tmp_path, text)))
    assert code == 1 and "no Test document" in out and "no kyverno-test.yaml found" not in err


def test_test_command_warns_about_duplicated_resources(tmp_path: pathlib.Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    suite = _suite(tmp_path, HEADER + "results:\n" + ROW)
    resources = suite / "resources.yaml"
    first = resources.read_text().split("---")[0]
    resources.write_text(resources.read_text() + "\n---\n" + first)
    code, out, _ = run(capsys, "test", str(suite))
    assert "warning: duplicated resource Pod pinned in namespace default (resources.yaml): the first one is kept" in out
    assert code == 0


def test_apply_invalid_policy_exits_2_and_still_applies_the_others(tmp_path: pathlib.Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    policies = tmp_path / "policies"
    policies.mkdir()
    (policies / "good.yaml").write_text((CASES / "pattern-anchors" / "policy.yaml").read_text())
    (policies / "bad.yaml").write_text(
        "apiVersion: kyverno.io/v1\nkind: ClusterPolicy\nmetadata: {name: bad}\nspec:\n  rules:\n  - name: r\n"
        "    match: {any: [{resources: {kinds: [Pod]}}]}\n    validate: {foreach: {list: a, deny: {}}}\n")
    code, out, err = run(capsys, "apply", str(policies), "-r", str(CASES / "pattern-anchors" / "resources.yaml"),
                         "-o", "json")
    assert code == 2 and "bad.yaml:8:25 (/spec/rules/0/validate/foreach): invalid policy bad: foreach must be a list of objects" in err
    assert {r["policy"] for r in json.loads(out)} == {"image-rules"}


def test_apply_without_policies_or_resources_says_so(tmp_path: pathlib.Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "empty").mkdir()
    resources = str(CASES / "pattern-anchors" / "resources.yaml")
    code, _, err = run(capsys, "apply", str(tmp_path / "empty"), "-r", resources)
    assert code == 2 and f"error: no policies found in {tmp_path / 'empty'}" in err
    code, _, err = run(capsys, "apply", str(CASES / "pattern-anchors" / "policy.yaml"), "-r", str(tmp_path / "empty"))
    assert code == 0 and f"warning: no Kubernetes resources found in {tmp_path / 'empty'}" in err


def test_apply_values_error_names_the_file_and_line(tmp_path: pathlib.Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    values = tmp_path / "values.yaml"
    values.write_text("policies:\n- name: image-rules\n  rules: r\n")
    code, _, err = run(capsys, "apply", str(CASES / "pattern-anchors" / "policy.yaml"), "-r",
                       str(CASES / "pattern-anchors" / "resources.yaml"), "-f", str(values))
    assert code == 2 and f"error: {values}:3:10: policies[0].rules must be a list" in err


@pytest.mark.parametrize(("annotation", "summary"), [
    pytest.param("{}", "pass: 0, fail: 1, warn: 0, error: 0, skip: 0", id="scored"),
    pytest.param("{policies.kyverno.io/scored: 'false'}", "pass: 0, fail: 0, warn: 1, error: 0, skip: 0",
                 id="not-scored"),
])
def test_apply_summary_counts_a_failure_of_an_unscored_policy_as_a_warning(
        annotation: str, summary: str, tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "policy.yaml").write_text(
        f"apiVersion: kyverno.io/v1\nkind: ClusterPolicy\nmetadata: {{name: need-team, annotations: {annotation}}}\n"
        "spec:\n  rules:\n  - name: team\n    match: {any: [{resources: {kinds: [Pod]}}]}\n"
        "    validate: {message: team label required, pattern: {metadata: {labels: {team: '?*'}}}}\n")
    (tmp_path / "pod.yaml").write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: web}\n")
    code, out, _ = run(capsys, "apply", str(tmp_path / "policy.yaml"), "--resource", str(tmp_path / "pod.yaml"))
    assert out.rstrip().splitlines()[-1] == summary and code == 0


def test_test_command_expects_a_failure_of_an_unscored_policy_as_a_warning(
        tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``kyverno test`` compares the policy-report result: ``scored: "false"`` turns a fail into warn."""
    suite = _suite(tmp_path, HEADER + "results:\n- {policy: image-rules, rule: no-host-pid, kind: Pod, "
                   "resources: [latest-ifnotpresent], result: warn}\n")
    policy = suite / "policy.yaml"
    policy.write_text(policy.read_text().replace("  annotations:\n", '  annotations:\n    policies.kyverno.io/scored: "false"\n', 1))
    code, out, _ = run(capsys, "test", str(suite), "--output", "json")
    [row] = json.loads(out)["tests"][0]["results"]
    assert (row["expected"], row["actual"], row["ok"], code) == ("warn", "warn", True, 0)


def test_test_command_verifies_signed_manifests(tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A ``manifests`` rule reads the signed YAML in ``scanner test`` as in ``scanner apply``."""
    import yaml

    from tests.engine.test_manifests import PEM_A, SIGN_A, signed

    config = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm", "namespace": "default"},
              "data": {"k": "v"}}
    [row] = _run_suite(capsys, tmp_path, {
        "resources.yaml": yaml.safe_dump(signed(config, SIGN_A)),
        "policy.yaml": yaml.safe_dump({
            "apiVersion": "kyverno.io/v1", "kind": "ClusterPolicy", "metadata": {"name": "signed"},
            "spec": {"rules": [{"name": "check", "match": {"any": [{"resources": {"kinds": ["ConfigMap"]}}]},
                                "validate": {"manifests": {"attestors": [
                                    {"entries": [{"keys": {"publicKeys": PEM_A}}]}]}}}]}}),
        "kyverno-test.yaml": TEST_HEAD + "resources: [resources.yaml]\nresults:\n- {policy: signed, rule: check, "
                             "kind: ConfigMap, resources: [cm], result: pass}\n",
    })
    assert (row["actual"], row["ok"]) == ("pass", True), row


VPOL = ("apiVersion: policies.kyverno.io/v1\nkind: ValidatingPolicy\nmetadata: {name: vpol}\n"
        "spec: {validations: [{expression: 'true'}]}\n")


def test_apply_reports_a_policy_of_a_kind_not_supported_and_exits_2(tmp_path: pathlib.Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "policy.yaml").write_text((CASES / "pattern-anchors" / "policy.yaml").read_text() + "---\n" + VPOL)
    code, out, err = run(capsys, "apply", str(tmp_path / "policy.yaml"), "--resource",
                         str(CASES / "pattern-anchors" / "resources.yaml"), "--output", "json")
    assert code == 2 and json.loads(out)  # the ClusterPolicy was still applied
    assert f"error: {tmp_path / 'policy.yaml'}:" in err and "not supported: ValidatingPolicy 'vpol'" in err


def test_test_command_expectation_of_a_policy_of_a_kind_not_supported_fails(
        tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    suite = _suite(tmp_path, HEADER + "results:\n- {policy: vpol, kind: Pod, resources: [pinned], result: pass}\n")
    (suite / "policy.yaml").write_text((suite / "policy.yaml").read_text() + "---\n" + VPOL)
    code, out, _ = run(capsys, "test", str(suite), "--output", "json")
    [row] = json.loads(out)["tests"][0]["results"]
    assert (row["actual"], row["ok"], code) == ("notsupported", False, 1)
    assert row["reason"].startswith("not supported: ValidatingPolicy 'vpol' (policies.kyverno.io/v1)")


def test_test_command_values_written_into_the_object_decide_matching(
        tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    """As the CLI reads the resource back from the context: an annotation given as a value matches."""
    [row] = _run_suite(capsys, tmp_path, {
        "policy.yaml": "apiVersion: kyverno.io/v1\nkind: ClusterPolicy\nmetadata: {name: owned}\nspec:\n  rules:\n"
                       "  - name: r\n    match: {any: [{resources: {kinds: [Role], annotations: "
                       "{example.io/owner: platform}}}]}\n    validate: {deny: {}}\n",
        "resources.yaml": "apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata: {name: role, namespace: a}\n",
        "values.yaml": "apiVersion: cli.kyverno.io/v1alpha1\nkind: Values\npolicies:\n- name: owned\n  resources:\n"
                       "  - name: role\n    values:\n      request.object.metadata.annotations.\"example.io/owner\": platform\n",
        "kyverno-test.yaml": TEST_HEAD + "resources: [resources.yaml]\nvariables: values.yaml\n"
                             "results:\n- {policy: owned, rule: r, kind: Role, resources: [role], result: fail}\n",
    })
    assert (row["actual"], row["ok"]) == ("fail", True)



def test_test_command_reports_a_subresource_object_by_its_own_kind(tmp_path: pathlib.Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """A Scale matched as ``Deployment/scale`` (a Values ``subresources`` entry) is reported as the Scale it is."""
    [row] = _run_suite(capsys, tmp_path, {
        "policy.yaml": "apiVersion: kyverno.io/v1\nkind: ClusterPolicy\nmetadata: {name: replicas}\nspec:\n  rules:\n"
                       "  - name: two\n    match: {any: [{resources: {kinds: [Deployment/scale]}}]}\n"
                       "    validate: {pattern: {spec: {replicas: 2}}}\n",
        "r.yaml": "apiVersion: autoscaling/v1\nkind: Scale\nmetadata: {name: web, namespace: default}\n"
                  "spec: {replicas: 4}\n",
        "values.yaml": "apiVersion: cli.kyverno.io/v1alpha1\nkind: Values\nsubresources:\n"
                       "- parentResource: {group: apps, version: v1, kind: Deployment, name: deployments}\n"
                       "  subresource: {group: autoscaling, version: v1, kind: Scale, name: deployments/scale}\n",
        "kyverno-test.yaml": TEST_HEAD + "resources: [r.yaml]\nvariables: values.yaml\n"
                             "results:\n- {policy: replicas, rule: two, kind: Scale, resources: [default/web], result: fail}\n",
    })
    assert (row["kind"], row["namespace"], row["resource"], row["actual"]) == ("Scale", "default", "web", "fail")
