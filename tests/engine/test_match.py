"""match / exclude details: kinds entries, empty conditions and how resource metadata is read."""

from __future__ import annotations

import pytest

from scanner.engine.match import Request, ResourceView, parse_filter, parse_kind
from scanner.engine.policy import InvalidPolicyError, parse_policy

from .conftest import y


@pytest.mark.parametrize(
    ("entry", "gvks"),
    [
        pytest.param("Pod", ("*", "*", "Pod", ""), id="kind-only"),
        pytest.param("v1/Pod", ("*", "v1", "Pod", ""), id="version-kind"),
        pytest.param("apps/v1/Deployment", ("apps", "v1", "Deployment", ""), id="group-version-kind"),
        pytest.param("Pod/exec", ("*", "*", "Pod", "exec"), id="kind-subresource"),
        pytest.param("Pod.status", ("*", "*", "Pod", "status"), id="dotted-subresource"),
        pytest.param("*/scale", ("*", "*", "*", "scale"), id="any-kind-subresource"),
        pytest.param("*/*", ("*", "*", "*", "*"), id="everything"),
        pytest.param("*/v1/Pod", ("*", "*", "v1", "Pod"), id="leading-star-misparse"),
        pytest.param("apps/v1/Deployment/scale", ("apps", "v1", "Deployment", "scale"), id="four-parts"),
        pytest.param("*", ("*", "*", "*", ""), id="star-is-every-kind"),
        pytest.param("*.*", ("*", "*", "*", "*"), id="dotted-star-is-everything"),
        pytest.param("v1.demo/v1/Demo", ("v1.demo", "v1", "Demo", ""), id="group-that-starts-like-a-version"),
        pytest.param("*/Deployment.scale", ("*", "*", "Deployment", "scale"), id="star-version-dotted-subresource"),
        pytest.param("*/123", ("*", "*", "*", "123"), id="star-then-lowercase-is-subresource"),
        pytest.param("v1/Pod.status.extra", ("v1", "Pod", "status", "extra"), id="every-dot-splits-the-last-segment"),
        pytest.param("Pod.status.extra", ("Pod", "status", "extra", ""), id="dots-alone-count-as-segments"),
        pytest.param("*/*/*/*/*", ("", "", "", ""), id="five-segments-match-nothing"),
    ],
)
def test_match_parse_kind(entry: str, gvks: tuple) -> None:
    k = parse_kind(entry)
    assert (k.group, k.version, k.kind, k.subresource) == gvks


def _filter_matches(resources: dict, resource: dict) -> bool:
    problems: list[tuple[str, str]] = []
    compiled = parse_filter({"resources": resources}, problems, "/match")
    assert problems == []
    return compiled.matches(ResourceView.of(resource), Request(), exclude=False)


POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "namespace": "default"}}


@pytest.mark.parametrize(
    ("resources", "resource", "expected"),
    [
        pytest.param({"kinds": ["Pod"], "name": ""}, POD, True, id="empty-name-is-no-condition"),
        pytest.param({"kinds": ["Pod"], "name": "", "names": ["web"]}, POD, True, id="empty-name-beside-names"),
        pytest.param({"kinds": ["Pod"], "selector": {"matchLabels": {"app": "web"}}},
                     {**POD, "metadata": {"name": "web", "labels": {"app": "web", "replicas": 2.0}}}, False,
                     id="one-non-string-label-hides-all-labels"),
        pytest.param({"kinds": ["Pod"], "annotations": {"team": "*"}},
                     {**POD, "metadata": {"name": "web", "annotations": {"team": "a", "enabled": True}}}, False,
                     id="one-non-string-annotation-hides-all-annotations"),
        pytest.param({"kinds": ["Pod"], "names": ["gen-*"]},
                     {**POD, "metadata": {"name": 7, "generateName": "gen-"}}, True,
                     id="non-string-name-falls-back-to-generate-name"),
    ],
)
def test_match_filter_reads_metadata_like_kubernetes(resources: dict, resource: dict, expected: bool) -> None:
    assert _filter_matches(resources, resource) is expected


def test_match_selector_without_requirements_makes_policy_invalid() -> None:
    doc = y("""
    apiVersion: kyverno.io/v1
    kind: ClusterPolicy
    metadata: {name: p}
    spec:
      rules:
      - name: r
        match: {any: [{resources: {kinds: [Pod], selector: {}}}]}
        validate: {pattern: {metadata: {name: '?*'}}}
    """)
    with pytest.raises(InvalidPolicyError, match="requirements are not specified"):
        parse_policy(doc)
