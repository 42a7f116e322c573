"""``{{ }}`` substitution (spec 7.2, 7.4) and ``$( )`` references (spec 4.9)."""

from __future__ import annotations

import copy
from typing import Any

import jmespath
import pytest
import yaml

from scanner.engine.variables import (
    SubstitutionError,
    find_variables,
    has_references,
    has_variables,
    resolve_references,
    substitute_all,
)

CONTEXT = {
    "request": {
        "operation": "CREATE",
        "object": {
            "metadata": {"name": "web-1", "labels": {"app": "web", "tier": "<b&c>"}},
            "spec": {"replicas": 3.0, "ratio": 0.5, "enabled": True, "ports": [80.0, 443.0]},
        },
        "oldObject": {"metadata": {"name": "old-web"}},
    },
    "nested": "{{ request.object.metadata.name }}",
    "braces": "a {{b}} c",
    "self": "{{ self }}",
    "nil": None,
    "tmpl": {"inner": "{{ request.object.metadata.name }}"},
}


def resolve(expression: str) -> Any:
    return jmespath.search(expression, CONTEXT)


def failing(expression: str) -> Any:
    raise LookupError(f'Unknown key "{expression.rsplit(".", 1)[-1]}" in path')


@pytest.mark.parametrize(
    ("document", "expected"),
    [
        pytest.param("{{ request.object.spec.replicas }}", 3.0, id="whole-leaf-keeps-number"),
        pytest.param("{{request.object.spec.enabled}}", True, id="whole-leaf-keeps-bool"),
        pytest.param("{{ request.object.metadata.labels }}",
                     {"app": "web", "tier": "<b&c>"}, id="whole-leaf-keeps-map"),
        pytest.param("{{ nil }}", None, id="whole-leaf-keeps-null"),
        pytest.param("{{ nested }}", "{{ request.object.metadata.name }}",
                     id="whole-leaf-string-is-not-substituted-again"),
        pytest.param("replicas={{ request.object.spec.replicas }}", "replicas=3",
                     id="partial-number-as-json"),
        pytest.param("r={{ request.object.spec.ratio }}", "r=0.5", id="partial-fraction"),
        pytest.param("prefix-{{ request.object.metadata.labels }}",
                     'prefix-{"app":"web","tier":"\\u003cb\\u0026c\\u003e"}',
                     id="partial-map-as-go-json-sorted-and-escaped"),
        pytest.param("x={{ nil }}", "x=null", id="partial-null"),
        pytest.param("{{ request.object.spec.ports }}!", "[80,443]!", id="partial-list"),
        pytest.param("use \\{{ this }} literally", "use {{ this }} literally",
                     id="escaped-variable-unescaped"),
        pytest.param("{{request.object.metadata.name}}-{{request.object.metadata.name}}",
                     "web-1-web-1", id="same-variable-twice"),
        pytest.param("{{request.object.metadata.name}}{{request.operation}}", "web-1CREATE",
                     id="adjacent-variables"),
        pytest.param("n={{ nested }}", "n=web-1", id="rescan-substitutes-new-variables"),
        pytest.param("n={{- nested }}", "n={{ request.object.metadata.name }}",
                     id="shallow-variable-is-not-rescanned"),
        pytest.param("{{ {n: request.object.metadata.name} }}", {"n": "web-1"},
                     id="multiselect-hash-braces-allowed"),
        pytest.param("{{ tmpl }}", {"inner": "web-1"},
                     id="whole-leaf-map-is-walked-further"),
        pytest.param("no variables here", "no variables here", id="plain-text"),
        pytest.param(3.0, 3.0, id="non-string-leaf"),
        pytest.param({"{{ request.object.metadata.name }}": "{{ request.operation }}"},
                     {"web-1": "CREATE"}, id="map-key-renamed"),
        pytest.param({"{{ nil }}": 1.0}, {"{{ nil }}": 1.0}, id="null-key-keeps-the-key"),
        pytest.param({"a": ["{{ request.operation }}", {"b": "x{{request.operation}}"}]},
                     {"a": ["CREATE", {"b": "xCREATE"}]}, id="nested-lists-and-maps"),
    ],
)
def test_substitute_all_spec_7_2(document: Any, expected: Any) -> None:
    assert substitute_all(document, resolve) == expected


def test_substitute_all_keeps_key_order_when_renaming() -> None:
    document = {"a": 1, "{{ request.operation }}": 2, "z": 3}
    assert list(substitute_all(document, resolve)) == ["a", "CREATE", "z"]


def test_substitute_all_never_mutates_the_input() -> None:
    document = yaml.safe_load("""
    spec:
      "{{ request.object.metadata.name }}": ["{{ request.operation }}", {x: "{{ tmpl }}"}]
    """)
    before = copy.deepcopy(document)
    context_before = copy.deepcopy(CONTEXT)
    substitute_all(document, resolve)
    assert document == before
    assert context_before == CONTEXT


def test_substitute_all_delete_reads_the_old_object() -> None:
    assert substitute_all("{{ request.object.metadata.name }}", resolve, delete=True) == "old-web"


def test_substitute_all_without_variables_returns_the_same_object() -> None:
    document = {"a": ["b"]}
    assert substitute_all(document, failing) is document


