"""foreach (spec 9), context entries (spec 8), deny/preconditions results (spec 6.3) and variables (7.4)."""

from __future__ import annotations

import pytest

from scanner.engine.context import ContextError, NotServed
from scanner.engine.environment import make_environment
from scanner.engine.evaluate import evaluate_policy
from scanner.engine.match import Request, UserInfo
from scanner.engine.policy import parse_policy
from scanner.engine.values import parse_values

from .conftest import y


def policy(rule_body: str, context: str = "", preconditions: str = "") -> dict:
    extra = ""
    if context:
        extra += f"\n    context: {context}"
    if preconditions:
        extra += f"\n    preconditions: {preconditions}"
    return parse_policy(y(f"""
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {{name: p}}
spec:
  background: false
  rules:
  - name: r
    match: {{any: [{{resources: {{kinds: [Pod]}}}}]}}{extra}
    validate: {rule_body}
"""))


POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "namespace": "default", "labels": {"tier": "db"}},
       "spec": {"containers": [{"name": "a", "image": "nginx:1.25", "ports": [{"containerPort": 80}]},
                               {"name": "b", "image": "evil.io/x:latest"}]}}


def run(p, resource=POD, env=None, request=None) -> list[tuple[str, str]]:
    return [(str(r.status), r.message) for r in evaluate_policy(p, resource, request, env=env)]


CASES = [
    pytest.param(policy("{foreach: [{list: request.object.spec.initContainers, deny: {conditions: [{key: x, operator: Equals, value: x}]}}]}"),
                 [], id="v27-foreach-over-missing-list-no-result"),
    pytest.param(policy("{message: 'bad image', foreach: [{list: request.object.spec.containers, "
                        "deny: {conditions: {any: [{key: '{{element.image}}', operator: Equals, value: 'evil.io/*'}]}}}]}"),
                 [("fail", "validation failure: bad image")], id="foreach-deny-fails-on-second-element"),
    pytest.param(policy("{foreach: [{list: request.object.spec.containers, pattern: {image: '!*:latest'}}]}"),
                 [("fail", "validation failure: validation error: rule r failed at path /image/")],
                 id="foreach-pattern-element-scope-paths"),
    pytest.param(policy("{foreach: [{list: request.object.spec.containers, preconditions: {all: [{key: '{{element.name}}', "
                        "operator: Equals, value: a}]}, pattern: {image: '!*:latest'}}]}"),
                 [("pass", "rule passed")], id="foreach-preconditions-filter-elements"),
    pytest.param(policy("{foreach: [{list: request.object.spec.containers, foreach: [{list: element.ports, "
                        "deny: {conditions: [{key: '{{element0.name}}-{{element.containerPort}}', operator: Equals, value: a-80}]}}]}]}"),
                 [("fail", "validation failure: validation failure: validation error: rule r failed")],
                 id="nested-foreach-outer-element-variable"),
    pytest.param(policy("{foreach: [{list: 'request.object.spec.containers[].name', elementScope: true, pattern: {x: 1}}]}"),
                 [("error", "failed to process foreach: cannot use elementScope=true foreach rules for elements "
                            "that are not maps, expected type=map got type=string")],
                 id="element-scope-on-scalars-errors"),
    pytest.param(policy("{foreach: [{list: request.object.spec.containers, foreach: [{list: 'element.ports[].containerPort', "
                        "elementScope: true, pattern: {x: 1}}]}]}"),
                 [("error", "validation failure: failed to process foreach: cannot use elementScope=true foreach rules "
                            "for elements that are not maps, expected type=map got type=float64")],
                 id="element-scope-on-scalars-in-nested-foreach-gets-one-prefix"),
    pytest.param(policy("{deny: {}}"), [("fail", "validation error: rule r failed")], id="v15-empty-deny-always-fails"),
    pytest.param(policy("{message: '{{request.object.metadata.name}} is denied', deny: {conditions: {any: [{key: '{{request.object.metadata.labels.tier}}', operator: Equals, value: db}]}}}"),
                 [("fail", "web is denied")], id="deny-message-substituted-without-prefix"),
    pytest.param(policy("{deny: {conditions: {any: [{key: '{{request.object.metadata.labels.missing}}', operator: Equals, value: x}]}}}"),
                 [("error", None)], id="deny-unknown-key-is-error"),
    pytest.param(policy("{pattern: {metadata: {name: web}}}", preconditions="{all: [{key: '{{request.object.metadata.labels.x}}', operator: Equals, value: y}]}"),
                 [("error", None)], id="v25-precondition-unknown-key-errors"),
    pytest.param(policy("{pattern: {metadata: {name: web}}}", preconditions="{all: [{key: '{{request.object.metadata.labels.x || ''''}}', operator: Equals, value: y, message: need x}]}"),
                 [("skip", "preconditions not met; need x")], id="v26-precondition-default-skips-with-message"),
    pytest.param(policy("{pattern: {metadata: {labels: {tier: '{{tier}}'}}}}",
                        context="[{name: tier, variable: {jmesPath: request.object.metadata.labels.missing, default: db}}]"),
                 [("pass", "validation rule 'r' passed.")], id="context-variable-default"),
    pytest.param(policy("{pattern: {metadata: {labels: {tier: '{{tier}}'}}}}",
                        context="[{name: tier, variable: {jmesPath: request.object.metadata.labels.missing}}]"),
                 [("error", None)], id="context-variable-nil-errors"),
    pytest.param(policy("{pattern: {metadata: {name: '{{request.object.metadata.nope}}'}}}"),
                 [("error", None)], id="pattern-unresolvable-variable-errors"),
    pytest.param(policy("{deny: {conditions: [{key: '{{ images.containers.b.registry }}', operator: Equals, value: evil.io}]}}"),
                 [("fail", "validation error: rule r failed")], id="images-variable"),
    pytest.param(policy("{deny: {conditions: [{key: '{{ data.tag }}', operator: Equals, value: x}]}}",
                        context="[{name: data, imageRegistry: {reference: '{{ images.containers.a.reference }}'}}]"),
                 [("error", None)], id="image-registry-without-values-errors"),
]


