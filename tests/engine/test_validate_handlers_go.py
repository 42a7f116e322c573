"""Kyverno's validate-handler unit tests, as table rows run through this engine end to end.

Sources (kyverno/kyverno, ``pkg/engine/handlers/validation/``):

* ``validate_cel_test.go``: the ``validate.cel`` handler (expressions, messages, variables, params,
  ``celPreconditions``, ``auditAnnotations``, exceptions, VAP-generated policies, request shapes);
* ``validate_pss_test.go``: ``Test_PSS_PolicyExceptions_Skip``, here through real ``PolicyException``
  documents (``tests/engine/test_podsecurity_go.py`` calls the podSecurity evaluator directly);
* ``validate_resource_config_test.go``: ``allowExistingViolations`` on UPDATE (old object = new object);
* ``validate_manifest_test.go``: ``verifyManifest`` with static public keys (no network needed).

The Go tests call one handler with a hand-built policy context; each row here is the same policy,
resource and request given to ``evaluate_policy``. Go's fake cluster client (a ``test-ns`` Namespace
labelled ``env: test``) becomes the environment's namespace objects; the non-cluster handler is the
environment without them. Where Go checks ``assert.Contains`` on a message, the row holds the whole
message Kyverno builds (read from the handler code), or only its start (``Prefix``) where the rest
comes from Go's fake client. Rows of ``validate_resource_test.go`` are in ``test_validation_go.py``.

Adaptations:

* ``TestValidateCELHandler_DeleteRequestUsesOldObject`` only asserts that a response comes back; the
  row holds the response Kyverno's handler builds for it;
* ``TestValidateCELHandler_ParamKindWithoutClient``'s policy lacks ``paramRef.parameterNotFoundAction``,
  which Kyverno's policy validation requires (the Go handler test skips it): that policy is asserted
  invalid, and the handler row adds ``parameterNotFoundAction: Allow``;
* ``TestCELValidationFieldExtraction`` (the message backfill alone) becomes two engine rows;
* ``validate_resource_config_test.go`` sets Kyverno's ``defaultAllowExistingViolations`` ConfigMap
  option, which the scanner has no input for: the rows kept are those where the rule's own
  ``allowExistingViolations`` decides, and the one with the option left unset.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

import pytest

from scanner.engine.environment import make_environment
from scanner.engine.evaluate import PRE_EXISTING, evaluate_policy
from scanner.engine.exceptions import parse_exception
from scanner.engine.match import Request
from scanner.engine.policy import InvalidPolicyError, parse_policy
from scanner.yamldoc import load_yaml_values

from .conftest import y


@dataclass(frozen=True)
class Prefix:
    """An expected message known only by its start."""

    text: str


@dataclass
class Case:
    policy: dict
    resource: dict
    # (rule, status, exact message / Prefix / None when not checked)
    expected: list[tuple[str, str, Any]]
    operation: str = "CREATE"
    exceptions: tuple[dict, ...] = ()
    # Namespace objects a cluster client would return (None: Kyverno's non-cluster view)
    namespaces: dict[str, dict] | None = None


def run(case: Case) -> list[tuple[str, str, str]]:
    env = make_environment(
        namespaces=case.namespaces,
        exceptions=tuple(parse_exception(e) for e in case.exceptions),
        load_documents=load_yaml_values,
    )
    results = evaluate_policy(parse_policy(copy.deepcopy(case.policy)), copy.deepcopy(case.resource),
                              Request(operation=case.operation), env=env)
    return [(r.rule, str(r.status), r.message) for r in results]


def check(case: Case) -> None:
    got = run(case)
    assert [g[0] for g in got] == [e[0] for e in case.expected], got
    for (rule, status, message), (_, want_status, want_message) in zip(got, case.expected, strict=True):
        assert status == want_status, (rule, status, message)
        if isinstance(want_message, Prefix):
            assert message.startswith(want_message.text), (rule, message)
        elif want_message is not None:
            assert message == want_message, (rule, message)


def cpol(name: str, rules: str, extra: str = "") -> dict:
    """A ClusterPolicy ``name`` in Enforce mode with ``rules`` (inline YAML); ``extra`` adds top-level
    fields (inline YAML mapping)."""
    doc = y(f"""
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {{name: {name}}}
spec:
  validationFailureAction: Enforce
  rules: {rules}
