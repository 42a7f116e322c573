"""Kyverno's own unit-test tables for wildcard keys, failure-action overrides and PolicyException
matching, translated case by case and run against the engine.

Sources (kyverno/kyverno):
* ``pkg/engine/wildcards/wildcards.go`` / ``wildcards_test.go`` (ExpandInMetadata, getValueAsStringMap)
* ``pkg/utils/match/labels_test.go`` (CheckSelector with ReplaceInSelector), ``annotations_test.go``
* ``pkg/engine/validate/validate.go`` (validateMap calls ExpandInMetadata on the shared pattern map)
* ``pkg/engine/api/engineresponse.go`` / ``engineresponse_test.go`` (matchesFailureActionOverride,
  ResolveValidationFailureAction, GetValidationFailureAction)
* ``api/kyverno/v2/policy_exception_types.go`` (Contains, HasPodSecurity),
  ``pkg/engine/utils/exceptions.go`` / ``exceptions_test.go`` (MatchesException and its filters),
  ``api/kyverno/v1`` ``ResourceFilter.IsEmpty`` / ``ResourceDescription.IsEmpty``
"""

from __future__ import annotations

from typing import Any

import pytest

from scanner.engine.environment import make_environment
from scanner.engine.evaluate import evaluate_policy, resolve_action
from scanner.engine.exceptions import parse_exception
from scanner.engine.match import KindSelector, Request, ResourceFilter, ResourceView, UserInfo
from scanner.engine.metadata_expansion import expand_in_metadata
from scanner.engine.pattern import CompiledPattern
from scanner.engine.policy import InvalidPolicyError, Policy, parse_policy
from scanner.engine.rule import parse_overrides
from scanner.engine.selector import parse_selector
from scanner.engine.types import FailureAction, RuleStatus

from .conftest import y

AUDIT, ENFORCE = FailureAction.AUDIT, FailureAction.ENFORCE


# -- (a) wildcards.go: ExpandInMetadata ---------------------------------------------------------


def _labels_pattern(labels: Any, tag: str = "labels") -> dict:
    return {"metadata": {tag: labels}}


def _labels_resource(labels: Any, tag: str = "labels") -> dict:
    return {"metadata": {tag: labels}}


@pytest.mark.parametrize(
    ("pattern", "resource", "expected"),
    [
        # TestExpandInMetadata (replaceWildcardsInMapKeys)
        pytest.param({"test/*": "*"}, {"test/test": "test"}, {"test/test": "*"}, id="go-expand-plain-key"),
        pytest.param({"=(test/*)": "test"}, {"test/test": "test"}, {"=(test/test)": "test"},
                     id="go-expand-keeps-anchor"),
        pytest.param({"test/*": "*"}, {"test/test1": "test1"}, {"test/test1": "*"}, id="go-expand-other-value"),
        # no resource key matches: the key is kept as written (expandWildcards without replace)
        pytest.param({"app.kubernetes.io/*": "?*"}, {"team": "a"}, {"app.kubernetes.io/*": "?*"},
                     id="no-match-keeps-key"),
        pytest.param({"X(fluxcd.io/*)": "*"}, {"team": "a"}, {"X(fluxcd.io/*)": "*"},
                     id="no-match-keeps-anchored-key"),
        # every anchor type keeps its wrapper (anchor.String(type, key))
        pytest.param({"(app*)": "a", "^(env*)": "b", "<(team*)": "c", "+(tier*)": "d"},
                     {"app-x": "1", "env-y": "2", "team-z": "3", "tier-w": "4"},
                     {"(app-x)": "a", "^(env-y)": "b", "<(team-z)": "c", "+(tier-w)": "d"},
                     id="all-anchor-wrappers-kept"),
        # anchor.Parse trims spaces and anchor.String rebuilds the key without them
        pytest.param({" =(app*) ": "a"}, {"app-x": "1"}, {"=(app-x)": "a"}, id="anchor-rebuilt-without-spaces"),
        # keys without wildcards are copied untouched
        pytest.param({"team": "?*", "app*": "x"}, {"app-1": "x", "team": "t"}, {"team": "?*", "app-1": "x"},
                     id="literal-keys-untouched"),
        # TestGetValueAsStringMap_NilHandling: nil and non-string pattern values are skipped
        pytest.param({"key1": "value1", "key2": None, "key3": "value3"}, {"a": "b"},
                     {"key1": "value1", "key3": "value3"}, id="go-nil-pattern-value-dropped"),
        pytest.param({"key1": "value1", "key2": 123, "key3": {"nested": "value"}, "key4": "value4"}, {"a": "b"},
                     {"key1": "value1", "key4": "value4"}, id="go-non-string-pattern-values-dropped"),
        pytest.param({"key1": "value1", "key2": "value2"}, {"a": "b"}, {"key1": "value1", "key2": "value2"},
                     id="go-all-strings-kept"),
        # the resource side goes through getValueAsStringMap too: non-string label values are not candidates
        pytest.param({"app*": "?*"}, {"app-version": 1.0}, {"app*": "?*"},
                     id="non-string-resource-label-not-a-candidate"),
        pytest.param({"app*": "?*"}, {"app-version": 1.0, "app-name": "web"}, {"app-name": "?*"},
                     id="string-resource-label-still-a-candidate"),
        # an empty resource map still rebuilds the pattern map (non-strings dropped)
        pytest.param({"k": None, "app*": "x"}, {}, {"app*": "x"}, id="empty-resource-map-rebuilds"),
    ],
)
def test_expand_in_metadata_labels(pattern: dict, resource: dict, expected: dict) -> None:
    for tag in ("labels", "annotations"):
        out = expand_in_metadata(_labels_pattern(pattern, tag), _labels_resource(resource, tag))
        assert out["metadata"][tag] == expected


