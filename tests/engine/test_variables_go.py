"""Kyverno's unit tests for variable substitution, as table rows against this engine.

Sources (kyverno/kyverno): ``pkg/engine/variables/vars_test.go``, ``evaluate_test.go``,
``regex/vars_test.go``, ``regex/utils_test.go`` and ``pkg/engine/jsonutils/traverse_test.go``,
plus rows that pin behaviour read from ``pkg/engine/variables/vars.go`` (``substituteVariablesIfAny``,
``substituteReferencesIfAny``, ``resolveReference``), ``pkg/engine/jsonutils/traverse.go`` and
``pkg/engine/context/context.go`` (``Query``). Numbers are floats, as the CLI decodes JSON.

Rows are adapted where the project's spec deliberately differs from Kyverno:
``{{@}}`` is unsupported (spec 7.5, U4), so Kyverno's ``{{@}}`` tests assert the error instead.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from scanner.engine.conditions import apply_operator, evaluate_block, parse_conditions
from scanner.engine.context import VariableContext
from scanner.engine.jmespath.dialect import default_evaluator
from scanner.engine.variables import (
    SubstitutionError,
    find_variables,
    resolve_references,
    substitute_all,
)

# -- contexts -----------------------------------------------------------------------------


def context_for(resource: Any, **kwargs: Any) -> VariableContext:
    """Kyverno's ``context.NewContext`` + ``AddResource``: the resource is ``request.object``."""
    return VariableContext.for_resource(resource, evaluator=default_evaluator(), **kwargs)


def raw_context(tree: dict, *, delete: bool = False) -> VariableContext:
    """Kyverno's ``context.NewContextFromRaw`` (``AddJSON``): the JSON is the whole context."""
    return VariableContext(copy.deepcopy(tree), default_evaluator(), delete=delete)


NS_RESOURCE = {"metadata": {"name": "temp", "namespace": "n1"}, "spec": {"namespace": "n1", "name": "temp1"}}
ANNOTATED = {
    "metadata": {"name": "temp", "namespace": "n1", "annotations": {"test": "name"}},
    "spec": {"namespace": "n1", "name": "temp1"},
}
VARIABLE_OBJECT = json.loads(parse_int=float, s="""
{
    "complex_object_array": ["value1", "value2", "value3"],
    "complex_object_map": {"key1": "value1", "key2": "value2", "key3": "value3"},
    "simple_object_bool": false,
    "simple_object_int": 5,
    "simple_object_float": -5.5,
    "simple_object_string": "example",
    "simple_object_null": null,
    "empty": "",
    "html": "<b&c>",
    "template": "{{ request.object.simple_object_string }}",
    "nested": {"inner": "{{ request.object.simple_object_string }}"}
}
""")
DELETE_CONTEXT = {
    "request": {
        "operation": "DELETE",
        "object": {"metadata": {"name": "curr", "namespace": "ns", "annotations": {"target": "foo"}}},
        "oldObject": {"metadata": {"name": "old", "annotations": {"target": "bar"}}},
    }
}
DELETE_NESTED_CONTEXT = {
    "request": {
        "operation": "DELETE",
        "oldObject": {
            "metadata": {
                "name": "current",
                "namespace": "ns",
                "annotations": {"target": "nested_target", "targetnew": "target"},
            }
        },
    }
}
RBAC_PATTERN = {
    "kind": "{{request.object.metadata.name}}",
    "name": "ns-owner-{{request.object.metadata.name}}",
    "data": {
        "rules": [
            {
                "apiGroups": ["{{request.object.metadata.name}}"],
                "resources": ["namespaces"],
                "verbs": ["*"],
                "resourceNames": ["{{request.object.metadata.name}}"],
            }
        ]
    },
}


# -- vars_test.go: values and types -------------------------------------------------------