""")
    if extra:
        doc.update(y(extra))
    return doc


def passed(rule: str) -> str:
    return f"Validation rule '{rule}' passed."


# -- validate_cel_test.go ---------------------------------------------------------------------

PODS = "match: {any: [{resources: {kinds: [Pod]}}]}"


def cel_rule(name: str, cel: str, extra: str = "", match: str = PODS) -> str:
    """One rule with ``validate.cel: {cel}`` (inline YAML); ``extra`` adds rule fields (ending in ``, ``)."""
    return f"[{{name: {name}, {match}, {extra}validate: {{cel: {cel}}}}}]"


def check_name(expected_name: str, message: str) -> str:
    return f'{{expressions: [{{expression: "object.metadata.name == \'{expected_name}\'", message: "{message}"}}]}}'


CEL_PASS = cpol("cel-pass", cel_rule("check-labels", check_name("test-pod", "name must be test-pod")))
CEL_DENY = cpol("cel-deny", cel_rule("check-labels", check_name("must-not-exist", "name must be must-not-exist")))
CEL_VAP = cpol("cel-vap", cel_rule("check-labels", check_name("must-not-exist", "should deny but VAP is generated")),
               "status: {validatingadmissionpolicy: {generated: true, message: ''}}")

CEL_POD = y("""
apiVersion: v1
kind: Pod
metadata: {name: test-pod, namespace: test-ns, labels: {app: test}}
spec: {containers: [{name: nginx, image: 'nginx:latest'}]}
""")
CEL_POD_CLUSTER = y("""
apiVersion: v1
kind: Pod
metadata: {name: test-pod, labels: {app: test}}
spec: {containers: [{name: nginx, image: 'nginx:latest'}]}
""")
UPDATED_POD = y("""
apiVersion: v1
kind: Pod
metadata: {name: test-pod, namespace: test-ns, labels: {app: updated}}
spec: {containers: [{name: nginx, image: 'nginx:1.25'}]}
""")
TEST_NS = y("""
apiVersion: v1
kind: Namespace
metadata: {name: test-ns, labels: {env: test}}
""")
# what Go's fake cluster client knows
CLUSTER = {"test-ns": TEST_NS}


def pod_exception(name: str, namespace: str) -> dict:
    return y(f"""
apiVersion: kyverno.io/v2
kind: PolicyException
metadata: {{name: {name}, namespace: {namespace}}}
spec:
  exceptions: [{{policyName: cel-deny, ruleNames: [check-labels]}}]
  match: {{any: [{{resources: {{kinds: [Pod]}}}}]}}
""")


def named_pod(name: str, labels: str = "") -> dict:
    meta = f", labels: {labels}" if labels else ""
    return y(f"""
