"""Policy validity checks that follow Kyverno's policy validation (spec 1.7)."""

from __future__ import annotations

import pytest

from scanner.engine.policy import InvalidPolicyError, parse_policy

from .conftest import policy

PATTERN = "{pattern: {metadata: {labels: {team: '?*'}}}}"


def rule(match: str = "{any: [{resources: {kinds: [Pod]}}]}", validate: str = PATTERN, extra: str = "") -> str:
    return f"[{{name: r, match: {match}, validate: {validate}{extra}}}]"


def overrides(*entries: str) -> str:
    return "{validationFailureActionOverrides: [" + ", ".join(entries) + "]}"


def problems_of(doc: dict) -> list[tuple[str, str]]:
    try:
        parse_policy(doc)
    except InvalidPolicyError as exc:
        return exc.problems
    return []


OVERRIDES = "/spec/validationFailureActionOverrides"
ANY_KINDS = "/spec/rules/0/match/any/0/resources/kinds"


@pytest.mark.parametrize(
    ("doc", "pointer", "text"),
    [
        pytest.param(policy(rule(), overrides("{action: Enforce, namespaces: [default, test]}",
                                              "{action: Audit, namespaces: [default]}")),
                     OVERRIDES + "/1/namespaces", "conflicting namespaces found: default",
                     id="override-namespace-both-enforced-and-audited"),
        pytest.param(policy(rule(), overrides("{action: Enforce, namespaces: ['default*']}",
                                              "{action: Audit, namespaces: [default]}")),
                     OVERRIDES + "/1/namespaces", "wildcard pattern 'default*' matches with namespace 'default'",
                     id="override-enforce-pattern-covers-audited-namespace"),
        pytest.param(policy(rule(), overrides("{action: Enforce, namespaces: [test]}",
                                              "{action: Audit, namespaces: ['?*']}")),
                     OVERRIDES + "/1/namespaces", "wildcard pattern '?*' matches with namespace 'test'",
                     id="override-audit-pattern-covers-enforced-namespace"),
        pytest.param(policy(rule(), overrides("{action: Enforce, namespaces: ['*']}",
                                              "{action: Audit, namespaces: ['?*']}")),
                     OVERRIDES + "/1/namespaces", "wildcard pattern '?*' conflicts with the pattern '*'",
                     id="override-patterns-overlap"),
        pytest.param(policy(rule(), overrides("{namespaces: [legacy]}")),
                     OVERRIDES + "/0/action", "invalid action", id="override-without-action"),
        pytest.param(policy(rule(validate="{failureActionOverrides: [{action: Enforce, namespaces: [a]}, "
                                          "{action: Audit, namespaces: [a]}], pattern: {metadata: {name: '?*'}}}")),
                     "/spec/rules/0/validate/failureActionOverrides/1/namespaces", "conflicting namespaces",
                     id="rule-override-conflict"),
        pytest.param(policy(rule(match="{any: [{resources: {kinds: ['*', Pod]}}]}"), "{background: false}"),
                     ANY_KINDS, "more than one kind", id="wildcard-kind-with-other-kinds"),
        pytest.param(policy(rule(match="{any: [{resources: {kinds: ['*']}}]}", validate="{pattern: {spec: {x: 1}}}"),
                            "{background: false}"),
                     ANY_KINDS, "only deal with the metadata field", id="wildcard-kind-spec-pattern"),
        pytest.param(policy(rule(match="{any: [{resources: {kinds: ['*']}}]}",
                                 validate="{foreach: [{list: request.object.metadata.labels, deny: {}}]}"),
                            "{background: false}"),
                     ANY_KINDS, "does not support rule type", id="wildcard-kind-foreach"),
        pytest.param(policy(rule(extra=", exclude: {any: [{resources: {kinds: ['*']}}]}")),
                     "/spec/rules/0/exclude/any/0/resources/kinds", "not allowed in background mode",
                     id="wildcard-kind-in-exclude-in-background"),
        pytest.param(policy(rule(extra=", exclude: {any: [{resources: {kinds: [Pod], namespaces: [x]}}]}"),
                            kind="Policy"),
                     "/spec/rules/0/exclude/any/0/resources/namespaces", "filtering namespaces not allowed",
                     id="namespaced-policy-exclude-namespaces"),
        pytest.param(policy(rule(validate="{message: '{{ to_upper(request.userInfo.username) }}', deny: {}}")),
                     "/spec/rules/0/validate/message", "not allowed when background is true",
                     id="user-info-variable-inside-function"),
        pytest.param(policy(rule(extra=", exclude: {any: [{resources: {kinds: [Pod]}}]}")),
                     "/spec/rules/0", "matching an empty set", id="exclude-repeats-match-filter"),
        pytest.param(policy(rule(validate="{foreach: [{list: request.object.spec.containers, deny: {}}, "
                                          "{list: request.object.spec.containers, "
                                          "pattern: {metadata: {labels: {a: 1}}}}]}")),
                     "/spec/rules/0/validate/foreach/1/pattern/metadata/labels/a", "must be strings",
                     id="first-foreach-pattern-labels-checked"),
        pytest.param(policy(rule(validate="{message: 'image {{ element.image }}', "
                                          "foreach: [{list: request.object.spec.containers, deny: {}}]}")),
                     "/spec/rules/0/validate/message",
                     "variable 'element.image' present outside of foreach at path /validate/message",
                     id="element-variable-in-the-rule-message"),
        pytest.param(policy(rule(validate="{message: '{{ elementIndex }}', deny: {}}")),
                     "/spec/rules/0/validate/message",
                     "variable 'elementIndex' present outside of foreach at path /validate/message",
                     id="element-index-outside-foreach"),
        pytest.param(policy(rule(match="{any: [{resources: {kinds: [Pod]}, clusterRoles: 1.5}]}"),
                            "{background: false}"),
                     "/spec/rules/0/match/any/0/clusterRoles", "must be a list", id="cluster-roles-not-a-list"),
        pytest.param(policy(rule(match="{any: [{resources: {kinds: [Pod]}, clusterRoles: [[admin]]}]}"),
                            "{background: false}"),
                     "/spec/rules/0/match/any/0/clusterRoles/0", "must be a string", id="cluster-role-not-a-string"),
        pytest.param(policy(rule(match="{any: [{resources: {kinds: [Pod]}, subjects: {kind: User}}]}"),
                            "{background: false}"),
                     "/spec/rules/0/match/any/0/subjects", "must be a list", id="subjects-not-a-list"),
        pytest.param(policy(rule(extra=", exclude: {any: [{resources: {kinds: [Pod], name: 123}}]}")),
                     "/spec/rules/0/exclude/any/0/resources/name", "must be a string", id="name-not-a-string"),
        pytest.param(policy("[{name: r, match: {any: [{resources: {kinds: [Pod]}}]}, validate: [{pattern: {}}]}]"),
                     "/spec/rules/0/validate",
                     "json: cannot unmarshal array into Go struct field Rule.spec.rules.validate of type v1.Validation",
                     id="validate-written-as-a-list"),
        pytest.param(policy(rule(validate="{message: 5, deny: {}}")), "/spec/rules/0/validate/message",
                     "json: cannot unmarshal number into Go struct field Validation.spec.rules.validate.message "
                     "of type string", id="message-a-number"),
        pytest.param(policy("[{name: r, match: {any: [{resources: {kinds: [Pod]}}]}, mutate: patch}]"),
                     "/spec/rules/0/mutate",
                     "json: cannot unmarshal string into Go struct field Rule.spec.rules.mutate of type v1.Mutation",
                     id="mutate-written-as-a-string"),
        pytest.param(policy("[{name: r, match: {any: [{resources: {kinds: [Pod]}}]}, "
                            "verifyImages: {imageReferences: ['*']}}]"),
                     "/spec/rules/0/verifyImages", "cannot unmarshal object into Go struct field "
                     "Rule.spec.rules.verifyImages of type []v1.ImageVerification", id="verify-images-not-a-list"),
        pytest.param(policy(rule(extra=", context: [{name: v, variable: 'request.object'}]")),
                     "/spec/rules/0/context/0/variable", "json: cannot unmarshal string into Go struct field "
                     "ContextEntry.spec.rules.context.variable of type v1.Variable", id="context-variable-not-an-object"),
    ],
)
def test_policy_validity_rejects(doc: dict, pointer: str, text: str) -> None:
    found = problems_of(doc)
    assert any(p == pointer and text in m for p, m in found), found


