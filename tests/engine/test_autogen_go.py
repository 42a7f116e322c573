"""Kyverno's own unit tests for autogen (rules generated for pod controllers), translated row by
row and run against the engine.

Sources (kyverno/kyverno):
* ``pkg/autogen/v1/autogen_test.go`` (Test_getAutogenRuleName, Test_isAutogenRule, Test_CanAutoGen,
  TestUpdateGenRuleByte, TestUpdateCELFields, Test_ComputeRules, Test_PodSecurityWithNoExceptions,
  Test_ValidateWithCELExpressions)
* ``pkg/autogen/autogen_test.go`` in its older layouts (Test_GetSupportedControllers,
  Test_GetRequestedControllers, Test_getActualControllers, Test_Any, Test_All, Test_Exclude,
  Test_CronJobOnly, Test_CronJob_hasExclude, Test_CronJobAndDeployment, Test_UpdateVariablePath,
  Test_Deny) and ``pkg/autogen/patch_test.go`` (the same generated-rule cases as JSON patches), with
  their inputs ``test/best_practices/disallow_bind_mounts.yaml``, ``select-secrets.yaml`` and
  ``test/policy/deny/policy.yaml``
* the code they exercise: ``pkg/autogen/v1/autogen.go`` (CanAutoGen, computeRules),
  ``pkg/autogen/v1/rule.go`` (generateRule, generateRuleForControllers, generateCronJobRule,
  updateFields), ``pkg/autogen/v1/internal/gvk.go`` (ConvertKindsToGVK)

Adaptations, each noted on its rows:
* the older tests predate ReplicaSet/ReplicationController autogen and group/version/kind names:
  their ``DaemonSet,Deployment,Job,StatefulSet`` is today's six controllers written as
  ``apps/v1/DaemonSet`` … (gvk.go), in the sorted order ``splitKinds`` gives them;
* Kyverno evaluates ``ComputeRules(policy, kind)``: the declared rules plus the rules generated for
  that kind. ``Policy.rules_for(kind)`` also leaves out rules whose kinds can never match the kind,
  so a declared Pod rule is absent from the lists for controllers (it gives no result there in
  Kyverno either);
* verifyImages/mutate/generate rules are out of scope: where a Go case only needs a rule shape it is
  rewritten as a validate rule.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from scanner.engine.autogen import autogen_controllers, can_generate, generate_rule
from scanner.engine.evaluate import evaluate_policy
from scanner.engine.policy import parse_policy

from .conftest import y

ALL = {"DaemonSet", "Deployment", "Job", "StatefulSet", "ReplicaSet", "ReplicationController", "CronJob"}
NONE: set[str] = set()
# the six controllers of the non-CronJob rule, as generateRuleForControllers writes them
CONTROLLER_KINDS = ["apps/v1/DaemonSet", "apps/v1/Deployment", "batch/v1/Job", "apps/v1/ReplicaSet",
                    "v1/ReplicationController", "apps/v1/StatefulSet"]
CRONJOB_KINDS = ["batch/v1/CronJob"]
ANNOTATION = "pod-policies.kyverno.io/autogen-controllers"


def _policy(rules: Any, annotations: dict | None = None, spec: dict | None = None) -> dict:
    meta: dict = {"name": "p"}
    if annotations is not None:
        meta["annotations"] = annotations
    return {"apiVersion": "kyverno.io/v1", "kind": "ClusterPolicy", "metadata": meta,
            "spec": {**(spec or {}), "rules": rules}}


def _generated(policy: dict) -> list[dict]:
    """The rules generated for the policy's first rule: the controllers rule, then the CronJob rule."""
    rule = policy["spec"]["rules"][0]
    controllers = autogen_controllers(policy)
    if not can_generate(rule):
        return []
    return [new for target in ("controllers", "CronJob")
            if (new := generate_rule(rule, controllers, target)) is not None]


# -- Test_CanAutoGen / Test_GetSupportedControllers / Test_GetRequestedControllers -----------------

_MUTATE_SERVICE_LABEL = {"patchStrategicMerge": {"metadata": {"labels": {
    "+(service)": "{{request.object.spec.template.metadata.labels.app}}"}}}}


