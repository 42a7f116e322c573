"""PolicyExceptions turn matching rule results into skips (spec 15)."""

from __future__ import annotations

import pytest

from scanner.engine.environment import make_environment
from scanner.engine.evaluate import evaluate_policy
from scanner.engine.exceptions import parse_exception
from scanner.engine.policy import InvalidPolicyError, parse_policy

from .conftest import y

POLICY = parse_policy(y("""
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: no-host}
spec:
  rules:
  - name: no-host-pid
    match: {any: [{resources: {kinds: [Pod]}}]}
    validate: {pattern: {spec: {X(hostPID): "null"}}}
"""))


def pod(ns: str, labels: dict | None = None) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": ns, "labels": labels or {}},
            "spec": {"hostPID": True}}


def exception(rules: str = "[no-host-pid]", match: str = "{any: [{resources: {kinds: [Pod], namespaces: [legacy]}}]}",
              extra: str = "") -> dict:
    return y(f"""
apiVersion: kyverno.io/v2
kind: PolicyException
metadata: {{name: e, namespace: kyverno}}
spec:
  exceptions: [{{policyName: no-host, ruleNames: {rules}}}]
  match: {match}
  {extra}
""")


@pytest.mark.parametrize(
    ("exc", "resource", "expected"),
    [
        pytest.param(exception(), pod("legacy"), ("skip", "rule is skipped due to policy exceptionskyverno/e"),
                     id="matching-exception-skips"),
        pytest.param(exception(), pod("team"), ("fail", None), id="other-namespace-still-fails"),
        pytest.param(exception(rules="['no-*']"), pod("legacy"), ("skip", None), id="rule-name-wildcard"),
        pytest.param(exception(rules="[other-rule]"), pod("legacy"), ("fail", None), id="other-rule-not-excepted"),
        pytest.param(exception(extra="conditions: {any: [{key: '{{ request.object.metadata.labels.legacy || '''' }}', "
                                     "operator: Equals, value: 'yes'}]}"),
                     pod("legacy", {"legacy": "yes"}), ("skip", None), id="conditions-true"),
        pytest.param(exception(extra="conditions: {any: [{key: '{{ request.object.metadata.labels.legacy }}', "
                                     "operator: Equals, value: 'yes'}]}"),
                     pod("legacy"), ("fail", None), id="conditions-error-means-no-exception"),
    ],
)
def test_exceptions_apply(exc: dict, resource: dict, expected: tuple) -> None:
    env = make_environment(exceptions=(parse_exception(exc),))
    [result] = evaluate_policy(POLICY, resource, env=env)
    assert str(result.status) == expected[0]
    if expected[1] is not None:
        assert result.message == expected[1]


def test_exceptions_legacy_match_block_is_invalid() -> None:
    with pytest.raises(InvalidPolicyError) as info:
        parse_exception(exception(match="{resources: {kinds: [Pod]}}"))
    assert any(p == "/spec/match/resources" for p, _ in info.value.problems)


@pytest.mark.parametrize(
    ("spec", "valid"),
    [
        pytest.param("{exceptions: [{policyName: no-host, ruleNames: []}], "
                     "match: {any: [{resources: {kinds: [Pod]}}]}}", True, id="empty-rule-names-allowed"),
        pytest.param("{exceptions: [], match: {any: [{resources: {kinds: [Pod]}}]}}", True,
                     id="empty-exceptions-allowed"),
        pytest.param("{exceptions: [{policyName: no-host, ruleNames: [no-host-pid]}], "
                     "match: {any: [{resources: {namespaces: [legacy]}}]}}", True, id="kindless-match-allowed"),
        pytest.param("{exceptions: [{policyName: no-host, ruleNames: [no-host-pid]}], "
                     "match: {any: [{resources: {kinds: [Pod]}, subjects: [{kind: User, name: u}]}]}}", False,
                     id="user-info-in-background-rejected"),
        pytest.param("{background: false, exceptions: [{policyName: no-host, ruleNames: [no-host-pid]}], "
                     "match: {any: [{resources: {kinds: [Pod]}, subjects: [{kind: User, name: u}]}]}}", True,
                     id="user-info-without-background-allowed"),
        pytest.param("{exceptions: [{policyName: psa, ruleNames: [restricted]}], "
                     "match: {any: [{resources: {kinds: [Pod]}}]}, "
                     "podSecurity: [{controlName: Capabilities, images: [nginx*]}]}", True, id="pod-security-allowed"),
        pytest.param("{exceptions: [{policyName: psa, ruleNames: [restricted]}], "
                     "match: {any: [{resources: {kinds: [Pod]}}]}, "
                     "podSecurity: [{controlName: Capabilities, images: [[nginx*]]}]}", False,
                     id="pod-security-images-not-strings-rejected"),
        pytest.param("{exceptions: [{policyName: psa, ruleNames: [restricted]}], "
                     "match: {any: [{resources: {kinds: [Pod]}}]}, podSecurity: [Capabilities]}", False,
                     id="pod-security-entry-not-an-object-rejected"),
    ],
)
def test_exceptions_validity(spec: str, valid: bool) -> None:
    doc = {"apiVersion": "kyverno.io/v2", "kind": "PolicyException",
           "metadata": {"name": "e", "namespace": "kyverno"}, "spec": y(spec)}
    if valid:
        parse_exception(doc)
    else:
        with pytest.raises(InvalidPolicyError):
            parse_exception(doc)


def test_exceptions_kindless_match_applies_to_any_kind() -> None:
    exc = exception(match="{any: [{resources: {namespaces: [legacy]}}]}")
    env = make_environment(exceptions=(parse_exception(exc),))
    [result] = evaluate_policy(POLICY, pod("legacy"), env=env)
    assert str(result.status) == "skip"