@pytest.mark.parametrize(
    ("resource", "document", "expected"),
    [
        pytest.param(NS_RESOURCE, RBAC_PATTERN, {
            "kind": "temp",
            "name": "ns-owner-temp",
            "data": {"rules": [{"apiGroups": ["temp"], "resources": ["namespaces"], "verbs": ["*"],
                                "resourceNames": ["temp"]}]},
        }, id="Test_subVars_success"),
        pytest.param({}, {"map": "{{ merge(`{\"a\": 1}`, `{\"b\": 1}`)}}"}, {"map": {"a": 1.0, "b": 1.0}},
                     id="Test_subVars_withMerge"),
        pytest.param(ANNOTATED, '"{{request.object.metadata.annotations.test}}"', '"name"',
                     id="Test_SubstituteSuccess"),
        pytest.param(ANNOTATED, '"{{request.object.metadata.{{request.object.metadata.annotations.test}}}}"',
                     '"temp"', id="Test_SubstituteRecursive"),
        pytest.param(VARIABLE_OBJECT, {"spec": {"content": "{{ request.object.simple_object_null }}"}},
                     {"spec": {"content": None}}, id="Test_SubstituteNull"),
        pytest.param(VARIABLE_OBJECT, {"spec": {"content": "content = {{ request.object.simple_object_null }}"}},
                     {"spec": {"content": "content = null"}}, id="Test_SubstituteNullInString"),
        pytest.param(VARIABLE_OBJECT, {"spec": {"content": "{{ request.object.complex_object_array }}"}},
                     {"spec": {"content": ["value1", "value2", "value3"]}}, id="Test_SubstituteArray"),
        pytest.param(VARIABLE_OBJECT, {"spec": {"content": "content is {{ request.object.complex_object_map }}"}},
                     {"spec": {"content": 'content is {"key1":"value1","key2":"value2","key3":"value3"}'}},
                     id="Test_SubstituteArrayInString"),
        pytest.param(VARIABLE_OBJECT, {"spec": {"content": "{{ request.object.simple_object_int }}"}},
                     {"spec": {"content": 5.0}}, id="Test_SubstituteInt"),
        pytest.param(VARIABLE_OBJECT, {"spec": {"content": "content = {{ request.object.simple_object_int }}"}},
                     {"spec": {"content": "content = 5"}}, id="Test_SubstituteIntInString"),
        pytest.param(VARIABLE_OBJECT, {"spec": {"content": "{{ request.object.simple_object_bool }}"}},
                     {"spec": {"content": False}}, id="Test_SubstituteBool"),
        pytest.param(VARIABLE_OBJECT, {"spec": {"content": "content = {{ request.object.simple_object_bool }}"}},
                     {"spec": {"content": "content = false"}}, id="Test_SubstituteBoolInString"),
        pytest.param(VARIABLE_OBJECT, {"spec": {"content": "{{ request.object.simple_object_string }}"}},
                     {"spec": {"content": "example"}}, id="Test_SubstituteString"),
        pytest.param(VARIABLE_OBJECT, {"spec": {"content": "content = {{ request.object.simple_object_string }}"}},
                     {"spec": {"content": "content = example"}}, id="Test_SubstituteStringInString"),
        # rows read from vars.go / traverse.go
        pytest.param(VARIABLE_OBJECT, "f={{ request.object.simple_object_float }}", "f=-5.5",
                     id="vars.go-float-in-string-json-marshal"),
        pytest.param(VARIABLE_OBJECT, "{{ request.object.simple_object_float }}", -5.5,
                     id="vars.go-float-whole-value-keeps-type"),
        pytest.param(VARIABLE_OBJECT, "x {{ request.object.html }}", "x <b&c>",
                     id="vars.go-string-result-is-not-json-escaped"),
        pytest.param(VARIABLE_OBJECT, "x {{ request.object.complex_object_array }}", 'x ["value1","value2","value3"]',
                     id="vars.go-list-in-string-json-marshal"),
        pytest.param(VARIABLE_OBJECT, "x {{ {h: request.object.html} }}", 'x {"h":"\\u003cb\\u0026c\\u003e"}',
                     id="vars.go-map-in-string-html-escaped-like-json-marshal"),
        pytest.param(VARIABLE_OBJECT, " {{ request.object.simple_object_int }}", " 5",
                     id="vars.go-leading-space-is-not-a-whole-value"),
        pytest.param(VARIABLE_OBJECT, "{{ request.object.simple_object_int }} ", "5 ",
                     id="vars.go-trailing-space-is-not-a-whole-value"),
        pytest.param(VARIABLE_OBJECT, "{{request.object.simple_object_string}}-{{request.object.simple_object_int}}",
                     "example-5", id="vars.go-two-variables"),
        pytest.param(VARIABLE_OBJECT, "{{ request.object.empty }}{{ request.object.simple_object_int }}", 5.0,
                     id="vars.go-adjacent-variable-found-next-pass-becomes-whole-value"),
        pytest.param(VARIABLE_OBJECT, "{{ request.object.template }}", "{{ request.object.simple_object_string }}",
                     id="vars.go-whole-value-string-is-returned-as-is"),
        pytest.param(VARIABLE_OBJECT, "t={{ request.object.template }}", "t=example",
                     id="vars.go-nested-variables-in-strings-rescanned"),
        pytest.param(VARIABLE_OBJECT, "t={{- request.object.template }}", "t={{ request.object.simple_object_string }}",
                     id="vars.go-shallow-variable-not-rescanned"),
        # shallow variables with non-string values: Kyverno's main branch panics on the unchecked
        # string assertion (kyverno#16895); its proposed fixes (#16896, #16955) JSON-encode them
        pytest.param(VARIABLE_OBJECT, "prefix-{{- request.object.simple_object_int }}", "prefix-5",
                     id="vars.go-shallow-number-in-string"),
        pytest.param(VARIABLE_OBJECT, "prefix-{{- request.object.simple_object_bool }}", "prefix-false",
                     id="vars.go-shallow-bool-in-string"),
        pytest.param(VARIABLE_OBJECT, "prefix-{{- {a: 'b'} }}", 'prefix-{"a":"b"}',
                     id="vars.go-shallow-map-in-string"),
        pytest.param(VARIABLE_OBJECT, "{{ request.object.nested }}", {"inner": "example"},
                     id="traverse.go-whole-value-map-is-traversed-further"),
        pytest.param(VARIABLE_OBJECT, {"{{ request.object.simple_object_string }}": "v"}, {"example": "v"},
                     id="traverse.go-key-renamed"),
        pytest.param(VARIABLE_OBJECT, {"{{ request.object.simple_object_null }}": "v"},
                     {"{{ request.object.simple_object_null }}": "v"}, id="traverse.go-nil-key-keeps-key"),
        pytest.param(VARIABLE_OBJECT, {"k": ["a", "{{ request.object.simple_object_int }}"]}, {"k": ["a", 5.0]},
                     id="traverse.go-list-elements"),
        pytest.param(VARIABLE_OBJECT, "\\{{ request.object.simple_object_string }}",
                     "{{ request.object.simple_object_string }}", id="vars.go-escaped-variable"),
        pytest.param(VARIABLE_OBJECT, {"\\{{ k }}": "\\{{ v }}"}, {"{{ k }}": "{{ v }}"},
                     id="vars.go-escaped-variable-in-key-and-value"),
    ],
)
def test_substitute_all(resource: Any, document: Any, expected: Any) -> None:
    result = context_for(resource).substitute(document)
    assert result == expected
    assert type(result) is type(expected)


