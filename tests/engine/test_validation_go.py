"""Kyverno's end-to-end validation tests, as table rows against this engine.

Sources (kyverno/kyverno): ``pkg/engine/validation_test.go`` (policy + resource + expected rule statuses
and messages) and ``pkg/engine/handlers/validation/validate_resource_test.go``. Each row keeps the Go
test's policy and resource; numbers are floats, as the CLI decodes JSON.

Rows are adapted where the project's spec follows current Kyverno rather than the Go file's age:

* failure messages use current Kyverno's wording (``rule <name> failed at path``, anyPattern items
  joined by a space, spec 4.10 and 5) instead of the file's ``Rule <name> failed at path ...``;
* substitution errors carry current Kyverno's prefixes (spec 7.4): ``variable substitution failed:
  failed to resolve ...`` and ``failed to check deny conditions: ...``;
* ``Test_EmptyStringInDenyCondition`` only asserts "not successful": a missing annotation is an
  unresolvable variable, hence ``error`` (spec 7.4);
* the Go engine tests skip policy validation; policies that current Kyverno rejects (kind-less
  match, ``element`` outside foreach, spec 1.7) are asserted invalid, and the kind-less ones are also
  run with ``kinds: [Pod]`` added.

Go's ``store.SetContext`` rule values (the CLI's values file) become ``Values.rule_values``; an admission
request becomes a ``Request`` with its operation and user info, and the request's object (or old object
for DELETE) is the resource.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import pytest

from scanner.engine.environment import make_environment
from scanner.engine.evaluate import evaluate_policy
from scanner.engine.match import Request, UserInfo
from scanner.engine.policy import InvalidPolicyError, parse_policy
from scanner.engine.values import Values


def load(text: str) -> Any:
    return json.loads(text, parse_int=float)


@dataclass
class Case:
    policy: str
    resource: str
    # (rule, status, message or None); status may be a tuple of accepted statuses
    expected: list[tuple[str, Any, str | None]]
    operation: str = "CREATE"
    user: UserInfo | None = None
    rule_values: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    # only the listed rules are checked (the others depend on an old object offline runs cannot have)
    partial: bool = False


def run(case: Case) -> list[tuple[str, str, str]]:
    env = make_environment(values=Values(rule_values=case.rule_values))
    request = Request(operation=case.operation, user=case.user)
    results = evaluate_policy(parse_policy(load(case.policy)), load(case.resource), request, env=env)
    return [(r.rule, str(r.status), r.message) for r in results]


def check(case: Case) -> None:
    got = run(case)
    if case.partial:
        got = [g for g in got if g[0] in {e[0] for e in case.expected}]
    assert [g[0] for g in got] == [e[0] for e in case.expected], got
    for (rule, status, message), (_, want_status, want_message) in zip(got, case.expected, strict=True):
        accepted = want_status if isinstance(want_status, tuple) else (want_status,)
        assert status in accepted, (rule, status, message)
        if want_message is not None:
            assert message == want_message, rule


def cpol(name: str, rules: str, spec: str = "") -> str:
    """A ClusterPolicy wrapper around the Go test's rules (written as JSON, as in Go)."""
    extra = f"{spec}, " if spec else ""
    return f'{{"apiVersion": "kyverno.io/v1", "kind": "ClusterPolicy", "metadata": {{"name": "{name}"}}, ' \
           f'"spec": {{{extra}"rules": {rules}}}}}'


POD = '"match": {"resources": {"kinds": ["Pod"]}}'
DEPLOYMENT = '"match": {"resources": {"kinds": ["Deployment"]}}'

# -- pkg/engine/validation_test.go: patterns and anchors ------------------------------------------

IMAGE_POD = """{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "myapp-pod", "labels": {"app": "myapp"}},
  "spec": {"containers": [{"name": "nginx", "image": "nginx:latest", "imagePullPolicy": "Always"}]}}"""


def image_policy(pull_policy: str) -> str:
    return cpol("validate-image", f"""[
      {{"name": "validate-tag", {POD}, "validate": {{"message": "An image tag is required",
        "pattern": {{"spec": {{"containers": [{{"image": "*:*"}}]}}}}}}}},
      {{"name": "validate-latest", {POD}, "validate": {{"message": "imagePullPolicy 'Always' required with tag 'latest'",
        "pattern": {{"spec": {{"containers": [{{"(image)": "*latest", "imagePullPolicy": "{pull_policy}"}}]}}}}}}}}]""")


HOST_PATH_POD = """{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "image-with-hostpath",
  "labels": {"app.type": "prod", "namespace": "my-namespace"}},
  "spec": {"containers": [{"name": "image-with-hostpath", "image": "docker.io/nautiker/curl",
    "volumeMounts": [{"name": "var-lib-etcd", "mountPath": "/var/lib"}]}],
    "volumes": [{"name": "var-lib-etcd", %s}]}}"""

HOST_PATH_POLICY = cpol("validate-host-path", f"""[{{"name": "validate-host-path", {POD}, "validate": {{
  "message": "Host path '/var/lib/' is not allowed",
  "pattern": {{"spec": {{"volumes": [{{%s"=(hostPath)": {{"path": "!/var/lib"}}}}]}}}}}}}}]""")