@pytest.mark.parametrize(
    ("pattern", "resource"),
    [
        # TestGetValueAsStringMap_NilHandling on the pattern side: nothing to expand
        pytest.param({"metadata": {"labels": None}}, {"metadata": {"labels": {"a": "b"}}}, id="go-value-is-nil"),
        pytest.param({"metadata": {"labels": "not a map"}}, {"metadata": {"labels": {"a": "b"}}},
                     id="go-value-is-not-a-map"),
        pytest.param({"metadata": {"otherKey": "value"}}, {"metadata": {"labels": {"a": "b"}}},
                     id="go-key-not-found"),
        pytest.param({"metadata": "not a map"}, {"metadata": {"labels": {"a": "b"}}}, id="go-data-not-a-map"),
        pytest.param({"spec": {"labels": {"x*": None}}}, {"metadata": {"labels": {"a": "b"}}}, id="no-metadata"),
        # the resource side: no labels map, or no metadata at all, leaves the pattern as it is
        pytest.param({"metadata": {"labels": {"x*": None}}}, {"metadata": {"name": "n"}}, id="resource-no-labels"),
        pytest.param({"metadata": {"labels": {"x*": None}}}, {"metadata": {"labels": None}},
                     id="resource-labels-null"),
        pytest.param({"metadata": {"labels": {"x*": None}}}, {"metadata": {"labels": "text"}},
                     id="resource-labels-not-a-map"),
        pytest.param({"metadata": {"labels": {"x*": None}}}, {"kind": "Pod"}, id="resource-no-metadata"),
    ],
)
def test_expand_in_metadata_leaves_pattern(pattern: dict, resource: dict) -> None:
    assert expand_in_metadata(pattern, resource) == pattern


def test_expand_in_metadata_go_jmespath_nil() -> None:
    """TestJMESPathNil / TestExpandInMetadata_NilSafety: nil and map values neither panic nor survive."""
    pattern = {"metadata": {"labels": {"normal": "value", "nil-value": None},
                            "annotations": {"another-normal": "value", "complex-value": {"nested": "value"}}}}
    resource = {"metadata": {"labels": {"app": "test"}, "annotations": {"test": "value"}}}
    out = expand_in_metadata(pattern, resource)
    assert out["metadata"]["labels"] == {"normal": "value"}
    assert out["metadata"]["annotations"] == {"another-normal": "value"}


def test_expand_in_metadata_anchored_tags() -> None:
    """getPatternValue accepts an anchored ``metadata`` / ``labels`` key and keeps the anchor."""
    pattern = {"=(metadata)": {"=(labels)": {"app*": "?*"}}}
    out = expand_in_metadata(pattern, {"metadata": {"labels": {"app-1": "x"}}})
    assert out == {"=(metadata)": {"=(labels)": {"app-1": "?*"}}}


# -- (a) wildcard keys through the pattern walk (validateMap) -------------------------------------


def _pod(labels: Any = None, annotations: Any = None) -> dict:
    meta: dict = {"name": "p"}
    if labels is not None:
        meta["labels"] = labels
    if annotations is not None:
        meta["annotations"] = annotations
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": {}}


@pytest.mark.parametrize(
    ("pattern", "resource", "status", "path"),
    [
        pytest.param({"metadata": {"labels": {"app.kubernetes.io/*": "?*"}}},
                     _pod({"app.kubernetes.io/name": "web"}), "pass", "", id="wildcard-key-found"),
        pytest.param({"metadata": {"labels": {"app.kubernetes.io/*": "?*"}}},
                     _pod({"app.kubernetes.io/name": ""}), "fail", "/metadata/labels/app.kubernetes.io/name/",
                     id="wildcard-key-found-value-fails"),
        # no key matches: the wildcard key is looked up literally and is missing
        pytest.param({"metadata": {"labels": {"app.kubernetes.io/*": "?*"}}},
                     _pod({"team": "a"}), "fail", "/metadata/labels/app.kubernetes.io/*/",
                     id="wildcard-key-missing-fails"),
        pytest.param({"metadata": {"labels": {"app.kubernetes.io/*": "?*"}}},
                     _pod(), "fail", "/metadata/labels/", id="no-labels-fails"),
        # negation: a matching key is present -> fail; none -> pass
        pytest.param({"metadata": {"=(annotations)": {"X(fluxcd.io/*)": "*?"}}},
                     _pod(annotations={"fluxcd.io/automated": "true"}), "fail",
                     "/metadata/annotations/fluxcd.io/automated/", id="negation-wildcard-key-present"),
        pytest.param({"metadata": {"=(annotations)": {"X(fluxcd.io/*)": "*?"}}},
                     _pod(annotations={"other": "x"}), "pass", "", id="negation-wildcard-key-absent"),
        # a null value under labels is dropped by the rebuild, so the negation disappears
        pytest.param({"metadata": {"annotations": {"X(fluxcd.io/*)": None}}},
                     _pod(annotations={"fluxcd.io/automated": "true"}), "pass", "",
                     id="negation-with-null-value-dropped"),
        # a label with a number value is not a candidate for the wildcard key
        pytest.param({"metadata": {"labels": {"version*": "?*"}}},
                     _pod({"version-major": 1}), "fail", "/metadata/labels/version*/",
                     id="number-valued-label-not-expanded"),
        # conditional anchor on a wildcard key
        pytest.param({"metadata": {"labels": {"(tier*)": "web", "team": "?*"}}},
                     _pod({"tier-a": "db"}), "skip", "", id="conditional-wildcard-key-skips"),
        pytest.param({"metadata": {"labels": {"(tier*)": "web", "team": "?*"}}},
                     _pod({"tier-a": "web"}), "fail", "/metadata/labels/team/",
                     id="conditional-wildcard-key-applies"),
    ],
)
def test_wildcard_keys_in_pattern_walk(pattern: dict, resource: dict, status: str, path: str) -> None:
    outcome = CompiledPattern(pattern).match(resource)
    assert outcome.status == status
    if path:
        assert outcome.path == path