def test_inner_variable_resolves_to_a_missing_key_of_the_outer() -> None:
    # ``{{ request.object.{{x}} }}``: x is substituted first, then the outer path is looked up
    ctx = context_for({"a": "b", "b": 7.0})
    assert ctx.substitute("{{ request.object.{{ request.object.a }} }}") == 7.0


def test_variable_substitution_array_message() -> None:
    """Test_variableSubstitution_array: a multi-line string from a ConfigMap in a message."""
    ctx = context_for({"apiVersion": "apps/v1", "kind": "Deployment",
                       "metadata": {"name": "busybox", "labels": {"app": "busybox", "animal": "cow"}}},
                      values={"animals": {"apiVersion": "v1", "kind": "ConfigMap",
                                          "metadata": {"name": "animals", "namespace": "default"},
                                          "data": {"animals": "snake\nbear\ncat\ndog"}}})
    message = ("The animal {{ request.object.metadata.labels.animal }} is not in the allowed list of animals: "
               "{{ animals.data.animals }}.")
    assert ctx.substitute(message) == "The animal cow is not in the allowed list of animals: snake\nbear\ncat\ndog."


@pytest.mark.parametrize(
    ("tree", "document", "expected"),
    [
        pytest.param(DELETE_CONTEXT, "{{request.object.metadata.annotations.target}}", "bar",
                     id="Test_ReplacingPathWhenDeleting"),
        pytest.param(DELETE_NESTED_CONTEXT,
                     "{{request.object.metadata.annotations.{{request.object.metadata.annotations.targetnew}}}}",
                     "nested_target", id="Test_ReplacingNestedVariableWhenDeleting"),
        pytest.param(DELETE_NESTED_CONTEXT,
                     "\\{{request.object.metadata.annotations.{{request.object.metadata.annotations.targetnew}}}}",
                     "{{request.object.metadata.annotations.target}}",
                     id="Test_ReplacingEscpNestedVariableWhenDeleting"),
    ],
)
def test_delete_requests_read_the_old_object(tree: dict, document: str, expected: str) -> None:
    assert raw_context(tree, delete=True).substitute(document) == expected


# -- vars_test.go: errors -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("resource", "document"),
    [
        pytest.param(NS_RESOURCE, {**RBAC_PATTERN, "kind": "{{request.object.metadata.name1}}"},
                     id="Test_subVars_failed"),
        pytest.param(ANNOTATED, "{{request.object.metadata.{{request.object.metadata.annotations.test2}}}}",
                     id="Test_SubstituteRecursiveErrors-inner"),
        pytest.param(ANNOTATED, "{{request.object.metadata2.{{request.object.metadata.annotations.test}}}}",
                     id="Test_SubstituteRecursiveErrors-outer"),
    ],
)
def test_substitution_errors(resource: Any, document: Any) -> None:
    with pytest.raises(SubstitutionError):
        context_for(resource).substitute(document)


@pytest.mark.parametrize(
    ("document", "message"),
    [
        # vars.go: "failed to resolve %v at path %s: %v" around context.Query's
        # "JMESPath query failed: %w"; the path is the leaf's (a key reports its map's path)
        pytest.param({"name": "ns-owner-{{request.object.metadata.missing}}"},
                     'failed to resolve request.object.metadata.missing at path /name: '
                     'JMESPath query failed: Unknown key "missing" in path',
                     id="traverse_test.go-Test_PathMustBeCorrectEveryTime"),
        pytest.param("{{ request.object.nope }}",
                     'failed to resolve request.object.nope at path : JMESPath query failed: Unknown key "nope" in path',
                     id="vars.go-root-leaf-path-is-empty"),
        pytest.param({"a/b": [{"c": "{{ request.object.nope }}"}]},
                     'failed to resolve request.object.nope at path /a\\/b/0/c: '
                     'JMESPath query failed: Unknown key "nope" in path',
                     id="traverse.go-slash-in-key-escaped-in-path"),
        pytest.param({"spec": {"{{ request.object.nope }}": 1.0}},
                     'failed to resolve request.object.nope at path /spec: '
                     'JMESPath query failed: Unknown key "nope" in path',
                     id="traverse.go-key-reports-parent-path"),
        pytest.param("{{ }}", "failed to resolve  at path : invalid query (nil)", id="context.go-empty-query"),
        pytest.param({"spec": {"{{ request.object.metadata.name }}x": 1.0, "{{ request.object.spec }}": 2.0}},
                     'expected string after substituting variables in key "{{ request.object.spec }}"',
                     id="traverse.go-key-must-become-a-string"),
    ],
)
def test_substitution_error_wording(document: Any, message: str) -> None:
    with pytest.raises(SubstitutionError) as caught:
        context_for(NS_RESOURCE).substitute(document)
    assert str(caught.value) == message


def test_expression_that_does_not_compile() -> None:
    """context.go: "incorrect query %s: %v" (the parser's own text follows)."""
    with pytest.raises(SubstitutionError) as caught:
        context_for(NS_RESOURCE).substitute("x-{{ request.object.[ }}")
    assert str(caught.value).startswith(
        "failed to resolve request.object.[ at path : incorrect query request.object.[: ")