NEGATION_POLICY = cpol("validate-host-path", f"""[{{"name": "validate-host-path", {POD}, "validate": {{
  "message": "Host path is not allowed", "pattern": {{"spec": {{"volumes": [{{"name": "*", "X(hostPath)": null}}]}}}}}}}}]""")

NON_ROOT_POLICY = cpol("policy-secaas-k8s", f"""[{{"name": "pod rule 2", {POD}, "validate": {{
  "message": "pod: validate run as non root user", "pattern": {{"spec": {{"=(securityContext)": {{"runAsNonRoot": true}}}}}}}}}}]""")


def v1_pod(spec_extra: str = "", name: str = "myapp-pod", labels: str = '{"app": "v1"}') -> str:
    extra = f", {spec_extra}" if spec_extra else ""
    return f"""{{"apiVersion": "v1", "kind": "Pod", "metadata": {{"name": "{name}", "labels": {labels}}},
      "spec": {{"containers": [{{"name": "nginx", "image": "nginx"}}]{extra}}}}}"""


def supplemental_policy(pattern: str) -> str:
    return cpol("policy-secaas-k8s", f"""[{{"name": "pod rule 2", {POD}, "validate": {{
      "message": "pod: validate run as non root user", "pattern": {{"spec": {{"=(supplementalGroups)": {pattern}}}}}}}}}]""")


def containers_anchor_policy(anchor: str) -> str:
    return cpol("policy-secaas-k8s", f"""[{{"name": "pod image rule", {POD}, "validate": {{
      "pattern": {{"spec": {{"{anchor}(containers)": [{{"name": "nginx"}}]}}}}}}}}]""")


def named_containers_pod(*names: str) -> str:
    containers = ", ".join(f'{{"name": "{n}"}}' for n in names)
    return f"""{{"apiVersion": "v1", "kind": "Pod", "metadata": {{"name": "myapp-pod", "labels": {{"app": "v1"}}}},
      "spec": {{"containers": [{containers}]}}}}"""


PATTERN_CASES = [
    pytest.param(Case(image_policy("NotPresent"), IMAGE_POD, [
        ("validate-tag", "pass", "validation rule 'validate-tag' passed."),
        ("validate-latest", "fail", "validation error: imagePullPolicy 'Always' required with tag 'latest'. "
                                    "rule validate-latest failed at path /spec/containers/0/imagePullPolicy/"),
    ]), id="TestValidate_image_tag_fail"),
    pytest.param(Case(image_policy("Always"), IMAGE_POD, [
        ("validate-tag", "pass", "validation rule 'validate-tag' passed."),
        ("validate-latest", "pass", "validation rule 'validate-latest' passed."),
    ]), id="TestValidate_image_tag_pass"),
    pytest.param(Case(
        cpol("validate-namespace", f"""[{{"name": "check-default-namespace", {POD}, "validate": {{
          "message": "A namespace is required",
          "anyPattern": [{{"metadata": {{"namespace": "?*"}}}}, {{"metadata": {{"namespace": "!default"}}}}]}}}}]"""),
        """{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "myapp-pod", "labels": {"app": "myapp"}},
          "spec": {"containers": [{"name": "nginx", "image": "nginx"}]}}""",
        [("check-default-namespace", "fail",
          "validation error: A namespace is required. rule check-default-namespace[0] failed at path "
          "/metadata/namespace/ rule check-default-namespace[1] failed at path /metadata/namespace/")],
    ), id="TestValidate_Fail_anyPattern"),
    pytest.param(Case(
        cpol("validate-host-network-port", f"""[{{"name": "validate-host-network-port", {POD}, "validate": {{
          "message": "Host network and port are not allowed",
          "pattern": {{"spec": {{"hostNetwork": false, "containers": [{{"name": "*", "ports": [{{"hostPort": null}}]}}]}}}}}}}}]"""),
        """{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "nginx-host-network"},
          "spec": {"hostNetwork": false, "containers": [{"name": "nginx-host-network", "image": "nginx",
            "ports": [{"containerPort": 80, "hostPort": 80}]}]}}""",
        [("validate-host-network-port", "fail", "validation error: Host network and port are not allowed. "
          "rule validate-host-network-port failed at path /spec/containers/0/ports/0/hostPort/")],
    ), id="TestValidate_host_network_port"),
    pytest.param(Case(HOST_PATH_POLICY % '"name": "*", ', HOST_PATH_POD % '"hostPath": {"path": "/var/lib1"}',
                      [("validate-host-path", "pass", "validation rule 'validate-host-path' passed.")]),
                 id="TestValidate_anchor_arraymap_pass"),
    pytest.param(Case(HOST_PATH_POLICY % "", HOST_PATH_POD % '"hostPath": {"path": "/var/lib"}', [
        ("validate-host-path", "fail", "validation error: Host path '/var/lib/' is not allowed. "
                                       "rule validate-host-path failed at path /spec/volumes/0/hostPath/path/"),
    ]), id="TestValidate_anchor_arraymap_fail"),
    pytest.param(Case(NON_ROOT_POLICY, v1_pod(), [("pod rule 2", "pass", "validation rule 'pod rule 2' passed.")]),
                 id="TestValidate_anchor_map_notfound"),
    pytest.param(Case(NON_ROOT_POLICY, v1_pod('"securityContext": {"runAsNonRoot": true}'),
                      [("pod rule 2", "pass", "validation rule 'pod rule 2' passed.")]),
                 id="TestValidate_anchor_map_found_valid"),
    pytest.param(Case(supplemental_policy('">0"'), v1_pod('"supplementalGroups": ["2", "5", "10"]'),
                      [("pod rule 2", "pass", "validation rule 'pod rule 2' passed.")]),
                 id="TestValidate_inequality_List_Processing"),
    pytest.param(Case(supplemental_policy('[">0 & <100001"]'),
                      v1_pod('"supplementalGroups": ["2", "5", "10", "100", "10000", "1000", "543"]'),
                      [("pod rule 2", "pass", "validation rule 'pod rule 2' passed.")]),
                 id="TestValidate_inequality_List_ProcessingBrackets"),
    pytest.param(Case(NON_ROOT_POLICY, v1_pod('"securityContext": {"runAsNonRoot": false}'), [
        ("pod rule 2", "fail", "validation error: pod: validate run as non root user. "
                               "rule pod rule 2 failed at path /spec/securityContext/runAsNonRoot/"),
    ]), id="TestValidate_anchor_map_found_invalid"),
    pytest.param(Case(containers_anchor_policy("="), named_containers_pod("nginx", "nginx"),
                      [("pod image rule", "pass", "validation rule 'pod image rule' passed.")]),
                 id="TestValidate_AnchorList_pass"),
    pytest.param(Case(containers_anchor_policy("="), named_containers_pod("nginx", "busy"),
                      [("pod image rule", "fail", None)]),
                 id="TestValidate_AnchorList_fail"),
    pytest.param(Case(containers_anchor_policy("^"), named_containers_pod("busy1", "busy"),
                      [("pod image rule", "fail", None)]),
                 id="TestValidate_existenceAnchor_fail"),
    pytest.param(Case(containers_anchor_policy("^"), named_containers_pod("nginx", "busy"),
                      [("pod image rule", "pass", "validation rule 'pod image rule' passed.")]),
                 id="TestValidate_existenceAnchor_pass"),
    pytest.param(Case(NEGATION_POLICY, HOST_PATH_POD % '"hostPath": {"path": "/var/lib1"}', [
        ("validate-host-path", "fail", "validation error: Host path is not allowed. "
                                       "rule validate-host-path failed at path /spec/volumes/0/hostPath/"),
    ]), id="TestValidate_negationAnchor_deny"),
    pytest.param(Case(NEGATION_POLICY, HOST_PATH_POD % '"emptyDir": {}',
                      [("validate-host-path", "pass", "validation rule 'validate-host-path' passed.")]),
                 id="TestValidate_negationAnchor_pass"),
]