apiVersion: v1
kind: Pod
metadata: {{name: {name}, namespace: test-ns{meta}}}
spec: {{containers: [{{name: nginx, image: 'nginx:latest'}}]}}
""")


def param_policy(not_found_action: str = "") -> dict:
    action = f", {not_found_action}" if not_found_action else ""
    return cpol("cel-param", cel_rule("check-with-param", f"""{{
        paramKind: {{apiVersion: v1, kind: ConfigMap}}, paramRef: {{name: my-params, namespace: test-ns{action}}},
        expressions: [{{expression: "object.metadata.name == 'test-pod'", message: name must be test-pod}}]}}"""))


FALLBACK_RULE = cpol("cel-fallback", """[{name: test-rule, match: {any: [{resources: {kinds: [Pod]}}]},
  validate: {message: rule-level fallback message, cel: {expressions: [
    {expression: "object.metadata.name == 'test'", message: ""},
    {expression: "has(object.metadata.labels)", message: explicit message}]}}}]""")

CEL_CASES = [
    pytest.param(Case(CEL_PASS, CEL_POD, [("check-labels", "pass", passed("check-labels"))], namespaces=CLUSTER),
                 id="true-expression-passes"),
    pytest.param(Case(CEL_DENY, CEL_POD, [("check-labels", "fail", "name must be must-not-exist")],
                      namespaces=CLUSTER),
                 id="false-expression-fails-with-its-message"),
    pytest.param(Case(CEL_DENY, CEL_POD, [
        ("check-labels", "skip", "rule is skipped due to policy exceptionstest-ns/test-exception")],
        exceptions=(pod_exception("test-exception", "test-ns"),)),
        id="matching-exception-skips-the-failing-rule"),
    pytest.param(Case(CEL_VAP, CEL_POD, [], namespaces=CLUSTER),
                 id="policy-with-generated-vap-gives-no-result"),
    pytest.param(Case(CEL_PASS, CEL_POD, [("check-labels", "pass", passed("check-labels"))], exceptions=()),
                 id="empty-exception-list-still-evaluates"),
    # Go asserts only that a response comes back; Kyverno's handler turns the evaluation error of the
    # null ``object`` into a failure (the validator's default fail policy). The CEL runtime's own words
    # for selecting a field of null differ from cel-go's ``no such key: metadata``: only the start is kept
    pytest.param(Case(CEL_PASS, CEL_POD, [
        ("check-labels", "fail", Prefix("expression 'object.metadata.name == 'test-pod'' resulted in error: "))],
        operation="DELETE"),
        id="delete-request-fails-on-the-null-object"),
    pytest.param(Case(cpol("cel-ns-check", cel_rule(
        "check-ns", check_name("test-ns", "namespace name must be test-ns"),
        match="match: {any: [{resources: {kinds: [Namespace]}}]}")), TEST_NS,
        [("check-ns", "pass", passed("check-ns"))]),
        id="namespace-object-validates-without-namespace-lookup"),
    pytest.param(Case(CEL_PASS, CEL_POD, [("check-labels", "pass", passed("check-labels"))]),
                 id="non-cluster-mode-uses-a-name-only-namespace"),
    pytest.param(Case(CEL_PASS, UPDATED_POD, [("check-labels", "pass", passed("check-labels"))],
                      operation="UPDATE"),
                 id="update-request-checks-the-new-object"),
    pytest.param(Case(cpol("cel-empty-msg", """[{name: check-labels, match: {any: [{resources: {kinds: [Pod]}}]},
      validate: {message: fallback message from rule,
        cel: {expressions: [{expression: "object.metadata.name == 'nonexistent'"}]}}}]"""), CEL_POD,
        [("check-labels", "fail", "fallback message from rule")]),
        id="expression-without-message-uses-the-rule-message"),
    pytest.param(Case(cpol("cel-precondition", cel_rule(
        "check-with-precondition", check_name("must-not-exist", "should not reach here"),
        extra='celPreconditions: [{name: must-have-label, expression: "has(object.metadata.labels.nonexistent)"}], ')),
        CEL_POD, [("check-with-precondition", "skip", "cel preconditions not met")]),
        id="false-cel-precondition-skips"),
    pytest.param(Case(cpol("cel-multi", cel_rule("multi-check", """{expressions: [
        {expression: "object.metadata.name == 'test-pod'", message: name check},
        {expression: "has(object.metadata.labels.app)", message: must have app label}]}""")), CEL_POD,
        [("multi-check", "pass", passed("multi-check"))]),
        id="all-expressions-true-pass"),
    pytest.param(Case(cpol("cel-multi-fail", cel_rule("multi-check", """{expressions: [
        {expression: "object.metadata.name == 'wrong-name'", message: first expression fails},
        {expression: "has(object.metadata.labels.app)", message: second expression passes}]}""")), CEL_POD,
        [("multi-check", "fail", "first expression fails")]),
        id="first-false-expression-decides-the-message"),
    pytest.param(Case(cpol("cel-vars", cel_rule("check-with-vars", """{
        variables: [{name: podName, expression: object.metadata.name}],
        expressions: [{expression: "variables.podName == 'test-pod'", message: pod name must be test-pod}]}""")),
        CEL_POD, [("check-with-vars", "pass", passed("check-with-vars"))]),
        id="cel-variables-are-available"),
    pytest.param(Case(CEL_PASS, CEL_POD_CLUSTER, [("check-labels", "pass", passed("check-labels"))],
                      namespaces=CLUSTER),
                 id="resource-without-namespace-needs-no-lookup"),
    pytest.param(Case(cpol("cel-audit-ann", cel_rule("check-with-audit-annotation", """{
        expressions: [{expression: "object.metadata.name == 'test-pod'", message: name must be test-pod}],
        auditAnnotations: [{key: test-key, valueExpression: "'checked-pod-' + object.metadata.name"}]}""")),
        CEL_POD, [("check-with-audit-annotation", "pass", passed("check-with-audit-annotation"))]),
        id="audit-annotations-do-not-change-a-pass"),
    pytest.param(Case(CEL_DENY, CEL_POD, [
        ("check-labels", "skip", "rule is skipped due to policy exceptionsdefault/my-exception")],
        exceptions=(pod_exception("my-exception", "default"),)),
        id="exception-key-is-namespace-slash-name"),
    # the Go policy has no parameterNotFoundAction, which policy validation requires (see
    # test_go_param_policy_is_rejected_by_policy_validation); with it the lookup by name still fails
    pytest.param(Case(param_policy("parameterNotFoundAction: Allow"), CEL_POD,
                      [("check-with-param", "error", Prefix("error in parameterized resource: "))]),
                 id="named-param-that-cannot-be-fetched-is-an-error"),
    # TestCELValidationFieldExtraction: an expression without a message takes validate.message,
    # one with a message keeps it
    pytest.param(Case(FALLBACK_RULE, named_pod("other", "{app: x}"), [("test-rule", "fail", "rule-level fallback message")]),
                 id="empty-expression-message-filled-from-rule-message"),
    pytest.param(Case(FALLBACK_RULE, named_pod("test"), [("test-rule", "fail", "explicit message")]),
                 id="explicit-expression-message-is-kept"),
]


@pytest.mark.parametrize("case", CEL_CASES)
def test_cel_handler(case: Case) -> None:
    check(case)


def test_go_param_policy_is_rejected_by_policy_validation() -> None:
    """TestValidateCELHandler_ParamKindWithoutClient's policy as written: the Go handler test skips
    policy validation, which requires ``paramRef.parameterNotFoundAction`` (pkg/policy/validate)."""
    with pytest.raises(InvalidPolicyError, match=r"cel\.paramRef\.parameterNotFoundAction is required"):
        parse_policy(param_policy())


# -- validate_pss_test.go: Test_PSS_PolicyExceptions_Skip --------------------------------------

PSS_POLICY = y("""
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: psp-baseline}
spec:
  rules:
  - name: baseline
    match: {any: [{resources: {kinds: [Pod]}}]}
    validate: {podSecurity: {level: baseline, version: v1.29}}
