"""Kyverno's own unit-test tables for match / exclude, translated case by case and run against the engine.

Sources (kyverno/kyverno):
* ``pkg/utils/wildcard/match_test.go`` (TestMatch, TestMatchReference, the FuzzMatch seeds of
  ``fuzz_test.go``) and ``utils_test.go`` (TestContainsWildcard)
* ``pkg/utils/kube/kind_test.go`` (TestParseKindSelector, Test_GetKindFromGVK with Test_SplitSubresource,
  as ContainsKind combines them for autogen)
* ``pkg/utils/match/kind_test.go`` (Test_CheckKind, Test_CheckKind_PolicyExceptionSubresources),
  ``name_test.go`` (TestCheckName), ``match_test.go`` (TestCheckNamespace, TestCheckNameSpace_*),
  ``subjects_test.go`` (TestCheckSubjects), ``match_resources_test.go`` (TestCheckMatchesResources_*,
  TestCheckUserInfo)
* ``pkg/engine/utils/utils_test.go`` (TestMatchesResourceDescription, TestMatchesResourceDescription_GenerateName,
  TestResourceDescriptionMatch_*, TestResourceDescriptionExclude_Label_Expression_Match), ``match_test.go``
  (TestCheckNameSpace*, TestMatchesResourceDescription_NamespaceMismatch, TestExcludeAnyNamespace_*),
  ``empty_exclusion_test.go``

What is already checked elsewhere is left out: kinds entries of tests/engine/test_match.py, labels_test.go and
annotations_test.go and the PolicyException tables (exceptions_test.go) of test_wildcards_overrides_go.py.
Kyverno's ``RequestInfo`` becomes the engine's ``Request(user=UserInfo(...))``; the zero ``RequestInfo{}`` is
``Request()`` (no user information, spec 2.6). Rule-level tests read only the rule's ``match`` / ``exclude``.
"""

from __future__ import annotations

import functools
import itertools
import re
from typing import Any

import pytest

from scanner.engine import wildcard
from scanner.engine.autogen import _kind_name
from scanner.engine.evaluate import evaluate_policy
from scanner.engine.match import (
    MatchBlock,
    ResourceFilter,
    ResourceView,
    UserInfo,
    is_excluded,
    parse_filter,
    parse_kind,
    parse_match_block,
)
from scanner.engine.match import Request as _Request
from scanner.engine.policy import parse_policy

# Kyverno's engine tests call the engine directly, with no API server in front to convert a resource
# of an older group/version: kinds are compared as written
Request = functools.partial(_Request, served_versions=False)

# -- (a) pkg/utils/wildcard ----------------------------------------------------------------------------

# Go's test texts are bytes: each invalid UTF-8 byte ("\xff", "\xfe") counts as one U+FFFD rune. The scanner
# decodes its inputs the same way (scanner/yamldoc/loader.py), so those rows are written with U+FFFD here.
BAD = "\ufffd"


