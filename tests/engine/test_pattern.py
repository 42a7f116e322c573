"""The pattern walk (spec 4), including every pattern vector of spec 18.2."""

from __future__ import annotations

import pytest

from scanner.engine.pattern import CompiledPattern
from scanner.engine.wildcard import match as wildcard_match

from .conftest import y

POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "labels": {}},
       "spec": {"containers": [{"name": "a", "image": "nginx:1.2"}]}}


def pod(**spec) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "labels": {}}, "spec": spec}


@pytest.mark.parametrize(
    ("pattern", "text", "expected"),
    [
        pytest.param("my-?-x", "my--x", False, id="v1-question-mark-needs-one-character"),
        pytest.param("a*", "a/b/c", True, id="v2-star-crosses-slashes"),
        pytest.param("*", "", True, id="star-matches-empty"),
        pytest.param("", "", True, id="empty-matches-empty-only"),
        pytest.param("", "x", False, id="empty-does-not-match-text"),
        pytest.param("a.b", "axb", False, id="dot-is-literal"),
        pytest.param("Pod", "pod", False, id="case-sensitive"),
    ],
)
def test_wildcard_match(pattern: str, text: str, expected: bool) -> None:
    assert wildcard_match(pattern, text) is expected


CASES = [
    pytest.param("{metadata: {labels: {app: '*'}}}", POD, "fail", "/metadata/labels/",
                 id="v3-star-on-missing-label-fails-at-parent"),
    pytest.param("{spec: {hostNetwork: ''}}", pod(), "fail", "/spec/hostNetwork/",
                 id="v4-empty-string-needs-existing-empty-string"),
    pytest.param("{spec: {hostNetwork: null}}", pod(), "pass", "", id="v5-null-matches-missing"),
    pytest.param("{spec: {hostNetwork: null}}", pod(hostNetwork=False), "pass", "", id="v5-null-matches-false"),
    pytest.param("{spec: {replicas: '>=0'}}", pod(), "pass", "", id="v6-missing-is-zero-for-quantities"),
    pytest.param("{spec: {containers: [{imagePullPolicy: '!Always'}]}}",
                 pod(containers=[{"name": "a"}]), "fail", "/spec/containers/0/imagePullPolicy/",
                 id="v7-not-equal-needs-a-value"),
    pytest.param("{spec: {containers: [{name: a}, {name: b}]}}",
                 pod(containers=[{"name": "a"}, {"name": "b"}]), "fail", "/spec/containers/1/name/",
                 id="v8-only-first-list-pattern-element-counts"),
    pytest.param("{spec: {volumes: []}}", pod(volumes=[{"name": "v"}]), "fail", "/spec/volumes/",
                 id="v9-empty-list-pattern-fails"),
    pytest.param("{spec: {containers: [{(image): '*:latest', imagePullPolicy: Always}]}}",
                 pod(containers=[{"image": "nginx:1.2"}]), "skip", "", id="v10-conditional-anchor-skips"),
    pytest.param("{spec: {containers: [{(image): '*:latest', imagePullPolicy: Always}]}}",
                 pod(containers=[{"image": "nginx:1.2"}, {"image": "busybox:latest", "imagePullPolicy": "IfNotPresent"}]),
                 "fail", "/spec/containers/1/imagePullPolicy/", id="v11-conditional-anchor-selects-element"),
    pytest.param("{metadata: {labels: {team: '?*'}}, spec: {containers: [{(image): '*:latest', imagePullPolicy: Always}]}}",
                 POD, "skip", "", id="v12-nested-anchor-key-evaluated-first"),
    pytest.param("{spec: {^(initContainers): [{name: init}], containers: [{image: nginx}]}}",
                 pod(containers=[{"image": "busybox"}]), "error", "",
                 id="v13-missing-anchor-key-turns-failure-into-error"),
    pytest.param("{spec: {=(securityContext): {=(runAsUser): '>0'}, containers: [{=(securityContext): {=(privileged): false}}]}}",
                 pod(containers=[{"name": "a"}]), "pass", "", id="equality-anchor-absent-passes"),
    pytest.param("{spec: {containers: [{=(securityContext): {=(privileged): false}}]}}",
                 pod(containers=[{"securityContext": {"privileged": True}}]), "fail",
                 "/spec/containers/0/securityContext/privileged/", id="equality-anchor-present-must-match"),
    pytest.param("{spec: {^(containers): [{image: 'registry.example.com/*'}]}}",
                 pod(containers=[{"image": "nginx"}]), "fail", "/spec/containers/", id="existence-anchor-none-matches"),
    pytest.param("{spec: {^(containers): [{image: 'registry.example.com/*'}]}}",
                 pod(containers=[{"image": "nginx"}, {"image": "registry.example.com/x"}]), "pass", "",
                 id="existence-anchor-one-matches"),
    pytest.param("{spec: {X(hostPID): 'null'}}", pod(hostPID=False), "fail", "/spec/hostPID/",
                 id="negation-anchor-present-fails"),
    pytest.param("{spec: {X(hostPID): 'null'}}", pod(), "pass", "", id="negation-anchor-absent-passes"),
    pytest.param("{spec: {containers: [{<(image): 'corp.example.com/*'}], imagePullSecrets: [{name: corp-pull}]}}",
                 pod(containers=[{"image": "nginx"}]), "skip", "", id="global-anchor-no-match-skips"),
    pytest.param("{spec: {containers: [{<(image): 'corp.example.com/*'}], imagePullSecrets: [{name: corp-pull}]}}",
                 pod(containers=[{"image": "corp.example.com/a"}], imagePullSecrets=[{"name": "other"}]), "fail",
                 "/spec/imagePullSecrets/0/name/", id="global-anchor-match-applies-rule"),
    pytest.param("{spec: {containers: [{<(image): 'corp.example.com/*'}], imagePullSecrets: [{name: corp-pull}]}}",
                 pod(containers=[{"image": "corp.example.com/a"}]), "fail", "/spec/imagePullSecrets/",
                 id="global-anchor-match-missing-list-fails"),
    pytest.param("{metadata: {=(annotations): {X(fluxcd.io/*): null}}}",
                 {"metadata": {"annotations": {"fluxcd.io/a": "x"}}}, "pass", "",
                 id="v33-non-string-wildcard-annotation-entry-dropped"),
    pytest.param("{metadata: {=(annotations): {X(fluxcd.io/*): '*'}}}",
                 {"metadata": {"annotations": {"fluxcd.io/a": "x"}}}, "fail", "/metadata/annotations/fluxcd.io/a/",
                 id="v34-wildcard-annotation-key-expanded"),
    pytest.param("{spec: {containers: [{resources: {limits: {memory: '<=1Gi'}}}]}}",
                 pod(containers=[{"resources": {"limits": {"memory": "512Mi"}}}]), "pass", "",
                 id="quantity-comparison"),
    pytest.param("{spec: {containers: [{image: '*:latest | !*:*'}]}}",
                 pod(containers=[{"image": "nginx:1.2"}]), "fail", "/spec/containers/0/image/",
                 id="alternatives-none-match"),
    pytest.param("{spec: {containers: [{image: '*:latest | !*:*'}]}}",
                 pod(containers=[{"image": "nginx"}]), "pass", "", id="alternatives-second-matches"),
    pytest.param("{spec: {containers: [{args: '!--privileged*'}]}}",
                 pod(containers=[{"args": ["--a", "--b"]}]), "pass", "", id="scalar-pattern-checks-every-list-element"),
    pytest.param("{spec: {containers: [{ports: [{containerPort: '8*'}]}]}}",
                 pod(containers=[{"ports": [{"containerPort": 80.0}]}]), "pass", "",
                 id="float-rendered-in-go-exponent-form"),
    pytest.param("{spec: {containers: [{ports: [{containerPort: '*0'}]}]}}",
                 pod(containers=[{"ports": [{"containerPort": 80.0}]}]), "fail",
                 "/spec/containers/0/ports/0/containerPort/", id="float-text-is-8E+01-offline"),
    pytest.param("{spec: {+(dnsPolicy): Default}}", pod(), "fail", "/spec/+(dnsPolicy)/",
                 id="add-if-not-present-is-a-literal-key-in-validate"),
    pytest.param("{spec: {containers: {name: a}}}", POD, "fail", "/spec/containers/",
                 id="map-pattern-against-list-fails"),
    pytest.param("{spec: {(hostNetwork): true, hostPort: 1}}", pod(), "skip", "",
                 id="conditional-anchor-absent-key-skips"),
    pytest.param("{metadata: {labels: {'app.kubernetes.io/*': '?*'}}}",
                 {"metadata": {"labels": {"app.kubernetes.io/name": "x"}}}, "pass", "",
                 id="wildcard-label-key-expanded"),
    pytest.param("{spec: {replicas: 2}}", {"spec": {"replicas": "2"}}, "pass", "", id="numeric-pattern-parses-strings"),
    pytest.param("{spec: {enabled: true}}", {"spec": {"enabled": "true"}}, "fail", "/spec/enabled/",
                 id="bool-pattern-needs-bool"),
    pytest.param("{spec: {X(hostPID): null, containers: [{image: nginx}]}}",
                 pod(containers=[{"image": "busybox"}]), "fail", "/spec/containers/0/image/",
                 id="absent-negation-key-is-not-a-missing-anchor"),
    pytest.param("{spec: {a: '1', b: {+(x): '1'}}}", {"spec": {"a": "2", "b": {}}}, "fail", "/spec/a/",
                 id="add-if-not-present-key-does-not-count-as-nested-anchor"),
]