@pytest.mark.parametrize("case", PATTERN_CASES)
def test_patterns_and_anchors(case: Case) -> None:
    check(case)


# -- pkg/engine/validation_test.go: variables in patterns, messages and deny ----------------------

DEPLOY_CONTAINER = """{"apiVersion": "v1", "kind": "Deployment", "metadata": {"name": "test"},
  "spec": {"template": {"spec": {"containers": [{"name": "%s", "image": "nginxinc/nginx-unprivileged"}]}}}}"""


def container_name_any_pattern(first: str, second: str) -> str:
    def pattern(var: str) -> str:
        return f'{{"spec": {{"template": {{"spec": {{"containers": [{{"name": "{{{{request.object.metadata.{var}}}}}*"}}]}}}}}}}}'
    return cpol("substitute-variable", f"""[{{"name": "test-path-not-exist", {DEPLOYMENT},
      "validate": {{"anyPattern": [{pattern(first)}, {pattern(second)}]}}}}]""")


NAME1_ERROR = ('variable substitution failed: failed to resolve request.object.metadata.name1 at path '
               '/0/spec/template/spec/containers/0/name: JMESPath query failed: Unknown key "name1" in path')

FLUX_RULES = """[{"name": "serviceAccountName", "exclude": {"resources": {"namespaces": ["flux-system"]}},
  "match": {"resources": {"kinds": ["Kustomization", "HelmRelease"]}},
  "validate": {"message": ".spec.serviceAccountName is required", "pattern": {"spec": {"serviceAccountName": "?*"}}}},
 {"name": "sourceRefNamespace", "exclude": {"resources": {"namespaces": ["flux-system"]}},
  "match": {"resources": {"kinds": ["Kustomization", "HelmRelease"]}},
  "validate": {"message": "%s", "deny": {"conditions": [{"key": "{{request.object.spec.sourceRef.namespace}}",
    "operator": "NotEquals", "value": "{{request.object.metadata.namespace}}"}]}}}]"""
FLUX_MESSAGE = "spec.sourceRef.namespace must be the same as metadata.namespace"
FLUX_MESSAGE_VARS = ("spec.sourceRef.namespace {{request.object.spec.sourceRef.namespace}} must be the same as "
                     "metadata.namespace {{request.object.metadata.namespace}}")