@pytest.mark.parametrize(
    ("pattern", "text", "matched"),
    [
        # TestMatch
        pytest.param("*", "s3:GetObject", True, id="go-star-matches-any"),
        pytest.param("", "s3:GetObject", False, id="go-empty-pattern-non-empty-text"),
        pytest.param("", "", True, id="go-empty-pattern-empty-text"),
        pytest.param("s3:*", "s3:ListMultipartUploadParts", True, id="go-trailing-star"),
        pytest.param("s3:ListBucketMultipartUploads", "s3:ListBucket", False, id="go-literal-longer-pattern"),
        pytest.param("s3:ListBucket", "s3:ListBucket", True, id="go-literal-equal"),
        pytest.param("s3:ListBucketMultipartUploads", "s3:ListBucketMultipartUploads", True,
                     id="go-literal-equal-long"),
        pytest.param("my-bucket/oo*", "my-bucket/oo", True, id="go-star-matches-nothing"),
        pytest.param("my-bucket/In*", "my-bucket/India/Karnataka/", True, id="go-star-spans-slashes"),
        pytest.param("my-bucket/In*", "my-bucket/Karnataka/India/", False, id="go-prefix-shuffled"),
        pytest.param("my-bucket/In*/Ka*/Ban", "my-bucket/India/Karnataka/Ban", True, id="go-stars-per-segment"),
        pytest.param("my-bucket/In*/Ka*/Ban", "my-bucket/India/Karnataka/Ban/Ban/Ban/Ban/Ban", True,
                     id="go-repeated-tail"),
        pytest.param("my-bucket/In*/Ka*/Ban", "my-bucket/India/Karnataka/Area1/Area2/Area3/Ban", True,
                     id="go-star-several-segments"),
        pytest.param("my-bucket/In*/Ka*/Ban", "my-bucket/India/State1/State2/Karnataka/Area1/Area2/Area3/Ban",
                     True, id="go-stars-several-levels"),
        pytest.param("my-bucket/In*/Ka*/Ban", "my-bucket/India/Karnataka/Bangalore", False, id="go-tail-extended"),
        pytest.param("my-bucket/In*/Ka*/Ban*", "my-bucket/India/Karnataka/Bangalore", True, id="go-tail-star"),
        pytest.param("my-bucket/*", "my-bucket/India", True, id="go-star-after-slash"),
        pytest.param("my-bucket/oo*", "my-bucket/odo", False, id="go-prefix-mismatch"),
        pytest.param("my-bucket?/abc*", "mybucket/abc", False, id="go-question-needs-a-character"),
        pytest.param("my-bucket?/abc*", "my-bucket1/abc", True, id="go-question-digit"),
        pytest.param("my-?-bucket/abc*", "my--bucket/abc", False, id="go-question-missing-middle"),
        pytest.param("my-?-bucket/abc*", "my-1-bucket/abc", True, id="go-question-middle-digit"),
        pytest.param("my-?-bucket/abc*", "my-k-bucket/abc", True, id="go-question-middle-letter"),
        pytest.param("my??bucket/abc*", "mybucket/abc", False, id="go-two-questions-missing"),
        pytest.param("my??bucket/abc*", "my4abucket/abc", True, id="go-two-questions"),
        pytest.param("my-bucket?abc*", "my-bucket/abc", True, id="go-question-matches-slash"),
        pytest.param("my-bucket/abc?efg", "my-bucket/abcdefg", True, id="go-question-letter"),
        pytest.param("my-bucket/abc?efg", "my-bucket/abc/efg", True, id="go-question-slash-middle"),
        pytest.param("my-bucket/abc????", "my-bucket/abc", False, id="go-four-questions-none"),
        pytest.param("my-bucket/abc????", "my-bucket/abcde", False, id="go-four-questions-two"),
        pytest.param("my-bucket/abc????", "my-bucket/abcdefg", True, id="go-four-questions-four"),
        pytest.param("my-bucket/abc?", "my-bucket/abc", False, id="go-one-question-none"),
        pytest.param("my-bucket/abc?", "my-bucket/abcd", True, id="go-one-question-one"),
        pytest.param("my-bucket/abc?", "my-bucket/abcde", False, id="go-one-question-two"),
        pytest.param("my-bucket/mnop*?", "my-bucket/mnop", False, id="go-star-question-none"),
        pytest.param("my-bucket/mnop*?", "my-bucket/mnopqrst/mnopqr", True, id="go-star-question-multi"),
        pytest.param("my-bucket/mnop*?", "my-bucket/mnopqrst/mnopqrs", True, id="go-star-question-multi-long"),
        pytest.param("my-bucket/mnop*?", "my-bucket/mnopq", True, id="go-star-question-one"),
        pytest.param("my-bucket/mnop*?", "my-bucket/mnopqr", True, id="go-star-question-two"),
        pytest.param("my-bucket/mnop*?and", "my-bucket/mnopqand", True, id="go-star-question-suffix"),
        pytest.param("my-bucket/mnop*?and", "my-bucket/mnopand", False, id="go-star-question-suffix-missing"),
        pytest.param("my-bucket/mnop*?", "my-bucket/mn", False, id="go-star-question-prefix-mismatch"),
        pytest.param("my-bucket/mnop*??", "my-bucket/mnopqrst", True, id="go-star-two-questions"),
        pytest.param("my-bucket/mnop*qrst", "my-bucket/mnopabcdegqrst", True, id="go-star-middle"),
        pytest.param("my-bucket/mnop*?and?", "my-bucket/mnopqanda", True, id="go-star-question-trailing"),
        pytest.param("my-bucket/mnop*?and", "my-bucket/mnopqanda", False, id="go-extra-trailing-character"),
        pytest.param("my-?-bucket/abc*", "my-bucket/mnopqanda", False, id="go-question-wrong-prefix"),
        pytest.param("*", "", True, id="go-star-empty-text"),
        pytest.param("***", "", True, id="go-stars-empty-text"),
        pytest.param("my-**-bucket", "my-own-bucket", True, id="go-double-star-is-one"),
        pytest.param("my-bucket**", "my-bucket", True, id="go-trailing-stars-after-text"),
        pytest.param("*:webhook", "kyverno:webhook", True, id="go-leading-star"),
        pytest.param("*:webhook", "kyverno:webhooks", False, id="go-leading-star-extra-text"),
        pytest.param("*needle*", "hay-needle-stack", True, id="go-stars-both-sides"),
        pytest.param("*needle*", "haystack", False, id="go-stars-both-sides-missing"),
        pytest.param("*abc", "ababc", True, id="go-star-gives-up-partial-match"),
        pytest.param("a*b*c", "abbcc", True, id="go-last-star-grows"),
        pytest.param("my-*-bucket", "my-", False, id="go-text-ends-before-segment"),
        pytest.param("s3:ListBucket", "s3:ListBucketMultipartUploads", False, id="go-literal-shorter-pattern"),
        pytest.param("?", "", False, id="go-question-empty-text"),
        pytest.param("*?", "", False, id="go-star-question-empty-text"),
        pytest.param("*?*?*", "a", False, id="go-two-questions-one-character"),
        pytest.param("*?*?*", "ab", True, id="go-two-questions-two-characters"),
        pytest.param("Pod*", "pods", False, id="go-case-sensitive"),
        pytest.param("first?second*", "first\nsecond\nthird", True, id="go-wildcards-match-newlines"),
        pytest.param("my-bucket\\*", "my-bucket\\abc", True, id="go-backslash-does-not-escape"),
        pytest.param("my-bucket\\*", "my-bucket*", False, id="go-backslash-literal"),
        pytest.param("my-bucket[a-z]", "my-bucket[a-z]", True, id="go-brackets-literal"),
        pytest.param("my-bucket[a-z]", "my-bucketa", False, id="go-brackets-not-a-class"),
        pytest.param("my-?-bucket", "my-世-bucket", True, id="go-question-one-rune"),
        pytest.param("my-?-bucket", "my-世界-bucket", False, id="go-question-two-runes"),
        pytest.param("my-??-bucket", "my-世界-bucket", True, id="go-two-questions-two-runes"),
        pytest.param("??", "世", False, id="go-two-questions-one-rune"),
        pytest.param("*??-bucket*", "世-bucket-1", False, id="go-star-does-not-split-a-rune"),
        pytest.param("名前-*-bucket", "名前-世界-bucket", True, id="go-star-multibyte"),
        pytest.param("café", "cafè", False, id="go-runes-sharing-first-byte"),
        pytest.param("my-?-bucket", f"my-{BAD}-bucket", True, id="go-question-invalid-byte"),
        pytest.param("my-?-bucket", f"my-{BAD}{BAD}-bucket", False, id="go-question-two-invalid-bytes"),
        pytest.param("my-*-bucket", f"my-{BAD}{BAD}-bucket", True, id="go-star-invalid-bytes"),
        pytest.param(f"my-{BAD}-bucket", f"my-{BAD}-bucket", True, id="go-invalid-bytes-match-each-other"),
        pytest.param("my-\ufffd-bucket", f"my-{BAD}-bucket", True, id="go-invalid-byte-is-replacement-char"),
        # these three must answer quickly: no exponential backtracking
        pytest.param("a*" * 64 + "b", "a" * 4096, False, id="go-many-stars-fail"),
        pytest.param("a*" * 64 + "b", "a" * 4096 + "b", True, id="go-many-stars-match"),
        pytest.param("*" + "a" * 64 + "b", "a" * 4096, False, id="go-long-partial-matches"),
    ],
)
def test_wildcard_match(pattern: str, text: str, matched: bool) -> None:
    assert wildcard.match(pattern, text) is matched