@pytest.mark.parametrize(
    ("policy", "expected"),
    [
        # Test_CanAutoGen (v1); "none" and the empty set both mean: no autogen
        pytest.param(json.loads('{"apiVersion":"kyverno.io/v1","kind":"ClusterPolicy","metadata":{"name":"test"},"spec":{"rules":[{"name":"test","match":{"resources":{"kinds":["Namespace"],"name":"*"}}}]}}'),
                     NONE, id="go-rule-with-match-name"),
        pytest.param(json.loads('{"apiVersion":"kyverno.io/v1","kind":"ClusterPolicy","metadata":{"name":"test-getcontrollers"},"spec":{"background":false,"rules":[{"name":"test-getcontrollers","match":{"resources":{"kinds":["Pod"],"selector":{"matchLabels":{"foo":"bar"}}}}}]}}'),
                     NONE, id="go-rule-with-match-selector"),
        pytest.param(json.loads('{"apiVersion":"kyverno.io/v1","kind":"ClusterPolicy","metadata":{"name":"test-getcontrollers"},"spec":{"background":false,"rules":[{"name":"test-getcontrollers","match":{"resources":{"kinds":["Pod"]}},"exclude":{"resources":{"name":"test"}}}]}}'),
                     NONE, id="go-rule-with-exclude-name"),
        pytest.param(json.loads('{"apiVersion":"kyverno.io/v1","kind":"ClusterPolicy","metadata":{"name":"test-getcontrollers"},"spec":{"background":false,"rules":[{"name":"test-getcontrollers","match":{"resources":{"kinds":["Pod"]}},"exclude":{"resources":{"names":["test"]}}}]}}'),
                     NONE, id="go-rule-with-exclude-names"),
        pytest.param(json.loads('{"apiVersion":"kyverno.io/v1","kind":"ClusterPolicy","metadata":{"name":"test-getcontrollers"},"spec":{"background":false,"rules":[{"name":"test-getcontrollers","match":{"resources":{"kinds":["Pod"]}},"exclude":{"resources":{"selector":{"matchLabels":{"foo":"bar"}}}}}]}}'),
                     NONE, id="go-rule-with-exclude-selector"),
        pytest.param(json.loads('{"apiVersion":"kyverno.io/v1","kind":"ClusterPolicy","metadata":{"name":"test"},"spec":{"rules":[{"name":"require-network-policy","match":{"resources":{"kinds":["Pod"]}},"validate":{"message":"testpolicy","deny":{"conditions":[{"key":"{{request.object.metadata.labels.foo}}","operator":"Equals","value":"bar"}]}}}]}}'),
                     ALL, id="go-rule-with-deny"),
        pytest.param(_policy([{"name": "set-service-label", "match": {"resources": {"kinds": ["Pod", "Deployment"]}},
                               "preconditions": {"any": [{"key": "{{request.operation}}", "operator": "Equals", "value": "CREATE"}]},
                               "mutate": _MUTATE_SERVICE_LABEL}], spec={"background": False}),
                     NONE, id="go-rule-with-match-mixed-kinds-pod-podcontrollers"),
        pytest.param(_policy([{"name": "set-service-label", "match": {"resources": {"kinds": ["Pod"]}},
                               "exclude": {"resources": {"kinds": ["Pod", "Deployment"]}},
                               "mutate": _MUTATE_SERVICE_LABEL}], spec={"background": False}),
                     NONE, id="go-rule-with-exclude-mixed-kinds-pod-podcontrollers"),
        pytest.param(json.loads('{"apiVersion":"kyverno.io/v1","kind":"ClusterPolicy","metadata":{"name":"test"},"spec":{"rules":[{"name":"require-network-policy","match":{"resources":{"kinds":["Pod"]}},"validate":{"message":"testpolicy","pattern":{"metadata":{"labels":{"foo":"bar"}}}}}]}}'),
                     ALL, id="go-rule-with-match-kinds-pod-only"),
        pytest.param(json.loads('{"apiVersion":"kyverno.io/v1","kind":"ClusterPolicy","metadata":{"name":"test"},"spec":{"rules":[{"name":"require-network-policy","match":{"resources":{"kinds":["Pod"]}},"exclude":{"resources":{"kinds":["Pod"],"namespaces":["test"]}},"validate":{"message":"testpolicy","pattern":{"metadata":{"labels":{"foo":"bar"}}}}}]}}'),
                     ALL, id="go-rule-with-exclude-kinds-pod-only"),
        pytest.param(json.loads('{"apiVersion":"kyverno.io/v1","kind":"ClusterPolicy","metadata":{"name":"test"},"spec":{"rules":[{"name":"test","match":{"resources":{"kinds":["Pod"]}},"mutate":{"patchesJson6902":"-op:add\\npath:/spec/containers/0/env/-1\\nvalue:{\\"name\\":\\"SERVICE\\",\\"value\\":{{request.object.spec.template.metadata.labels.app}}}"}}]}}'),
                     NONE, id="go-rule-with-mutate-patches"),
        pytest.param(json.loads('{"apiVersion":"kyverno.io/v1","kind":"ClusterPolicy","metadata":{"name":"add-networkpolicy"},"spec":{"rules":[{"name":"default-deny-ingress","match":{"resources":{"kinds":["Namespace"],"name":"*"}},"exclude":{"resources":{"namespaces":["kube-system","default","kube-public","kyverno"]}},"generate":{"kind":"NetworkPolicy","name":"default-deny-ingress","namespace":"{{request.object.metadata.name}}","synchronize":true,"data":{"spec":{"podSelector":{},"policyTypes":["Ingress"]}}}}]}}'),
                     NONE, id="go-rule-with-generate"),
        # the Go JSON puts the annotation next to metadata, not inside it: it is not read at all
        pytest.param(json.loads('{"apiVersion":"kyverno.io/v1","kind":"ClusterPolicy","metadata":{"name":"set-service-labels-env"},"annotations":null,"pod-policies.kyverno.io/autogen-controllers":"DaemonSet,Deployment,StatefulSet","spec":{"background":false,"rules":[{"name":"set-service-label","match":{"resources":{"kinds":["Pod","Deployment"]}},"mutate":{"patchStrategicMerge":{"metadata":{"labels":{"+(service)":"{{request.object.spec.template.metadata.labels.app}}"}}}}}]}}'),
                     NONE, id="go-rule-with-predefined-invalid-controllers"),
        pytest.param(json.loads('{"apiVersion":"kyverno.io/v1","kind":"ClusterPolicy","metadata":{"name":"set-service-labels-env"},"annotations":null,"pod-policies.kyverno.io/autogen-controllers":"none","spec":{"background":false,"rules":[{"name":"set-service-label","match":{"resources":{"kinds":["Pod","Deployment"]}},"mutate":{"patchStrategicMerge":{"metadata":{"labels":{"+(service)":"{{request.object.spec.template.metadata.labels.app}}"}}}}}]}}'),
                     NONE, id="go-rule-with-predefined-valid-controllers"),
        pytest.param(json.loads('{"apiVersion":"kyverno.io/v1","kind":"ClusterPolicy","metadata":{"name":"set-service-labels-env"},"annotations":null,"pod-policies.kyverno.io/autogen-controllers":"none","spec":{"background":false,"rules":[{"name":"set-service-label","match":{"resources":{"kinds":["Namespace"]}},"mutate":{"patchStrategicMerge":{"metadata":{"labels":{"+(service)":"{{request.object.spec.template.metadata.labels.app}}"}}}}}]}}'),
                     NONE, id="go-rule-with-only-predefined-valid-controllers"),
        pytest.param(json.loads('{"apiVersion":"kyverno.io/v1","kind":"ClusterPolicy","metadata":{"name":"test"},"spec":{"rules":[{"name":"require-network-policy","match":{"resources":{"kinds":["Pod"]}},"validate":{"message":"testpolicy","podSecurity": {"level": "baseline","version":"v1.24","exclude":[{"controlName":"SELinux","restrictedField":"spec.containers[*].securityContext.seLinuxOptions.role","images":["nginx"],"values":["baz"]}, {"controlName":"SELinux","restrictedField":"spec.initContainers[*].securityContext.seLinuxOptions.role","images":["nodejs"],"values":["init-baz"]}]}}}]}}'),
                     ALL, id="go-rule-with-match-kinds-pod-only-validate-exclude"),
        # Test_GetSupportedControllers: the same policies as above, plus
        pytest.param(json.loads('{"apiVersion":"kyverno.io/v1","kind":"ClusterPolicy","metadata":{"name":"pod-security"},"spec":{"rules":[{"name":"restricted","match":{"all":[{"resources":{"kinds":["Pod"]}}]},"validate":{"failureAction":"enforce","podSecurity":{"level":"restricted","version":"v1.24"}}}]}}'),
                     ALL, id="go-supported-rule-with-validate-podsecurity"),
    ],
)
def test_can_autogen(policy: dict, expected: set[str]) -> None:
    assert autogen_controllers(policy) == expected


