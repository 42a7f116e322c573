"""Values and user info documents: shapes Kyverno accepts, and located errors for the rest."""

from __future__ import annotations

import pytest

from scanner.engine.values import ValuesError, parse_userinfo, parse_values


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