FLUX_RESOURCE = """{"apiVersion": "kustomize.toolkit.fluxcd.io/v1beta1", "kind": "Kustomization",
  "metadata": {"name": "dev-team", "namespace": "apps"}, "spec": {"serviceAccountName": "dev-team", "interval": "5m",
  "sourceRef": {"kind": "GitRepository", "name": "dev-team"%s}, "prune": true, "validation": "client"}}"""


def flux_policy(message: str) -> str:
    return cpol("flux-multi-tenancy", FLUX_RULES % message, '"validationFailureAction": "enforce"')


LOAD_BALANCER_POLICY = """{"apiVersion": "kyverno.io/v1", "kind": "ClusterPolicy",
  "metadata": {"annotations": {"meta.helm.sh/release-name": "kyverno-policies", "meta.helm.sh/release-namespace": "kyverno",
    "pod-policies.kyverno.io/autogen-controllers": "none"}, "labels": {"app.kubernetes.io/managed-by": "Helm"},
    "name": "if-baltic-restrict-external-load-balancer"},
  "spec": {"background": true, "rules": [{"match": {"resources": {"kinds": ["Service"]}}, "name": "match-service-type",
    "preconditions": [{"key": "{{request.object.spec.type}}", "operator": "Equals", "value": "LoadBalancer"}],
    "validate": {"deny": {"conditions": [{"key":
      "{{ request.object.metadata.annotations.\\"service.beta.kubernetes.io/azure-load-balancer-internal\\"}}",
      "operator": "NotEquals", "value": "true"}]}}}], "validationFailureAction": "enforce"}}"""
LOAD_BALANCER_SERVICE = """{"apiVersion": "v1", "kind": "Service", "metadata": {"name": "example-service"%s},
  "spec": {"selector": {"app": "example"}, "ports": [{"port": 8765, "targetPort": 9376}], "type": "LoadBalancer"}}"""