_POD_RULE = {"name": "check-team", "match": {"any": [{"resources": {"kinds": ["Pod"]}}]},
             "validate": {"message": "label 'team' is required", "pattern": {"metadata": {"labels": {"team": "?*"}}}}}


@pytest.mark.parametrize(
    ("annotations", "expected"),
    [
        # Test_GetRequestedControllers; with every controller supported, the effective set is
        # the requested one (GetControllers), or every controller when nothing is requested
        pytest.param(None, ALL, id="go-annotations-nil"),
        pytest.param({}, ALL, id="go-annotation-not-set"),
        pytest.param({ANNOTATION: "none"}, NONE, id="go-annotation-none"),
        pytest.param({ANNOTATION: "Job"}, {"Job"}, id="go-annotation-job"),
        pytest.param({ANNOTATION: "Job,Deployment"}, {"Job", "Deployment"}, id="go-annotation-job-deployment"),
        # GetRequestedControllers reads "" as no request, but that answer only feeds webhook
        # configuration; the engine's computeRules splits "" into {""}, which names no kind
        pytest.param({ANNOTATION: ""}, NONE, id="go-annotation-empty-computerules"),
        # Test_getActualControllers keeps "CloneSet" too, and computeRules(policy, "CloneSet") does
        # generate a rule for it; the spec (10.1) counts only the seven controller kinds
        pytest.param({ANNOTATION: "CloneSet,Deployment"}, {"Deployment"}, id="go-rule-with-gen-custom-resources-spec"),
        # the CronJob rule is asked for by the annotation alone (Test_CronJobOnly)
        pytest.param({ANNOTATION: "CronJob"}, {"CronJob"}, id="go-cronjob-only"),
    ],
)
def test_requested_controllers(annotations: dict | None, expected: set[str]) -> None:
    assert autogen_controllers(_policy([_POD_RULE], annotations)) == expected