@pytest.mark.parametrize(
    "doc",
    [
        pytest.param(policy(rule(), overrides("{action: Enforce, namespaces: ['default-*', test]}",
                                              "{action: Audit, namespaces: [default]}")),
                     id="override-pattern-not-matching-audited-namespace"),
        pytest.param(policy(rule(), overrides("{action: Enforce, namespaces: ['default?']}",
                                              "{action: Audit, namespaces: [default]}")),
                     id="override-question-mark-needs-a-character"),
        pytest.param(policy(rule(match="{any: [{resources: {kinds: ['*']}}]}"), "{background: false}"),
                     id="wildcard-kind-metadata-pattern"),
        pytest.param(policy(rule(validate="{message: '{{ request.object.spec.serviceAccountName }}', deny: {}}")),
                     id="object-field-named-like-user-variable"),
        pytest.param(policy(rule(validate="{foreach: [{list: request.object.spec.containers, "
                                          "deny: {conditions: {any: [{key: '{{ element.name }}', operator: Equals, "
                                          "value: x}]}}}]}")),
                     id="element-variable-inside-foreach"),
    ],
)
def test_policy_validity_accepts(doc: dict) -> None:
    assert problems_of(doc) == []


UNKNOWN_LIST = ("{foreach: [{list: 'nope(request.object.spec.containers)', "
                "deny: {conditions: {any: [{key: '{{ element.name }}', operator: Equals, value: x}]}}}]}")