@pytest.mark.parametrize(("compiled", "expected"), CASES)
def test_rule_outcome(compiled, expected: list) -> None:
    got = run(compiled)
    assert [s for s, _ in got] == [s for s, _ in expected], got
    for (_, message), (_, want) in zip(got, expected, strict=True):
        if want is not None:
            assert message == want


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        pytest.param({}, "error", id="pod-without-containers-has-no-images-variable"),
        pytest.param({"containers": [{"name": "a"}]}, "error", id="containers-without-image-leave-images-absent"),
        pytest.param({"containers": [{"name": "a", "image": "nginx"}]}, "pass", id="pod-with-an-image-has-images"),
    ],
)
def test_images_variable_exists_only_with_images(spec: dict, expected: str) -> None:
    compiled = policy("{deny: {conditions: [{key: '{{ images }}', operator: Equals, value: x}]}}")
    [(status, _)] = run(compiled, {**POD, "spec": spec})
    assert status == expected


@pytest.mark.parametrize(
    ("username", "expected"),
    [
        pytest.param("system:serviceaccount:prod:ci", "prod/ci", id="service-account-user"),
        pytest.param("system:serviceaccount:prod:ci:extra", "prod/ci", id="extra-fields-after-the-name-ignored"),
        pytest.param("system:serviceaccount:prod", "/", id="namespace-only-gives-empty-strings"),
        pytest.param("alice", "/", id="ordinary-user-gives-empty-strings"),
    ],
)
def test_service_account_variables(username: str, expected: str) -> None:
    compiled = policy("{message: '{{serviceAccountNamespace}}/{{serviceAccountName}}', "
                      "deny: {conditions: [{key: 1, operator: Equals, value: 1}]}}")
    [(_, message)] = run(compiled, request=Request(user=UserInfo(username=username)))
    assert message == expected