# -- Test_getAutogenRuleName / Test_isAutogenRule ---------------------------------------------------


@pytest.mark.parametrize(
    ("rule_name", "target", "expected"),
    [
        pytest.param("valid-rule-name", "controllers", "autogen-valid-rule-name", id="go-valid"),
        pytest.param("too-long-this-rule-name-will-be-truncated-to-63-characters", "controllers",
                     "autogen-too-long-this-rule-name-will-be-truncated-to-63-charact", id="go-truncated"),
        pytest.param("valid-rule-name", "CronJob", "autogen-cronjob-valid-rule-name", id="go-valid-cronjob"),
        pytest.param("too-long-this-rule-name-will-be-truncated-to-63-characters", "CronJob",
                     "autogen-cronjob-too-long-this-rule-name-will-be-truncated-to-63", id="go-truncated-cronjob"),
    ],
)
def test_autogen_rule_name(rule_name: str, target: str, expected: str) -> None:
    generated = generate_rule({**_POD_RULE, "name": rule_name}, frozenset(ALL), target)
    assert generated is not None
    assert generated["name"] == expected


@pytest.mark.parametrize(
    ("rule_name", "generates"),
    [
        # Test_isAutogenRule: a declared rule whose name starts with autogen- is itself a generated rule
        pytest.param("valid-rule-name", True, id="go-normal"),
        pytest.param("autogen-simple", False, id="go-simple"),
        pytest.param("autogen-cronjob-simple", False, id="go-simple-cronjob"),
        pytest.param("autogen-too-long-this-rule-name-will-be-truncated-to-63-charact", False, id="go-truncated"),
        pytest.param("autogen-cronjob-too-long-this-rule-name-will-be-truncated-to-63", False,
                     id="go-truncated-cronjob"),
    ],
)
def test_is_autogen_rule(rule_name: str, generates: bool) -> None:
    assert can_generate({**_POD_RULE, "name": rule_name}) is generates


def test_declared_autogen_rules_are_replaced() -> None:
    """computeRules drops declared ``autogen-`` rules for a controller kind (isAutogenRuleName) and
    appends the generated ones; for other kinds the declared rules stay as they are."""
    stale = {"name": "autogen-check-team", "match": {"any": [{"resources": {"kinds": ["Deployment", "Service"]}}]},
             "validate": {"pattern": {"metadata": {"labels": {"stale": "?*"}}}}}
    policy = parse_policy(_policy([_POD_RULE, stale]))
    deployment = policy.rules_for("Deployment")
    assert [r.name for r in deployment] == ["autogen-check-team"]
    assert "template" in json.dumps(deployment[0].validate["pattern"])
    assert [r.name for r in policy.rules_for("Service")] == ["autogen-check-team"]
    assert policy.rules_for("Service")[0].validate["pattern"] == {"metadata": {"labels": {"stale": "?*"}}}


# -- TestUpdateGenRuleByte / TestUpdateCELFields ----------------------------------------------------


def _deny_rule(key: str) -> dict:
    return {"name": "r", "match": {"any": [{"resources": {"kinds": ["Pod"]}}]},
            "validate": {"deny": {"conditions": {"any": [{"key": key, "operator": "Equals", "value": "x"}]}}}}


def _cel_rule(expression: str) -> dict:
    return {"name": "r", "match": {"any": [{"resources": {"kinds": ["Pod"]}}]},
            "validate": {"cel": {"expressions": [{"expression": expression}]}}}


@pytest.mark.parametrize(
    ("text", "target", "expected"),
    [
        # Go kind "Pod" is the rule for the six controllers, "Cronjob" the CronJob rule
        pytest.param("request.object.spec", "controllers", "request.object.spec.template.spec", id="go-object-spec-pod"),
        pytest.param("request.oldObject.spec", "controllers", "request.oldObject.spec.template.spec",
                     id="go-oldobject-spec-pod"),
        pytest.param("request.object.spec", "CronJob", "request.object.spec.jobTemplate.spec.template.spec",
                     id="go-object-spec-cronjob"),
        pytest.param("request.oldObject.spec", "CronJob", "request.oldObject.spec.jobTemplate.spec.template.spec",
                     id="go-oldobject-spec-cronjob"),
        pytest.param("request.object.metadata", "controllers", "request.object.spec.template.metadata",
                     id="go-object-metadata-pod"),
    ],
)
def test_update_gen_rule_byte(text: str, target: str, expected: str) -> None:
    generated = generate_rule(_deny_rule(text), frozenset(ALL), target)
    assert generated is not None
    assert generated["validate"]["deny"]["conditions"]["any"][0]["key"] == expected