@pytest.mark.parametrize(
    ("items", "status", "path"),
    [
        # validateArrayOfMaps hands the same pattern map to every element and ExpandInMetadata rewrites it
        # in place: the key expanded for the first element is looked up literally in the second
        pytest.param([{"metadata": {"labels": {"app-a": "x"}}}, {"metadata": {"labels": {"app-b": "x"}}}],
                     "fail", "/spec/items/1/metadata/labels/app-a/", id="first-expansion-persists"),
        pytest.param([{"metadata": {"labels": {"app-a": "x"}}}, {"metadata": {"labels": {"app-a": "x"}}}],
                     "pass", "", id="same-key-in-every-element"),
        # an element that expands nothing leaves the wildcard key for the next one
        pytest.param([{"metadata": {"labels": {"team": "x"}}}, {"metadata": {"labels": {"app-b": "x"}}}],
                     "fail", "/spec/items/0/metadata/labels/app*/", id="unexpanded-key-stays-wildcard"),
        pytest.param([{"metadata": {"name": "n"}}, {"metadata": {"labels": {"app-b": "x"}}}],
                     "fail", "/spec/items/0/metadata/labels/", id="element-without-labels-expands-nothing"),
    ],
)
def test_wildcard_expansion_persists_across_list_elements(items: list, status: str, path: str) -> None:
    pattern = CompiledPattern({"spec": {"items": [{"metadata": {"labels": {"app*": "x"}}}]}})
    resource = {"apiVersion": "v1", "kind": "List", "metadata": {"name": "l"}, "spec": {"items": items}}
    outcome = pattern.match(resource)
    assert outcome.status == status
    if path:
        assert outcome.path == path
    # a fresh evaluation starts again from the pattern as written
    again = pattern.match({"spec": {"items": [{"metadata": {"labels": {"app-b": "x"}}}]}})
    assert again.status == "pass"


def test_wildcard_expansion_persists_below_a_rewritten_map() -> None:
    """The outer map is rewritten for the second element only; the inner list pattern is still the one
    map Kyverno shares, so the inner key expanded for the first element stays expanded."""
    pattern = CompiledPattern({"spec": {"items": [{
        "metadata": {"labels": {"=(tier*)": "?*"}},
        "spec": {"parts": [{"metadata": {"labels": {"app*": "x"}}}]},
    }]}})
    items = [
        {"metadata": {"labels": {"other": "1"}}, "spec": {"parts": [{"metadata": {"labels": {"app-a": "x"}}}]}},
        {"metadata": {"labels": {"tier-b": "1"}}, "spec": {"parts": [{"metadata": {"labels": {"app-b": "x"}}}]}},
    ]
    outcome = pattern.match({"spec": {"items": items}})
    assert (outcome.status, outcome.path) == ("fail", "/spec/items/1/spec/parts/0/metadata/labels/app-a/")


# -- (a) ReplaceInSelector through CheckSelector (labels_test.go) and CheckAnnotations ----------


@pytest.mark.parametrize(
    ("match_labels", "actual", "want"),
    [
        pytest.param({}, {}, True, id="go-empty-selector-empty-labels"),
        pytest.param({}, {"foo": "bar"}, True, id="go-empty-selector"),
        pytest.param({"test.io/*": "bar"}, {"foo": "bar"}, False, id="go-wildcard-key-no-match"),
        pytest.param({"scale.test.io/*": "bar"}, {"foo": "bar"}, False, id="go-wildcard-key-no-match-2"),
        pytest.param({"test.io/*": "bar"}, {"test.io/scale": "foo", "test.io/functional": "bar"}, True,
                     id="go-wildcard-key-value-match"),
        pytest.param({"test.io/*": "*"}, {"test.io/scale": "foo", "test.io/functional": "bar"}, True,
                     id="go-wildcard-key-any-value"),
        pytest.param({"test.io/*": "a*"}, {"test.io/scale": "foo", "test.io/functional": "bar"}, False,
                     id="go-wildcard-value-no-match"),
        pytest.param({"test.io/scale": "f??"}, {"test.io/scale": "foo", "test.io/functional": "bar"}, True,
                     id="go-question-marks"),
        pytest.param({"*": "*"}, {"test.io/scale": "foo", "test.io/functional": "bar"}, True, id="go-star-star"),
        pytest.param({"test.io/functional": "foo"}, {"test.io/scale": "foo", "test.io/functional": "bar"}, False,
                     id="go-literal-mismatch"),
        pytest.param({"*": "*"}, {}, False, id="go-star-star-empty-labels"),
        # the rewritten key "abc/def/ghi" is not a valid label key: CheckSelector errors -> no match
        pytest.param({"abc/def/ghi": "*"}, {}, False, id="go-invalid-rewritten-key"),
    ],
)
def test_check_selector(match_labels: dict, actual: dict, want: bool) -> None:
    selector, problem = parse_selector({"matchLabels": match_labels})
    if selector is None:  # refused when compiled: the filter can never match
        assert problem and not want
        return
    assert selector.matches(actual) is want