@pytest.mark.parametrize(("pattern", "resource", "status", "path"), CASES)
def test_pattern_outcome(pattern: str, resource: dict, status: str, path: str) -> None:
    outcome = CompiledPattern(y(pattern)).match(resource)
    assert (outcome.status, outcome.path) == (status, path), outcome.message


@pytest.mark.parametrize(
    ("pattern", "resource", "message"),
    [
        pytest.param("{spec: {replicas: '>5'}}", {"spec": {"replicas": 3.0}},
                     "resource value '3' does not match '>5' at path /spec/replicas/", id="float-printed-like-go"),
        pytest.param("{spec: {hostNetwork: false}}", {"spec": {}},
                     "resource value '<nil>' does not match 'false' at path /spec/hostNetwork/", id="missing-is-nil"),
        pytest.param("{spec: {args: '!--x*'}}", {"spec": {"args": ["--a", "--x=1"]}},
                     "resource value '[--a --x=1]' does not match '!--x*' at path /spec/args/", id="list-printed-like-go"),
        pytest.param("{spec: {^(containers): [{name: a}, x]}}", {"spec": {"containers": [{"name": "b"}]}},
                     "existence anchor validation failed at path /spec/containers/",
                     id="existence-maps-checked-in-order"),
        pytest.param("{spec: {^(containers): [{name: a}, x]}}", {"spec": {"containers": [{"name": "a"}]}},
                     "invalid pattern type []interface {}: Pattern has to be of type map to compare against items "
                     "in resource", id="existence-non-map-element"),
        pytest.param("{spec: {^(containers): {name: a}}}", {"spec": {"containers": [{"name": "a"}]}},
                     "invalid pattern type map[string]interface {}: Pattern has to be of list to compare against "
                     "resource", id="existence-pattern-not-a-list"),
    ],
)
def test_pattern_failure_message(pattern: str, resource: dict, message: str) -> None:
    outcome = CompiledPattern(y(pattern)).match(resource)
    assert (outcome.status, outcome.message) == ("fail", message)


def test_pattern_compiled_once_evaluates_many() -> None:
    compiled = CompiledPattern(y("{metadata: {labels: {team: '?*'}}}"))
    assert [compiled.match({"metadata": {"labels": {"team": t}}}).status for t in ("a", "", "b")] == [
        "pass", "fail", "pass"]


def test_pattern_metadata_expansion_is_not_shared_between_patterns() -> None:
    # Patterns compiled and dropped one after another get the same memory address.
    patterns = [(y(f"{{metadata: {{labels: {{'te*': {v}}}}}}}"), status)
                for v, status in (("a", "pass"), ("b", "fail"))]
    resource = {"metadata": {"labels": {"team": "a"}}}
    outcomes = [CompiledPattern(p).match(resource).status for p, _ in patterns * 20]
    assert outcomes == [status for _, status in patterns * 20]
