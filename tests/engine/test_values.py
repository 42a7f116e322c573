"""Values and user info documents: shapes Kyverno accepts, and located errors for the rest."""

from __future__ import annotations

import pytest

from scanner.engine.context import VariableContext
from scanner.engine.evaluate import evaluate_policy
from scanner.engine.jmespath.dialect import default_evaluator
from scanner.engine.policy import parse_policy
from scanner.engine.values import ValuesError, parse_userinfo, parse_values

from .conftest import policy


def test_values_document_parts() -> None:
    values = parse_values({
        "globalValues": {"request.operation": "UPDATE"},
        "policies": [{"name": "p", "resources": [{"name": "web", "values": {"a": 1}}],
                      "rules": [{"name": "r", "values": {"b": 2}}]}],
        "namespaceSelector": [{"name": "team", "labels": {"tier": "1"}}],
        "subresources": [{"subresource": {"name": "pods/status"}}],
    })
    assert values.global_values == {"request.operation": "UPDATE"}
    assert values.resource_values == {"p": {"web": {"a": 1}}}
    assert values.rule_values == {"p": {"r": {"b": 2}}}
    assert values.labels_of("team") == {"tier": "1"}
    assert len(values.subresources) == 1


@pytest.mark.parametrize(("doc", "message", "pointer"), [
    pytest.param(["a"], "values must be an object", "", id="not-a-mapping"),
    pytest.param({"policies": {"name": "p"}}, "policies must be a list", "/policies", id="policies-mapping"),
    pytest.param({"policies": [{"name": "p", "rules": "r"}]}, "policies[0].rules must be a list",
                 "/policies/0/rules", id="rules-string"),
    pytest.param({"policies": [{"name": "p", "resources": [{"values": [1]}]}]},
                 "policies[0].resources[0].values must be an object", "/policies/0/resources/0/values",
                 id="resource-values-list"),
    pytest.param({"namespaceSelector": [{"name": "a", "labels": ["x"]}]},
                 "namespaceSelector[0].labels must be an object", "/namespaceSelector/0/labels", id="labels-list"),
    pytest.param({"subresources": "pods/status"}, "subresources must be a list", "/subresources", id="subresources"),
    pytest.param({"globalvalues": {}}, "globalvalues is not a known field", "/globalvalues", id="unknown-top-field"),
    pytest.param({"policies": [{"name": "p", "resources": [{"name": "web", "value": {}}]}]},
                 "policies[0].resources[0].value is not a known field", "/policies/0/resources/0/value",
                 id="unknown-resource-field"),
    pytest.param({"namespaceSelector": [{"name": "a", "matchLabels": {}}]},
                 "namespaceSelector[0].matchLabels is not a known field", "/namespaceSelector/0/matchLabels",
                 id="unknown-selector-field"),
])
def test_values_wrong_shapes_name_the_field(doc: object, message: str, pointer: str) -> None:
    with pytest.raises(ValuesError) as info:
        parse_values(doc)
    assert (str(info.value), info.value.pointer) == (message, pointer)


def test_userinfo_lists_are_lists() -> None:
    info = parse_userinfo({"roles": ["ns:r"], "clusterRoles": ["admin"], "userInfo": {"username": "u",
                                                                                      "groups": ["g"]}})
    assert (info.roles, info.cluster_roles, info.username, info.groups) == (("ns:r",), ("admin",), "u", ("g",))
    with pytest.raises(ValuesError, match=r"^userInfo.groups must be a list$"):
        parse_userinfo({"userInfo": {"groups": "admins"}})


def test_values_entries_for_the_same_resource_merge_and_the_first_rule_entry_counts() -> None:
    values = parse_values({"policies": [
        {"name": "p", "resources": [{"name": "web", "values": {"a": 1, "b": 1}}],
         "rules": [{"name": "r", "values": {"c": 1}}]},
        {"name": "p", "resources": [{"name": "web", "values": {"b": 2}}], "rules": [{"name": "r", "values": {"c": 2}}]},
    ]})
    assert values.for_resource("p", "web") == {"a": 1, "b": 2}
    assert values.for_rule("p", "autogen-r") == {"c": 1}


