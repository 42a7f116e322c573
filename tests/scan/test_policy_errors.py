"""A scan and its policies: a policy that cannot be evaluated is a located run error and the scan
goes on (``scan.strict_policies`` stops instead); two different policies of one name are evaluated
by neither; policies with no validate rule are listed as not evaluated; ``policies[]`` globs."""

from __future__ import annotations

import json
import pathlib

import pytest

from scanner.cli import main
from scanner.store.store import Store

from .conftest import POLICY, Project, pod

# a rule without kinds: Kyverno's validator refuses it ("at least one kind is required"), line 7
NO_KIND = ("apiVersion: kyverno.io/v1\nkind: ClusterPolicy\nmetadata: {name: bad}\nspec:\n  rules:\n"
           "  - name: r\n    match: {any: [{resources: {names: [x]}}]}\n    validate: {pattern: {a: b}}\n")
MUTATE_ONLY = ("apiVersion: kyverno.io/v1\nkind: ClusterPolicy\nmetadata: {name: add-team}\nspec:\n  rules:\n"
               "  - name: add\n    match: {any: [{resources: {kinds: [Pod]}}]}\n"
               "    mutate: {patchStrategicMerge: {metadata: {labels: {team: x}}}}\n")
GENERATE_AND_VERIFY = (
    "apiVersion: kyverno.io/v1\nkind: ClusterPolicy\nmetadata: {name: gen}\nspec:\n  rules:\n"
    "  - name: g\n    match: {any: [{resources: {kinds: [Namespace]}}]}\n"
    "    generate: {apiVersion: v1, kind: ConfigMap, name: c, namespace: '{{request.object.metadata.name}}', "
    "data: {data: {a: b}}}\n"
    "  - name: v\n    match: {any: [{resources: {kinds: [Pod]}}]}\n"
    "    verifyImages: [{imageReferences: ['*'], attestors: [{entries: [{keys: {publicKeys: k}}]}]}]\n")
VPOL = ("apiVersion: policies.kyverno.io/v1\nkind: ValidatingPolicy\nmetadata: {name: vpol}\n"
        "spec: {validations: [{expression: 'true'}]}\n")
# require-team again, in Audit mode: the same name, a different policy
OTHER_TEAM = POLICY.replace("validationFailureAction: Enforce", "validationFailureAction: Audit")


def run_scan(project: Project, capsys: pytest.CaptureFixture[str], files: dict[str, str], *, fail_on: str,
             extra: str = "") -> tuple[int, str, str]:
    for rel, text in files.items():
        (project.base / "policies" / rel).parent.mkdir(parents=True, exist_ok=True)
        (project.base / "policies" / rel).write_text(text)
    code = main(["scan", "--config", str(project.config(fail_on=fail_on, extra=extra)), "-q"])
    out, err = capsys.readouterr()
    return code, out, err


def stored(project: Project) -> tuple[list[tuple[str, str, int | None, str]], set[str], int]:
    """The latest run's error rows (kind, file name, line, message), policies evaluated, error count."""
    with Store(f"sqlite:///{project.db}") as store:
        run_id = store.list_runs(limit=1)[0].run_id
        errors = [(e.kind, pathlib.Path(e.path).name, e.line, e.message) for e in store.run_errors(run_id)]
        policies = {p.name for p in store.run_policies(run_id)}
        return errors, policies, store.get_run(run_id).run.error_records