def test_delete_rewrite_shows_in_the_error() -> None:
    """vars.go rewrites the expression before querying; the error names the rewritten one."""
    with pytest.raises(SubstitutionError) as caught:
        raw_context(DELETE_CONTEXT, delete=True).substitute("{{ request.object.metadata.nope }}")
    assert str(caught.value) == ('failed to resolve request.oldObject.metadata.nope at path : '
                                 'JMESPath query failed: Unknown key "nope" in path')


@pytest.mark.parametrize(
    "document",
    [
        pytest.param({"mutate": {"overlay": {"spec": {"kind": "{{@}}"}}}}, id="Test_subVars_with_JMESPath_At"),
        pytest.param({"mutate": {"overlay": {"spec": {"port": "{{ regex_match('(443)', '{{@}}') }}"}}}},
                     id="Test_subVars_withRegexMatch"),
        pytest.param({"mutate": {"overlay": {"spec": {"port": "{{ regex_replace_all_literal('.*', '{{@}}', '1313') }}"}}}},
                     id="Test_subVars_withRegexReplaceAll"),
    ],
)
def test_at_variable_is_unsupported_by_the_spec(document: Any) -> None:
    """Kyverno turns ``{{@}}`` into a path into request.object; the spec (7.5, U4) rejects it."""
    resource = {"metadata": {"name": "temp"}, "spec": {"kind": "foo", "port": "443"}}
    with pytest.raises(SubstitutionError, match="not supported"):
        context_for(resource).substitute(document)


# -- vars_test.go: $( ) references ---------------------------------------------------------


def test_reference_substitution() -> None:
    """Test_ReferenceSubstitution: relative path, anchors stripped from the pattern's paths."""
    document = {
        "metadata": {"name": "temp", "namespace": "n1", "annotations": {"test": "$(../../../../spec/namespace)"}},
        "(spec)": {"namespace": "n1", "name": "temp1"},
    }
    expected = copy.deepcopy(document)
    expected["metadata"]["annotations"]["test"] = "n1"
    assert context_for(document).substitute(document) == expected


def test_escaped_reference_substitution() -> None:
    """Test_EscpReferenceSubstitution."""
    annotations = {"test1": "$(../../../../spec/namespace)", "test2": "\\$(ENV_VAR)",
                   "test3": "\\${ENV_VAR}", "test4": "\\\\\\${ENV_VAR}"}
    document = {"metadata": {"name": "temp", "namespace": "n1", "annotations": annotations},
                "(spec)": {"namespace": "n1", "name": "temp1"}}
    result = context_for(document).substitute(document)
    assert result["metadata"]["annotations"] == {"test1": "n1", "test2": "$(ENV_VAR)",
                                                  "test3": "\\${ENV_VAR}", "test4": "\\\\\\${ENV_VAR}"}


def _resources(requests_memory: str) -> dict:
    return {"spec": {"containers": [{"name": "*", "resources": {"requests": {"memory": requests_memory},
                                                                 "limits": {"memory": "2048Mi"}}}]}}


@pytest.mark.parametrize(
    ("reference", "expected"),
    [
        # TestFormAbsolutePath_* and TestActualizePattern_GivenRelativePathThatExists
        pytest.param("$(<=./../../limits/memory)", "<=2048Mi", id="TestActualizePattern_GivenRelativePathThatExists"),
        pytest.param("$(./../../limits/memory)", "2048Mi", id="TestFormAbsolutePath_RelativePathExists"),
        pytest.param("$(../../limits/memory)", "2048Mi", id="TestFormAbsolutePath_RelativePathWithBackToTopInTheBeginning"),
        pytest.param("$(/spec/containers/0/resources/limits/memory)", "2048Mi",
                     id="TestFormAbsolutePath_AbsolutePathExists"),
        pytest.param("x-$(../../limits/memory)", "x-2048Mi", id="vars.go-reference-after-a-character"),
        pytest.param("$(./../../limits/memory) $(./../../limits/memory)", "2048Mi 2048Mi",
                     id="vars.go-two-references"),
    ],
)
def test_reference_paths(reference: str, expected: str) -> None:
    resolved = resolve_references(_resources(reference))
    assert resolved["spec"]["containers"][0]["resources"]["requests"]["memory"] == expected


@pytest.mark.parametrize(
    ("text", "is_reference"),
    [
        pytest.param("$(./../name)", True, id="TestIsReference-valid-reference"),
        pytest.param("just-a-string", False, id="TestIsReference-no-reference"),
        pytest.param("$(./name", False, id="TestIsReference-incomplete-reference"),
        pytest.param("", False, id="TestIsReference-empty-string"),
    ],
)
def test_is_reference(text: str, is_reference: bool) -> None:
    """A reference is resolved (here: to a missing target, an error); anything else stays text."""
    document = {"a": text}
    if is_reference:
        with pytest.raises(SubstitutionError):
            resolve_references(document)
    else:
        assert resolve_references(document) == document


