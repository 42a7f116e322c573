"""Policy files: every document is a policy, another document, or a located error."""

from __future__ import annotations

from pathlib import Path

import pytest

from scanner.policies import load_policies, load_policy_text, not_evaluated_reason

GOOD = ("apiVersion: kyverno.io/v1\nkind: ClusterPolicy\nmetadata: {name: ok}\nspec:\n  rules:\n"
        "  - name: r\n    match: {any: [{resources: {kinds: [Pod]}}]}\n    validate: {pattern: {metadata: {name: '?*'}}}\n")


def test_policy_text_with_a_malformed_policy_keeps_the_others() -> None:
    text = GOOD + "---\napiVersion: kyverno.io/v1\nkind: ClusterPolicy\nmetadata: 5\nspec: {rules: []}\n"
    result = load_policy_text(text, "p.yaml")
    assert [p.name for p in result.policies] == ["ok"]
    assert [str(e) for e in result.errors] == ["p.yaml:12:11 (/metadata/name): invalid policy <unnamed>: "
                                               "metadata.name is required"]


VPOL = ("apiVersion: policies.kyverno.io/v1\nkind: ValidatingPolicy\nmetadata: {name: vpol}\n"
        "spec: {validations: [{expression: 'true'}]}\n")
VAP = ("apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\nmetadata: {name: vap}\n"
       "spec: {validations: [{expression: 'true'}]}\n")
OTHERS = ("apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicyBinding\n"
          "metadata: {name: b}\n---\napiVersion: cli.kyverno.io/v1alpha1\nkind: Test\nmetadata: {name: t}\n"
          "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p}\n")


def test_policy_text_reports_policies_of_other_engines_as_not_supported() -> None:
    """A policy this engine does not evaluate is never passed over in silence; tests, resources and
    bindings in the same folder are simply not policies."""
    result = load_policy_text("---\n".join((GOOD, VPOL, VAP, OTHERS)), "p.yaml")
    assert [p.name for p in result.policies] == ["ok"] and result.errors == []
    assert [(u.kind, u.name, str(u.location)) for u in result.unsupported] == [
        ("ValidatingPolicy", "vpol", "p.yaml:10:1"), ("ValidatingAdmissionPolicy", "vap", "p.yaml:15:1")]
    assert result.unsupported[0].message == ("not supported: ValidatingPolicy 'vpol' (policies.kyverno.io/v1) is "
                                             "not evaluated; only kyverno.io ClusterPolicy and Policy documents are")


def test_policy_folders_leave_hidden_files_out(tmp_path: Path) -> None:
    """As the Kyverno CLI's loader: ``.swp``-style hidden files in a folder are not read; a hidden file
    named directly is."""
    (tmp_path / "ok.yaml").write_text(GOOD)
    (tmp_path / ".editor.yaml").write_text("kind: ClusterPolicy\nmetadata: {name: [\n")
    result = load_policies([tmp_path])
    assert [p.name for p in result.policies] == ["ok"] and result.errors == []
    assert load_policies([tmp_path / ".editor.yaml"]).errors


def _rule(body: str, index: int = 0) -> str:
    return f"  - name: r{index}\n    match: {{any: [{{resources: {{kinds: [Pod]}}}}]}}\n    {body}\n"


MUTATE = "mutate: {patchStrategicMerge: {metadata: {labels: {a: b}}}}"
VERIFY = "verifyImages: [{imageReferences: ['*'], attestors: [{entries: [{keys: {publicKeys: k}}]}]}]"
VALIDATE = "validate: {pattern: {metadata: {name: '?*'}}}"


@pytest.mark.parametrize(("rules", "reason"), [
    pytest.param([VALIDATE], None, id="validate-rule-is-evaluated"),
    pytest.param([MUTATE, VALIDATE], None, id="mutate-beside-validate-is-evaluated"),
    pytest.param([MUTATE], "it has no validate rule (only mutate rules); a scan evaluates validate rules only",
                 id="mutate-only-is-not-evaluated"),
    pytest.param([MUTATE, VERIFY], "it has no validate rule (only mutate and verifyImages rules); a scan evaluates "
                 "validate rules only", id="mutate-and-verify-images-is-not-evaluated"),
])
def test_policy_without_validate_rule_has_a_reason(rules: list[str], reason: str | None) -> None:
    text = "apiVersion: kyverno.io/v1\nkind: ClusterPolicy\nmetadata: {name: p}\nspec:\n  rules:\n"
    text += "".join(_rule(body, index) for index, body in enumerate(rules))
    [policy] = load_policy_text(text, "p.yaml").policies
    assert not_evaluated_reason(policy) == reason


def _named(name: str, message: str) -> str:
    return GOOD.replace("name: ok", f"name: {name}").replace("'?*'", f"'{message}'")


@pytest.mark.parametrize(("files", "duplicates", "kept"), [
    pytest.param({"a.yaml": _named("web", "a"), "b.yaml": _named("db", "a")}, [], ["web", "db"], id="two-names"),
    pytest.param({"a.yaml": _named("web", "a"), "b.yaml": _named("web", "a")}, [], ["web"], id="same-policy-twice-is-one"),
    pytest.param({"a.yaml": _named("web", "a"), "b.yaml": _named("web", "b"), "c.yaml": _named("db", "a")},
                 [("web", ["a.yaml:1:1", "b.yaml:1:1"])], ["db"], id="different-policies-of-one-name-kept-by-neither"),
    pytest.param({"a.yaml": _named("web", "a") + "---\n" + _named("web", "b")}, [("web", ["a.yaml:1:1", "a.yaml:10:1"])], [],
                 id="two-in-one-file-located-by-line"),
])
def test_policy_set_duplicates(tmp_path: Path, files: dict[str, str], duplicates: list, kept: list[str]) -> None:
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    result = load_policies([tmp_path])
    found = result.duplicates()
    assert [(d.ref, [str(loc).removeprefix(f"{tmp_path}/") for loc in d.locations]) for d in found] == duplicates
    result.without({d.ref for d in found})
    assert [p.name for p in result.policies] == kept
    assert [str(loc).removeprefix(f"{tmp_path}/").split(":")[0] for loc in result.locations] == [
        next(n for n, t in files.items() if f"name: {p.name}" in t) for p in result.policies]
    if found:
        assert "none of them is evaluated" in found[0].error().message


class _Globs:
    def __init__(self, accepted: set[str]) -> None:
        self.accepted, self.asked = accepted, []

    def accepts(self, relpath: str) -> bool:
        self.asked.append(relpath)
        return relpath in self.accepted


def test_policy_folder_files_are_picked_by_relative_path(tmp_path: Path) -> None:
    (tmp_path / "team").mkdir()
    (tmp_path / "team" / "a.yaml").write_text(_named("a", "a"))
    (tmp_path / "b.yaml").write_text(_named("b", "a"))
    globs = _Globs({"team/a.yaml"})
    assert [p.name for p in load_policies([tmp_path], accept=globs).policies] == ["a"]
    assert sorted(globs.asked) == ["b.yaml", "team/a.yaml"]
    named = _Globs({"b.yaml"})  # a file named directly: by its base name
    assert [p.name for p in load_policies([tmp_path / "b.yaml"], accept=named).policies] == ["b"]