@pytest.mark.parametrize(("operation", "engine_operation"), [
    pytest.param("UPDATE", "UPDATE", id="update"),
    pytest.param("DELETE", "DELETE", id="delete"),
    pytest.param("CONNECT", "CREATE", id="connect-is-evaluated-as-create"),
    pytest.param("update", "CREATE", id="lowercase-is-create"),
])
def test_values_engine_operation(operation: str, engine_operation: str) -> None:
    values = parse_values({"policies": [{"name": "p", "resources": [{"name": "web",
                                                                     "values": {"request.operation": operation}}]}]})
    assert (values.operation("p", "web"), values.operation("p", "api")) == (engine_operation, "CREATE")


@pytest.mark.parametrize(("operation", "seen"), [
    pytest.param("", "CREATE", id="empty-means-the-default-operation"),
    pytest.param("CONNECT", "CONNECT", id="connect-stays-visible"),
    pytest.param("UPDATE", "UPDATE", id="update"),
])
def test_values_request_operation_seen_by_expressions(operation: str, seen: str) -> None:
    values = parse_values({"policies": [{"name": "p", "resources": [{"name": "web",
                                                                     "values": {"request.operation": operation}}]}]})
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"}}
    ctx = VariableContext.for_resource(pod, evaluator=default_evaluator(), operation=values.operation("p", "web"),
                                       values=values.for_resource("p", "web"))
    assert ctx.query("request.operation") == seen


@pytest.mark.parametrize(("raw", "message"), [
    pytest.param("x", r"^policies\[0\]\.rules\[0\]\.foreachValues must be an object or a list of objects$",
                 id="scalar"),
    pytest.param({"data": "x"}, r"^policies\[0\]\.rules\[0\]\.foreachValues\.data must be a list$",
                 id="mapping-value-not-a-list"),
    pytest.param([{"data": ["a"]}, "x"], r"^policies\[0\]\.rules\[0\]\.foreachValues\[1\] must be an object$",
                 id="list-item-not-a-mapping"),
])
def test_values_foreach_values_shape_is_checked(raw: object, message: str) -> None:
    with pytest.raises(ValuesError, match=message) as caught:
        parse_values({"policies": [{"name": "p", "rules": [{"name": "r", "foreachValues": raw}]}]})
    assert caught.value.pointer.startswith("/policies/0/rules/0/foreachValues")


def test_values_foreach_values_of_an_autogen_rule_come_from_its_rule() -> None:
    values = parse_values({"policies": [{"name": "p", "rules": [{"name": "r", "foreachValues": {"a": [1, 2]}}]}]})
    assert values.foreach_for_rule("p", "autogen-r") == {"a": [1, 2]}
    assert values.foreach_for_rule("p", "other") is None


SCALE = {"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": {"name": "web", "namespace": "default"},
         "spec": {"replicas": 4}}
SCALE_ENTRY = {"subresource": {"name": "deployments/scale", "kind": "Scale", "group": "autoscaling", "version": "v1"},
               "parentResource": {"name": "deployments", "kind": "Deployment", "group": "apps", "version": "v1"}}
EXEC_ENTRY = {"subresource": {"name": "pods/exec", "kind": "PodExecOptions", "version": "v1"},
              "parentResource": {"name": "pods", "kind": "Pod", "version": "v1"}}


@pytest.mark.parametrize(("entries", "resource", "expected"), [
    pytest.param([SCALE_ENTRY], SCALE, ("apps", "v1", "Deployment", "scale"), id="scale-is-the-deployment-subresource"),
    pytest.param([EXEC_ENTRY], {"apiVersion": "v1", "kind": "PodExecOptions", "metadata": {"name": "x"}},
                 ("", "v1", "Pod", "exec"), id="pod-exec-options-is-the-pod-subresource"),
    pytest.param([EXEC_ENTRY], SCALE, ("autoscaling", "v1", "Scale", ""), id="another-kind-is-itself"),
    pytest.param([{**SCALE_ENTRY, "subresource": {**SCALE_ENTRY["subresource"], "version": "v2"}}], SCALE,
                 ("autoscaling", "v1", "Scale", ""), id="the-version-must-match"),
    pytest.param([SCALE_ENTRY, {**SCALE_ENTRY, "parentResource": {"kind": "StatefulSet", "group": "apps", "version": "v1"},
                                "subresource": {**SCALE_ENTRY["subresource"], "name": "statefulsets/scale"}}],
                 SCALE, ("apps", "v1", "StatefulSet", "scale"), id="the-last-entry-for-a-kind-counts"),
])
def test_values_subresources_map_an_object_to_its_parent_kind(entries: list, resource: dict,
                                                              expected: tuple) -> None:
    view = parse_values({"subresources": entries}).resource_view(resource)
    assert (view.group, view.version, view.kind, view.subresource) == expected