@pytest.mark.parametrize(
    ("text", "target", "expected"),
    [
        pytest.param("object.spec", "controllers", "object.spec.template.spec", id="go-object-spec-pod"),
        pytest.param("oldObject.spec", "controllers", "oldObject.spec.template.spec", id="go-oldobject-spec-pod"),
        pytest.param("object.spec", "CronJob", "object.spec.jobTemplate.spec.template.spec", id="go-object-spec-cronjob"),
        pytest.param("oldObject.spec", "CronJob", "oldObject.spec.jobTemplate.spec.template.spec",
                     id="go-oldobject-spec-cronjob"),
        pytest.param("object.metadata", "controllers", "object.spec.template.metadata", id="go-object-metadata-pod"),
    ],
)
def test_update_cel_fields(text: str, target: str, expected: str) -> None:
    generated = generate_rule(_cel_rule(text), frozenset(ALL), target)
    assert generated is not None
    assert generated["validate"]["cel"]["expressions"][0]["expression"] == expected


# -- generated rules: Test_Any, Test_All, Test_Exclude, Test_CronJob*, Test_UpdateVariablePath, Test_Deny

_HOSTPATH_MESSAGE = "Host path volumes are not allowed"
_HOSTPATH = {"=(volumes)": [{"X(hostPath)": "null"}]}


def _bind_mounts(match: dict, exclude: dict | None = None, annotations: dict | None = None) -> dict:
    """disallow_bind_mounts.yaml as each Go test edits it."""
    rule: dict = {"name": "validate-hostPath", "match": match}
    if exclude is not None:
        rule["exclude"] = exclude
    rule["validate"] = {"message": _HOSTPATH_MESSAGE, "pattern": {"spec": _HOSTPATH}}
    return _policy([rule], annotations)


def _hostpath_rule(name: str, match: dict, cronjob: bool, exclude: dict | None = None) -> dict:
    spec = {"template": {"spec": _HOSTPATH}}
    pattern = {"spec": {"jobTemplate": {"spec": spec}}} if cronjob else {"spec": spec}
    rule: dict = {"name": name, "match": match}
    if exclude is not None:
        rule["exclude"] = exclude
    rule["validate"] = {"message": _HOSTPATH_MESSAGE, "pattern": pattern}
    return rule


def _kinds(kinds: list[str]) -> dict:
    return {"resources": {"kinds": kinds}}


SELECT_SECRETS = y("""
    apiVersion: kyverno.io/v1
    kind: ClusterPolicy
    metadata: {name: select-secrets}
    spec:
      background: false
      rules:
      - name: select-secrets-from-volumes
        context:
        - name: volsecret
          apiCall:
            jmesPath: metadata.labels.foo
            method: GET
            urlPath: /api/v1/namespaces/{{request.object.metadata.namespace}}/secrets/{{request.object.spec.volumes[0].secret.secretName}}
        match: {any: [{resources: {kinds: [Pod]}}]}
        preconditions:
          all: [{key: '{{ request.operation }}', operator: Equals, value: CREATE}]
        validate:
          message: The Secret named {{request.object.spec.volumes[0].secret.secretName}} is restricted and may not be used.
          pattern: {spec: {containers: [{image: registry.domain.com/*}]}}
    """)


def _select_secrets_rule(name: str, kinds: list[str], template: str, tpl: dict) -> dict:
    return {
        "name": name,
        "context": [{"name": "volsecret", "apiCall": {
            "jmesPath": "metadata.labels.foo", "method": "GET",
            "urlPath": f"/api/v1/namespaces/{{{{request.object.spec.{template}metadata.namespace}}}}"
                       f"/secrets/{{{{request.object.spec.{template}spec.volumes[0].secret.secretName}}}}"}}],
        "match": {"any": [_kinds(kinds)]},
        "preconditions": {"all": [{"key": "{{ request.operation }}", "operator": "Equals", "value": "CREATE"}]},
        "validate": {
            "message": f"The Secret named {{{{request.object.spec.{template}spec.volumes[0].secret.secretName}}}}"
                       " is restricted and may not be used.",
            "pattern": {"spec": tpl},
        },
    }


_CONTAINERD = "/var/run/containerd/containerd.sock"
PATH_CANONICALIZE = y(r"""
    apiVersion: kyverno.io/v1
    kind: ClusterPolicy
    metadata: {name: path-canonicalize}
    spec:
      background: false
      rules:
      - name: disallow-mount-containerd-sock
        match: {any: [{resources: {kinds: [Pod]}}]}
        validate:
          foreach:
          - list: request.object.spec.volumes[]
            deny:
              conditions:
                any:
                - {key: '{{ path_canonicalize(element.hostPath.path) }}', operator: Equals, value: /var/run/containerd/containerd.sock}
                - {key: '{{ path_canonicalize(element.hostPath.path) }}', operator: Equals, value: /run/containerd/containerd.sock}
                - {key: '{{ path_canonicalize(element.hostPath.path) }}', operator: Equals, value: \var\run\containerd\containerd.sock}
    """)


def _deny_foreach(name: str, kinds: list[str], template: str) -> dict:
    conditions = [{"key": "{{ path_canonicalize(element.hostPath.path) }}", "operator": "Equals", "value": value}
                  for value in (_CONTAINERD, "/run/containerd/containerd.sock", r"\var\run\containerd\containerd.sock")]
    return {"name": name, "match": {"any": [_kinds(kinds)]},
            "validate": {"foreach": [{"list": f"request.object.spec.{template}spec.volumes[]",
                                      "deny": {"conditions": {"any": conditions}}}]}}


