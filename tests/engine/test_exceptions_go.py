"""Kyverno's own PolicyException unit tests (``kyverno.io/v2`` / ``v2beta1``), translated row by row.

Sources (kyverno/kyverno), read together with the code they exercise:

* ``api/kyverno/v2/policy_exception_types_test.go``: ``TestException_Contains`` and, in a later version of
  the file, ``TestExceptionContains`` (glob patterns in ``policyName``), with ``Exception.Contains`` in
  ``policy_exception_types.go``; ``TestException_Validate`` / ``TestException_Validate_WithFinegrainedExceptions``
  (their policy-name rows) with ``Exception.Validate``;
* ``pkg/exceptions/selector_test.go`` (``TestSelector_Find_FiltersByPolicyAndRule``) with ``selector.go``;
* ``pkg/validation/exception/validate_test.go`` (``Test_Validate``: its exception documents validate without
  error; the warnings depend on webhook options) with ``validate.go``;
* ``pkg/webhooks/exception/validate_test.go`` (``TestExceptionValidate``: an exception without a policy name
  is denied);
* ``cmd/cli/kubectl-kyverno/exception/load_test.go`` (``Test_Load_BlocksAllLegacyExceptionVersions`` with
  legacy policies allowed, ``Test_load_BlocksMalformedLegacyException``) with ``load.go``;
* ``pkg/engine/utils/exceptions_test.go`` (``TestMatchesException_*``: namespace lists, namespaceSelector
  with the namespace's labels, cluster-scoped resources) with ``exceptions.go``.

The Go tests build exceptions as Go structs, often without metadata; here every exception is a whole
document given to ``parse_exception`` (named ``polex`` in namespace ``kyverno`` where the Go test leaves the
name out). Roles and other fields keep the shapes Kyverno's validation accepts. The ``TestCheck*`` rows of
``exceptions_test.go``, the CEL-handler and PSS exception rows live in ``test_wildcards_overrides_go.py``,
``test_match_go.py`` and ``test_validate_handlers_go.py`` and are not repeated.
"""

from __future__ import annotations

from typing import Any

import pytest

from scanner.engine.environment import make_environment
from scanner.engine.evaluate import evaluate_policy
from scanner.engine.exceptions import parse_exception
from scanner.engine.match import Request
from scanner.engine.policy import InvalidPolicyError, parse_policy

from .conftest import y

POD_MATCH = "{any: [{resources: {kinds: [Pod]}}]}"


def exception_doc(entries: str, match: str | None = POD_MATCH, api: str = "kyverno.io/v2",
                  name: str = "polex", namespace: str = "kyverno") -> dict:
    """A PolicyException document with the given ``exceptions`` entries (inline YAML)."""
    match_line = f"\n  match: {match}" if match is not None else ""
    return y(f"""
apiVersion: {api}
kind: PolicyException
metadata: {{name: {name}, namespace: {namespace}}}
spec:
  exceptions: {entries}{match_line}
""")


def problems_of(doc: dict) -> list[tuple[str, str]]:
    try:
        parse_exception(doc)
    except InvalidPolicyError as exc:
        return exc.problems
    return []


# -- policy_exception_types_test.go: Exception.Contains -------------------------------------------------------