VARIABLE_CASES = [
    pytest.param(Case(
        cpol("substitute-variable", f"""[{{"name": "test-path-not-exist", {POD}, "validate": {{
          "pattern": {{"spec": {{"containers": [{{"name": "{{{{request.object.metadata.name1}}}}*"}}]}}}}}}}}]"""),
        """{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "check-root-user"},
          "spec": {"containers": [{"name": "check-root-user-a", "image": "nginxinc/nginx-unprivileged",
            "securityContext": {"runAsNonRoot": true}}]}}""",
        [("test-path-not-exist", "error", 'variable substitution failed: failed to resolve '
          'request.object.metadata.name1 at path /spec/containers/0/name: JMESPath query failed: Unknown key "name1" in path')],
    ), id="Test_VariableSubstitutionPathNotExistInPattern"),
    pytest.param(Case(container_name_any_pattern("name1", "name"), DEPLOY_CONTAINER % "test-pod",
                      [("test-path-not-exist", "error", NAME1_ERROR)]),
                 id="Test_VariableSubstitutionPathNotExistInAnyPattern_OnePatternStatisfiesButSubstitutionFails"),
    pytest.param(Case(
        cpol("substitute-variable", f"""[{{"name": "not-operator-with-variable-should-alway-fail-validation",
          {DEPLOYMENT}, "validate": {{"pattern": {{"spec": {{"content": "!{{{{ request.object.spec.content }}}}"}}}}}}}}]"""),
        """{"apiVersion": "v1", "kind": "Deployment", "metadata": {"name": "test"}, "spec": {"content": "sample text"}}""",
        [("not-operator-with-variable-should-alway-fail-validation", "fail",
          "validation error: rule not-operator-with-variable-should-alway-fail-validation failed at path /spec/content/")],
    ), id="Test_VariableSubstitution_NotOperatorWithStringVariable"),
    pytest.param(Case(container_name_any_pattern("name1", "name2"), DEPLOY_CONTAINER % "test-pod",
                      [("test-path-not-exist", "error", NAME1_ERROR)]),
                 id="Test_VariableSubstitutionPathNotExistInAnyPattern_AllPathNotPresent"),
    pytest.param(Case(container_name_any_pattern("name", "name"), DEPLOY_CONTAINER % "pod-test-pod", [
        ("test-path-not-exist", "fail", "validation error: rule test-path-not-exist[0] failed at path "
         "/spec/template/spec/containers/0/name/ rule test-path-not-exist[1] failed at path "
         "/spec/template/spec/containers/0/name/"),
    ]), id="Test_VariableSubstitutionPathNotExistInAnyPattern_AllPathPresent_NonePatternSatisfy"),
    pytest.param(Case(
        cpol("cm-array-example", f"""[{{"name": "validate-role-annotation", {DEPLOYMENT}, "validate": {{
          "message": "The animal {{{{ request.object.metadata.labels.animal }}}} is not in the allowed list of animals.",
          "deny": {{"conditions": [{{"key": "{{{{ request.object.metadata.labels.animal }}}}", "operator": "NotIn",
            "value": ["snake", "bear", "cat", "dog"]}}]}}}}}}]""",
             '"validationFailureAction": "enforce", "background": false'),
        """{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "busybox", "labels": {"app": "busybox",
          "color": "red", "animal": "cow", "food": "pizza", "car": "jeep", "env": "qa"}},
          "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "busybox"}},
            "template": {"metadata": {"labels": {"app": "busybox"}}, "spec": {"containers": [
              {"image": "busybox:1.28", "name": "busybox", "command": ["sleep", "9999"]}]}}}}""",
        [("validate-role-annotation", "fail", "The animal cow is not in the allowed list of animals.")],
    ), id="Test_VariableSubstitutionValidate_VariablesInMessageAreResolved"),
    pytest.param(Case(flux_policy(FLUX_MESSAGE), FLUX_RESOURCE % "", [
        ("serviceAccountName", "pass", "validation rule 'serviceAccountName' passed."),
        ("sourceRefNamespace", "error", "failed to check deny conditions: failed to substitute variables in "
         'condition key: failed to resolve request.object.spec.sourceRef.namespace at path : '
         'JMESPath query failed: Unknown key "namespace" in path'),
    ]), id="Test_Flux_Kustomization_PathNotPresent-path-not-present"),
    pytest.param(Case(flux_policy(FLUX_MESSAGE_VARS), FLUX_RESOURCE % ', "namespace": "default"', [
        ("serviceAccountName", "pass", "validation rule 'serviceAccountName' passed."),
        ("sourceRefNamespace", "fail", "spec.sourceRef.namespace default must be the same as metadata.namespace apps"),
    ]), id="Test_Flux_Kustomization_PathNotPresent-resource-with-violation"),
    pytest.param(Case(flux_policy(FLUX_MESSAGE), FLUX_RESOURCE % ', "namespace": "apps"', [
        ("serviceAccountName", "pass", "validation rule 'serviceAccountName' passed."),
        ("sourceRefNamespace", "pass", "validation rule 'sourceRefNamespace' passed."),
    ]), id="Test_Flux_Kustomization_PathNotPresent-resource-comply"),
    pytest.param(Case(
        cpol("restrict-pod-count", f"""[{{"name": "restrict-pod-count", {POD},
          "context": [{{"name": "podcounts", "apiCall": {{"urlPath": "/api/v1/pods",
            "jmesPath": "items[?spec.nodeName=='minikube'] | length(@)"}}}}],
          "validate": {{"message": "restrict pod counts to be no more than 10 on node minikube",
            "deny": {{"conditions": [{{"key": "{{{{ podcounts }}}}", "operator": "GreaterThanOrEquals", "value": 10}}]}}}}}}]""",
             '"validationFailureAction": "enforce", "background": false'),
        """{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "nginx-config-test"},
          "spec": {"containers": [{"image": "nginx:latest", "name": "test-nginx"}]}}""",
        [("restrict-pod-count", "fail", "restrict pod counts to be no more than 10 on node minikube")],
        rule_values={"restrict-pod-count": {"restrict-pod-count": {"podcounts": "12"}}},
    ), id="TestValidate_context_variable_substitution_CLI"),
    pytest.param(Case(LOAD_BALANCER_POLICY, LOAD_BALANCER_SERVICE % "",
                      [("match-service-type", ("fail", "error"), None)]),
                 id="Test_EmptyStringInDenyCondition"),
    pytest.param(Case(LOAD_BALANCER_POLICY, LOAD_BALANCER_SERVICE % (
        ', "annotations": {"service.beta.kubernetes.io/azure-load-balancer-internal": "true"}'),
        [("match-service-type", "pass", None)]), id="Test_StringInDenyCondition"),
]


@pytest.mark.parametrize("case", VARIABLE_CASES)
def test_variables_messages_and_deny(case: Case) -> None:
    check(case)


# -- pkg/engine/validation_test.go and handlers/validation/validate_resource_test.go: foreach ----

def deployment(*containers: tuple[str, str]) -> str:
    items = ", ".join(f'{{"name": "{n}", "image": "{i}"}}' for n, i in containers)
    return f"""{{"apiVersion": "v1", "kind": "Deployment", "metadata": {{"name": "test"}},
      "spec": {{"template": {{"spec": {{"containers": [{items}]}}}}}}}}"""


THREE = [("pod1-valid", "nginx/nginx:v1"), ("pod2-invalid", "nginx/nginx:v2"), ("pod3-valid", "nginx/nginx:v3")]
CONTAINERS = '"list": "request.object.spec.template.spec.containers"'
NAME_PATTERN = f'[{{{CONTAINERS}, "pattern": {{"name": "*-valid"}}}}]'


def deny_foreach(function: str, subject: str) -> str:
    return (f'[{{{CONTAINERS}, "deny": {{"conditions": [{{"key": "{{{{ {function}(\'{{{{{subject}}}}}\', '
            f'\'docker.io\') }}}}", "operator": "Equals", "value": false}}]}}}}]')


def foreach_rule(name: str, foreach: str, match: str = DEPLOYMENT, message: str = "") -> str:
    msg = f'"message": "{message}", ' if message else ""
    return f'[{{"name": "{name}", {match}, "validate": {{{msg}"foreach": {foreach}}}}}]'