def _reference(pattern: str, text: str) -> bool:
    """fuzz_test.go's reference: the pattern as a regular expression (``*`` -> ``.*``, ``?`` -> ``.``)."""
    expr = "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern)
    return re.fullmatch(expr, text, re.DOTALL) is not None


def _combinations(parts: list[str], n: int) -> list[str]:
    return ["".join(p) for k in range(n + 1) for p in itertools.product(parts, repeat=k)]


def test_wildcard_match_reference() -> None:
    """TestMatchReference (invalid bytes written as U+FFFD) and the FuzzMatch seeds."""
    patterns = _combinations(["a", "é", "è", BAD, "*", "?"], 4)
    names = _combinations(["a", "é", "è", BAD], 4)
    seeds = [("*", "kube-system"), ("kube-*", "kube-system"), ("my-?-bucket/abc*", "my-1-bucket/abc"),
             ("a*a*a*a*a*a*a*a*b", "a" * 32), ("名前-?-*", "名前-世-界"), (f"{BAD}?*", f"{BAD}{BAD}{BAD}")]
    pairs = [*itertools.product(patterns, names), *seeds]
    wrong = [(p, n) for p, n in pairs if wildcard.match(p, n) != _reference(p, n)]
    assert wrong == []


@pytest.mark.parametrize(
    ("text", "want"),
    [
        # TestContainsWildcard
        pytest.param("name", False, id="go-no-wildcard"),
        pytest.param("", False, id="go-empty-string"),
        pytest.param("name*", True, id="go-star-at-end"),
        pytest.param("*name", True, id="go-star-at-beginning"),
        pytest.param("start*end", True, id="go-star-in-middle"),
        pytest.param("*", True, id="go-only-star"),
        pytest.param("name?", True, id="go-question-at-end"),
        pytest.param("?name", True, id="go-question-at-beginning"),
        pytest.param("start?end", True, id="go-question-in-middle"),
        pytest.param("?", True, id="go-only-question"),
        pytest.param("*name?", True, id="go-both"),
    ],
)
def test_contains_wildcard(text: str, want: bool) -> None:
    assert wildcard.has_wildcard(text) is want


# -- (b) kinds: ParseKindSelector, GetKindFromGVK, CheckKind -------------------------------------------------


@pytest.mark.parametrize(
    ("entry", "gvks"),
    [
        # TestParseKindSelector (rows not already in test_match.py)
        pytest.param("batch/*/CronJob", ("batch", "*", "CronJob", ""), id="go-group-star-version"),
        pytest.param("storage.k8s.io/v1/CSIDriver", ("storage.k8s.io", "v1", "CSIDriver", ""), id="go-dotted-group"),
        pytest.param("tekton.dev/v1beta1/TaskRun/status", ("tekton.dev", "v1beta1", "TaskRun", "status"),
                     id="go-gvk-subresource"),
        pytest.param("v1/Pod.status", ("*", "v1", "Pod", "status"), id="go-version-dotted-subresource"),
        pytest.param("v1/Pod/status", ("*", "v1", "Pod", "status"), id="go-version-kind-subresource"),
        pytest.param("Pod/status", ("*", "*", "Pod", "status"), id="go-kind-subresource"),
        pytest.param("v1/ReplicationController/scale", ("*", "v1", "ReplicationController", "scale"),
                     id="go-version-kind-scale"),
        pytest.param("*/ReplicationController/scale", ("*", "*", "ReplicationController", "scale"),
                     id="go-star-version-kind-scale"),
        pytest.param("*/Deployment/scale", ("*", "*", "Deployment", "scale"), id="go-star-deployment-scale"),
        pytest.param("apps/v1/Deployment.scale", ("apps", "v1", "Deployment", "scale"), id="go-gvk-dotted-scale"),
        pytest.param("Pod/*", ("*", "*", "Pod", "*"), id="go-kind-any-subresource"),
        pytest.param("*/*/*", ("*", "*", "*", "*"), id="go-three-stars"),
        pytest.param("*/*/*/*", ("*", "*", "*", "*"), id="go-four-stars"),
    ],
)
def test_parse_kind_selector(entry: str, gvks: tuple) -> None:
    k = parse_kind(entry)
    assert (k.group, k.version, k.kind, k.subresource) == gvks


@pytest.mark.parametrize(
    ("entry", "kind"),
    [
        # Test_GetKindFromGVK, the kind half then cut by SplitSubresource (ContainsKind, which autogen uses)
        pytest.param("*", "*", id="go-star"),
        pytest.param("*.*", "*", id="go-dotted-stars"),
        pytest.param("*/*", "*", id="go-star-slash-star"),
        pytest.param("Pod", "Pod", id="go-kind"),
        pytest.param("v1/Pod", "Pod", id="go-version-kind"),
        pytest.param("batch/*/CronJob", "CronJob", id="go-group-star-version"),
        pytest.param("storage.k8s.io/v1/CSIDriver", "CSIDriver", id="go-gvk"),
        pytest.param("tekton.dev/v1beta1/TaskRun/Status", "TaskRun", id="go-gvk-subresource"),
        pytest.param("v1/Pod.Status", "Pod", id="go-version-dotted-subresource"),
        pytest.param("Pod.Status", "Pod", id="go-dotted-subresource"),
        pytest.param("apps/v1/Deployment/Scale", "Deployment", id="go-four-parts"),
        pytest.param("v1/ReplicationController/Scale", "ReplicationController", id="go-version-kind-subresource"),
        pytest.param("*/ReplicationController/Scale", "ReplicationController", id="go-star-kind-subresource"),
        pytest.param("*/Deployment/scale", "Deployment", id="go-star-deployment-scale"),
        pytest.param("*/Deployment.scale", "Deployment", id="go-star-deployment-dotted-scale"),
        pytest.param("apps/v1/Deployment.scale", "Deployment", id="go-gvk-dotted-scale"),
    ],
)
def test_kind_from_gvk(entry: str, kind: str) -> None:
    assert _kind_name(entry) == kind