_POD_KIND = (KindSelector("*", "*", "Pod", ""),)


@pytest.mark.parametrize(
    ("expected", "actual", "want"),
    [
        pytest.param({}, {}, True, id="go-empty"),
        pytest.param({"test/*": "*"}, {}, False, id="go-no-annotations"),
        pytest.param({"test/*": "*"}, {"tes1/test": "*"}, False, id="go-key-mismatch"),
        pytest.param({"test/*": "*"}, {"test/test": "*"}, True, id="go-key-match"),
        pytest.param({"test/*": "*"}, {"test/bar": "foo"}, True, id="go-any-value"),
        pytest.param({"test/b*": "*"}, {"test/bar": "foo"}, True, id="go-prefix"),
        pytest.param({"test/b*": "*", "test2/*": "*"}, {"test/bar": "foo"}, False, id="go-one-missing"),
        pytest.param({"test/b*": "*", "test2/*": "*"}, {"test/bar": "foo", "test2/123": "bar"}, True,
                     id="go-both-present"),
        pytest.param({"test/b*": "*", "test2/*": "*"},
                     {"test/bar": "foo", "test2/123": "bar", "test3/123": "bar2"}, True, id="go-extra-ignored"),
    ],
)
def test_check_annotations(expected: dict, actual: dict, want: bool) -> None:
    f = ResourceFilter(kinds=_POD_KIND, annotations=tuple(expected.items()))
    view = ResourceView.of(_pod(annotations=actual))
    assert f.matches(view, Request(), exclude=False) is want


# -- (b) failure action: GetValidationFailureAction / ResolveValidationFailureAction -------------


def _policy(spec_action: str | None = None, spec_overrides: list | None = None,
            rule_action: str | None = None, rule_overrides: list | None = None) -> Policy:
    validate: dict = {"pattern": {"metadata": {"name": "?*"}}}
    if rule_action is not None:
        validate["failureAction"] = rule_action
    if rule_overrides is not None:
        validate["failureActionOverrides"] = rule_overrides
    spec: dict = {"rules": [{"name": "r", "match": {"any": [{"resources": {"kinds": ["Pod"]}}]},
                             "validate": validate}]}
    if spec_action is not None:
        spec["validationFailureAction"] = spec_action
    if spec_overrides is not None:
        spec["validationFailureActionOverrides"] = spec_overrides
    return parse_policy({"apiVersion": "kyverno.io/v1", "kind": "ClusterPolicy",
                         "metadata": {"name": "p"}, "spec": spec})


def _request(labels: dict | None) -> Request:
    return Request(namespace_labels=lambda _ns: labels)


@pytest.mark.parametrize(
    ("spec_action", "overrides", "namespace", "labels", "want"),
    [
        # TestEngineResponse_GetValidationFailureAction (resource namespace "foo" where set, else "")
        pytest.param("Audit", None, "", None, AUDIT, id="go-audit"),
        pytest.param("Enforce", None, "", None, ENFORCE, id="go-enforce"),
        pytest.param("Enforce", [{"action": "Audit", "namespaces": ["*"]}], "", None, AUDIT,
                     id="go-star-matches-empty-namespace"),
        pytest.param("Enforce", [{"action": "Audit", "namespaces": ["foo"]}], "foo", None, AUDIT,
                     id="go-namespace-listed"),
        pytest.param("Enforce", [{"action": "Audit", "namespaces": ["bar"]}], "foo", None, ENFORCE,
                     id="go-namespace-not-listed"),
        pytest.param("Enforce", [{"action": "Audit", "namespaceSelector": {"matchLabels": {"bar": "foo"}}}],
                     "foo", {"foo": "bar"}, ENFORCE, id="go-selector-no-match"),
        pytest.param("Enforce", [{"action": "Audit", "namespaceSelector": {"matchLabels": {"foo": "bar"}}}],
                     "foo", {"foo": "bar"}, AUDIT, id="go-selector-match"),
        pytest.param("Enforce", [{"action": "Audit", "namespaces": ["foo"],
                                  "namespaceSelector": {"matchLabels": {"bar": "foo"}}}],
                     "foo", {"foo": "bar"}, ENFORCE, id="go-namespace-ok-selector-no"),
        pytest.param("Enforce", [{"action": "Audit", "namespaces": ["bar"],
                                  "namespaceSelector": {"matchLabels": {"foo": "bar"}}}],
                     "foo", {"foo": "bar"}, ENFORCE, id="go-namespace-no-selector-ok"),
        pytest.param("Enforce", [{"action": "Audit", "namespaces": ["foo"],
                                  "namespaceSelector": {"matchLabels": {"foo": "bar"}}}],
                     "foo", {"foo": "bar"}, AUDIT, id="go-namespace-and-selector"),
        pytest.param("Enforce", [{"action": "Audit", "namespaces": ["*"],
                                  "namespaceSelector": {"matchLabels": {"foo": "bar"}}}],
                     "foo", {"foo": "bar"}, AUDIT, id="go-star-and-selector"),
        # matchesFailureActionOverride: neither namespaces nor selector -> applies to every namespace
        pytest.param("Enforce", [{"action": "Audit"}], "foo", None, AUDIT, id="no-namespaces-no-selector"),
        pytest.param("Enforce", [{"action": "Audit"}], "", None, AUDIT, id="no-namespaces-cluster-scoped"),
        # an empty namespaces list is not nil: nothing in it matches
        pytest.param("Enforce", [{"action": "Audit", "namespaces": []}], "foo", None, ENFORCE,
                     id="empty-namespaces-list"),
        # wildcard namespace names
        pytest.param("Enforce", [{"action": "Audit", "namespaces": ["dev-*"]}], "dev-1", None, AUDIT,
                     id="namespace-wildcard"),
        pytest.param("Enforce", [{"action": "Audit", "namespaces": ["dev-?"]}], "dev-12", None, ENFORCE,
                     id="namespace-question-mark"),
        pytest.param("Enforce", [{"action": "Audit", "namespaces": ["dev-*"]}], "", None, ENFORCE,
                     id="cluster-scoped-misses-named-pattern"),
        # first matching override wins; the deprecated lowercase spellings are valid actions
        pytest.param("Audit", [{"action": "enforce", "namespaces": ["abc"]}, {"action": "Audit"}],
                     "abc", None, ENFORCE, id="first-match-wins-lowercase"),
        pytest.param("Enforce", [{"action": "enforce", "namespaces": ["abc"]}, {"action": "audit"}],
                     "x", None, AUDIT, id="second-override-applies"),
        # the selector goes through ReplaceInSelector
        pytest.param("Enforce", [{"action": "Audit", "namespaceSelector": {"matchLabels": {"env*": "prod"}}}],
                     "x", {"environment": "prod"}, AUDIT, id="selector-wildcard-key"),
        pytest.param("Enforce", [{"action": "Audit", "namespaceSelector": {"matchLabels": {"env*": "prod"}}}],
                     "x", None, ENFORCE, id="selector-no-labels"),
        pytest.param("Enforce", [{"action": "Audit", "namespaceSelector": {}}], "x", None, AUDIT,
                     id="empty-selector-matches"),
    ],
)
def test_policy_level_action(spec_action: str, overrides: list | None, namespace: str, labels: dict | None,
                             want: FailureAction) -> None:
    policy = _policy(spec_action=spec_action, spec_overrides=overrides)
    assert resolve_action(policy, policy.rules[0], namespace, _request(labels)) is want