def test_error_messages_name_the_variable() -> None:
    [(status, message)] = run(policy("{pattern: {metadata: {name: '{{request.object.metadata.nope}}'}}}"))
    assert status == "error" and "request.object.metadata.nope" in message and "Unknown key" in message


def test_image_registry_error_names_the_entry() -> None:
    compiled = policy("{deny: {conditions: [{key: '{{ data.tag }}', operator: Equals, value: x}]}}",
                      context="[{name: data, imageRegistry: {reference: nginx}}]")
    [(_, message)] = run(compiled)
    assert "'data' (imageRegistry) cannot be resolved offline" in message


def test_values_supply_context_entries_per_rule() -> None:
    compiled = policy("{deny: {conditions: [{key: '{{ data.tag }}', operator: Equals, value: latest}]}}",
                      context="[{name: data, imageRegistry: {reference: nginx}}]")
    values = parse_values({"policies": [{"name": "p", "rules": [{"name": "r", "values": {"data.tag": "latest"}}]}]})
    assert run(compiled, env=make_environment(values=values)) == [("fail", "validation error: rule r failed")]


TWO_FOREACH = ("{message: blocked, foreach: ["
               "{list: request.object.spec.containers, context: [{name: data, imageRegistry: {reference: '{{element.image}}'}}], "
               "deny: {conditions: [{key: '{{ data }}', operator: Equals, value: blocked}]}}, "
               "{list: request.object.spec.initContainers, context: [{name: init, imageRegistry: {reference: '{{element.image}}'}}], "
               "deny: {conditions: [{key: '{{ init }}', operator: Equals, value: blocked}]}}]}")
WITH_INIT = {**POD, "spec": {**POD["spec"], "initContainers": [{"name": "i", "image": "busybox"}]}}


@pytest.mark.parametrize(
    ("foreach_values", "resource", "expected"),
    [
        # the CLI's context initializer: foreachValues[name][elementIndex] at every context load
        pytest.param({"data": ["ok", "ok"], "init": ["ok"]}, WITH_INIT, [("pass", "rule passed")],
                     id="mapping-gives-every-element-its-value"),
        pytest.param({"data": ["ok", "blocked"], "init": ["ok"]}, WITH_INIT,
                     [("fail", "validation failure: blocked")], id="mapping-second-element-blocked"),
        # the newer form: one mapping per foreach, by position
        pytest.param([{"data": ["ok", "ok"]}, {"init": ["blocked"]}], WITH_INIT,
                     [("fail", "validation failure: blocked")], id="list-second-foreach-blocked"),
        pytest.param([{"data": ["ok", "ok"]}, {"init": ["ok"]}], WITH_INIT, [("pass", "rule passed")],
                     id="list-every-foreach-ok"),
        # an element without a value keeps the entry unresolved, as without foreachValues
        pytest.param({"data": ["ok"]}, POD, "'data' (imageRegistry) cannot be resolved offline",
                     id="element-without-a-value"),
        pytest.param([{"data": ["ok", "ok"]}], WITH_INIT, "'init' (imageRegistry) cannot be resolved offline",
                     id="foreach-without-a-mapping"),
    ],
)
def test_foreach_values_supply_context_entries_per_element(foreach_values: object, resource: dict,
                                                           expected: object) -> None:
    values = parse_values({"policies": [{"name": "p", "rules": [{"name": "r", "foreachValues": foreach_values}]}]})
    got = run(policy(TWO_FOREACH), resource, env=make_environment(values=values))
    if isinstance(expected, str):
        [(status, message)] = got
        assert status == "error" and expected in message, message
    else:
        assert got == expected