@pytest.mark.parametrize(("kinds", "results"), [
    pytest.param("[Deployment/scale]", [("fail", "validation error: rule r failed at path /spec/replicas/")],
                 id="parent-with-subresource-matches"),
    pytest.param("[apps/v1/Deployment/scale]", [("fail", "validation error: rule r failed at path /spec/replicas/")],
                 id="group-version-kind-subresource-matches"),
    pytest.param("[Deployment]", [], id="parent-alone-does-not-match"),
    pytest.param("[Scale]", [], id="the-object-kind-does-not-match"),
])
def test_values_subresources_decide_which_rules_match(kinds: str, results: list) -> None:
    compiled = parse_policy(policy(f"[{{name: r, match: {{any: [{{resources: {{kinds: {kinds}}}}}]}}, "
                                   "validate: {pattern: {spec: {replicas: 2}}}}]"))
    view = parse_values({"subresources": [SCALE_ENTRY]}).resource_view(SCALE)
    got = evaluate_policy(compiled, SCALE, view=view)
    assert [(str(r.status), r.message) for r in got] == results


ROLE = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": {"name": "r", "namespace": "a"}}


@pytest.mark.parametrize(("values", "expected"), [
    pytest.param({"request.object.metadata.annotations.\"example.io/owner\"": "platform"},
                 {**ROLE, "metadata": {**ROLE["metadata"], "annotations": {"example.io/owner": "platform"}}},
                 id="a-quoted-key-writes-an-annotation"),
    pytest.param({"request.object.metadata": {"labels": {"a": "b"}}},
                 {**ROLE, "metadata": {**ROLE["metadata"], "labels": {"a": "b"}}}, id="maps-merge"),
    pytest.param({"request.operation": "DELETE", "request.object.metadata.labels.a": "b"}, ROLE,
                 id="a-delete-reads-the-old-object"),
    pytest.param({"request.operation": "DELETE", "request.oldObject.metadata.labels.a": "b"},
                 {**ROLE, "metadata": {**ROLE["metadata"], "labels": {"a": "b"}}}, id="a-delete-old-object-value"),
    pytest.param({"request.namespace": "x"}, ROLE, id="other-values-leave-it"),
])
def test_values_written_into_the_object_change_what_the_policy_sees(values: dict, expected: dict) -> None:
    """The CLI reads the resource back from the context after adding the values."""
    parsed = parse_values({"policies": [{"name": "p", "resources": [{"name": "r", "values": values}]}]})
    seen = parsed.object_for("p", "r", ROLE)
    assert seen == expected and ROLE["metadata"] == {"name": "r", "namespace": "a"}
    assert (seen is ROLE) == (expected is ROLE)
    assert parsed.object_for("other", "r", ROLE) is ROLE


def test_values_written_into_the_object_decide_matching() -> None:
    compiled = parse_policy(policy("[{name: r, match: {any: [{resources: {kinds: [Role], "
                                   "annotations: {example.io/owner: platform}}}]}, validate: {deny: {}}}]"))
    values = parse_values({"policies": [{"name": "p", "resources": [
        {"name": "r", "values": {"request.object.metadata.annotations.\"example.io/owner\"": "platform"}}]}]})
    seen = values.object_for("p", "r", ROLE)
    assert evaluate_policy(compiled, ROLE) == []
    assert [str(r.status) for r in evaluate_policy(compiled, seen, view=values.resource_view(seen))] == ["fail"]


def test_userinfo_unknown_field_is_refused() -> None:
    with pytest.raises(ValuesError, match=r"^userInfo.name is not a known field$"):
        parse_userinfo({"userInfo": {"name": "u"}})