@pytest.mark.parametrize(
    ("kwargs", "namespace", "want"),
    [
        # ResolveValidationFailureAction: rule overrides -> rule action -> spec overrides -> spec action
        pytest.param({"spec_action": "Enforce", "rule_action": "Audit"}, "x", AUDIT, id="rule-action-over-spec"),
        pytest.param({"spec_action": "Audit", "rule_action": "Enforce"}, "x", ENFORCE, id="rule-enforce-over-spec"),
        pytest.param({"spec_action": "Enforce", "spec_overrides": [{"action": "Audit", "namespaces": ["x"]}],
                      "rule_action": "Enforce"}, "x", ENFORCE, id="rule-action-beats-spec-overrides"),
        pytest.param({"rule_action": "Enforce", "rule_overrides": [{"action": "Audit", "namespaces": ["x"]}]},
                     "x", AUDIT, id="rule-override-beats-rule-action"),
        pytest.param({"rule_action": "Enforce", "rule_overrides": [{"action": "Audit", "namespaces": ["y"]}]},
                     "x", ENFORCE, id="rule-override-not-matching"),
        pytest.param({"spec_action": "Enforce", "rule_overrides": [{"action": "Audit", "namespaces": ["y"]}],
                      "spec_overrides": [{"action": "Audit", "namespaces": ["x"]}]},
                     "x", AUDIT, id="spec-override-after-unmatched-rule-override"),
        pytest.param({"spec_action": "Audit", "rule_overrides": [{"action": "Enforce"}]}, "", ENFORCE,
                     id="rule-override-without-namespaces-cluster-scoped"),
        pytest.param({}, "x", AUDIT, id="default-audit"),
        pytest.param({"spec_action": "enforce"}, "x", ENFORCE, id="lowercase-enforce"),
    ],
)
def test_rule_level_action(kwargs: dict, namespace: str, want: FailureAction) -> None:
    policy = _policy(**kwargs)
    assert resolve_action(policy, policy.rules[0], namespace, Request()) is want


@pytest.mark.parametrize(
    "overrides",
    [
        # go "invalid" case: matchesFailureActionOverride skips an entry whose action is not valid
        pytest.param([{"action": "invalid", "namespaces": ["*"]}], id="go-invalid-action-ignored"),
        pytest.param([{"action": "Warn", "namespaces": ["*"]}, {"action": "audit", "namespaces": ["*"]}],
                     id="invalid-then-valid"),
    ],
)
def test_invalid_override_actions(overrides: list) -> None:
    """Kyverno's engine skips an override with an unknown action; Kyverno's policy validation
    (which the CLI runs first) refuses the policy, and so does the scanner (spec 1.7)."""
    problems: list = []
    kept = parse_overrides(overrides, problems, "/spec/validationFailureActionOverrides")
    assert [o.action for o in kept] == [AUDIT] * (len(overrides) - 1)
    assert not problems
    with pytest.raises(InvalidPolicyError):
        _policy(spec_action="Enforce", spec_overrides=overrides)


# -- (c) PolicyException: Contains, MatchesException ------------------------------------------------

NO_HOST = parse_policy(y("""
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: no-host}
spec:
  rules:
  - name: no-host-pid
    match: {any: [{resources: {kinds: [Pod]}}]}
    validate: {pattern: {spec: {X(hostPID): "null"}}}
"""))

NS_POLICY = parse_policy(y("""
apiVersion: kyverno.io/v1
kind: Policy
metadata: {name: no-host, namespace: team}
spec:
  rules:
  - name: no-host-pid
    match: {any: [{resources: {kinds: [Pod]}}]}
    validate: {pattern: {spec: {X(hostPID): "null"}}}
"""))