@pytest.mark.parametrize(
    ("kinds", "gvk", "subresource", "matched"),
    [
        # Test_CheckKind (allowEphemeralContainers=false rows; the true rows concern admission requests for
        # pods/ephemeralcontainers, which never reach an offline scan)
        pytest.param(["*"], ("", "v1", "Deployment"), "", True, id="go-star"),
        pytest.param(["Pod"], ("", "v1", "Pod"), "", True, id="go-kind"),
        pytest.param(["v1/Pod"], ("", "v1", "Pod"), "", True, id="go-version-kind"),
        pytest.param(["tekton.dev/v1beta1/TaskRun"], ("tekton.dev", "v1beta1", "TaskRun"), "", True, id="go-gvk"),
        pytest.param(["tekton.dev/*/TaskRun"], ("tekton.dev", "v1alpha1", "TaskRun"), "", True,
                     id="go-gvk-star-version"),
        pytest.param(["v1/Pod"], ("", "v1", "Pod"), "status", False, id="go-kind-not-its-status"),
        pytest.param(["v1/Pod"], ("", "v1", "Pod"), "ephemeralcontainers", False,
                     id="go-ephemeral-containers-not-allowed"),
        pytest.param(["postgresdb"], ("acid.zalan.do", "v1", "postgresdb"), "", True, id="go-lowercase-kind"),
        pytest.param(["Postgresdb"], ("acid.zalan.do", "v1", "postgresdb"), "", False, id="go-kind-case-sensitive"),
        pytest.param(["networking.k8s.io/v1/NetworkPolicy/status"], ("networking.k8s.io", "v1", "NetworkPolicy"),
                     "status", True, id="go-gvk-status"),
        pytest.param(["v1/Pod.status"], ("", "v1", "Pod"), "status", True, id="go-dotted-status"),
        pytest.param(["*/Pod.eviction"], ("", "v1", "Pod"), "eviction", True, id="go-star-eviction"),
        pytest.param(["v1alpha1/Pod.eviction"], ("", "v1", "Pod"), "eviction", False, id="go-other-version"),
        # Test_CheckKind_PolicyExceptionSubresources, its allowEphemeralContainers=false row
        pytest.param(["Pod"], ("", "v1", "Pod"), "exec", False, id="go-parent-not-subresource"),
    ],
)
def test_check_kind(kinds: list, gvk: tuple, subresource: str, matched: bool) -> None:
    assert any(parse_kind(k).matches(*gvk, subresource) for k in kinds) is matched


# -- (c) names and namespaces --------------------------------------------------------------------------------


def _filter_matches(resources: dict, resource: dict, request: _Request | None = None) -> bool:
    problems: list[tuple[str, str]] = []
    compiled = parse_filter({"resources": resources}, problems, "/match")
    assert problems == []
    return compiled.matches(ResourceView.of(resource), request or Request(), exclude=False)


@pytest.mark.parametrize(
    ("expected", "actual", "want"),
    [
        # TestCheckName (CheckName is wildcard.Match), through a names condition
        pytest.param("", "", True, id="go-empty-both"),
        pytest.param("", "foo", False, id="go-empty-expected"),
        pytest.param("*", "foo", True, id="go-star"),
        pytest.param("foo", "foo", True, id="go-equal"),
        pytest.param("bar", "foo", False, id="go-different"),
        pytest.param("f?o", "foo", True, id="go-question"),
    ],
)
def test_check_name(expected: str, actual: str, want: bool) -> None:
    resource = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": actual}}
    assert _filter_matches({"names": [expected]}, resource) is want


def _unstructured(namespace: str = "", kind: str = "", name: str = "") -> dict:
    meta = {k: v for k, v in (("name", name), ("namespace", namespace)) if v}
    return {"kind": kind, "metadata": meta} if kind else {"metadata": meta}


@pytest.mark.parametrize(
    ("namespaces", "resource", "want"),
    [
        # pkg/utils/match TestCheckNameSpace_* (the resources carry no kind)
        pytest.param(["staging", "production", "development"], _unstructured("production"), True,
                     id="go-utils-matching"),
        pytest.param(["staging", "production"], _unstructured("test"), False, id="go-utils-non-matching"),
        pytest.param(["team-*-prod"], _unstructured("team-alpha-prod"), True, id="go-utils-wildcard"),
        pytest.param(["team-*-prod"], _unstructured("team-alpha-dev"), False, id="go-utils-wildcard-no-match"),
        pytest.param(["kube-system"], _unstructured(kind="Namespace", name="kube-system"), True,
                     id="go-utils-namespace-kind"),
        pytest.param(["kube-system"], _unstructured(kind="Namespace", name="default"), False,
                     id="go-utils-namespace-kind-no-match"),
        pytest.param(["*"], _unstructured("any-namespace"), True, id="go-utils-wildcard-all"),
        pytest.param(["staging", "prod-*"], _unstructured("staging"), True, id="go-utils-first-pattern"),
        pytest.param(["staging", "prod-*"], _unstructured("prod-us-east"), True, id="go-utils-second-pattern"),
        pytest.param(["staging", "prod-*"], _unstructured("development"), False, id="go-utils-no-pattern"),
        # pkg/engine/utils TestCheckNameSpace
        pytest.param(["default"], _unstructured("default", "Pod"), True, id="go-engine-exact"),
        pytest.param(["production", "staging"], _unstructured("default", "Pod"), False, id="go-engine-not-in-list"),
        pytest.param(["prod-*"], _unstructured("prod-us-east", "Pod"), True, id="go-engine-wildcard"),
        pytest.param(["kube-system"], _unstructured(kind="Namespace", name="kube-system"), True,
                     id="go-engine-namespace-uses-name"),
        pytest.param(["default"], _unstructured(kind="Namespace", name="production"), False,
                     id="go-engine-namespace-name-not-in-list"),
        pytest.param(["*"], _unstructured("any-namespace", "Pod"), True, id="go-engine-wildcard-all"),
        pytest.param(["dev-*", "test-*", "prod-*"], _unstructured("test-environment", "Pod"), True,
                     id="go-engine-one-of-several"),
        pytest.param([""], _unstructured(kind="ClusterRole", name="admin"), True,
                     id="go-engine-cluster-scoped-empty-namespace"),
        # TestCheckNameSpace_WildcardPatterns
        pytest.param(["kube-*"], _unstructured("kube-system", "Pod"), True, id="go-prefix-wildcard"),
        pytest.param(["*-system"], _unstructured("kube-system", "Pod"), True, id="go-suffix-wildcard"),
        pytest.param(["kube-*-system"], _unstructured("kube-test-system", "Pod"), True, id="go-middle-wildcard"),
        pytest.param(["prod-*"], _unstructured("staging-app", "Pod"), False, id="go-wildcard-no-match"),
        pytest.param(["default"], _unstructured("default", "Pod"), True, id="go-exact-match"),
        pytest.param(["defaultx"], _unstructured("default", "Pod"), False, id="go-single-char-mismatch"),
    ],
)
def test_check_namespaces(namespaces: list, resource: dict, want: bool) -> None:
    assert _filter_matches({"namespaces": namespaces}, resource) is want


