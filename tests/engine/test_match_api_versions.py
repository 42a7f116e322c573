"""Kinds across API versions: a resource written in an older group/version is matched (and
excepted, and given autogen rules) as the version the API server serves it at today."""

from __future__ import annotations

import pytest

from scanner.engine.api_versions import equivalent_versions
from scanner.engine.evaluate import evaluate_policy
from scanner.engine.match import Request, ResourceView, parse_filter
from scanner.engine.policy import parse_policy
from scanner.engine.types import RuleStatus

from .conftest import y


def matches(kinds: list[str], api_version: str, kind: str, *, exclude: bool = False, served: bool = True) -> bool:
    problems: list[tuple[str, str]] = []
    compiled = parse_filter({"resources": {"kinds": kinds}}, problems, "/match")
    assert problems == []
    resource = {"apiVersion": api_version, "kind": kind, "metadata": {"name": "x", "namespace": "ns"}}
    return compiled.matches(ResourceView.of(resource), Request(served_versions=served), exclude=exclude)


@pytest.mark.parametrize(
    ("kinds", "api_version", "kind", "expected"),
    [
        pytest.param(["apps/v1/DaemonSet"], "extensions/v1beta1", "DaemonSet", True,
                     id="extensions-daemonset-matched-as-apps-v1"),
        pytest.param(["apps/v1/Deployment"], "apps/v1beta2", "Deployment", True,
                     id="apps-v1beta2-deployment-matched-as-apps-v1"),
        pytest.param(["apps/v1/StatefulSet"], "apps/v1beta1", "StatefulSet", True,
                     id="apps-v1beta1-statefulset-matched-as-apps-v1"),
        pytest.param(["batch/v1/CronJob"], "batch/v1beta1", "CronJob", True, id="batch-v1beta1-cronjob"),
        pytest.param(["networking.k8s.io/v1/Ingress"], "extensions/v1beta1", "Ingress", True,
                     id="extensions-ingress-matched-in-its-new-group"),
        pytest.param(["policy/v1/PodDisruptionBudget"], "policy/v1beta1", "PodDisruptionBudget", True,
                     id="policy-v1beta1-pdb"),
        pytest.param(["autoscaling/v1/HorizontalPodAutoscaler"], "autoscaling/v2", "HorizontalPodAutoscaler", True,
                     id="hpa-versions-served-today-are-equivalent"),
        pytest.param(["autoscaling/v2/HorizontalPodAutoscaler"], "autoscaling/v2beta2", "HorizontalPodAutoscaler",
                     True, id="old-hpa-matched-as-a-served-version"),
        pytest.param(["v1/DaemonSet"], "extensions/v1beta1", "DaemonSet", True, id="version-only-entry"),
        pytest.param(["apps/*/DaemonSet"], "extensions/v1beta1", "DaemonSet", True, id="wildcard-version-entry"),
        pytest.param(["extensions/v1beta1/DaemonSet"], "extensions/v1beta1", "DaemonSet", True,
                     id="written-version-still-matches"),
        pytest.param(["DaemonSet"], "extensions/v1beta1", "DaemonSet", True, id="kind-only-entry"),
        pytest.param(["extensions/v1beta1/DaemonSet"], "apps/v1", "DaemonSet", False,
                     id="served-version-is-not-matched-as-an-old-one"),
        pytest.param(["apps/v1beta2/Deployment"], "extensions/v1beta1", "Deployment", False,
                     id="old-version-is-not-matched-as-another-old-one"),
        pytest.param(["apps/v1/Deployment"], "extensions/v1beta1", "DaemonSet", False, id="kind-still-compared"),
        pytest.param(["apps/v1/Ingress"], "extensions/v1beta1", "Ingress", False,
                     id="ingress-is-not-in-the-apps-group"),
        pytest.param(["apps/v1/Widget"], "example.com/v1beta1", "Widget", False, id="custom-kind-has-no-equivalent"),
        pytest.param(["apps/v1/DaemonSet/status"], "extensions/v1beta1", "DaemonSet", False,
                     id="subresource-entry-still-needs-the-subresource"),
    ],
)
def test_kinds_match_across_api_versions(kinds: list[str], api_version: str, kind: str, expected: bool) -> None:
    assert matches(kinds, api_version, kind) is expected
    assert matches(kinds, api_version, kind, exclude=True) is expected


@pytest.mark.parametrize(
    ("kinds", "api_version", "kind", "expected"),
    [
        pytest.param(["apps/v1/DaemonSet"], "extensions/v1beta1", "DaemonSet", False,
                     id="cli-compares-the-written-version"),
        pytest.param(["extensions/v1beta1/DaemonSet"], "extensions/v1beta1", "DaemonSet", True,
                     id="cli-matches-the-written-version"),
        pytest.param(["DaemonSet"], "extensions/v1beta1", "DaemonSet", True, id="cli-kind-only-entry"),
    ],
)
def test_kinds_match_as_written_without_an_api_server(kinds: list[str], api_version: str, kind: str,
                                                      expected: bool) -> None:
    assert matches(kinds, api_version, kind, served=False) is expected


