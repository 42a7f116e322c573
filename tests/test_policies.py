"""Policy files: every document is a policy, another document, or a located error."""

from __future__ import annotations

from pathlib import Path

from scanner.policies import load_policies, load_policy_text

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