def _policy(namespace: str, kind: str) -> Any:
    meta: dict = {"name": "p"}
    if namespace:
        meta["namespace"] = namespace
    return parse_policy({
        "apiVersion": "kyverno.io/v1", "kind": "Policy" if namespace else "ClusterPolicy", "metadata": meta,
        "spec": {"rules": [{"name": "r", "match": {"any": [{"resources": {"kinds": [kind]}}]},
                            "validate": {"pattern": {"metadata": {"name": "?*"}}}}]},
    })


@pytest.mark.parametrize(
    ("policy_namespace", "resource", "applies"),
    [
        # TestCheckNamespace: a policy namespace must equal the resource namespace; none means any
        pytest.param("", _unstructured("default", "Pod", "p"), True, id="go-empty-statement"),
        pytest.param("kube-system", _unstructured("kube-system", "Pod", "p"), True, id="go-matching"),
        pytest.param("kube-system", _unstructured("default", "Pod", "p"), False, id="go-non-matching"),
        pytest.param("default", _unstructured(kind="ClusterRole", name="p"), False, id="go-empty-resource-namespace"),
        # TestMatchesResourceDescription_NamespaceMismatch
        pytest.param("development", _unstructured("production", "Pod", "test-pod"), False,
                     id="go-policy-namespace-mismatch"),
    ],
)
def test_policy_namespace(policy_namespace: str, resource: dict, applies: bool) -> None:
    policy = _policy(policy_namespace, resource["kind"])
    assert bool(evaluate_policy(policy, {"apiVersion": "v1", **resource})) is applies


# -- (d) user info: subjects, roles, clusterRoles --------------------------------------------------------------

POD_VIEW = ResourceView.of({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "test-pod",
                                                                              "namespace": "test-ns"}})


def _sa(name: str, namespace: str) -> dict:
    return {"kind": "ServiceAccount", "name": name, "namespace": namespace}


def _user(name: str) -> dict:
    return {"kind": "User", "name": name}


def _group(name: str) -> dict:
    return {"kind": "Group", "name": name}


@pytest.mark.parametrize(
    ("subjects", "username", "groups", "want"),
    [
        # TestCheckSubjects (the filters are built directly: policy validation would refuse the last two rows)
        pytest.param([_sa("default", "kube-system")], "system:serviceaccount:kube-system:default", (), True,
                     id="go-sa-exact"),
        pytest.param([_sa("default", "kube-system")], "system:serviceaccount:default:default", (), False,
                     id="go-sa-other-namespace"),
        pytest.param([_sa("admin", "kube-system")], "system:serviceaccount:kube-system:default", (), False,
                     id="go-sa-other-name"),
        pytest.param([_sa("*", "kube-system")], "system:serviceaccount:kube-system:any-sa", (), True,
                     id="go-sa-wildcard-name"),
        pytest.param([_sa("kyverno", "kyverno*")], "system:serviceaccount:kyverno-system:kyverno", (), True,
                     id="go-sa-wildcard-namespace"),
        pytest.param([_user("alice")], "alice", (), True, id="go-user-exact"),
        pytest.param([_user("alice")], "bob", (), False, id="go-user-no-match"),
        pytest.param([_user("admin-*")], "admin-alice", (), True, id="go-user-wildcard"),
        pytest.param([_user("admin-*")], "user-alice", (), False, id="go-user-wildcard-no-match"),
        pytest.param([_group("system:masters")], "admin", ("system:authenticated", "system:masters"), True,
                     id="go-group-exact"),
        pytest.param([_group("system:masters")], "user", ("system:authenticated",), False, id="go-group-no-match"),
        pytest.param([_group("system:*")], "user", ("developers", "system:authenticated"), True,
                     id="go-group-wildcard"),
        pytest.param([_group("admin")], "user", (), False, id="go-group-no-groups"),
        pytest.param([_user("alice"), _user("bob")], "alice", (), True, id="go-several-first"),
        pytest.param([_user("alice"), _user("bob")], "bob", (), True, id="go-several-second"),
        pytest.param([_user("alice"), _user("bob")], "charlie", (), False, id="go-several-none"),
        pytest.param([_sa("default", "kube-system"), _user("alice"), _group("admins")], "alice", ("developers",),
                     True, id="go-mixed-user"),
        pytest.param([_sa("default", "kube-system"), _user("alice"), _group("admins")], "bob",
                     ("admins", "developers"), True, id="go-mixed-group"),
        pytest.param([_sa("kyverno", "kyverno"), _user("alice")], "system:serviceaccount:kyverno:kyverno",
                     ("system:serviceaccounts",), True, id="go-mixed-sa"),
        pytest.param([{"kind": "UnknownKind", "name": "test"}], "test", (), False, id="go-unknown-kind-ignored"),
        pytest.param([_sa("default", "")], "system:serviceaccount::default", (), True, id="go-sa-empty-namespace"),
    ],
)
def test_check_subjects(subjects: list, username: str, groups: tuple, want: bool) -> None:
    f = ResourceFilter(subjects=tuple(subjects))
    request = Request(user=UserInfo(username=username, groups=groups))
    assert f.matches(POD_VIEW, request, exclude=False) is want