def _host_pod(ns: str = "legacy", name: str = "p", labels: dict | None = None, kind: str = "Pod") -> dict:
    spec: dict = {"hostPID": True}
    if kind == "Deployment":
        spec = {"template": {"spec": spec}}
    elif kind == "CronJob":
        spec = {"jobTemplate": {"spec": {"template": {"spec": spec}}}}
    return {"apiVersion": "apps/v1" if kind == "Deployment" else ("batch/v1" if kind == "CronJob" else "v1"),
            "kind": kind, "metadata": {"name": name, "namespace": ns, "labels": labels or {}}, "spec": spec}


def _exception(name: str = "e", policy: str = "no-host", rules: Any = ("no-host-pid",),
               match: Any = None, **spec: Any) -> dict:
    body: dict = {"exceptions": [{"policyName": policy, "ruleNames": list(rules)}],
                  "match": match if match is not None else {"any": [{"resources": {"kinds": ["Pod"]}}]}}
    body.update(spec)
    return {"apiVersion": "kyverno.io/v2", "kind": "PolicyException",
            "metadata": {"name": name, "namespace": "kyverno"}, "spec": body}


def _statuses(policy: Policy, resource: dict, *exceptions: dict, request: Request | None = None) -> list:
    env = make_environment(exceptions=tuple(parse_exception(e) for e in exceptions))
    return [(str(r.rule), str(r.status), r.message) for r in evaluate_policy(policy, resource, request, env=env)]


@pytest.mark.parametrize(
    ("policy_name", "rules", "policy", "skipped"),
    [
        # Exception.Contains: wildcard policy keys (newer Kyverno; older versions compared them
        # exactly) and rule names
        pytest.param("no-host", ["no-host-pid"], NO_HOST, True, id="exact-names"),
        pytest.param("no-host", ["no-*"], NO_HOST, True, id="rule-wildcard"),
        pytest.param("no-host", ["*"], NO_HOST, True, id="rule-star"),
        pytest.param("no-host", ["no-host-pi?"], NO_HOST, True, id="rule-question-mark"),
        pytest.param("no-host", ["No-Host-Pid"], NO_HOST, False, id="rule-case-sensitive"),
        pytest.param("no-host", [], NO_HOST, False, id="no-rule-names"),
        pytest.param("no-*", ["no-host-pid"], NO_HOST, True, id="policy-name-is-a-pattern"),
        pytest.param("yes-*", ["no-host-pid"], NO_HOST, False, id="policy-pattern-not-matching"),
        pytest.param("other", ["no-host-pid"], NO_HOST, False, id="other-policy"),
        # a namespaced Policy is named namespace/name
        pytest.param("team/no-host", ["no-host-pid"], NS_POLICY, True, id="namespaced-policy-key"),
        pytest.param("no-host", ["no-host-pid"], NS_POLICY, False, id="namespaced-policy-bare-name"),
    ],
)
def test_exception_contains(policy_name: str, rules: list, policy: Policy, skipped: bool) -> None:
    exc = _exception(policy=policy_name, rules=rules)
    [(_, status, _)] = _statuses(policy, _host_pod("team"), exc)
    assert (status == "skip") is skipped


@pytest.mark.parametrize(
    ("kind", "rules", "skipped"),
    [
        # GetPolicyExceptions is asked with the evaluated rule's name, autogen prefix included
        pytest.param("Deployment", ["no-host-pid"], False, id="deployment-declared-name-only"),
        pytest.param("Deployment", ["autogen-no-host-pid"], True, id="deployment-autogen-name"),
        pytest.param("Deployment", ["autogen-*"], True, id="deployment-autogen-wildcard"),
        pytest.param("Deployment", ["*no-host-pid"], True, id="deployment-leading-wildcard"),
        pytest.param("CronJob", ["autogen-no-host-pid"], False, id="cronjob-not-plain-autogen"),
        pytest.param("CronJob", ["autogen-cronjob-no-host-pid"], True, id="cronjob-autogen-name"),
        pytest.param("CronJob", ["autogen-*"], True, id="cronjob-autogen-wildcard"),
        pytest.param("Pod", ["autogen-*"], False, id="pod-not-autogen"),
    ],
)
def test_exception_autogen_rule_names(kind: str, rules: list, skipped: bool) -> None:
    kinds = ["Pod", "Deployment", "CronJob"]
    exc = _exception(rules=rules, match={"any": [{"resources": {"kinds": kinds}}]})
    [(_, status, _)] = _statuses(NO_HOST, _host_pod(kind=kind), exc)
    assert (status == "skip") is skipped


def _view(kind: str = "Pod", name: str = "test-pod", namespace: str = "default") -> ResourceView:
    api = "v1" if kind in ("Pod", "Namespace") else "apps/v1"
    meta: dict = {"name": name}
    if namespace:
        meta["namespace"] = namespace
    return ResourceView.of({"apiVersion": api, "kind": kind, "metadata": meta})


def _exception_matches(filters: list, view: ResourceView, request: Request | None = None,
                       mode: str = "any") -> bool:
    exc = parse_exception(_exception(match={mode: filters}, background=False))
    return exc.matches(view, request or Request(), None)