""")
PSS_POD = y("""
apiVersion: v1
kind: Pod
metadata: {name: test-pod}
spec:
  containers:
  - name: primary
    image: alpine:latest
    securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}, runAsNonRoot: true,
                      runAsUser: 1000, runAsGroup: 1000, seccompProfile: {type: RuntimeDefault}}
  initContainers:
  - name: init1
    image: alpine:latest
    securityContext: {allowPrivilegeEscalation: false, capabilities: {add: [NET_ADMIN, NET_RAW], drop: [ALL]},
                      privileged: false, readOnlyRootFilesystem: false, runAsNonRoot: true, runAsUser: 10001,
                      runAsGroup: 10001, seccompProfile: {type: RuntimeDefault}}
  - name: init2
    image: busybox:latest
    securityContext: {allowPrivilegeEscalation: false, capabilities: {add: [SYS_TIME], drop: [ALL]},
                      privileged: false, readOnlyRootFilesystem: true, runAsNonRoot: true, runAsUser: 10002,
                      runAsGroup: 10002, seccompProfile: {type: RuntimeDefault}}
""")


def capabilities_exception(name: str, image: str, values: str) -> dict:
    return y(f"""
apiVersion: kyverno.io/v2
kind: PolicyException
metadata: {{name: {name}}}
spec:
  exceptions: [{{policyName: psp-baseline, ruleNames: [baseline]}}]
  match: {{any: [{{resources: {{kinds: [Pod]}}}}]}}
  podSecurity:
  - controlName: Capabilities
    images: ['{image}']
    restrictedField: spec.initContainers[*].securityContext.capabilities.add
    values: {values}