@pytest.mark.parametrize(
    ("roles", "cluster_roles", "want"),
    [
        # TestCheckUserInfo (roles written without namespace: built directly, policy validation wants ns:name)
        pytest.param(("admin",), ("cluster-admin",), True, id="go-roles-and-cluster-roles"),
        pytest.param(("superadmin",), (), False, id="go-role-missing"),
    ],
)
def test_check_user_info(roles: tuple, cluster_roles: tuple, want: bool) -> None:
    f = ResourceFilter(roles=roles, cluster_roles=cluster_roles)
    request = Request(user=UserInfo(roles=("admin", "user"), cluster_roles=("cluster-admin",)))
    assert f.matches(POD_VIEW, request, exclude=True, exception=True) is want


@pytest.mark.parametrize(
    ("block", "resource", "want"),
    [
        # TestCheckMatchesResources_Any / _All (pkg/utils/match, the PolicyException path)
        pytest.param({"any": [{"resources": {"kinds": ["Pod"], "names": ["test-pod"]}}]},
                     _unstructured("test-ns", "Pod", "test-pod"), True, id="go-any"),
        pytest.param({"any": [{"resources": {"kinds": ["Deployment"]}}]},
                     _unstructured("test-ns", "Pod", "test-pod"), False, id="go-any-fail"),
        pytest.param({"all": [{"resources": {"kinds": ["Pod"]}}, {"resources": {"names": ["test-pod"]}}]},
                     _unstructured(kind="Pod", name="test-pod"), True, id="go-all"),
        pytest.param({"all": [{"resources": {"kinds": ["Pod"]}}, {"resources": {"names": ["other-pod"]}}]},
                     _unstructured(kind="Pod", name="test-pod"), False, id="go-all-fail"),
    ],
)
def test_check_matches_resources(block: dict, resource: dict, want: bool) -> None:
    problems: list[tuple[str, str]] = []
    compiled = parse_match_block(block, problems, "/spec/match", require_kinds=False)
    assert problems == []
    view = ResourceView.of({"apiVersion": "v1", **resource})
    assert compiled.matches(view, Request(), exclude=True, exception=True) is want


# -- (e) a rule's match and exclude: MatchesResourceDescription ------------------------------------------------


def _blocks(match: Any, exclude: Any) -> tuple[MatchBlock, MatchBlock, list[str]]:
    problems: list[tuple[str, str]] = []
    m = parse_match_block(match, problems, "/match", require_kinds=False)
    e = parse_match_block(exclude, problems, "/exclude", require_kinds=False)
    return m, e, [message for _, message in problems]


def _applies(match: Any, exclude: Any, resource: dict, request: _Request | None = None) -> bool:
    """MatchesResourceDescription without error: matched and not excluded."""
    m, e, problems = _blocks(match, exclude)
    assert problems == []
    view, request = ResourceView.of(resource), request or Request()
    return m.matches(view, request) and not is_excluded(e, view, request)


def _cluster_roles(*roles: str) -> _Request:
    return Request(user=UserInfo(cluster_roles=roles))


def _meta_pod(name: str, namespace: str = "", kind: str = "Pod", api: str = "v1", labels: dict | None = None) -> dict:
    meta: dict = {"name": name}
    if namespace:
        meta["namespace"] = namespace
    if labels:
        meta["labels"] = labels
    return {"apiVersion": api, "kind": kind, "metadata": meta}


def _any(*filters: dict) -> dict:
    return {"any": [{"resources": f} for f in filters]}


def _all(*filters: dict) -> dict:
    return {"all": [{"resources": f} for f in filters]}


POD_ONLY = {"resources": {"kinds": ["Pod"]}}
EXCLUDE_HELLO = {"resources": {"name": "hello-world"}, "clusterRoles": ["system:node"]}
QOS_MATCH = {"resources": {"kinds": ["apps/v1/Deployment"], "selector": {"matchLabels": {"test": "qos"}}}}
HELLO = {"name": "hello-world"}

