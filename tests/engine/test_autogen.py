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