def config_map_foreach(allowed: str) -> str:
    return f"""[{{{CONTAINERS}, "context": [{{"name": "img", "configMap": {{"name": "mycmap", "namespace": "default"}}}}],
      "preconditions": {{"all": [{{"key": "{{{{element.name}}}}", "operator": "In", "value": {allowed}}}]}},
      "deny": {{"conditions": [{{"key": "{{{{ element.image }}}}", "operator": "NotEquals",
        "value": "{{{{ img.data.{{{{ element.name }}}} }}}}"}}]}}}}]"""


ENFORCE_NO_BACKGROUND = '"validationFailureAction": "enforce", "background": false'
TWO_NGINX = """{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "nginx"},
  "spec": {"containers": [{"name": "nginx1", "image": "nginx"}, {"name": "nginx2", "image": "nginx"}]}}"""

# handlers/validation/validate_resource_test.go
HANDLER_POD = """{"apiVersion": "v1", "kind": "Pod", "metadata": {"annotations": {},
  "labels": {"kubernetes.io/metadata.name": "test", "size": "large"}, "name": "test"},
  "spec": {"containers": [
    {"image": "ghcr.io/test-webserver", "name": "test1", "volumeMounts": [{"mountPath": "/tmp/cache", "name": "cache-volume"}]},
    {"image": "ghcr.io/test-webserver", "name": "test2", "volumeMounts": [{"mountPath": "/tmp/cache", "name": "cache-volume"},
      {"mountPath": "/gce", "name": "gce"}]}],
    "volumes": [{"name": "cache-volume", "emptyDir": {}}, {"name": "gce", "gcePersistentDisk": {}}]}}"""
HANDLER_MATCH = '"match": {"any": [{"resources": {"kinds": ["Pod"]}}]}'

FOREACH_CASES = [
    pytest.param(Case(cpol("test", foreach_rule("test-path-not-exist", NAME_PATTERN)),
                      deployment(*[(n.replace("invalid", "valid"), i) for n, i in THREE]),
                      [("test-path-not-exist", "pass", None)]), id="Test_foreach_container_pass"),
    pytest.param(Case(cpol("test", foreach_rule("test", NAME_PATTERN)), deployment(*THREE),
                      [("test", "fail", None)]), id="Test_foreach_container_fail"),
    pytest.param(Case(cpol("test", foreach_rule("test", deny_foreach("regex_match", "element.image"))),
                      deployment(THREE[0], ("pod2-invalid", "docker.io/nginx/nginx:v2"), THREE[2]),
                      [("test", "fail", None)]), id="Test_foreach_container_deny_fail"),
    pytest.param(Case(cpol("test", foreach_rule("test", deny_foreach("regex_match", "element.image"))),
                      deployment(*THREE), [("test", "fail", None)]), id="Test_foreach_container_deny_success"),
    pytest.param(Case(cpol("test", foreach_rule("test", deny_foreach("regex_match_INVALID", "request.object.image"))),
                      deployment(*THREE), [("test", "error", None)]), id="Test_foreach_container_deny_error"),
    pytest.param(Case(cpol("test", foreach_rule("test", config_map_foreach('["podvalid"]'))),
                      deployment(("podvalid", "nginx/nginx:v1"), ("podinvalid", "nginx/nginx:v2")),
                      [("test", "pass", None)],
                      rule_values={"test": {"test": {"img.data.podvalid": "nginx/nginx:v1",
                                                     "img.data.podinvalid": "nginx/nginx:v2"}}}),
                 id="Test_foreach_context_preconditions"),
    pytest.param(Case(cpol("test", foreach_rule("test", config_map_foreach('["podvalid", "podinvalid"]'))),
                      deployment(("podvalid", "nginx/nginx:v1"), ("podinvalid", "nginx/nginx:v2")),
                      [("test", "fail", None)],
                      rule_values={"test": {"test": {"img.data.podvalid": "nginx/nginx:v1",
                                                     "img.data.podinvalid": "nginx/nginx:v1"}}}),
                 id="Test_foreach_context_preconditions_fail"),
    pytest.param(Case(
        cpol("check-container-names", foreach_rule(
            "test", '[{"list": "request.object.spec.containers", "pattern": {"name": "{{ element.name }}"}}]',
            POD, "Invalid name"), ENFORCE_NO_BACKGROUND),
        TWO_NGINX, [("test", "pass", None)]), id="Test_foreach_element_validation"),
    pytest.param(Case(
        cpol("check-images", foreach_rule("check-registry", f"""[
          {{{CONTAINERS}, "pattern": {{"image": "nginx"}}}},
          {{"list": "request.object.spec.template.spec..initContainers", "pattern": {{"image": "trusted-registry.io/*"}}}}]""",
                                          message="unknown registry"), ENFORCE_NO_BACKGROUND),
        deployment(("podvalid", "nginx")), [("check-registry", "pass", None)]),
        id="Test_foreach_skip_initContainer_pass"),
    pytest.param(Case(
        cpol("validate-image-list", f"""[{{{HANDLER_MATCH}, "name": "check-image", "validate": {{
          "failureAction": "Enforce", "allowExistingViolations": true, "message": "images must begin with ghcr.io",
          "foreach": [{{"deny": {{"conditions": {{"all": [{{"key": "{{{{ element }}}}", "operator": "NotEquals",
            "value": "ghcr.io"}}]}}}}, "list": "request.object.spec.containers[].image"}}]}}}}]""",
             '"admission": true, "background": true'),
        HANDLER_POD, [("check-image", "skip", None)], operation="UPDATE"), id="Test_validateOldObjectForeach"),
    pytest.param(Case(
        cpol("test-invalid-list", f"""[{{"name": "invalid-list-rule", {HANDLER_MATCH}, "validate": {{
          "failureAction": "Enforce", "foreach": [{{"list": "invalid_jmespath_expression[",
            "deny": {{"conditions": {{"all": [{{"key": "{{{{ element }}}}", "operator": "Equals", "value": "test"}}]}}}}}}]}}}}]"""),
        HANDLER_POD, [("invalid-list-rule", "error", None)]), id="Test_validateForEach_ListEvalError_ReturnsError"),
]


