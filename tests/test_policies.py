"""Policy files: every document is a policy, another document, or a located error."""

from __future__ import annotations

from scanner.policies import load_policy_text

GOOD = ("apiVersion: kyverno.io/v1\nkind: ClusterPolicy\nmetadata: {name: ok}\nspec:\n  rules:\n"
        "  - name: r\n    match: {any: [{resources: {kinds: [Pod]}}]}\n    validate: {pattern: {metadata: {name: '?*'}}}\n")


def test_policy_text_with_a_malformed_policy_keeps_the_others() -> None:
    text = GOOD + "---\napiVersion: kyverno.io/v1\nkind: ClusterPolicy\nmetadata: 5\nspec: {rules: []}\n"
    result = load_policy_text(text, "p.yaml")
    assert [p.name for p in result.policies] == ["ok"]
    assert [str(e) for e in result.errors] == ["p.yaml:12:11 (/metadata/name): invalid policy <unnamed>: "
                                               "metadata.name is required"]