@pytest.mark.parametrize(
    ("policy", "expected"),
    [
        # Test_Any / Test_All: the Go test adds match.any (match.all) next to the file's legacy
        # match.resources; only the any (all) filters get the controller kinds
        pytest.param(_bind_mounts({"resources": {"kinds": ["Pod"]}, "any": [_kinds(["Pod"])]}), [
            _hostpath_rule("autogen-validate-hostPath",
                           {"any": [_kinds(CONTROLLER_KINDS)], "resources": {"kinds": ["Pod"]}}, False),
            _hostpath_rule("autogen-cronjob-validate-hostPath",
                           {"any": [_kinds(CRONJOB_KINDS)], "resources": {"kinds": ["Pod"]}}, True),
        ], id="go-any"),
        pytest.param(_bind_mounts({"resources": {"kinds": ["Pod"]}, "all": [_kinds(["Pod"])]}), [
            _hostpath_rule("autogen-validate-hostPath",
                           {"all": [_kinds(CONTROLLER_KINDS)], "resources": {"kinds": ["Pod"]}}, False),
            _hostpath_rule("autogen-cronjob-validate-hostPath",
                           {"all": [_kinds(CRONJOB_KINDS)], "resources": {"kinds": ["Pod"]}}, True),
        ], id="go-all"),
        # Test_Exclude: an exclude block without kinds is copied as it is
        pytest.param(_bind_mounts(_kinds(["Pod"]), {"resources": {"namespaces": ["fake-namespce"]}}), [
            _hostpath_rule("autogen-validate-hostPath", _kinds(CONTROLLER_KINDS), False,
                           {"resources": {"namespaces": ["fake-namespce"]}}),
            _hostpath_rule("autogen-cronjob-validate-hostPath", _kinds(CRONJOB_KINDS), True,
                           {"resources": {"namespaces": ["fake-namespce"]}}),
        ], id="go-exclude"),
        # Test_CronJobOnly
        pytest.param(_bind_mounts(_kinds(["Pod"]), annotations={ANNOTATION: "CronJob"}), [
            _hostpath_rule("autogen-cronjob-validate-hostPath", _kinds(CRONJOB_KINDS), True),
        ], id="go-cronjob-only"),
        # Test_CronJob_hasExclude: exclude kinds are replaced like match kinds
        pytest.param(_bind_mounts(_kinds(["Pod"]), {"resources": {"kinds": ["Pod"], "namespaces": ["test"]}},
                                  {ANNOTATION: "CronJob"}), [
            _hostpath_rule("autogen-cronjob-validate-hostPath", _kinds(CRONJOB_KINDS), True,
                           {"resources": {"kinds": CRONJOB_KINDS, "namespaces": ["test"]}}),
        ], id="go-cronjob-has-exclude"),
        # Test_CronJobAndDeployment
        pytest.param(_bind_mounts(_kinds(["Pod"]), annotations={ANNOTATION: "CronJob,Deployment"}), [
            _hostpath_rule("autogen-validate-hostPath", _kinds(["apps/v1/Deployment"]), False),
            _hostpath_rule("autogen-cronjob-validate-hostPath", _kinds(CRONJOB_KINDS), True),
        ], id="go-cronjob-and-deployment"),
        # Test_UpdateVariablePath, on today's select-secrets.yaml (match.any, preconditions.all).
        # The old expectation left request.object.metadata of the CronJob rule at
        # spec.template.metadata; v1's cronJobReplacementRules (and spec 10.3) rewrite it to
        # spec.jobTemplate.spec.template.metadata
        pytest.param(SELECT_SECRETS, [
            _select_secrets_rule("autogen-select-secrets-from-volumes", CONTROLLER_KINDS, "template.",
                                 {"template": {"spec": {"containers": [{"image": "registry.domain.com/*"}]}}}),
            _select_secrets_rule("autogen-cronjob-select-secrets-from-volumes", CRONJOB_KINDS,
                                 "jobTemplate.spec.template.",
                                 {"jobTemplate": {"spec": {"template": {"spec": {
                                     "containers": [{"image": "registry.domain.com/*"}]}}}}}),
        ], id="go-update-variable-path"),
        # Test_Deny: foreach lists are rewritten, foreach deny conditions are element-relative
        pytest.param(PATH_CANONICALIZE, [
            _deny_foreach("autogen-disallow-mount-containerd-sock", CONTROLLER_KINDS, "template."),
            _deny_foreach("autogen-cronjob-disallow-mount-containerd-sock", CRONJOB_KINDS, "jobTemplate.spec.template."),
        ], id="go-deny"),
    ],
)
def test_generated_rules(policy: dict, expected: list[dict]) -> None:
    assert _generated(policy) == expected


# -- Test_ComputeRules / Test_PodSecurityWithNoExceptions / Test_ValidateWithCELExpressions ----------