@pytest.mark.parametrize(
    ("pattern", "message"),
    [
        # resolveReference / valFromReferenceToString wording
        pytest.param({"a": True, "b": "$(>/a)"},
                     "failed to resolve $(>/a) at path /b: incorrect expression: operator > does not match with value true",
                     id="vars.go-operator-with-bool"),
        pytest.param({"b": "$(>/missing)"},
                     "failed to resolve $(>/missing) at path /b: incorrect expression: "
                     "operator > does not match with value <nil>",
                     id="vars.go-operator-with-missing-target"),
        pytest.param({"b": "$(<=)"}, "failed to resolve $(<=) at path /b: expected path, found empty reference",
                     id="vars.go-operator-without-path"),
        pytest.param({"a": 5.0, "b": "$(/a)"}, "NotResolvedReferenceErr,reference $(/a) not resolved at path /b",
                     id="vars.go-number-without-operator"),
    ],
)
def test_reference_error_wording(pattern: dict, message: str) -> None:
    with pytest.raises(SubstitutionError) as caught:
        resolve_references(pattern)
    assert str(caught.value) == message


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        pytest.param({"a": 5.0, "b": "$(>=/a)"}, ">=5.000000", id="vars.go-float-with-operator-is-%f"),
        pytest.param({"a": "x", "b": "$(!/a)"}, "!x", id="vars.go-string-with-operator"),
        pytest.param({"(a)": "x", "b": "$(/a)"}, "x", id="vars.go-anchor-removed-from-path"),
        pytest.param({"a": {"k": "v"}, "b": "$(>/a)"}, ">k", id="vars.go-map-path-resolves-to-its-key"),
        pytest.param({"a": {"k": "v"}, "b": "$(>/a/k)x"}, ">vx", id="vars.go-reference-ends-at-last-parenthesis"),
    ],
)
def test_reference_values(pattern: dict, expected: str) -> None:
    assert resolve_references(pattern)["b"] == expected


def test_references_in_keys() -> None:
    """traverse.go: references in map keys are resolved with the map's own path."""
    assert resolve_references({"a": "x", "$(/a)": 1.0}) == {"a": "x", "x": 1.0}


def test_relative_reference_in_a_root_key_is_not_found() -> None:
    """A root key's path is empty, so ``./a`` joins to ``a``, which no (absolute) path equals."""
    with pytest.raises(SubstitutionError, match="got nil resolved variable"):
        resolve_references({"a": "x", "$(./a)": 1.0})


def test_references_are_resolved_before_variables() -> None:
    """substituteAll: references first, then variables (a reference may point at a variable)."""
    document = {"a": "{{ request.object.metadata.name }}", "b": "$(./../a)"}
    assert context_for(NS_RESOURCE).substitute(document) == {"a": "temp", "b": "temp"}


# -- regex/vars_test.go, regex/utils_test.go, Test_ReplaceAllVars --------------------------


@pytest.mark.parametrize(
    ("text", "expressions"),
    [
        pytest.param("tag: {{ value }}", ["value"], id="Test_RegexVariables"),
        pytest.param("{{ foo }}", ["foo"], id="Test_IsVariable-plain"),
        pytest.param("{{ foo {{foo2}} }}", ["foo2"], id="Test_IsVariable-nested"),
        pytest.param("\\{{ foo }}", [], id="Test_IsVariable-escaped"),
        pytest.param("{{request.object.metadata.name}}", ["request.object.metadata.name"],
                     id="TestIsVariable-valid-variable"),
        pytest.param("{{a}}-{{b}}", ["a", "b"], id="TestIsVariable-multiple-variables"),
        pytest.param("just-a-string", [], id="TestIsVariable-no-variable"),
        pytest.param("{{request.object", [], id="TestIsVariable-incomplete-variable"),
        pytest.param("", [], id="TestIsVariable-empty-string"),
        pytest.param('"{{ foo }}"', ["foo"], id="Test_ReplaceAllVars-quoted"),
        pytest.param("/s/{{elementIndex}}/r", ["elementIndex"], id="Test_ReplaceAllVars-inside-path"),
        pytest.param("{{ foo }} {{foo}} {{foo}}", ["foo", "foo", "foo"], id="Test_ReplaceAllVars-three"),
        pytest.param("{{ foo }} \\{{foo}} {{foo}}", ["foo", "foo"], id="Test_ReplaceAllVars-escaped-skipped"),
    ],
)
def test_find_variables(text: str, expressions: list[str]) -> None:
    assert find_variables(text) == expressions


# -- evaluate_test.go -----------------------------------------------------------------------

IPS = ["1.1.1.1", "2.2.2.2", "3.3.3.3"]