""")


PSS_CASES = [
    pytest.param(Case(PSS_POLICY, PSS_POD, [
        ("baseline", "skip", "rule is skipped due to policy exceptions init1-exception-baseline, "
                             "init2-exception-baseline")],
        exceptions=(capabilities_exception("init1-exception-baseline", "alpine:latest", "[NET_ADMIN, NET_RAW]"),
                    capabilities_exception("init2-exception-baseline", "busybox:latest", "[SYS_TIME]"))),
        id="pod-security-exceptions-covering-every-violation-skip"),
]


@pytest.mark.parametrize("case", PSS_CASES)
def test_pss_handler(case: Case) -> None:
    check(case)


# -- validate_resource_config_test.go: allowExistingViolations on UPDATE -------------------------
# The old object equals the new one (both lack the required label), as in the Go test. Rows whose
# rule sets allowExistingViolations do not depend on Kyverno's defaultAllowExistingViolations setting.

def require_app_label(allow: str) -> dict:
    setting = f"allowExistingViolations: {allow}, " if allow else ""
    return cpol("require-labels", f"""[{{name: require-labels, match: {{all: [{{resources: {{kinds: [Pod]}}}}]}},
      validate: {{{setting}message: "label 'app' is required", pattern: {{metadata: {{labels: {{app: '?*'}}}}}}}}}}]""")


UNLABELLED_POD = y("""
apiVersion: v1
kind: Pod
metadata: {name: test, labels: {other: value}}
spec: {containers: [{image: nginx, name: nginx}]}
""")
APP_LABEL_FAILURE = ("validation error: label 'app' is required. rule require-labels failed at path "
                     "/metadata/labels/app/")

EXISTING_VIOLATION_CASES = [
    pytest.param(Case(require_app_label("true"), UNLABELLED_POD, [("require-labels", "skip", PRE_EXISTING)],
                      operation="UPDATE"),
                 id="rule-allow-true-overrides-default-false"),
    pytest.param(Case(require_app_label("false"), UNLABELLED_POD, [("require-labels", "fail", APP_LABEL_FAILURE)],
                      operation="UPDATE"),
                 id="rule-allow-false-overrides-default-true"),
    # an unset rule value with Kyverno's default left unset: the default has moved between versions
    # (the config test says false, policycontext's Test_DefaultAllowExistingViolations says true); this
    # engine follows spec 13.2 (true), so the pre-existing violation is allowed
    pytest.param(Case(require_app_label(""), UNLABELLED_POD, [("require-labels", "skip", PRE_EXISTING)],
                      operation="UPDATE"),
                 id="default-unset-allows-existing-violations"),
    pytest.param(Case(require_app_label("false"), UNLABELLED_POD, [("require-labels", "fail", APP_LABEL_FAILURE)],
                      operation="UPDATE"),
                 id="rule-allow-false-with-default-false"),
    pytest.param(Case(require_app_label("true"), UNLABELLED_POD, [("require-labels", "skip", PRE_EXISTING)],
                      operation="UPDATE"),
                 id="rule-allow-true-with-default-true"),
]


@pytest.mark.parametrize("case", EXISTING_VIOLATION_CASES)
def test_allow_existing_violations(case: Case) -> None:
    check(case)


# -- validate_manifest_test.go: verifyManifest with static keys ---------------------------------
# The verified object is the admission request's object (server-set fields included).

KEY_1 = """-----BEGIN PUBLIC KEY-----
MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEyQfmL5YwHbn9xrrgG3vgbU0KJxMY
BibYLJ5L4VSMvGxeMLnBGdM48w5IE//6idUPj3rscigFdHs7GDMH4LLAng==
-----END PUBLIC KEY-----"""
KEY_2 = """-----BEGIN PUBLIC KEY-----
MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEE8uGVnyDWPPlB7M5KOHRzxzPHtAy
FdGxexVrR4YqO1pRViKxmD9oMu4I7K/4sM51nbH65ycB2uRiDfIdRoV/+A==
-----END PUBLIC KEY-----
"""

CM_MESSAGE = ("H4sIAAAAAAAA/wD8AAP/H4sIAAAAAAAA/+zRu27DIBQGYGaeghdIOVzsNKydu1Vdq9MYW5Y54AKJmjx9leuYsVUlf8vPz2U4Qu4xyz6F"
              "zuci41EqeJ7C19DpGj+BDNFHMGS/LQDAEOWb3Caasy9ljMOqYl4Nx2azMQBGyYI0B7/a0tMBKbC709vW2nOu2+acoC/9RDVrpqyGprXQ"
              "asPAQKvWTAD7BbtSMTOAPO269OBeqdj3D86vs9zzn8B5fPe5jCk6sVd8GmPnxEuK/Ti84szJV+ywouNCRCTvxP2T+W1/8gflxB6DuhR9"
              "LpoLsU1EPlZ3Wyj+1+MuFovF4uonAAD//3weCWIACAAAAQAA//+Nc9ey/AAAAA==")
CM_SIGNATURE = "MEYCIQCTNFfObr0DiBCbDYEq0clxRw0FeoY35LhEiIFrGU7bZAIhAJR7AEYHIXkCPGlPIXA8ao0L99s3RWAjjzoxwcvOfmeT"
EDITED_CM_MESSAGE = (
    "H4sIAAAAAAAA/wAIAff+H4sIAAAAAAAA/+yQu07DMBSGM+cp/ALB97T1ysyGWNHBcYKVHDuy3UL79Ii0ha0jCJFv+S/+Pdj0AIn2cepc"
    "yvSoqVZb+Rwwb076pStod+M7onx7ZYyxIdBHaiPOyeXsw9AUSM1w2raca7UTdB98aYrLpbF4dwScqjOfd1ulFt20elEmznmxTFdcCS0k"
    "a7USFZNcKlkRVv0A+1wgVYylcd/FG7tcoO9vnF/e8qV/BJj9k0vZx2DIgdejD50h9zH0fniAuUZXoIMCpiYkADpDMuA8ucbipckz2O86"
    "5Po6txHRhWKuhteEjO7IDTnAdAliCeK3P2FlZWXlH/IRAAD//2efbt8ACAAAAQAA//91Gk76CAEAAA==")
EDITED_CM_SIGNATURE = "MEQCIFrMmrKUOAzbp0/5oe7TEotfqbAH9L5ao6iaIOlDZQCOAiAYcUnBFbn4GqgayTtcLN+Yi/2hH6hFz4MBUydO6DREAQ=="
SERVICE_MESSAGE = ("H4sIAAAAAAAA/yyKzQrCQAwG7/sU3wsUFMGf3MSzUFC8h22QxXY3JKHg20sXb8PMsJaXmJdWCes+fUqdCA+xtWRJiwRPHEwJqLwIIcRj"
                   "8H92lbwlbRa+wdCRcN4lAFBr0XKbCc/b2E2wvSXGPl0Op2MCXGbJ0Yz6wKqE+/eqmn4BAAD//3vEXUSaAAAA")
SERVICE_SIGNATURE = "MEUCIQDpI/7Ncl8iJJ/Kc8JlL5FLbePZprMSRRjvXYlaybjU2wIgaPYh93JMerk2L+vTOwQ4pYlZ43Eq86QnQ8wuKPXmnWE="
SERVICE_SIGNATURE_2 = "MEMCICxbOY2HKophxyUVxhBOAJo+kt+WYleDttBCVFrmA/7PAh8lgr5u3d2rFM8gSTBEYgzRzXIwAZEByrpq0SVRwqq7"


def admitted(obj: dict, time: str, uid: str, fields: dict, manager: str) -> dict:
    """``obj`` as the API server hands it to admission: timestamps, uid and managed fields added."""
    out = copy.deepcopy(obj)
    out["metadata"].update({
        "creationTimestamp": time, "uid": uid,
        "managedFields": [{"apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": fields, "manager": manager,
                           "operation": "Update", "time": time}],
    })
    return out


def config_map(data: str, annotations: dict[str, str] | None) -> dict:
    doc = y(f"""
