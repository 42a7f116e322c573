"""Autogen: when a policy gets rules for pod controllers, and for which controllers."""

from __future__ import annotations

import pytest

from scanner.engine.autogen import autogen_controllers, can_generate

from .conftest import y

ALL_CONTROLLERS = {"DaemonSet", "Deployment", "Job", "StatefulSet", "ReplicaSet", "ReplicationController", "CronJob"}


def policy(match: str, annotation: str | None = None) -> dict:
    meta = f"annotations: {{pod-policies.kyverno.io/autogen-controllers: '{annotation}'}}" if annotation else ""
    return y(f"""
    apiVersion: kyverno.io/v1
    kind: ClusterPolicy
    metadata: {{name: p, {meta}}}
    spec:
      rules:
      - name: r
        match: {match}
        validate: {{pattern: {{metadata: {{labels: {{team: '?*'}}}}}}}}
    """)


@pytest.mark.parametrize(
    ("match", "annotation", "expected"),
    [
        pytest.param("{any: [{resources: {kinds: [Pod]}}]}", None, ALL_CONTROLLERS, id="pod-gets-every-controller"),
        pytest.param("{any: [{resources: {kinds: [v1/Pod]}}]}", None, set(), id="only-plain-kind-names-ask-for-autogen"),
        pytest.param("{any: [{resources: {kinds: [Pod], selector: {}}}]}", None, set(), id="empty-selector-blocks"),
        pytest.param("{any: [{resources: {kinds: [Pod], annotations: {}}}]}", None, set(), id="empty-annotations-block"),
        pytest.param("{any: [{resources: {kinds: [Pod], name: ''}}]}", None, ALL_CONTROLLERS, id="empty-name-does-not-block"),
        pytest.param("{any: [{resources: {kinds: [Pod.status, Service]}}]}", None, set(), id="pod-subresource-mixed-blocks"),
        pytest.param("{any: [{resources: {kinds: [Pod]}}]}", "Deployment, StatefulSet", {"Deployment"},
                     id="annotation-entries-are-not-trimmed"),
        pytest.param("{any: [{resources: {kinds: [Pod]}}]}", "none", set(), id="annotation-none"),
    ],
)
def test_autogen_controllers_for_policy(match: str, annotation: str | None, expected: set) -> None:
    assert autogen_controllers(policy(match, annotation)) == expected


@pytest.mark.parametrize(
    ("match", "expected"),
    [
        pytest.param("{any: [{resources: {kinds: [v1/Pod]}}]}", True, id="versioned-pod"),
        pytest.param("{any: [{resources: {kinds: [Pod.status.extra]}}]}", True, id="first-dot-ends-the-kind"),
        pytest.param("{any: [{resources: {kinds: [Service]}}]}", False, id="no-pod"),
    ],
)
def test_autogen_rule_generated_when_match_names_pod(match: str, expected: bool) -> None:
    assert can_generate(policy(match)["spec"]["rules"][0]) is expected


# Kyverno decides whether a match filter is empty with reflect.DeepEqual (a list written empty
# makes it non-empty but sets no condition), an exclude filter of lists written empty excludes
# nothing (kyverno/kyverno#13772), and a generated rule's match/exclude and preconditions go
# through a JSON round trip that drops every list written empty (omitempty).
POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ns"},
       "spec": {"containers": [{"name": "c", "image": "nginx"}]}}
DEPLOYMENT = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "namespace": "ns"},
              "spec": {"template": {"spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}


def rule_policy(extra: str) -> dict:
    return y(f"""
    apiVersion: kyverno.io/v1
    kind: ClusterPolicy
    metadata: {{name: p}}
    spec:
      rules:
      - name: r
        match: {{any: [{{resources: {{kinds: [Pod]}}}}]}}
        validate: {{pattern: {{metadata: {{labels: {{team: '?*'}}}}}}}}
        {extra}
    """)


@pytest.mark.parametrize(
    ("extra", "pod_evaluated", "deployment_evaluated"),
    [
        pytest.param("exclude: {any: [{resources: {namespaces: []}}]}", True, True,
                     id="exclude-namespaces-written-empty-excludes-nothing"),
        pytest.param("exclude: {any: [{resources: {annotations: {}}}]}", True, False,
                     id="exclude-annotations-written-empty-excludes-nothing-but-blocks-autogen"),
        pytest.param("exclude: {any: [{roles: []}]}", True, True, id="exclude-roles-written-empty"),
        pytest.param("exclude: {any: [{resources: {}}]}", True, True, id="exclude-filter-without-fields-is-empty"),
        pytest.param("exclude: {all: [{resources: {kinds: [Pod]}}, {resources: {}}]}", True, True,
                     id="exclude-all-with-an-empty-filter-excludes-nothing"),
        pytest.param("exclude: {any: [{resources: {kinds: [Pod], namespaces: []}}]}", False, False,
                     id="exclude-kinds-with-empty-namespaces-excludes-the-kinds"),
        pytest.param("preconditions: {any: []}", False, True, id="preconditions-any-written-empty"),
    ],
)
def test_lists_written_empty(extra: str, pod_evaluated: bool, deployment_evaluated: bool) -> None:
    from scanner.engine.evaluate import evaluate_policy
    from scanner.engine.policy import parse_policy
    from scanner.engine.types import RuleStatus

    policy = parse_policy(rule_policy(extra))

    def evaluated(resource: dict) -> bool:
        return any(r.status is not RuleStatus.SKIP for r in evaluate_policy(policy, resource))

    assert (evaluated(POD), evaluated(DEPLOYMENT)) == (pod_evaluated, deployment_evaluated)