@pytest.mark.parametrize(
    ("document", "message"),
    [
        pytest.param("{{ request.object.x }}",
                     'failed to resolve request.object.x at path : Unknown key "x" in path',
                     id="root-leaf"),
        pytest.param({"spec": {"a/b": ["ok", "v={{ request.y }}"]}},
                     'failed to resolve request.y at path /spec/a\\/b/1: Unknown key "y" in path',
                     id="nested-leaf-path-escapes-slashes"),
        pytest.param({"spec": {"{{ request.k }}": 1}},
                     'failed to resolve request.k at path /spec: Unknown key "k" in path',
                     id="key-reports-the-parent-path"),
    ],
)
def test_substitute_all_error_names_expression_and_path(document: Any, message: str) -> None:
    with pytest.raises(SubstitutionError) as caught:
        substitute_all(document, failing)
    assert str(caught.value) == message
    # the resolver's error stays chained to it (as its cause; compiled, as its context)
    chained = caught.value.__cause__ or caught.value.__context__
    assert chained is not None and "Unknown key" in str(chained)


def test_substitute_all_key_must_become_a_string() -> None:
    with pytest.raises(SubstitutionError, match="expected string after substituting"):
        substitute_all({"{{ request.object.spec.replicas }}": 1}, resolve)


def test_substitute_all_self_reproducing_value_stops() -> None:
    with pytest.raises(SubstitutionError, match="does not end"):
        substitute_all("x {{ self }}", resolve)


def test_substitute_all_at_sign_is_not_supported() -> None:
    with pytest.raises(SubstitutionError, match="not supported"):
        substitute_all("{{ @ }}", resolve)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param("a {{x}}", True, id="string"),
        pytest.param({"{{x}}": 1}, True, id="key"),
        pytest.param([{"a": ["{{x}}"]}], True, id="nested"),
        pytest.param({"a": "b", "c": [1, None]}, False, id="none"),
        pytest.param("{x}", False, id="single-braces"),
    ],
)
def test_has_variables_detects_double_braces(value: Any, expected: bool) -> None:
    assert has_variables(value) is expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("{{ a.b }} and {{c}}", ["a.b", "c"], id="two-variables"),
        pytest.param("{{a}}{{b}}", ["a", "b"], id="adjacent"),
        pytest.param("\\{{ a }} {{ b }}", ["b"], id="escaped-skipped"),
        pytest.param("{{- a }}", ["a"], id="shallow-marker-removed"),
        pytest.param("{{ {x: a} }}", ["{x: a}"], id="multiselect-hash"),
        pytest.param("{{ {{a}} }}", ["a"], id="nested-braces-are-not-one-variable"),
        pytest.param("none", [], id="none"),
    ],
)
def test_find_variables_lists_expressions(text: str, expected: list[str]) -> None:
    assert find_variables(text) == expected


# -- $( ) references ----------------------------------------------------------------------


def test_resolve_references_spec_example_resolves_against_the_pattern() -> None:
    pattern = yaml.safe_load("""
    spec:
      containers:
      - resources:
          requests:
            memory: "$(<=./../../limits/memory)"
          limits:
            memory: "2Gi"
    """)
    resolved = resolve_references(pattern)
    assert resolved["spec"]["containers"][0]["resources"]["requests"]["memory"] == "<=2Gi"
    assert pattern["spec"]["containers"][0]["resources"]["requests"]["memory"].startswith("$(")


@pytest.mark.parametrize(
    ("pattern", "path", "expected"),
    [
        pytest.param({"a": "x", "b": "$(./../a)"}, ("b",), "x", id="relative-sibling"),
        pytest.param({"a": {"c": "x"}, "b": "$(/a/c)"}, ("b",), "x", id="absolute-path"),
        pytest.param({"(a)": "x", "b": "$(/a)"}, ("b",), "x", id="anchors-stripped-from-paths"),
        pytest.param({"a": 5.0, "b": "$(>=/a)"}, ("b",), ">=5.000000", id="number-with-operator"),
        pytest.param({"a": "x", "b": "pre-$(/a)-post"}, ("b",), "pre-x-post", id="inside-text"),
        pytest.param({"a": "x", "b": "\\$(/a)"}, ("b",), "$(/a)", id="escaped-reference"),
        pytest.param({"a": ["x", "y"], "b": "$(/a/1)"}, ("b",), "y", id="list-index"),
        pytest.param({"b": "$()"}, ("b",), "$()", id="empty-parentheses-are-text"),
    ],
)
def test_resolve_references_cases(
    pattern: dict[str, Any], path: tuple[str, ...], expected: str
) -> None:
    node: Any = resolve_references(pattern)
    for part in path:
        node = node[part]
    assert node == expected


@pytest.mark.parametrize(
    ("pattern", "message"),
    [
        pytest.param({"b": "$(/missing)"}, "got nil resolved variable $(/missing) at path /b: <nil>",
                     id="missing-target"),
        pytest.param({"a": None, "b": "$(/a)"}, "got nil resolved variable $(/a) at path /b: <nil>",
                     id="null-target"),
        pytest.param({"a": 5.0, "b": "$(/a)"},
                     "NotResolvedReferenceErr,reference $(/a) not resolved at path /b",
                     id="raw-number-without-operator"),
        pytest.param({"a": True, "b": "$(>/a)"},
                     "failed to resolve $(>/a) at path /b: incorrect expression: "
                     "operator > does not match with value true", id="bool-with-operator"),
        pytest.param({"b": "$(<=)"}, "failed to resolve $(<=) at path /b: expected path, "
                     "found empty reference", id="operator-without-path"),
    ],
)
def test_resolve_references_errors(pattern: dict[str, Any], message: str) -> None:
    with pytest.raises(SubstitutionError) as caught:
        resolve_references(pattern)
    assert str(caught.value) == message


def test_resolve_references_without_references_returns_the_same_object() -> None:
    pattern = {"a": "x"}
    assert resolve_references(pattern) is pattern and not has_references(pattern)
    assert has_references({"$(x)": 1})