# TestEvaluate (Go ints and int64s are the same float here)
EVALUATE = [
    # Equals
    ("string", "Equals", "string", True), (1.0, "Equals", 1.0, True), (True, "Equals", True, True),
    (False, "Equals", False, True), ("1Gi", "Equals", "1Gi", True), ("1Gi", "Equals", "1024Mi", True),
    ("1h", "Equals", "1h", True), ("1h", "Equals", "60m", True),
    ({"foo": "bar"}, "Equals", {"foo": "bar"}, True), (["foo", "bar"], "Equals", ["foo", "bar"], True),
    ([{"foo": "bar"}], "Equals", [{"foo": "bar"}], True), ("string", "Equals", "not string", False),
    (1.0, "Equals", 2.0, False), (True, "Equals", False, False), (False, "Equals", True, False),
    ("1Gi", "Equals", "10Gi", False), ("10Gi", "Equals", "1024Mi", False), ("1h", "Equals", "5h", False),
    ("1h", "Equals", "30m", False), ("string", "Equals", 1.0, False), (1.0, "Equals", "2", False),
    (1.0, "Equals", "2.0", False), (True, "Equals", "false", False), (False, "Equals", "true", False),
    ({"foo": "bar"}, "Equals", {"bar": "foo"}, False), (["foo", "bar"], "Equals", ["bar", "foo"], False),
    ([{"foo": "bar"}], "Equals", [{"bar": "foo"}], False), ("1h", "Equals", 3600.0, True),
    ("2h", "Equals", 3600.0, False),
    # NotEquals
    ("string", "NotEquals", "string", False), (1.0, "NotEquals", 1.0, False), (True, "NotEquals", False, True),
    (False, "NotEquals", False, False), ("1Gi", "NotEquals", "1Gi", False), ("10Gi", "NotEquals", "1024Mi", True),
    ("1h", "NotEquals", "1h", False), ("1h", "NotEquals", "60m", False),
    ({"foo": "bar"}, "NotEquals", {"foo": "bar"}, False), (["foo", "bar"], "NotEquals", ["foo", "bar"], False),
    ([{"foo": "bar"}], "NotEquals", [{"foo": "bar"}], False), ("string", "NotEquals", "not string", True),
    (1.0, "NotEquals", 2.0, True), (True, "NotEquals", True, False), (False, "NotEquals", True, True),
    ("1Gi", "NotEquals", "10Gi", True), ("1Gi", "NotEquals", "1024Mi", False), ("1h", "NotEquals", "5h", True),
    ("1h", "NotEquals", "30m", True), ("string", "NotEquals", 1.0, True), (1.0, "NotEquals", "2", True),
    (1.0, "NotEquals", "2.0", True), (True, "NotEquals", "false", True), (False, "NotEquals", "true", True),
    ({"foo": "bar"}, "NotEquals", {"bar": "foo"}, True), (["foo", "bar"], "NotEquals", ["bar", "foo"], True),
    ([{"foo": "bar"}], "NotEquals", [{"bar": "foo"}], True), ("1h", "NotEquals", 3600.0, False),
    ("2h", "NotEquals", 3600.0, True),
    # GreaterThan
    (10.0, "GreaterThan", 1.0, True), (1.5, "GreaterThan", 1.0, True), (1.0, "GreaterThan", 10.0, False),
    (1.0, "GreaterThan", 1.5, False), (1.0, "GreaterThan", 1.0, False), ("10Gi", "GreaterThan", "1Gi", True),
    ("1Gi", "GreaterThan", "1Mi", True), ("1Gi", "GreaterThan", "10Gi", False), ("10Mi", "GreaterThan", "10Mi", False),
    ("10h", "GreaterThan", "1h", True), ("1h", "GreaterThan", "30m", True), ("1h", "GreaterThan", "1h", False),
    ("1Gi", "GreaterThan", "1Gi", False), ("10", "GreaterThan", 1.0, True), (100.0, "GreaterThan", "10", True),
    ("100", "GreaterThan", "10", True), ("10", "GreaterThan", "10", False), ("1", "GreaterThan", "10", False),
    ("1", "GreaterThan", 10.0, False), (1.0, "GreaterThan", "10", False), ("1h", "GreaterThan", 3600.0, False),
    ("2h", "GreaterThan", 3600.0, True), (3600.0, "GreaterThan", "1h", False), (3600.0, "GreaterThan", "30m", True),
    (-5.0, "GreaterThan", 1.0, False), (-5.0, "GreaterThan", -10.0, True), (1.0, "GreaterThan", -10.0, True),
    # LessThan
    (10.0, "LessThan", 1.0, False), (1.5, "LessThan", 1.0, False), (1.0, "LessThan", 10.0, True),
    (1.0, "LessThan", 1.5, True), (1.0, "LessThan", 1.0, False), ("10Gi", "LessThan", "1Gi", False),
    ("1Gi", "LessThan", "10Gi", True), ("1Gi", "LessThan", "1Mi", False), ("1Mi", "LessThan", "1Gi", True),
    ("10h", "LessThan", "1h", False), ("1h", "LessThan", "30m", False), ("1h", "LessThan", "1h", False),
    ("1Gi", "LessThan", "1Gi", False), ("10", "LessThan", 1.0, False), (100.0, "LessThan", "10", False),
    ("100", "LessThan", "10", False), ("10", "LessThan", "10", False), ("1", "LessThan", "10", True),
    ("1", "LessThan", 10.0, True), (1.0, "LessThan", "10", True), ("1h", "LessThan", 3600.0, False),
    ("30m", "LessThan", 3600.0, True), (3600.0, "LessThan", "1h", False), (3600.0, "LessThan", "30m", False),
    (-5.0, "LessThan", 1.0, True), (-5.0, "LessThan", -10.0, False), (1.0, "LessThan", -10.0, False),
    # GreaterThanOrEquals
    (10.0, "GreaterThanOrEquals", 1.0, True), (1.5, "GreaterThanOrEquals", 1.0, True),
    (1.0, "GreaterThanOrEquals", 10.0, False), (1.0, "GreaterThanOrEquals", 1.5, False),
    (1.0, "GreaterThanOrEquals", 1.0, True), ("10Gi", "GreaterThanOrEquals", "1Gi", True),
    ("1Gi", "GreaterThanOrEquals", "1Mi", True), ("1Gi", "GreaterThanOrEquals", "10Gi", False),
    ("10h", "GreaterThanOrEquals", "1h", True), ("1h", "GreaterThanOrEquals", "30m", True),
    ("1h", "GreaterThanOrEquals", "1h", True), ("1Gi", "GreaterThanOrEquals", "1Gi", True),
    ("10", "GreaterThanOrEquals", 1.0, True), (100.0, "GreaterThanOrEquals", "10", True),
    ("100", "GreaterThanOrEquals", "10", True), ("10", "GreaterThanOrEquals", "10", True),
    ("1", "GreaterThanOrEquals", "10", False), ("1", "GreaterThanOrEquals", 10.0, False),
    (1.0, "GreaterThanOrEquals", "10", False), ("1h", "GreaterThanOrEquals", 3600.0, True),
    ("2h", "GreaterThanOrEquals", 3600.0, True),
    # LessThanOrEquals
    (10.0, "LessThanOrEquals", 1.0, False), (1.5, "LessThanOrEquals", 1.0, False),
    (1.0, "LessThanOrEquals", 10.0, True), (1.0, "LessThanOrEquals", 1.5, True), (1.0, "LessThanOrEquals", 1.0, True),
    ("10Gi", "LessThanOrEquals", "1Gi", False), ("1Gi", "LessThanOrEquals", "10Gi", True),
    ("1Gi", "LessThanOrEquals", "1Mi", False), ("1Mi", "LessThanOrEquals", "1Gi", True),
    ("10h", "LessThanOrEquals", "1h", False), ("1h", "LessThanOrEquals", "30m", False),
    ("1h", "LessThanOrEquals", "1h", True), ("1Gi", "LessThanOrEquals", "1Gi", True),
    ("10", "LessThanOrEquals", 1.0, False), (100.0, "LessThanOrEquals", "10", False),
    ("100", "LessThanOrEquals", "10", False), ("10", "LessThanOrEquals", "10", True),
    ("1", "LessThanOrEquals", "10", True), ("1", "LessThanOrEquals", 10.0, True), (1.0, "LessThanOrEquals", "10", True),
    ("1h", "LessThanOrEquals", 3600.0, True), ("2h", "LessThanOrEquals", 3600.0, False),
    # In / NotIn
    (1.0, "In", [1.0, 2.0, 3.0], True), (1.5, "In", [1.0, 1.5, 2.0, 3.0], True), ("1", "In", ["1", "2", "3"], True),
    (["1.1.1.1", "2.2.2.2"], "In", IPS, True), (5.0, "In", [1.0, 2.0, 3.0], False),
    (5.5, "In", [1.0, 1.5, 2.0, 3.0], False), ("5", "In", ["1", "2", "3"], False),
    (["1.1.1.1", "4.4.4.4"], "In", IPS, False),
    (1.0, "NotIn", [1.0, 2.0, 3.0], False), (1.5, "NotIn", [1.0, 1.5, 2.0, 3.0], False),
    ("1", "NotIn", ["1", "2", "3"], False), (["1.1.1.1", "2.2.2.2"], "NotIn", IPS, False),
    (5.0, "NotIn", [1.0, 2.0, 3.0], True), (5.5, "NotIn", [1.0, 1.5, 2.0, 3.0], True),
    ("5", "NotIn", ["1", "2", "3"], True), (["1.1.1.1", "4.4.4.4"], "NotIn", IPS, True),
    # AnyIn / AllIn
    (["1.1.1.1", "5.5.5.5"], "AnyIn", IPS, True), (["4.4.4.4", "5.5.5.5"], "AnyIn", IPS, False),
    (["1.1.1.1", "5.5.5.5"], "AnyIn", ["1.1.1.1"], True), ([1.0, 2.0], "AnyIn", [1.0, 2.0, 3.0, 4.0], True),
    ([1.0, 5.0], "AnyIn", [1.0, 2.0, 3.0, 4.0], True), ([5.0], "AnyIn", [1.0, 2.0, 3.0, 4.0], False),
    (["1.1.1.1", "2.2.2.2"], "AllIn", IPS, True), (["1.1.1.1", "5.5.5.5"], "AllIn", IPS, False),
    (["4.4.4.4", "5.5.5.5"], "AllIn", IPS, False), (["1.1.1.1", "5.5.5.5"], "AllIn", ["1.1.1.1"], False),
    ([1.0, 2.0], "AllIn", [1.0, 2.0, 3.0, 4.0], True), ([1.0, 5.0], "AllIn", [1.0, 2.0, 3.0, 4.0], False),
    ([5.0], "AllIn", [1.0, 2.0, 3.0, 4.0], False),
    # AllNotIn / AnyNotIn
    (1.0, "AllNotIn", [1.0, 2.0, 3.0], False), (1.5, "AllNotIn", [1.0, 1.5, 2.0, 3.0], False),
    ("1", "AllNotIn", ["1", "2", "3"], False), (["1.1.1.1", "2.2.2.2"], "AllNotIn", IPS, False),
    (5.0, "AllNotIn", [1.0, 2.0, 3.0], True), (5.5, "AllNotIn", [1.0, 1.5, 2.0, 3.0], True),
    ("5", "AllNotIn", ["1", "2", "3"], True), (["1.1.1.1", "4.4.4.4"], "AllNotIn", IPS, False),
    (["5.5.5.5", "4.4.4.4"], "AllNotIn", IPS, True),
    (1.0, "AnyNotIn", [1.0, 2.0, 3.0], False), (1.5, "AnyNotIn", [1.0, 1.5, 2.0, 3.0], False),
    ("1", "AnyNotIn", ["1", "2", "3"], False), (["1.1.1.1", "2.2.2.2"], "AnyNotIn", IPS, False),
    (5.0, "AnyNotIn", [1.0, 2.0, 3.0], True), (5.5, "AnyNotIn", [1.0, 1.5, 2.0, 3.0], True),
    ("5", "AnyNotIn", ["1", "2", "3"], True), (["1.1.1.1", "4.4.4.4"], "AnyNotIn", IPS, True),
    (["5.5.5.5", "4.4.4.4"], "AnyNotIn", IPS, True),
]