@pytest.mark.parametrize(("files", "fail_on", "code", "errors"), [
    pytest.param({"bad.yaml": NO_KIND}, "enforce", 1,
                 [("policy", "bad.yaml", 7, "invalid policy bad: at least one kind is required")],
                 id="invalid-policy-recorded-and-gates-ci"),
    pytest.param({"bad.yaml": NO_KIND}, "never", 0,
                 [("policy", "bad.yaml", 7, "invalid policy bad: at least one kind is required")],
                 id="invalid-policy-with-fail-on-never-exits-0"),
    pytest.param({"bad.yaml": "apiVersion: kyverno.io/v1\nkind: ClusterPolicy\nmetadata: {name: [x\n"}, "error", 1,
                 [("policy", "bad.yaml", 4, None)], id="unparsable-policy-file-recorded"),
    pytest.param({"vpol.yaml": VPOL}, "error", 1,
                 [("unsupported", "vpol.yaml", 1, "not supported: ValidatingPolicy 'vpol' (policies.kyverno.io/v1) is "
                   "not evaluated; only kyverno.io ClusterPolicy and Policy documents are")],
                 id="unsupported-kind-is-an-error-under-fail-on-error"),
    pytest.param({"vpol.yaml": VPOL}, "never", 0,
                 [("unsupported", "vpol.yaml", 1, None)], id="unsupported-kind-with-fail-on-never-exits-0"),
])
def test_scan_policy_that_cannot_be_evaluated_is_a_run_error(project: Project, capsys, files: dict[str, str],
                                                              fail_on: str, code: int, errors: list) -> None:
    project.commit({"apps/a.yaml": pod("a", "x")})
    got, out, err = run_scan(project, capsys, files, fail_on=fail_on)
    assert got == code
    rows, policies, error_count = stored(project)
    assert [(k, f, line, m if expected is not None else None) for (k, f, line, m), (*_, expected)
            in zip(rows, errors, strict=True)] == errors
    assert policies == {"require-team"}  # the other policy was evaluated
    assert error_count == len(errors) and f"errors:    {len(errors)}" in out and "pass 1" in out
    assert ("  policies:  1 evaluated, 1 not evaluated\n" if errors[0][0] == "unsupported"
            else "  policies:  1 evaluated, 1 invalid (see errors)\n") in out
    assert [line for line in err.splitlines() if line.startswith("error: ")] == [
        f"error: {project.base / 'policies' / f}:{line}:" + err.split(f"{f}:{line}:", 1)[1].splitlines()[0]
        for _, f, line, _ in rows]
    assert "warning:" not in err
    report = json.loads(next((project.base / "reports").glob("*.json")).read_text())
    assert [e["location"].rsplit("/", 1)[-1].split(":")[:2] for e in report["errors"]] == [
        [f, str(line)] for _, f, line, _ in rows]


def test_scan_strict_policies_stops_before_writing(project: Project, capsys) -> None:
    project.commit({"apps/a.yaml": pod("a", "x")})
    code, _, _ = run_scan(project, capsys, {"bad.yaml": NO_KIND}, fail_on="never")
    assert code == 0  # not strict: recorded, the scan goes on
    config = project.config(fail_on="never")
    config.write_text(config.read_text().replace("scan: {cache_dir: cache, fail_on: never}",
                                                 "scan: {cache_dir: cache, fail_on: never, strict_policies: true}"))
    assert main(["scan", "--config", str(config), "-q"]) == 2
    err = capsys.readouterr().err
    assert "1 invalid policy:" in err and "bad.yaml:7:" in err and "at least one kind is required" in err
    with Store(f"sqlite:///{project.db}") as store:
        assert len(store.list_runs()) == 1  # the non-strict run only


def test_scan_every_policy_invalid_stops(project: Project, capsys) -> None:
    """Nothing left to evaluate: the scan stops before writing, listing the errors."""
    project.commit({"apps/a.yaml": pod("a", "x")})
    (project.base / "policies" / "require-team.yaml").write_text(NO_KIND)
    assert main(["scan", "--config", str(project.config())]) == 2
    assert "1 invalid policy:" in capsys.readouterr().err
    assert not project.db.exists() or Store(f"sqlite:///{project.db}").list_runs() == []


@pytest.mark.parametrize(("files", "evaluated", "errors"), [
    pytest.param({"copy/require-team.yaml": OTHER_TEAM}, {"extra"},
                 [("policy", "require-team.yaml", 1, "policy 'require-team' is defined 2 times with different content "
                   "(also at {other}); a cluster holds one policy of a name, so none of them is evaluated")],
                 id="same-name-different-content-evaluates-neither"),
    pytest.param({"copy/require-team.yaml": POLICY}, {"require-team", "extra"}, [], id="same-policy-twice-is-one-policy"),
    pytest.param({"ns.yaml": POLICY.replace("kind: ClusterPolicy", "kind: Policy").replace(
        "name: require-team", "name: require-team\n  namespace: apps")}, {"require-team", "require-team@apps", "extra"}, [],
                 id="policy-and-cluster-policy-of-one-name-are-two"),
])
def test_scan_policies_of_one_name(project: Project, capsys, files: dict[str, str], evaluated: set[str],
                                   errors: list) -> None:
    project.commit({"apps/a.yaml": pod("a", "x")})
    extra = {"extra.yaml": POLICY.replace("name: require-team", "name: extra")}
    code, _, _ = run_scan(project, capsys, {**files, **extra}, fail_on="never")
    assert code == 0
    rows, _, _ = stored(project)
    other = project.base / "policies" / "copy" / "require-team.yaml"
    assert rows == [(k, f, line, m.format(other=f"{other}:1:1")) for k, f, line, m in errors]
    with Store(f"sqlite:///{project.db}") as store:
        policies = {f"{p.name}@{p.namespace}" if p.namespace else p.name
                    for p in store.run_policies(store.latest_run_id())}
    assert policies == evaluated