def test_policy_rules_match_as_written_without_an_api_server() -> None:
    resource = {"apiVersion": "extensions/v1beta1", "kind": "DaemonSet", **PRIVILEGED}
    assert evaluate_policy(parse_policy(NO_PRIVILEGED), resource, Request(served_versions=False)) == []


@pytest.mark.parametrize(
    ("group", "version", "kind", "expected"),
    [
        pytest.param("extensions", "v1beta1", "DaemonSet", (("extensions", "v1beta1"), ("apps", "v1")),
                     id="own-version-first-then-served-one"),
        pytest.param("apps", "v1", "Deployment", (("apps", "v1"),), id="served-version-alone"),
        pytest.param("", "v1", "Event", (("", "v1"), ("events.k8s.io", "v1")), id="core-event-and-events-group"),
        pytest.param("example.com", "v1", "Widget", (("example.com", "v1"),), id="unknown-resource-alone"),
    ],
)
def test_equivalent_versions(group: str, version: str, kind: str, expected: tuple) -> None:
    assert equivalent_versions(group, version, kind) == expected


PRIVILEGED = y("""
metadata: {name: priv, namespace: ns}
spec:
  template:
    spec:
      containers: [{name: c, image: nginx, securityContext: {privileged: true}}]
""")
NO_PRIVILEGED = y("""
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: no-privileged}
spec:
  rules:
  - name: privileged-containers
    match: {any: [{resources: {kinds: [Pod]}}]}
    validate:
      message: privileged mode is disallowed
      pattern:
        spec:
          containers:
          - =(securityContext):
              =(privileged): "false"
""")


@pytest.mark.parametrize(
    ("api_version", "kind", "rule"),
    [
        pytest.param("extensions/v1beta1", "DaemonSet", "autogen-privileged-containers", id="extensions-daemonset"),
        pytest.param("apps/v1beta2", "Deployment", "autogen-privileged-containers", id="apps-v1beta2-deployment"),
        pytest.param("apps/v1beta1", "StatefulSet", "autogen-privileged-containers", id="apps-v1beta1-statefulset"),
        pytest.param("extensions/v1beta1", "ReplicaSet", "autogen-privileged-containers", id="extensions-replicaset"),
        pytest.param("apps/v1", "DaemonSet", "autogen-privileged-containers", id="apps-v1-daemonset"),
    ],
)
def test_autogen_rule_fails_an_old_pod_controller(api_version: str, kind: str, rule: str) -> None:
    resource = {"apiVersion": api_version, "kind": kind, **PRIVILEGED}
    results = evaluate_policy(parse_policy(NO_PRIVILEGED), resource)
    assert [(r.rule, r.status) for r in results] == [(rule, RuleStatus.FAIL)]


def test_autogen_cronjob_rule_fails_an_old_cronjob() -> None:
    resource = y("""
    apiVersion: batch/v1beta1
    kind: CronJob
    metadata: {name: priv, namespace: ns}
    spec:
      schedule: '* * * * *'
      jobTemplate:
        spec:
          template:
            spec:
              containers: [{name: c, image: nginx, securityContext: {privileged: true}}]
    """)
    results = evaluate_policy(parse_policy(NO_PRIVILEGED), resource)
    assert [(r.rule, r.status) for r in results] == [("autogen-cronjob-privileged-containers", RuleStatus.FAIL)]


@pytest.mark.parametrize(
    ("exception_kinds", "expected"),
    [
        pytest.param("[apps/v1/DaemonSet]", "skip", id="exception-naming-the-served-version-excepts"),
        pytest.param("[DaemonSet]", "skip", id="exception-naming-the-kind-excepts"),
        pytest.param("[apps/v1/Deployment]", "fail", id="exception-of-another-kind-does-not"),
    ],
)
def test_policy_exception_matches_an_old_pod_controller(exception_kinds: str, expected: str) -> None:
    from scanner.engine.environment import make_environment
    from scanner.engine.exceptions import parse_exception

    exception = parse_exception(y(f"""
    apiVersion: kyverno.io/v2
    kind: PolicyException
    metadata: {{name: legacy, namespace: kyverno}}
    spec:
      exceptions: [{{policyName: no-privileged, ruleNames: [autogen-privileged-containers]}}]
      match: {{any: [{{resources: {{kinds: {exception_kinds}}}}}]}}
    """))
    resource = {"apiVersion": "extensions/v1beta1", "kind": "DaemonSet", **PRIVILEGED}
    [result] = evaluate_policy(parse_policy(NO_PRIVILEGED), resource, env=make_environment(exceptions=(exception,)))
    assert str(result.status) == expected