@pytest.mark.parametrize("case", FOREACH_CASES)
def test_foreach(case: Case) -> None:
    check(case)


# -- admission requests: operations, old objects and user info ------------------------------------
# The Go tests match on a label selector or namespace alone; current Kyverno rejects a kind-less match
# (spec 1.7, see test_go_policies_rejected_by_policy_validation), so these rows add ``kinds: [Pod]``.

def pod_request(labels: str, namespace: str = "default") -> str:
    return f"""{{"kind": "Pod", "apiVersion": "v1", "metadata": {{"name": "hello-world", "namespace": "{namespace}",
      "labels": {labels}}}, "spec": {{"containers": [{{"name": "hello-world", "image": "hello-world:latest",
      "ports": [{{"containerPort": 80, "protocol": "TCP"}}]}}]}}}}"""


def with_kinds(resources: str, kinds: bool) -> str:
    return resources.replace("{", '{"kinds": ["Pod"], ', 1) if kinds else resources


def label_deny_policy(name: str, rule: str, label: str, message: str, operator: str, operation: str,
                      kinds: bool = True) -> str:
    resources = with_kinds(f'{{"selector": {{"matchLabels": {{"{label}": "false"}}}}}}', kinds)
    return cpol(name, f"""[{{"name": "{rule}", "match": {{"resources": {resources}}},
      "exclude": {{"clusterRoles": ["random"]}}, "validate": {{"message": "{message}",
      "deny": {{"conditions": {{"all": [{{"key": "{{{{request.operation}}}}", "operator": "{operator}",
        "value": "{operation}"}}]}}}}}}}}]""", ENFORCE_NO_BACKGROUND)


def deny_all_policy(kinds: bool = True) -> str:
    resources = with_kinds('{"namespaces": ["kube-system"]}', kinds)
    return cpol("block-request", f'[{{"name": "block-request", "match": {{"resources": {resources}}}, '
                                 '"validate": {"deny": {}}}]', '"validationFailureAction": "enforce"')


def field_update_policy(kinds: bool = True) -> str:
    resources = with_kinds('{"selector": {"matchLabels": {"allow-updates": "false"}}}', kinds)
    return cpol("prevent-field-update-failure", f"""[{{"name": "prevent-field-update", "match": {{"resources": {resources}}},
      "validate": {{"message": "Updating field label 'something' is not allowed", "deny": {{"conditions": {{"all": [
        {{"key": "{{{{request.object.metadata.labels.something}}}}", "operator": "NotEqual", "value": ""}},
        {{"key": "{{{{request.object.metadata.labels.something}}}}", "operator": "NotEquals",
         "value": "{{{{request.oldObject.metadata.labels.something}}}}"}}]}}}}}}}}]""", ENFORCE_NO_BACKGROUND)


BLOCK_UPDATES = ("check-allow-updates", "allow-updates",
                 "Updating {{request.object.kind}} / {{request.object.metadata.name}} is not allowed", "Equals", "UPDATE")
BLOCK_DELETES = ("check-allow-deletes", "allow-deletes",
                 "Deleting {{request.oldObject.kind}} / {{request.oldObject.metadata.name}} is not allowed", "Equal", "DELETE")
KUBELET = UserInfo(username="kubernetes-admin", groups=("system:authenticated",),
                   roles=("kube-system:kubeadm:kubelet-config-1.17", "kube-system:kubeadm:nodes-kubeadm-config"),
                   cluster_roles=("system:basic-user", "system:public-info-viewer", "system:discovery"))
ADMIN = UserInfo(username="kubernetes-admin", groups=("system:masters", "system:authenticated"),
                 cluster_roles=("cluster-admin", "system:basic-user", "system:discovery", "system:public-info-viewer"))
SIZE_RULES = """[{"name": "require-labels", "match": {"all": [{"resources": {"operations": ["CREATE", "UPDATE"],
    "kinds": ["Pod"]}}]}, "validate": {"failureAction": "Enforce", "message": "The label size is required",
    "pattern": {"metadata": {"labels": {"size": "small | medium | large"}}}}},
  {"name": "check-mutable-labels", "match": {"all": [{"resources": {"operations": ["UPDATE"], "kinds": ["Pod"]}}]},
    "validate": {"failureAction": "Enforce", "message": "The label size cannot be changed for a namespace",
    "deny": {"conditions": {"all": [{"key": "{{ request.object.metadata.labels.size || '' }}",
      "operator": "NotEquals", "value": "{{ request.oldObject.metadata.labels.size }}"}]}}}}]"""