@pytest.mark.parametrize(
    ("filters", "user", "want"),
    [
        # TestCheckUserInfo_*: roles / clusterRoles / subjects (through a filter that also has kinds)
        pytest.param([{"resources": {"kinds": ["Pod"]}}], UserInfo(), True, id="go-empty-user-info"),
        pytest.param([{"resources": {"kinds": ["Pod"]}, "roles": ["ns:admin", "ns:developer"]}],
                     UserInfo(roles=("ns:admin",)), True, id="go-matching-roles"),
        pytest.param([{"resources": {"kinds": ["Pod"]}, "roles": ["ns:admin"]}],
                     UserInfo(roles=("ns:viewer",)), False, id="go-non-matching-roles"),
        pytest.param([{"resources": {"kinds": ["Pod"]}, "clusterRoles": ["cluster-admin"]}],
                     UserInfo(cluster_roles=("cluster-admin",)), True, id="go-matching-cluster-roles"),
        pytest.param([{"resources": {"kinds": ["Pod"]}, "clusterRoles": ["cluster-admin"]}],
                     UserInfo(cluster_roles=("viewer",)), False, id="go-non-matching-cluster-roles"),
        pytest.param([{"resources": {"kinds": ["Pod"]}, "subjects": [{"kind": "User", "name": "admin@example.com"}]}],
                     UserInfo(username="admin@example.com"), True, id="go-matching-subjects"),
        # user info is not relaxed for exceptions: no request user means no match
        pytest.param([{"resources": {"kinds": ["Pod"]}, "clusterRoles": ["cluster-admin"]}], None, False,
                     id="no-request-user"),
        # a user-info-only filter is not empty
        pytest.param([{"clusterRoles": ["cluster-admin"]}], UserInfo(cluster_roles=("cluster-admin",)), True,
                     id="user-info-only-filter"),
    ],
)
def test_exception_user_info(filters: list, user: UserInfo | None, want: bool) -> None:
    assert _exception_matches(filters, _view(), Request(user=user)) is want


@pytest.mark.parametrize(
    ("filters", "view", "want"),
    [
        # TestCheckResourceDescription_* / TestCheckResourceFilter_* / TestCheckMatchesResources_*
        pytest.param([{"resources": {"kinds": ["Pod"]}}], _view(), True, id="go-matching-kind"),
        pytest.param([{"resources": {"kinds": ["Deployment"]}}], _view(), False, id="go-non-matching-kind"),
        pytest.param([{"resources": {"name": "test-*"}}], _view(name="test-pod"), True, id="go-matching-name"),
        pytest.param([{"resources": {"name": "test-*"}}], _view(name="prod-pod"), False, id="go-non-matching-name"),
        pytest.param([{"resources": {"namespaces": ["default", "kube-system"]}}], _view(), True,
                     id="go-matching-namespace"),
        pytest.param([{"resources": {"namespaces": ["production"]}}], _view(), False, id="go-non-matching-namespace"),
        pytest.param([{}], _view(), False, id="go-empty-statement"),
        pytest.param([{"resources": {}}], _view(), False, id="go-empty-resources"),
        pytest.param([{"resources": {"kinds": ["Pod"]}}], _view(), True, id="go-any-matches"),
        # names list, Namespace objects use their own name as namespace
        pytest.param([{"resources": {"names": ["a", "test-?od"]}}], _view(name="test-pod"), True, id="names"),
        pytest.param([{"resources": {"namespaces": ["legacy"]}}], _view(kind="Namespace", name="legacy",
                                                                         namespace=""), True,
                     id="namespace-object-own-name"),
        # ResourceDescription.IsEmpty ignores operations: an operations-only filter is empty
        pytest.param([{"resources": {"operations": ["CREATE"]}}], _view(), False, id="operations-only-is-empty"),
        pytest.param([{"resources": {"kinds": ["Pod"], "operations": ["CREATE"]}}], _view(), True,
                     id="operations-with-kinds"),
        pytest.param([{"resources": {"kinds": ["Pod"], "operations": ["DELETE"]}}], _view(), False,
                     id="operations-mismatch"),
        # checkResourceDescription skips empty lists (len(...) > 0)
        pytest.param([{"resources": {"kinds": ["Pod"], "namespaces": []}}], _view(), True,
                     id="empty-namespaces-list-skipped"),
        pytest.param([{"resources": {"kinds": ["Pod"], "names": []}}], _view(), True, id="empty-names-list-skipped"),
        pytest.param([{"resources": {"kinds": ["Pod"], "operations": []}}], _view(), True,
                     id="empty-operations-list-skipped"),
        # the namespaceSelector is not evaluated for Namespace objects (no failure, unlike rule matching)
        pytest.param([{"resources": {"kinds": ["Namespace"], "namespaceSelector": {"matchLabels": {"a": "b"}}}}],
                     _view(kind="Namespace", name="legacy", namespace=""), True,
                     id="namespace-selector-ignored-for-namespaces"),
        pytest.param([{"resources": {"kinds": ["Pod"], "namespaceSelector": {"matchLabels": {"a": "b"}}}}],
                     _view(), False, id="namespace-selector-for-pods"),
        # selector goes through ReplaceInSelector
        pytest.param([{"resources": {"selector": {"matchLabels": {"app*": "*"}}}}],
                     ResourceView.of({"apiVersion": "v1", "kind": "Pod",
                                      "metadata": {"name": "p", "labels": {"app.kubernetes.io/name": "x"}}}),
                     True, id="selector-wildcard-key"),
    ],
)
def test_exception_resource_filters(filters: list, view: ResourceView, want: bool) -> None:
    assert _exception_matches(filters, view) is want