CONTAINS = [
    # TestException_Contains
    pytest.param("test-policy", "[rule1, rule2]", "test-policy", "rule1", True, id="contains-exact-policy-and-rule"),
    pytest.param("test-policy", "[rule1, rule2]", "test-policy", "rule3", False,
                 id="contains-policy-matches-rule-not-listed"),
    pytest.param("other-policy", "[rule1, rule2]", "test-policy", "rule1", False, id="contains-policy-mismatch"),
    pytest.param("test-policy", "[]", "test-policy", "rule1", False, id="contains-empty-rule-names"),
    pytest.param("namespace/test-policy", "[rule1]", "namespace/test-policy", "rule1", True,
                 id="contains-namespaced-policy-key"),
    # TestExceptionContains (policyName is a shell-style glob in current Kyverno)
    pytest.param("disallow-privilege-escalation", "[privilege-escalation]", "disallow-privilege-escalation",
                 "privilege-escalation", True, id="glob-exact-policy-and-rule"),
    pytest.param("disallow-privilege-escalation", "['*']", "disallow-privilege-escalation",
                 "privilege-escalation", True, id="glob-exact-policy-star-rule"),
    pytest.param("'*'", "[privilege-escalation]", "disallow-privilege-escalation", "privilege-escalation", True,
                 id="glob-star-policy-exact-rule"),
    pytest.param("'*'", "['*']", "disallow-privilege-escalation", "privilege-escalation", True,
                 id="glob-star-policy-star-rule"),
    pytest.param("disallow-*", "['*']", "disallow-privilege-escalation", "privilege-escalation", True,
                 id="glob-policy-prefix-pattern"),
    pytest.param("disallow-*", "['*']", "require-labels", "check-for-label-name", False,
                 id="glob-policy-prefix-pattern-no-match"),
    pytest.param("disallow-privilege-escalation", "[privilege-escalation]", "require-labels",
                 "privilege-escalation", False, id="glob-policy-name-mismatch"),
    pytest.param("disallow-privilege-escalation", "[privilege-escalation]", "disallow-privilege-escalation",
                 "other-rule", False, id="glob-rule-name-mismatch"),
    pytest.param("default/*", "['*']", "default/my-policy", "my-rule", True, id="glob-namespaced-policy-pattern"),
    pytest.param("'disallow-host-???'", "['*']", "disallow-host-pid", "any-rule", True,
                 id="glob-question-marks-in-policy-name"),
    pytest.param("'disallow-host-???'", "['*']", "disallow-host-namespaces", "any-rule", False,
                 id="glob-question-marks-too-short"),
]


@pytest.mark.parametrize(("policy_name", "rule_names", "policy_key", "rule", "want"), CONTAINS)
def test_go_exception_contains(policy_name: str, rule_names: str, policy_key: str, rule: str, want: bool) -> None:
    exc = parse_exception(exception_doc(f"[{{policyName: {policy_name}, ruleNames: {rule_names}}}]"))
    assert exc.names_rule(policy_key, rule) is want


# -- pkg/exceptions/selector_test.go: Find filters by policy and rule -----------------------------------------

SELECTOR_EXCEPTIONS = {
    "pe1": "[{policyName: ns1/policyA, ruleNames: [rule1, 'rule*']}]",
    "pe2": "[{policyName: ns1/policyB, ruleNames: [rule2]}]",
    "pe3": "[{policyName: ns1/policyA, ruleNames: [other]}]",
}


@pytest.mark.parametrize(
    ("policy_key", "rule", "found"),
    [
        pytest.param("ns1/policyA", "rule3", ["pe1"], id="selector-rule-wildcard-finds-one"),
        pytest.param("ns1/policyB", "rule2", ["pe2"], id="selector-exact-pair-finds-one"),
        pytest.param("ns1/policyA", "nomatch", [], id="selector-no-rule-finds-none"),
    ],
)
def test_go_selector_find(policy_key: str, rule: str, found: list[str]) -> None:
    exceptions = [parse_exception(exception_doc(entries, name=name)) for name, entries in SELECTOR_EXCEPTIONS.items()]
    assert [e.name for e in exceptions if e.names_rule(policy_key, rule)] == found


# -- validity: Exception.Validate, the webhook handler, the CLI loader ----------------------------------------

LEGACY_MANIFEST = "[{policyName: test-policy, ruleNames: [test-rule]}]"
WEBHOOK_ENTRIES = "[{policyName: enforce-label, ruleNames: [enforce-label]}]"

ACCEPTS = [
    # pkg/validation/exception Test_Validate: the documents give no validation error in either namespace
    pytest.param(exception_doc(WEBHOOK_ENTRIES, POD_MATCH, api="kyverno.io/v2beta1", name="enforce-label-exception",
                               namespace="delta"), id="validation-v2beta1-exception-namespace-delta"),
    pytest.param(exception_doc(WEBHOOK_ENTRIES, POD_MATCH, api="kyverno.io/v2beta1", name="enforce-label-exception",
                               namespace="kyverno"), id="validation-v2beta1-exception-namespace-kyverno"),
    # load_test.go Test_Load_BlocksAllLegacyExceptionVersions, legacy policies allowed
    pytest.param(exception_doc(LEGACY_MANIFEST, POD_MATCH, name="test-exception", namespace="default"),
                 id="cli-load-v2-exception"),
    pytest.param(exception_doc(LEGACY_MANIFEST, POD_MATCH, api="kyverno.io/v2beta1", name="test-exception",
                               namespace="default"), id="cli-load-v2beta1-exception"),
]