apiVersion: v1
kind: ConfigMap
data: {data}
metadata: {{name: sample-cm, namespace: sample-ns}}
""")
    if annotations is not None:
        doc["metadata"]["annotations"] = annotations
    return doc


THREE_KEYS = "{comment: comment1, key1: val1, key2: val2}"
FOUR_KEYS = "{comment: comment1, key1: val1, key2: val2, key3: val3}"
OC_FIELDS = y("""
f:data: {.: {}, f:comment: {}, f:key1: {}, f:key2: {}}
f:metadata: {f:annotations: {.: {}, f:integrityshield.io/message: {}, f:integrityshield.io/signature: {}}}
""")
KUBECTL_CM_FIELDS = y("""
f:data: {.: {}, f:comment: {}, f:key1: {}, f:key2: {}, f:key3: {}}
f:metadata: {f:annotations: {.: {}, f:cosign.sigstore.dev/message: {}, f:cosign.sigstore.dev/signature: {}}}
""")

SIGNED_CM = admitted(config_map(THREE_KEYS, {"cosign.sigstore.dev/message": CM_MESSAGE,
                                             "cosign.sigstore.dev/signature": CM_SIGNATURE}),
                     "2022-03-04T07:43:10Z", "44725451-0fd5-47ec-98a1-f53f938e9b4d", OC_FIELDS, "oc")
UNSIGNED_CM = admitted(config_map(THREE_KEYS, None), "2022-03-04T07:43:10Z",
                       "44725451-0fd5-47ec-98a1-f53f938e9b4d", OC_FIELDS, "oc")
EDITED_CM = admitted(config_map(FOUR_KEYS, {"cosign.sigstore.dev/message": EDITED_CM_MESSAGE,
                                            "cosign.sigstore.dev/signature": EDITED_CM_SIGNATURE}),
                     "2022-06-15T08:11:51Z", "5b4e13e5-898d-4fd2-95a9-8d7a95f3b469", KUBECTL_CM_FIELDS,
                     "kubectl-create")


def service(signatures: list[str], time: str, uid: str, cluster_ip: str) -> dict:
    annotations = {"cosign.sigstore.dev/message": SERVICE_MESSAGE}
    signature_fields: dict[str, Any] = {".": {}, "f:cosign.sigstore.dev/message": {}}
    for i, signature in enumerate(signatures):
        key = "cosign.sigstore.dev/signature" + (f"_{i}" if i else "")
        annotations[key] = signature
        signature_fields[f"f:{key}"] = {}
    doc = y(f"""