MATCHES_RESOURCE_DESCRIPTION = [
    # TestMatchesResourceDescription; TestMatchesResourceDescription_GenerateName repeats every row with
    # metadata.generateName instead of metadata.name
    pytest.param(_cluster_roles("admin"), _meta_pod("abc", "prod"),
                 _any({"kinds": ["Pod"], "names": ["dev"]}, {"kinds": ["Pod"], "namespaces": ["prod"]}), None, True,
                 id="go-match-any-matches"),
    pytest.param(_cluster_roles("admin"), _meta_pod("abc", "default"),
                 _any({"kinds": ["Pod"], "names": ["dev"]}, {"kinds": ["Pod"], "namespaces": ["prod"]}), None, False,
                 id="go-match-any-does-not-match"),
    pytest.param(_cluster_roles("admin"), _meta_pod("abc", "prod"),
                 _all({"kinds": ["Pod"], "names": ["abc"]}, {"kinds": ["Pod"], "namespaces": ["prod"]}), None, True,
                 id="go-match-all-matches"),
    pytest.param(_cluster_roles("admin"), _meta_pod("abc", "prod"),
                 _all({"kinds": ["Pod"], "names": ["xyz"]}, {"kinds": ["Pod"], "namespaces": ["prod"]}), None, False,
                 id="go-match-all-does-not-match"),
    pytest.param(_cluster_roles("admin"), _meta_pod("dev", "prod"), _all({"kinds": ["Pod"]}),
                 _any({"kinds": ["Pod"], "names": ["dev"]}, {"kinds": ["Pod"], "namespaces": ["default"]}), False,
                 id="go-exclude-any-excludes"),
    pytest.param(_cluster_roles("admin"), _meta_pod("abc", "prod"), _all({"kinds": ["Pod"]}),
                 _any({"kinds": ["Pod"], "names": ["dev"]}, {"kinds": ["Pod"], "namespaces": ["default"]}), True,
                 id="go-exclude-any-does-not-exclude"),
    pytest.param(_cluster_roles("admin"), _meta_pod("dev", "prod"), _all({"kinds": ["Pod"]}),
                 _all({"kinds": ["Pod"], "names": ["dev"]}, {"kinds": ["Pod"], "namespaces": ["prod"]}), False,
                 id="go-exclude-all-excludes"),
    pytest.param(_cluster_roles("admin"), _meta_pod("abc", "prod"), _all({"kinds": ["Pod"]}),
                 _all({"kinds": ["Pod"], "names": ["abc"]}, {"kinds": ["Pod"], "namespaces": ["default"]}), True,
                 id="go-exclude-all-does-not-exclude"),
    pytest.param(_cluster_roles("admin"), _meta_pod("hello-world"), POD_ONLY, EXCLUDE_HELLO, True,
                 id="go-match-and-not-exclude"),
    pytest.param(_cluster_roles("system:node"), _meta_pod("hello-world"), POD_ONLY, EXCLUDE_HELLO, False,
                 id="go-exclude-block-matches"),
    # no admission info: the exclude's clusterRoles cannot hold, so nothing is excluded
    pytest.param(Request(), _meta_pod("hello-world"), POD_ONLY, EXCLUDE_HELLO, True, id="go-no-admission-info"),
    # no admission info: the match's clusterRoles are dropped, names still decide
    pytest.param(Request(), _meta_pod("hello-world"),
                 {"resources": {"kinds": ["Pod"], "names": ["dev-*"]}, "clusterRoles": ["system:node"]}, None, False,
                 id="go-names-do-not-match"),
    pytest.param(_cluster_roles("system:node"), _meta_pod("hello-world"),
                 {"resources": {"kinds": ["Pod"], "names": ["dev-*", "hello-world"]}, "clusterRoles": ["system:node"]},
                 None, True, id="go-one-of-names-matches"),
    pytest.param(Request(), _meta_pod("hello-world"), POD_ONLY, {"resources": {"names": ["dev-*", "hello-*"]}},
                 False, id="go-excluded-by-names"),
    pytest.param(Request(), _meta_pod("bye-world"), POD_ONLY, {"resources": {"names": ["dev-*", "hello-*"]}},
                 True, id="go-not-excluded-by-names"),
    pytest.param(_cluster_roles("admin"), _meta_pod("hello-world", kind="Service"), POD_ONLY, EXCLUDE_HELLO, False,
                 id="go-service-not-matched"),
    pytest.param(_cluster_roles("system:node"), _meta_pod("hello-world2"), POD_ONLY, EXCLUDE_HELLO, True,
                 id="go-exclude-name-differs"),
    pytest.param(_cluster_roles("admin"), _meta_pod("qos-demo", kind="Deployment", api="apps/v1",
                                                    labels={"test": "qos"}), QOS_MATCH, None, True,
                 id="go-group-version-kind-match"),
    pytest.param(_cluster_roles("admin"), _meta_pod("myapp-pod2", labels={"app": "myapp2"}),
                 {"resources": {"kinds": ["v1/Pod"]}}, None, True, id="go-version-kind-match"),
    pytest.param(_cluster_roles("admin"), _meta_pod("hello-world", kind="Service"), POD_ONLY, EXCLUDE_HELLO, False,
                 id="go-service-not-matched-again"),
    pytest.param(_cluster_roles("admin"), _meta_pod("qos-demo", kind="Deployment", api="apps/v1beta1",
                                                    labels={"test": "qos"}), QOS_MATCH, None, False,
                 id="go-version-does-not-match"),
    pytest.param(_cluster_roles("admin"), _meta_pod("secret-reader-demo", "default", "ClusterRole",
                                                    "rbac.authorization.k8s.io/v1"),
                 {"resources": {"kinds": ["rbac.authorization.k8s.io/v1beta1/ClusterRole"]}}, None, False,
                 id="go-cluster-role-version-does-not-match"),
    pytest.param(_cluster_roles("admin"), _meta_pod("myapp-pod2", labels={"app": "myapp2"}),
                 {"resources": {"kinds": ["pod"]}}, None, False, id="go-kind-case-sensitive"),
    pytest.param(_cluster_roles("admin"), _meta_pod("qos-demo", kind="Deployment", api="apps/v1",
                                                    labels={"test": "qos"}),
                 {"resources": {"kinds": ["apps/v1/deployment"], "selector": {"matchLabels": {"test": "qos"}}}},
                 None, False, id="go-gvk-kind-case-sensitive"),
]


@pytest.mark.parametrize("name_field", ["name", "generateName"])
@pytest.mark.parametrize(("request_", "resource", "match", "exclude", "applies"), MATCHES_RESOURCE_DESCRIPTION)
def test_matches_resource_description(name_field: str, request_: _Request, resource: dict, match: dict,
                                      exclude: dict | None, applies: bool) -> None:
    meta = dict(resource["metadata"])
    meta[name_field] = meta.pop("name")
    assert _applies(match, exclude, {**resource, "metadata": meta}, request_) is applies


NGINX = _meta_pod("nginx-deployment", kind="Deployment", api="apps/v1", labels={"app": "nginx"})
NGINX_GENERATED = {**NGINX, "metadata": {"generateName": "nginx-deployment", "labels": {"app": "nginx"}}}
EMPTY_SELECTOR_PROBLEM = "The requirements are not specified in selector"


@pytest.mark.parametrize(
    ("resource", "resources"),
    [
        # TestResourceDescriptionMatch_*: a selector without requirements matches every label set. Policy
        # validation refuses `selector: {}` (test_match.py), so these filters are checked past that problem.
        pytest.param(NGINX, {"kinds": ["Deployment", "Pods"]}, id="go-multiple-kind"),
        pytest.param(NGINX, {"kinds": ["Deployment"], "name": "nginx-deployment"}, id="go-name"),
        pytest.param(NGINX_GENERATED, {"kinds": ["Deployment"], "name": "nginx-deployment"}, id="go-generate-name"),
        pytest.param(NGINX, {"kinds": ["Deployment"], "name": "nginx-*"}, id="go-name-regex"),
        pytest.param(NGINX_GENERATED, {"kinds": ["Deployment"], "name": "nginx-*"}, id="go-generate-name-regex"),
    ],
)
def test_resource_description_match_empty_selector(resource: dict, resources: dict) -> None:
    m, e, problems = _blocks({"resources": {**resources, "selector": {}}}, None)
    assert problems == [EMPTY_SELECTOR_PROBLEM]
    view = ResourceView.of(resource)
    assert m.matches(view, Request()) and not is_excluded(e, view, Request())