CHECK_IMAGE = y("""
    apiVersion: kyverno.io/v1
    kind: ClusterPolicy
    metadata: {name: check-image}
    spec:
      background: false
      webhookTimeoutSeconds: 30
      failurePolicy: Fail
      rules:
      - name: check-image
        match: {resources: {kinds: [Pod]}}
        validate: {pattern: {spec: {containers: [{image: 'registry.io/*'}]}}}
    """)

# validate.failureAction "enforce" in the Go JSON is rejected by the CRD schema (Audit|Enforce)
POD_SECURITY = json.loads('{"apiVersion":"kyverno.io/v1","kind":"ClusterPolicy","metadata":{"name":"pod-security"},"spec":{"rules":[{"name":"restricted","match":{"all":[{"resources":{"kinds":["Pod"]}}]},"validate":{"failureAction":"Enforce","podSecurity":{"level":"restricted","version":"v1.24"}}}]}}')

DISALLOW_HOST_PATH = json.loads("""
{"apiVersion": "kyverno.io/v1", "kind": "ClusterPolicy", "metadata": {"name": "disallow-host-path"},
 "spec": {"background": false, "rules": [{"name": "host-path", "match": {"any": [{"resources": {"kinds": ["Pod"]}}]},
  "validate": {"failureAction": "Enforce", "cel": {"expressions": [{
    "expression": "!has(object.spec.volumes) || object.spec.volumes.all(volume, !has(volume.hostPath))",
    "message": "HostPath volumes are forbidden. The field spec.template.spec.volumes[*].hostPath must be unset."}]}}}]}}
""")


@pytest.mark.parametrize(
    ("policy", "kind", "expected"),
    [
        # Test_ComputeRules (a verifyImages rule there): computeRules(policy, "CronJob") is
        # [check-image, autogen-cronjob-check-image]
        pytest.param(CHECK_IMAGE, "CronJob", ["autogen-cronjob-check-image"], id="go-compute-rules-cronjob"),
        pytest.param(CHECK_IMAGE, "Deployment", ["autogen-check-image"], id="go-compute-rules-deployment"),
        pytest.param(CHECK_IMAGE, "Pod", ["check-image"], id="go-compute-rules-pod"),
        # Test_PodSecurityWithNoExceptions: two rules for a Deployment
        pytest.param(POD_SECURITY, "Deployment", ["autogen-restricted"], id="go-pod-security-with-no-exceptions"),
        # Test_ValidateWithCELExpressions: two rules for a DaemonSet
        pytest.param(DISALLOW_HOST_PATH, "DaemonSet", ["autogen-host-path"], id="go-validate-with-cel-expressions"),
        pytest.param(DISALLOW_HOST_PATH, "CronJob", ["autogen-cronjob-host-path"], id="cel-cronjob"),
    ],
)
def test_compute_rules(policy: dict, kind: str, expected: list[str]) -> None:
    assert [r.name for r in parse_policy(policy).rules_for(kind)] == expected


# -- the generated rules evaluated -------------------------------------------------------------------


def _workload(kind: str, pod_spec: dict) -> dict:
    api = {"CronJob": "batch/v1", "Job": "batch/v1", "ReplicationController": "v1"}.get(kind, "apps/v1")
    template = {"metadata": {"labels": {"app": "a"}}, "spec": pod_spec}
    spec = {"jobTemplate": {"spec": {"template": template}}} if kind == "CronJob" else {"template": template}
    return {"apiVersion": api, "kind": kind, "metadata": {"name": "w", "namespace": "default"}, "spec": spec}


_CONTAINER = {"name": "c", "image": "nginx"}
_HOST_PATH_SPEC = {"containers": [_CONTAINER], "volumes": [{"name": "v", "hostPath": {"path": _CONTAINERD}}]}
_PLAIN_SPEC = {"containers": [_CONTAINER], "volumes": [{"name": "v", "emptyDir": {}}]}
_OTHER_HOST_PATH_SPEC = {"containers": [_CONTAINER], "volumes": [{"name": "v", "hostPath": {"path": "/var/log"}}]}