UNKNOWN_KEY = ("{foreach: [{list: request.object.spec.containers, "
               "deny: {conditions: {any: [{key: '{{ nope(element.name) }}', operator: Equals, value: x}]}}}]}")


@pytest.mark.parametrize(
    ("validate", "status", "message"),
    [
        pytest.param(UNKNOWN_LIST, "error", "failed to evaluate list", id="unknown-function-in-a-foreach-list"),
        pytest.param(UNKNOWN_KEY, "error", "Unknown function: nope()", id="unknown-function-in-a-foreach-deny-key"),
        # a deny message that cannot be substituted is left out, as Kyverno's getDenyMessage leaves it out
        pytest.param("{message: '{{ nope(request.object.kind) }}', deny: {}}", "fail", "",
                     id="unknown-function-in-the-deny-message"),
    ],
)
def test_unknown_function_is_an_evaluation_error_not_a_load_error(validate: str, status: str, message: str) -> None:
    # Kyverno's validator only parses JMESPath (go-jmespath's Compile); a function is looked up when the
    # rule runs
    from scanner.engine.evaluate import evaluate_policy

    compiled = parse_policy(policy(rule(validate=validate)))
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ns"},
           "spec": {"containers": [{"name": "c", "image": "nginx"}]}}
    [result] = evaluate_policy(compiled, pod)
    assert str(result.status) == status, result
    assert message in result.message if message else result.message == "", result


@pytest.mark.parametrize(
    ("validate", "extra", "pointer"),
    [
        pytest.param("{message: '{{ request.object.( }}', deny: {}}", "", "/spec/rules/0/validate/message",
                     id="variable-that-does-not-parse"),
        pytest.param(PATTERN, ", context: [{name: v, variable: {jmesPath: 'a.('}}]",
                     "/spec/rules/0/context/0/variable/jmesPath", id="context-jmespath-that-does-not-parse"),
    ],
)
def test_jmespath_that_does_not_parse_is_refused(validate: str, extra: str, pointer: str) -> None:
    found = problems_of(policy(rule(validate=validate, extra=extra)))
    assert [p for p, _ in found] == [pointer], found


def test_unknown_function_in_a_context_entry_loads() -> None:
    doc = policy(rule(extra=", context: [{name: v, variable: {jmesPath: 'nope(request.object)'}}]"))
    assert problems_of(doc) == []