def _not_in(key: str, *values: str) -> dict:
    return {"matchExpressions": [{"key": key, "operator": "NotIn", "values": list(values)}]}


@pytest.mark.parametrize(
    ("resource", "match", "exclude", "applies"),
    [
        # TestResourceDescriptionMatch_Label_Expression_NotMatch / _Match
        pytest.param(NGINX, {"resources": {"kinds": ["Deployment"], "name": "nginx-*",
                                           "selector": _not_in("label2", "sometest1")}}, None, True,
                     id="go-not-in-absent-key"),
        pytest.param(NGINX, {"resources": {"kinds": ["Deployment"], "name": "nginx-*",
                                           "selector": _not_in("app", "nginx1", "nginx2")}}, None, True,
                     id="go-not-in-other-values"),
        # TestResourceDescriptionExclude_Label_Expression_Match
        pytest.param({**NGINX, "metadata": {"name": "nginx-deployment", "labels": {"app": "nginx", "block": "true"}}},
                     {"resources": {"kinds": ["Deployment"], "name": "nginx-*",
                                    "selector": _not_in("app", "nginx1", "nginx2")}},
                     {"resources": {"selector": {"matchLabels": {"block": "true"}}}}, False,
                     id="go-excluded-by-label"),
    ],
)
def test_resource_description_label_expressions(resource: dict, match: dict, exclude: dict | None,
                                                applies: bool) -> None:
    assert _applies(match, exclude, resource) is applies


INGRESS_POD = _meta_pod("ingress-nginx-controller-57bc6474bb-mcpt2", "ingress-nginx")
REPLICASET_CONTROLLER = Request(user=UserInfo(
    username="system:serviceaccount:kube-system:replicaset-controller", uid="8f36cad4-eb68-4931-bea8-8a42dd1fee4c",
    groups=("system:serviceaccounts", "system:serviceaccounts:kube-system", "system:authenticated"),
))


@pytest.mark.parametrize(
    ("match", "exclude", "applies"),
    [
        # TestResourceDescriptionMatch_ExcludeDefaultGroups
        pytest.param({"any": [{"resources": {"kinds": ["Pod"], "namespaces": ["user1-restricted"]}},
                              {"resources": {"kinds": ["Pod"]}, "subjects": [{"kind": "User", "name": "user1"}]}]},
                     {}, False, id="go-other-namespace-other-user"),
        pytest.param(_any({"kinds": ["Pod"], "namespaces": ["ingress-nginx"]}), {"any": []}, True,
                     id="go-namespace-matches-empty-exclude"),
        pytest.param(_any({"kinds": ["Pod"], "namespaces": ["ingress-nginx"]}), _any({"kinds": ["Pod"]}), False,
                     id="go-exclude-pods"),
    ],
)
def test_exclude_default_groups(match: dict, exclude: dict, applies: bool) -> None:
    assert _applies(match, exclude, INGRESS_POD, REPLICASET_CONTROLLER) is applies


@pytest.mark.parametrize(
    ("exclude", "name", "namespace", "applies"),
    [
        # TestExcludeAnyNamespace_KubeSystem
        pytest.param(_any({"namespaces": ["kube-system"]}), "test-pod", "kube-system", False, id="go-kube-system"),
        pytest.param(_any({"namespaces": ["kube-system"]}), "test-pod", "default", True, id="go-default"),
        pytest.param(_any({"namespaces": ["kube-system"]}), "test-pod", "kube-public", True, id="go-kube-public"),
        # TestExcludeAnyNamespace_NamesAndNamespaces
        pytest.param(_any({"names": ["excluded-pod"], "namespaces": ["kube-system"]}), "excluded-pod", "kube-system",
                     False, id="go-name-and-namespace"),
        pytest.param(_any({"names": ["excluded-pod"], "namespaces": ["kube-system"]}), "excluded-pod", "default",
                     True, id="go-name-only"),
        pytest.param(_any({"names": ["excluded-pod"], "namespaces": ["kube-system"]}), "other-pod", "kube-system",
                     True, id="go-namespace-only"),
        pytest.param(_any({"names": ["excluded-pod"], "namespaces": ["kube-system"]}), "other-pod", "default",
                     True, id="go-neither"),
        # TestExcludeAnyNamespace_MultipleFilters
        pytest.param(_any({"namespaces": ["kube-system"]}, {"names": ["special-pod"]}), "any-pod", "kube-system",
                     False, id="go-namespace-filter"),
        pytest.param(_any({"namespaces": ["kube-system"]}, {"names": ["special-pod"]}), "special-pod", "default",
                     False, id="go-name-filter"),
        pytest.param(_any({"namespaces": ["kube-system"]}, {"names": ["special-pod"]}), "special-pod", "kube-system",
                     False, id="go-both-filters"),
        pytest.param(_any({"namespaces": ["kube-system"]}, {"names": ["special-pod"]}), "regular-pod", "default",
                     True, id="go-no-filter"),
    ],
)
def test_exclude_any_namespace(exclude: dict, name: str, namespace: str, applies: bool) -> None:
    assert _applies(POD_ONLY, exclude, _meta_pod(name, namespace)) is applies


@pytest.mark.parametrize(
    ("exclude", "applies"),
    [
        # empty_exclusion_test.go (kyverno/kyverno#13772, fixed by #13794): an exclude whose only list is written
        # empty excludes nothing
        pytest.param({"resources": {"names": []}}, True, id="go-empty-exclude-names"),
        pytest.param(None, True, id="go-nil-exclude"),
        pytest.param({"resources": {"names": ["some-other-pod"]}}, True, id="go-non-matching-exclusion"),
        pytest.param({"resources": {"names": ["test-pod"]}}, False, id="go-matching-exclusion"),
    ],
)
def test_empty_exclusion(exclude: dict | None, applies: bool) -> None:
    assert _applies(POD_ONLY, exclude, _meta_pod("test-pod", "default")) is applies