@pytest.mark.parametrize(("text", "reason"), [
    pytest.param(MUTATE_ONLY, "it has no validate rule (only mutate rules); a scan evaluates validate rules only",
                 id="mutate-only-policy-not-evaluated"),
    pytest.param(GENERATE_AND_VERIFY, "it has no validate rule (only generate and verifyImages rules); a scan "
                 "evaluates validate rules only", id="generate-and-verify-images-policy-not-evaluated"),
])
def test_scan_policy_without_validate_rule_is_listed_not_evaluated(project: Project, capsys, text: str,
                                                                    reason: str) -> None:
    project.commit({"apps/a.yaml": pod("a", "x")})
    code, out, err = run_scan(project, capsys, {"other.yaml": text}, fail_on="error")
    assert code == 0  # a notice, not an error
    rows, policies, error_count = stored(project)
    name = text.split("name: ", 1)[1].split("}", 1)[0]
    message = f"not evaluated: ClusterPolicy '{name}': {reason}"
    assert rows == [("not-evaluated", "other.yaml", 1, message)]
    assert policies == {"require-team"} and error_count == 0 and "errors:    0" in out
    assert "  policies:  1 evaluated, 1 not evaluated\n" in out
    assert f"note: {project.base / 'policies' / 'other.yaml'}:1:1: {message}" in err
    report = json.loads(next((project.base / "reports").glob("*.json")).read_text())
    assert report["summary"]["policies"] == 1 and report["summary"]["policies_not_evaluated"] == 1
    assert report["errors"] == [] and [e["reason"] for e in report["not_evaluated"]] == [message]
    html = next((project.base / "reports").glob("*.html")).read_text()
    assert "Policies not evaluated (1)" in html and "1 policy evaluated (1 not evaluated)" in html
    assert main(["runs", "show", "latest", "--database", f"sqlite:///{project.db}"]) == 0
    assert "policies 1 evaluated, 1 not evaluated   errors 0" in capsys.readouterr().out


@pytest.mark.parametrize(("include", "exclude", "evaluated"), [
    pytest.param(None, None, {"require-team", "extra"}, id="no-globs-read-every-file"),
    pytest.param(["team/**"], None, {"require-team"}, id="include-a-folder"),
    pytest.param(None, ["extra.yaml"], {"require-team"}, id="exclude-a-file"),
    pytest.param(["**/*.yaml"], ["team/"], {"extra"}, id="exclude-wins-over-include"),
])
def test_scan_policy_globs(project: Project, capsys, include: list[str] | None, exclude: list[str] | None,
                           evaluated: set[str]) -> None:
    project.commit({"apps/a.yaml": pod("a", "x")})
    policies = project.base / "policies"
    (policies / "team").mkdir()
    (policies / "require-team.yaml").rename(policies / "team" / "require-team.yaml")
    (policies / "extra.yaml").write_text(POLICY.replace("name: require-team", "name: extra"))
    config = project.config()
    globs = "".join(f", {key}: {json.dumps(value)}" for key, value in (("include", include), ("exclude", exclude))
                    if value is not None)
    config.write_text(config.read_text().replace("policies: [{path: policies}]", f"policies: [{{path: policies{globs}}}]"))
    assert main(["scan", "--config", str(config), "-q"]) == 0
    capsys.readouterr()
    assert stored(project)[1] == evaluated


@pytest.mark.parametrize(("fmt", "suffix"), [
    pytest.param("html", "html", id="html-errors-table"),
    pytest.param("json", "json", id="json-errors"),
    pytest.param("audit-json", "audit.json", id="audit-json-errors"),
    pytest.param("audit-html", "audit.html", id="audit-html-errors"),
    pytest.param("sarif", "sarif", id="sarif-tool-notification"),
    pytest.param("junit", "junit.xml", id="junit-input-error-case"),
])
def test_scan_policy_error_is_shown_in_every_report(project: Project, capsys, fmt: str, suffix: str) -> None:
    project.commit({"apps/a.yaml": pod("a", "x")})
    (project.base / "policies" / "bad.yaml").write_text(NO_KIND)
    (project.base / "policies" / "add-team.yaml").write_text(MUTATE_ONLY)
    config = project.config(fail_on="never")
    config.write_text(config.read_text().replace("formats: [html, json]", f"formats: [{fmt}]"))
    assert main(["scan", "--config", str(config), "-q"]) == 0
    capsys.readouterr()
    text = (project.base / "reports" / f"scanner-run-1.{suffix}").read_text()
    assert f"{project.base / 'policies' / 'bad.yaml'}:7" in text
    assert "invalid policy bad: at least one kind is required" in text
    if fmt != "junit":  # not an error: JUnit lists errors and results only
        assert "add-team" in text and "it has no validate rule (only mutate rules)" in text