@pytest.mark.parametrize(
    ("filters", "want"),
    [
        # TestCheckMatchesResources_AllMatchesFail and friends
        pytest.param([{"resources": {"kinds": ["Deployment"]}}], False, id="go-all-matches-fail"),
        pytest.param([{"resources": {"kinds": ["Pod"]}}, {"resources": {"namespaces": ["default"]}}], True,
                     id="all-both-match"),
        pytest.param([{"resources": {"kinds": ["Pod"]}}, {"resources": {"namespaces": ["other"]}}], False,
                     id="all-one-fails"),
        pytest.param([{"resources": {"kinds": ["Pod"]}}, {}], False, id="all-with-empty-filter"),
    ],
)
def test_exception_all_filters(filters: list, want: bool) -> None:
    assert _exception_matches(filters, _view(), mode="all") is want


def test_exception_namespace_selector_uses_namespace_labels() -> None:
    filters = [{"resources": {"kinds": ["Pod"], "namespaceSelector": {"matchLabels": {"env": "legacy"}}}}]
    assert _exception_matches(filters, _view(), Request(namespace_labels=lambda _ns: {"env": "legacy"}))
    assert not _exception_matches(filters, _view(), Request(namespace_labels=lambda _ns: {"env": "prod"}))


def test_exception_empty_match_never_matches() -> None:
    """TestCheckMatchesResources_EmptyStatement: neither any nor all."""
    exc = parse_exception(_exception(match={}))
    assert not exc.matches(_view(), Request(), None)


@pytest.mark.parametrize(
    ("exceptions", "status", "message"),
    [
        pytest.param([_exception()], "skip", "rule is skipped due to policy exceptionskyverno/e", id="one"),
        # every matching exception is named, in order
        pytest.param([_exception("a"), _exception("b")], "skip",
                     "rule is skipped due to policy exceptionskyverno/a, kyverno/b", id="two"),
        # conditions: false -> not applied; an evaluation error -> that exception is left out (continue)
        pytest.param([_exception("a", conditions={"any": [{"key": "{{ request.object.metadata.name }}",
                                                           "operator": "Equals", "value": "other"}]}),
                      _exception("b")], "skip", "rule is skipped due to policy exceptionskyverno/b",
                     id="false-condition-left-out"),
        pytest.param([_exception("a", conditions={"any": [{"key": "{{ request.object.metadata.nope }}",
                                                           "operator": "Equals", "value": "x"}]}),
                      _exception("b")], "skip", "rule is skipped due to policy exceptionskyverno/b",
                     id="condition-error-left-out-others-apply"),
        pytest.param([_exception("a", conditions={"any": [{"key": "{{ request.object.metadata.nope }}",
                                                           "operator": "Equals", "value": "x"}]})],
                     "fail", None, id="condition-error-no-exception"),
        pytest.param([_exception("a", conditions={"all": [{"key": "{{ request.object.metadata.name }}",
                                                           "operator": "Equals", "value": "p"}]})],
                     "skip", "rule is skipped due to policy exceptionskyverno/a", id="true-condition"),
        # an exception for another rule is not consulted
        pytest.param([_exception("a", rules=["other"]), _exception("b")], "skip",
                     "rule is skipped due to policy exceptionskyverno/b", id="other-rule-not-named"),
    ],
)
def test_matches_exception_list(exceptions: list, status: str, message: str | None) -> None:
    [(_, got_status, got_message)] = _statuses(NO_HOST, _host_pod(), *exceptions)
    assert got_status == status
    if message is not None:
        assert got_message == message


PSS = parse_policy(y("""
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: psa}
spec:
  rules:
  - name: baseline
    match: {any: [{resources: {kinds: [Pod]}}]}
    validate: {podSecurity: {level: baseline, version: latest}}
"""))


def _pss_pod() -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "legacy"},
            "spec": {"hostPID": True, "containers": [{"name": "c", "image": "nginx"}]}}


def _pss_exception(name: str, pod_security: list | None = None) -> dict:
    extra = {"podSecurity": pod_security} if pod_security is not None else {}
    return _exception(name, policy="psa", rules=["baseline"], **extra)


@pytest.mark.parametrize(
    ("exceptions", "status"),
    [
        # HasPodSecurity: an exception without podSecurity skips the rule outright
        pytest.param([_pss_exception("a")], "skip", id="plain-exception-skips"),
        # podSecurity exclusions apply after the failure; covering every failing control -> skip
        pytest.param([_pss_exception("a", [{"controlName": "Host Namespaces"}])], "skip",
                     id="pss-exclusion-covers"),
        pytest.param([_pss_exception("a", [{"controlName": "Privileged Containers"}])], "fail",
                     id="pss-exclusion-other-control"),
        # a plain exception among podSecurity ones still skips
        pytest.param([_pss_exception("a", [{"controlName": "Privileged Containers"}]), _pss_exception("b")],
                     "skip", id="mixed-plain-wins"),
        # the podSecurity lists of every matching exception are combined
        pytest.param([_pss_exception("a", [{"controlName": "Privileged Containers"}]),
                      _pss_exception("b", [{"controlName": "Host Namespaces"}])], "skip", id="combined-exclusions"),
    ],
)
def test_pod_security_exceptions(exceptions: list, status: str) -> None:
    [(_, got, _)] = _statuses(PSS, _pss_pod(), *exceptions)
    assert got == status


def test_exception_failure_status_is_unchanged_when_nothing_matches() -> None:
    [(_, status, _)] = _statuses(NO_HOST, _host_pod(), _exception(match={"any": [{"resources": {"kinds": ["Pod"],
                                                                                               "namespaces": ["x"]}}]}))
    assert status == str(RuleStatus.FAIL)
