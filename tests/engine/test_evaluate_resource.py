"""The one evaluation loop: a resource meets the policies indexed under its kind, each with the
request its values and context give it."""

from __future__ import annotations

from typing import Any

import pytest

from scanner.engine.environment import make_environment
from scanner.engine.evaluate import PolicyIndex, RequestContext, evaluate_resource
from scanner.engine.match import UserInfo
from scanner.engine.policy import parse_policy
from scanner.engine.values import parse_values

from .conftest import y


def _policy(name: str, kinds: str, deny: str) -> Any:
    return parse_policy(y(f"""
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {{name: {name}}}
spec:
  background: false
  rules:
  - name: r
    match: {{any: [{{resources: {{kinds: [{kinds}]}}}}]}}
    validate: {{message: m, deny: {{conditions: {{any: [{deny}]}}}}}}
"""))


# each policy fails when its condition holds
DENY_UPDATE = "{key: '{{ request.operation }}', operator: Equals, value: UPDATE}"
DENY_TEAM_A = "{key: '{{ request.object.metadata.labels.team }}', operator: Equals, value: a}"
DENY_ADMIN = "{key: '{{ request.userInfo.username }}', operator: Equals, value: admin}"
DENY_PROD = "{key: '{{ request.namespace }}', operator: Equals, value: prod}"
POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "namespace": "prod", "labels": {"team": "b"}}}

CASES = [
    pytest.param([("ops", "Pod", DENY_UPDATE)], {}, {}, {"ops": "pass"}, id="create-by-default"),
    pytest.param([("ops", "Pod", DENY_UPDATE)], {}, {"operation": "UPDATE"}, {"ops": "fail"},
                 id="forced-operation-for-every-policy"),
    pytest.param([("ops", "Pod", DENY_UPDATE), ("other", "Pod", DENY_UPDATE)],
                 {"policies": [{"name": "ops", "resources": [{"name": "web", "values": {"request.operation": "UPDATE"}}]}]},
                 {}, {"ops": "fail", "other": "pass"}, id="values-give-one-policy-its-operation"),
    pytest.param([("team", "Pod", DENY_TEAM_A), ("other", "Pod", DENY_TEAM_A)],
                 {"policies": [{"name": "team", "resources": [
                     {"name": "web", "values": {"request.object.metadata.labels.team": "a"}}]}]},
                 {}, {"team": "fail", "other": "pass"}, id="values-change-the-object-one-policy-sees"),
    pytest.param([("admin", "Pod", DENY_ADMIN)], {}, {"user": UserInfo(username="admin")}, {"admin": "fail"},
                 id="user-reaches-every-request"),
    pytest.param([("deploy", "Deployment", DENY_PROD), ("pod", "Pod", DENY_PROD)], {}, {}, {"pod": "fail"},
                 id="only-policies-of-the-kind"),
    pytest.param([("deploy", "Deployment", DENY_PROD)], {}, {}, {}, id="no-policy-no-result"),
]


@pytest.mark.parametrize(("policies", "values", "options", "expected"), CASES)
def test_evaluate_resource_gives_each_policy_its_request(policies: list[tuple[str, str, str]], values: dict,
                                                          options: dict, expected: dict[str, str]) -> None:
    index = PolicyIndex([_policy(*p) for p in policies])
    context = RequestContext(make_environment(values=parse_values(values)), **options)
    found = evaluate_resource(index, POD, context)
    assert {policy.key: [str(r.status) for r in results] for policy, results in found} == {
        k: [v] for k, v in expected.items()}
    assert all(r.policy == policy.key for policy, results in found for r in results)


def test_evaluate_resource_asks_look_ups_once_per_operation() -> None:
    asked: list[tuple[str, str]] = []

    def admitting(resource: dict, operation: str) -> Any:
        asked.append((resource["metadata"]["name"], operation))
        return None

    index = PolicyIndex([_policy("a", "Pod", DENY_PROD), _policy("b", "Pod", DENY_PROD), _policy("c", "Pod", DENY_UPDATE)])
    values = parse_values({"policies": [{"name": "c", "resources": [{"name": "web", "values": {"request.operation": "UPDATE"}}]}]})
    context = RequestContext(make_environment(values=values), admitting=admitting)
    evaluate_resource(index, POD, context)
    assert asked == [("web", "CREATE"), ("web", "UPDATE")]


def test_request_context_keeps_one_request_per_operation() -> None:
    context = RequestContext(served_versions=False)
    assert context.request("CREATE") is context.request("CREATE")
    assert context.request("UPDATE").operation == "UPDATE"
    assert not context.request("DELETE").served_versions
    assert context.with_operation("DELETE").operation == "DELETE"