REJECTS = [
    # TestException_Validate "empty policy name" (and the fine-grained file's "missing policy name"):
    # field.Required(spec.exceptions[0].policyName, "An exception requires a policy name")
    pytest.param(exception_doc("[{policyName: '', ruleNames: [rule1]}]"), "/spec/exceptions/0/policyName",
                 "An exception requires a policy name", id="validate-empty-policy-name"),
    # webhooks TestExceptionValidate "exception without policyName is rejected": exceptions: [{}]
    pytest.param(exception_doc("[{}]", match=None, name="bad-exception", namespace="default"),
                 "/spec/exceptions/0/policyName", None, id="webhook-exception-without-policy-name-denied"),
    # load_test.go Test_load_BlocksMalformedLegacyException: exceptions of the wrong type fail validation
    pytest.param(exception_doc("not-a-list", match=None, name="malformed", namespace="default"),
                 "/spec/exceptions", None, id="cli-load-exceptions-not-a-list"),
]


@pytest.mark.parametrize("doc", ACCEPTS)
def test_go_exception_valid(doc: dict) -> None:
    assert problems_of(doc) == []


@pytest.mark.parametrize(("doc", "pointer", "text"), REJECTS)
def test_go_exception_invalid(doc: dict, pointer: str, text: str | None) -> None:
    found = problems_of(doc)
    assert any(p == pointer and (text is None or text in m) for p, m in found), found


# -- pkg/engine/utils/exceptions_test.go: TestMatchesException_* ----------------------------------------------

CAPABILITIES = parse_policy(y("""
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: disallow-capabilities}
spec:
  rules:
  - name: adding-capabilities
    match: {any: [{resources: {kinds: [Pod, ClusterRole]}}]}
    validate: {message: denied, deny: {}}
"""))

ALL_RULES = "[{policyName: disallow-capabilities, ruleNames: ['*']}]"
BY_NAMESPACES = "{any: [{resources: {namespaces: [kube-system]}}]}"
BY_NAMESPACE_SELECTOR = "{any: [{resources: {namespaceSelector: {matchLabels: {env: test}}}}]}"
SKIPPED = ("skip", "rule is skipped due to policy exceptionskyverno/polex")
FAILED = ("fail", "denied")


def pod(namespace: str) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "test-pod", "namespace": namespace}}


CLUSTER_ROLE = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                "metadata": {"name": "test-cluster-role"}}


def labels(values: dict[str, str]) -> Request:
    return Request(namespace_labels=lambda _ns: dict(values))


@pytest.mark.parametrize(
    ("match", "resource", "request_", "expected"),
    [
        # NoNamespaceSelector: the namespace list alone decides
        pytest.param(BY_NAMESPACES, pod("kube-system"), Request(), SKIPPED, id="namespace-list-matches"),
        pytest.param(BY_NAMESPACES, pod("default"), Request(), FAILED, id="namespace-list-other-namespace"),
        # NamespaceSelector_FetchesNamespaceLabels: the selector sees the resource namespace's labels
        pytest.param(BY_NAMESPACE_SELECTOR, pod("default"), labels({"env": "test"}), SKIPPED,
                     id="namespace-selector-labels-match"),
        pytest.param(BY_NAMESPACE_SELECTOR, pod("default"), labels({"env": "prod"}), FAILED,
                     id="namespace-selector-labels-differ"),
        # ClusterScopedResource: no namespace, no labels, so the selector does not match
        pytest.param(BY_NAMESPACE_SELECTOR, CLUSTER_ROLE, Request(), FAILED,
                     id="namespace-selector-cluster-scoped-resource"),
    ],
)
def test_go_matches_exception(match: str, resource: dict, request_: Request, expected: tuple[str, Any]) -> None:
    env = make_environment(exceptions=(parse_exception(exception_doc(ALL_RULES, match)),))
    [result] = evaluate_policy(CAPABILITIES, resource, request_, env=env)
    assert (str(result.status), result.message) == expected