class _Loader:
    def config_map(self, name: str, namespace: str) -> dict | None:
        return {"data": {"allowed": "db"}, "metadata": {"name": name}} if name == "tiers" else None

    def api_call(self, url_path: str, method: str, data: object) -> object:
        if url_path == "/api/v1/namespaces/default/pods":
            return {"items": [POD]}
        if url_path == "/api/v1/not-served":
            raise NotServed("no source")
        raise ContextError(f"no answer for {url_path}")


@pytest.mark.parametrize(
    ("context", "condition", "expected"),
    [
        pytest.param("[{name: cm, configMap: {name: tiers, namespace: default}}]",
                     "{key: '{{request.object.metadata.labels.tier}}', operator: Equals, value: '{{cm.data.allowed}}'}",
                     "fail", id="config-map-from-loader"),
        pytest.param("[{name: pods, apiCall: {urlPath: '/api/v1/namespaces/{{request.namespace}}/pods', jmesPath: 'items | length(@)'}}]",
                     "{key: '{{pods}}', operator: GreaterThan, value: 0}", "fail", id="api-call-from-loader"),
        pytest.param("[{name: pods, apiCall: {urlPath: /api/v1/nope, default: 0}}]",
                     "{key: '{{pods}}', operator: GreaterThan, value: 0}", "pass", id="api-call-default-on-failure"),
        pytest.param("[{name: pods, apiCall: {urlPath: '/api/v1/{{request.object.nothing}}', default: 0}}]",
                     "{key: '{{pods}}', operator: GreaterThan, value: 0}", "pass",
                     id="api-call-default-when-url-substitution-fails"),
        pytest.param("[{name: pods, apiCall: {service: {url: 'https://svc.example/count'}, default: 0}}]",
                     "{key: '{{pods}}', operator: GreaterThan, value: 0}", "pass", id="service-call-default-on-failure"),
        pytest.param("[{name: pods, apiCall: {urlPath: /api/v1/nope, default: '{{request.object.kind}}'}}]",
                     "{key: '{{ length(pods) }}', operator: GreaterThan, value: 3}", "fail",
                     id="api-call-default-stored-as-written"),
    ],
)
def test_context_entries_from_loader(context: str, condition: str, expected: str) -> None:
    compiled = policy(f"{{deny: {{conditions: [{condition}]}}}}", context=context)
    [(status, _)] = run(compiled, env=make_environment(loader=_Loader()))
    assert status == expected


def test_an_api_call_no_source_serves_is_skipped_and_values_stay_visible() -> None:
    compiled = policy("{deny: {conditions: [{key: '{{pods}}', operator: GreaterThan, value: 0}]}}",
                      context="[{name: pods, apiCall: {urlPath: /api/v1/not-served, default: 0}}]")
    values = parse_values(y("policies: [{name: p, rules: [{name: r, values: {pods: 3}}]}]"))
    [(status, _)] = run(compiled, env=make_environment(loader=_Loader(), values=values))
    assert status == "fail"  # neither the default nor an error: the values file's 3


def test_update_enforce_rule_with_pre_existing_violation_skips() -> None:
    compiled = parse_policy(y("""
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: p}
spec:
  validationFailureAction: Enforce
  rules:
  - name: r
    match: {any: [{resources: {kinds: [Pod]}}]}
    validate: {pattern: {metadata: {labels: {team: '?*'}}}}
"""))
    [result] = evaluate_policy(compiled, POD, Request(operation="UPDATE"))
    assert str(result.status) == "skip"  # vector 32


def test_update_enforce_rule_depending_on_the_operation_still_fails() -> None:
    compiled = parse_policy(y("""
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: p}
spec:
  validationFailureAction: Enforce
  rules:
  - name: r
    match: {any: [{resources: {kinds: [Pod]}}]}
    preconditions: {all: [{key: "{{ request.operation }}", operator: Equals, value: UPDATE}]}
    validate: {deny: {}}
"""))
    [result] = evaluate_policy(compiled, POD, Request(operation="UPDATE"))
    assert str(result.status) == "fail"  # vector 32b: the simulated CREATE of the old object is skipped