# Go's executeTest only checks that denied requests are not successful; the other rows assert what
# Kyverno's engine returns for them.
ADMISSION_CASES = [
    pytest.param(Case(label_deny_policy("block-updates-success", *BLOCK_UPDATES),
                      pod_request('{"allow-updates": "false", "something": "hereeeeeseee"}'),
                      [("check-allow-updates", "fail", "Updating Pod / hello-world is not allowed")],
                      operation="UPDATE", user=KUBELET),
                 id="Test_denyFeatureIssue744_BlockUpdate-success"),
    pytest.param(Case(label_deny_policy("block-updates-failure", *BLOCK_DELETES),
                      pod_request('{"allow-updates": "false", "something": "hereeeeeseee"}'), [], user=ADMIN),
                 id="Test_denyFeatureIssue744_BlockUpdate-failure"),
    pytest.param(Case(deny_all_policy(), pod_request('{"allow-updates": "false", "something": "existes"}'), [],
                      operation="UPDATE", user=ADMIN),
                 id="Test_denyFeatureIssue744_DenyAll"),
    pytest.param(Case(field_update_policy(), pod_request("{}", "kube-system"), [], user=ADMIN),
                 id="Test_denyFeatureIssue744_BlockFields-failure"),
    pytest.param(Case(label_deny_policy("block-deletes-success", *BLOCK_DELETES),
                      pod_request('{"allow-deletes": "false"}'),
                      [("check-allow-deletes", "fail", "Deleting Pod / hello-world is not allowed")],
                      operation="DELETE", user=ADMIN),
                 id="Test_denyFeatureIssue744_BlockDelete-success"),
    pytest.param(Case(label_deny_policy("block-deletes-failure", *BLOCK_DELETES),
                      pod_request('{"allow-deletes": "false"}'),
                      [("check-allow-deletes", "pass", "validation rule 'check-allow-deletes' passed.")],
                      operation="UPDATE", user=KUBELET),
                 id="Test_denyFeatureIssue744_BlockDelete-failure"),
    pytest.param(Case(cpol("block-label-changes", SIZE_RULES, '"background": false'), HANDLER_POD,
                      [("require-labels", "pass", "validation rule 'require-labels' passed.")],
                      operation="UPDATE", partial=True),
                 id="Test_validateOldObject-require-labels"),
]


@pytest.mark.parametrize("case", ADMISSION_CASES)
def test_admission_requests(case: Case) -> None:
    check(case)


@pytest.mark.parametrize(("policy", "problem"), [
    pytest.param(label_deny_policy("block-updates-success", *BLOCK_UPDATES, kinds=False),
                 "at least one kind is required", id="Test_denyFeatureIssue744_BlockUpdate"),
    pytest.param(deny_all_policy(kinds=False), "at least one kind is required", id="Test_denyFeatureIssue744_DenyAll"),
    pytest.param(field_update_policy(kinds=False), "at least one kind is required",
                 id="Test_denyFeatureIssue744_BlockFields"),
    pytest.param(label_deny_policy("block-deletes-success", *BLOCK_DELETES, kinds=False),
                 "at least one kind is required", id="Test_denyFeatureIssue744_BlockDelete"),
    pytest.param(cpol("check-container-names", f"""[{{"name": "test", {POD}, "validate": {{"message": "Invalid name",
                   "pattern": {{"name": "{{{{ element.name }}}}"}}}}}}]""", ENFORCE_NO_BACKGROUND),
                 "variable 'element.name' present outside of foreach", id="Test_outof_foreach_element_validation"),
])
def test_go_policies_rejected_by_policy_validation(policy: str, problem: str) -> None:
    """Go's engine tests skip policy validation; Kyverno's policy validation (and so the CLI) rejects
    these policies (spec 1.7), where the Go engine would have answered ``error`` or evaluated them."""
    with pytest.raises(InvalidPolicyError, match=problem):
        parse_policy(load(policy))


DELETE_IGNORE_POLICY = cpol("check-container-labels", f"""[{{"name": "test", {POD}, "validate": {{
  "message": "Invalid label", "pattern": {{"metadata": {{"labels": {{"app.kubernetes.io/name": "myapp-pod"}}}}}}}}}}]""",
                            ENFORCE_NO_BACKGROUND)
DELETE_IGNORE_POD = """{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "nginx",
  "labels": {"app.kubernetes.io/foo": "myapp-pod"}},
  "spec": {"containers": [{"name": "nginx1", "image": "nginx"}, {"name": "nginx2", "image": "nginx"}]}}"""


@pytest.mark.parametrize(("operation", "expected"), [
    pytest.param("CREATE", [("test", "fail", None)], id="create"),
    pytest.param("DELETE", [], id="delete"),
])
def test_delete_ignore_pattern(operation: str, expected: list) -> None:
    """Test_delete_ignore_pattern: a pattern rule gives no result for a deleted resource."""
    check(Case(DELETE_IGNORE_POLICY, DELETE_IGNORE_POD, expected, operation=operation))