apiVersion: v1
kind: Service
metadata: {{name: test-service, namespace: test-ns}}
spec:
  clusterIP: {cluster_ip}
  clusterIPs: [{cluster_ip}]
  internalTrafficPolicy: Cluster
  ipFamilies: [IPv4]
  ipFamilyPolicy: SingleStack
  ports: [{{port: 80, protocol: TCP, targetPort: 9376}}]
  selector: {{app: MyApp}}
  sessionAffinity: None
  type: ClusterIP
status: {{loadBalancer: {{}}}}
""")
    doc["metadata"]["annotations"] = annotations
    fields = y("""
f:spec:
  f:internalTrafficPolicy: {}
  f:ports: {.: {}, 'k:{"port":80,"protocol":"TCP"}': {.: {}, f:port: {}, f:protocol: {}, f:targetPort: {}}}
  f:selector: {}
  f:sessionAffinity: {}
  f:type: {}
""")
    fields["f:metadata"] = {"f:annotations": signature_fields}
    return admitted(doc, time, uid, fields, "kubectl-create")


ONE_SIGNATURE_SERVICE = service([SERVICE_SIGNATURE], "2022-06-16T07:15:34Z",
                                "7011a06e-50cb-46b8-bf88-40582294d2b2", "10.96.122.111")
TWO_SIGNATURES_SERVICE = service([SERVICE_SIGNATURE, SERVICE_SIGNATURE_2], "2022-06-16T07:16:23Z",
                                 "3e146f89-bd8a-4738-a7d4-41c5872d18ad", "10.96.223.193")


def manifests_policy(*entries: dict, count: int | None = None) -> dict:
    attestor_set: dict[str, Any] = {"entries": list(entries)}
    if count is not None:
        attestor_set["count"] = count
    doc = cpol("test-policy", "[{name: verify-manifest, match: {any: [{resources: {kinds: [ConfigMap, Service]}}]}}]")
    doc["spec"]["rules"][0]["validate"] = {"manifests": {"attestors": [attestor_set]}}
    return doc


def key(pem: str) -> dict:
    return {"keys": {"publicKeys": pem}}


NESTED_KEY_1 = {"attestor": {"entries": [key(KEY_1 + "    ")]}}
SECOND_KEY_REJECTS = (
    "error occurred during manifest verification: .attestors[0].entries[1].keys: failed to verify signature: "
    'verification failed for 1 signature. all trials: ["[publickey 1/1] [signature 1/1] error: '
    'cosign.VerifyBlobCmd.Exec() returned an error: invalid signature when validating ASN.1 encoded signature"]')

MANIFEST_CASES = [
    pytest.param(Case(manifests_policy(key(KEY_1)), SIGNED_CM, [("verify-manifest", "pass", None)]),
                 id="signed-configmap-verifies"),
    pytest.param(Case(manifests_policy(key(KEY_1)), UNSIGNED_CM, [("verify-manifest", "fail", None)]),
                 id="unsigned-configmap-is-not-verified"),
    pytest.param(Case(manifests_policy(key(KEY_1)), EDITED_CM, [("verify-manifest", "fail", None)]),
                 id="configmap-differing-from-its-signed-manifest-is-not-verified"),
    pytest.param(Case(manifests_policy(key(KEY_1), key(KEY_2)), ONE_SIGNATURE_SERVICE,
                      [("verify-manifest", "error", SECOND_KEY_REJECTS)]),
                 id="every-key-required-but-second-key-rejects-the-signature"),
    pytest.param(Case(manifests_policy(key(KEY_1), key(KEY_2), NESTED_KEY_1, count=3), TWO_SIGNATURES_SERVICE,
                      [("verify-manifest", "pass", None)]),
                 id="three-entries-with-nested-attestor-all-verify-two-signatures"),
    pytest.param(Case(manifests_policy(key(KEY_1), key(KEY_2), count=1), ONE_SIGNATURE_SERVICE,
                      [("verify-manifest", "pass", None)]),
                 id="count-one-passes-on-the-first-verifying-key"),
]


@pytest.mark.parametrize("case", MANIFEST_CASES)
def test_manifest_handler(case: Case) -> None:
    check(case)