@pytest.mark.parametrize(("key", "operator", "value", "expected"), EVALUATE,
                         ids=[f"TestEvaluate-{i}-{row[1]}" for i, row in enumerate(EVALUATE)])
def test_evaluate(key: Any, operator: str, value: Any, expected: bool) -> None:
    assert apply_operator(operator, key, value) is expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param("temp", True, id="Test_Eval_Equal_Var_Pass"),
        pytest.param("temp1", False, id="Test_Eval_Equal_Var_Fail"),
    ],
)
def test_evaluate_with_variables(value: str, expected: bool) -> None:
    block = parse_conditions([{"key": "{{request.object.metadata.name}}", "operator": "Equal", "value": value}])
    assert evaluate_block(block, context_for(NS_RESOURCE).substitute).value is expected


def test_condition_key_error_wording() -> None:
    """evaluate.go: "failed to substitute variables in condition key: %w"."""
    block = parse_conditions([{"key": "{{request.object.metadata.nope}}", "operator": "Equals", "value": "x"}])
    with pytest.raises(SubstitutionError) as caught:
        evaluate_block(block, context_for(NS_RESOURCE).substitute)
    assert str(caught.value) == (
        "failed to substitute variables in condition key: failed to resolve request.object.metadata.nope "
        'at path : JMESPath query failed: Unknown key "nope" in path'
    )