@pytest.mark.parametrize(
    ("policy", "resource", "expected"),
    [
        # Test_Deny's policy: the rewritten foreach list reaches the pod template's volumes
        pytest.param(PATH_CANONICALIZE, _workload("Deployment", _HOST_PATH_SPEC),
                     [("autogen-disallow-mount-containerd-sock", "fail")], id="go-deny-deployment-fails"),
        pytest.param(PATH_CANONICALIZE, _workload("CronJob", _HOST_PATH_SPEC),
                     [("autogen-cronjob-disallow-mount-containerd-sock", "fail")], id="go-deny-cronjob-fails"),
        pytest.param(PATH_CANONICALIZE, _workload("StatefulSet", _OTHER_HOST_PATH_SPEC),
                     [("autogen-disallow-mount-containerd-sock", "pass")], id="go-deny-statefulset-passes"),
        # Test_Any's policy (match.any only, as the file is today)
        pytest.param(_bind_mounts({"any": [_kinds(["Pod"])]}), _workload("Job", _HOST_PATH_SPEC),
                     [("autogen-validate-hostPath", "fail")], id="go-any-job-fails"),
        pytest.param(_bind_mounts({"any": [_kinds(["Pod"])]}), _workload("CronJob", _PLAIN_SPEC),
                     [("autogen-cronjob-validate-hostPath", "pass")], id="go-any-cronjob-passes"),
        # Test_CronJobAndDeployment's annotation: no rule for a DaemonSet
        pytest.param(_bind_mounts(_kinds(["Pod"]), annotations={ANNOTATION: "CronJob,Deployment"}),
                     _workload("DaemonSet", _HOST_PATH_SPEC), [], id="go-cronjob-and-deployment-no-daemonset"),
        # Test_ValidateWithCELExpressions: the CEL expression reads the template's spec
        pytest.param(DISALLOW_HOST_PATH, _workload("DaemonSet", _HOST_PATH_SPEC),
                     [("autogen-host-path", "fail")], id="go-cel-daemonset-fails"),
        pytest.param(DISALLOW_HOST_PATH, _workload("CronJob", _PLAIN_SPEC),
                     [("autogen-cronjob-host-path", "pass")], id="go-cel-cronjob-passes"),
        # Test_PodSecurityWithNoExceptions: a plain container breaks the restricted level
        pytest.param(POD_SECURITY, _workload("Deployment", _PLAIN_SPEC),
                     [("autogen-restricted", "fail")], id="go-pod-security-deployment-fails"),
    ],
)
def test_generated_rules_evaluated(policy: dict, resource: dict, expected: list[tuple[str, str]]) -> None:
    results = evaluate_policy(parse_policy(policy), resource)
    assert [(r.rule, str(r.status)) for r in results] == expected


# -- rule.go behaviour no Go test pins down -------------------------------------------------------


def test_cronjob_rule_gives_every_filter_the_cronjob_kind() -> None:
    """generateCronJobRule's filter function sets the CronJob kind on every any/all filter, exclude
    filters included; generateRuleForControllers only rewrites the filters that name Pod."""
    policy = _bind_mounts({"any": [_kinds(["Pod"])]},
                          {"any": [{"resources": {"namespaces": ["kube-system"]}}, _kinds(["Pod"])]})
    controllers, cronjob = _generated(policy)
    assert controllers["exclude"] == {"any": [{"resources": {"namespaces": ["kube-system"]}}, _kinds(CONTROLLER_KINDS)]}
    assert cronjob["exclude"] == {"any": [{"resources": {"kinds": CRONJOB_KINDS, "namespaces": ["kube-system"]}},
                                          _kinds(CRONJOB_KINDS)]}


@pytest.mark.parametrize(
    ("exclude", "deployment", "cronjob"),
    [
        # an exclude filter with no conditions excludes nothing; in the CronJob rule it has gained
        # the CronJob kind and excludes every CronJob
        pytest.param({"any": [{"resources": {}}]}, [("autogen-validate-hostPath", "fail")], [],
                     id="empty-filter-excludes-cronjobs"),
        pytest.param({"any": [{"roles": []}]}, [("autogen-validate-hostPath", "fail")], [],
                     id="roles-written-empty-excludes-cronjobs"),
        pytest.param({"all": [{"resources": {"namespaces": ["default"]}}]}, [], [],
                     id="namespace-filter-excludes-both"),
        pytest.param({"all": [{"resources": {"namespaces": ["other"]}}]}, [("autogen-validate-hostPath", "fail")],
                     [("autogen-cronjob-validate-hostPath", "fail")], id="namespace-filter-excludes-neither"),
    ],
)
def test_cronjob_rule_exclude_filters(exclude: dict, deployment: list, cronjob: list) -> None:
    policy = parse_policy(_bind_mounts({"any": [_kinds(["Pod"])]}, exclude))
    for kind, expected in (("Deployment", deployment), ("CronJob", cronjob)):
        results = evaluate_policy(policy, _workload(kind, _HOST_PATH_SPEC))
        assert [(r.rule, str(r.status)) for r in results] == expected


def test_empty_foreach_generates_no_rule() -> None:
    """generateRule takes the foreach branch only for a non-empty list; an empty one leaves no
    sub-rule to carry over, so no rule is generated."""
    rule = {"name": "r", "match": {"any": [_kinds(["Pod"])]}, "validate": {"message": "m", "foreach": []}}
    assert can_generate(rule) is False
    assert parse_policy(_policy([rule])).rules_for("Deployment") == []


def test_declared_autogen_rules_kept_when_nothing_is_generated() -> None:
    """computeRules returns the declared rules untouched when no rule is generated for the kind
    (``len(genRules) == 0``): a declared ``autogen-`` rule is then evaluated like any other."""
    declared = {"name": "autogen-check-team", "match": {"any": [_kinds(["Deployment"])]},
                "validate": {"pattern": {"metadata": {"labels": {"team": "?*"}}}}}
    policy = parse_policy(_policy([declared]))
    results = evaluate_policy(policy, _workload("Deployment", _PLAIN_SPEC))
    assert [(r.rule, str(r.status)) for r in results] == [("autogen-check-team", "fail")]