def test_substitution_never_mutates_its_input() -> None:
    """substitution_boundary_test.go: the result is independent of the document and the context."""
    ctx = context_for({"metadata": {"labels": {"num": 2.0}}})
    document = {"metadata": "{{ request.object.metadata }}"}
    result = ctx.substitute(document)
    result["metadata"]["labels"]["num"] = 99.0
    assert document == {"metadata": "{{ request.object.metadata }}"}
    assert ctx.search("request.object.metadata.labels.num") == 2.0


def test_substitute_all_with_a_plain_resolver_matches_the_context() -> None:
    """The module-level entry point with a bare resolver gives the same values."""
    data = {"request": {"object": NS_RESOURCE}}
    assert substitute_all(RBAC_PATTERN, lambda e: default_evaluator().search(e, data)) == \
        context_for(NS_RESOURCE).substitute(RBAC_PATTERN)


# -- messages: handlers/validation (buildErrorMessage, getDenyMessage) call SubstituteAll ----


def _message_policy(validate: dict) -> Any:
    from scanner.engine.policy import parse_policy

    return parse_policy({
        "apiVersion": "kyverno.io/v1", "kind": "ClusterPolicy", "metadata": {"name": "p"},
        "spec": {"background": False, "rules": [{
            "name": "r", "match": {"any": [{"resources": {"kinds": ["Pod"]}}]}, "validate": validate}]},
    })


MESSAGE_POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "namespace": "default"},
               "spec": {"containers": [{"name": "a", "image": "nginx"}]}}


@pytest.mark.parametrize(
    ("validate", "status", "message"),
    [
        pytest.param({"message": "use \\$(VAR) here", "pattern": {"metadata": {"labels": {"app": "?*"}}}},
                     "fail", "validation error: use $(VAR) here. rule r failed at path /metadata/labels/",
                     id="pattern-message-escaped-reference-unescaped"),
        pytest.param({"message": "label $(./app) missing", "pattern": {"metadata": {"labels": {"app": "?*"}}}},
                     "fail", "validation error: variables substitution error in rule r execution error: ",
                     id="pattern-message-reference-cannot-resolve"),
        pytest.param({"message": "{{ request.object.metadata.name }} needs \\$(VAR)",
                      "anyPattern": [{"metadata": {"labels": {"app": "?*"}}}]},
                     "fail", "validation error: web needs $(VAR). rule r[0] failed at path /metadata/labels/",
                     id="any-pattern-message-references-then-variables"),
        pytest.param({"message": "bad \\$(VAR)", "deny": {"conditions": {"any": [
                         {"key": "a", "operator": "Equals", "value": "a", "message": "cm"}]}}},
                     "fail", "bad $(VAR); cm", id="deny-message-escaped-reference-unescaped"),
        pytest.param({"message": "bad $(./x)", "deny": {"conditions": {"any": [
                         {"key": "a", "operator": "Equals", "value": "a", "message": "cm"}]}}},
                     "fail", "cm", id="deny-message-reference-cannot-resolve-keeps-condition-messages"),
    ],
)
def test_messages_resolve_references_like_substitute_all(validate: dict, status: str, message: str) -> None:
    from scanner.engine.evaluate import evaluate_policy

    results = evaluate_policy(_message_policy(validate), MESSAGE_POD, None)
    assert [str(r.status) for r in results] == [status]
    assert results[0].message.startswith(message)


def test_context_variable_value_resolves_references_like_substitute_all() -> None:
    """loaders/variable.go substitutes ``variable.value`` with ``SubstituteAll``: ``\\$(`` is unescaped."""
    from scanner.engine.evaluate import evaluate_policy
    from scanner.engine.policy import parse_policy

    policy = parse_policy({
        "apiVersion": "kyverno.io/v1", "kind": "ClusterPolicy", "metadata": {"name": "p"},
        "spec": {"background": False, "rules": [{
            "name": "r", "match": {"any": [{"resources": {"kinds": ["Pod"]}}]},
            "context": [{"name": "v", "variable": {"value": "x \\$(y)"}}],
            "validate": {"message": "got {{ v }}", "deny": {"conditions": {"all": [
                {"key": "{{ length(v) }}", "operator": "Equals", "value": 6}]}}}}]},
    })
    results = evaluate_policy(policy, MESSAGE_POD, None)
    assert [(str(r.status), r.message) for r in results] == [("fail", "got x $(y)")]
