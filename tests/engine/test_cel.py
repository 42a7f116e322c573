"""validate.cel: the CEL environment, Kyverno's compatibility rules, rule outcomes and
load-time compile errors (spec 10.3, 12, vector 31)."""

from __future__ import annotations

from typing import Any

import pytest

from scanner.engine.cel.rewrite import apply_orvalue_compat
from scanner.engine.cel.subrule import (
    CelCompileError,
    CelParamSpec,
    compile_cel_rule,
    evaluate_cel_rule,
    plan_param_lookup,
    rewrite_cel_for_autogen,
)
from scanner.engine.types import RuleStatus
from tests.engine.conftest import y

POD = y(
    """
    apiVersion: v1
    kind: Pod
    metadata:
      name: web
      namespace: team-a
      labels: {app: web, tier: gold}
      annotations: {"pod.kubernetes.io/lifetime": "4h"}
    spec:
      replicas: 4
      containers:
      - name: app
        image: registry.example.com/app:1.2
        securityContext: {capabilities: {drop: [all]}}
        env: [{name: MODE, value: prod}]
      - name: side
        image: nginx:latest
        ports: [{containerPort: 80, hostPort: 5500}]
    """
)
REQUEST = {"operation": "CREATE", "name": "web", "namespace": "team-a", "userInfo": {}}
NAMESPACE = {"metadata": {"name": "team-a"}}


def _run(
    cel: dict,
    *,
    message: str = "",
    pre: list[dict] | None = None,
    obj: dict | None = POD,
    params: list[dict] | None = None,
    old: dict | None = None,
) -> Any:
    rule = compile_cel_rule(cel, validate_message=message, preconditions=pre)
    return evaluate_cel_rule(
        rule,
        rule_name="r",
        object=obj,
        old_object=old,
        request=REQUEST,
        namespace_object=NAMESPACE,
        params=params,
    )


def _expr(*texts: str, variables: dict[str, str] | None = None) -> dict:
    cel: dict = {"expressions": [{"expression": t} for t in texts]}
    if variables:
        cel["variables"] = [{"name": k, "expression": v} for k, v in variables.items()]
    return cel


@pytest.mark.parametrize(
    ("expression", "status"),
    [
        pytest.param("has(object.metadata.labels)", "pass", id="has-present"),
        pytest.param("has(object.spec.volumes)", "fail", id="has-absent"),
        pytest.param("object.spec.containers.all(c, has(c.image))", "pass", id="all-macro"),
        pytest.param("object.spec.containers.exists(c, c.name == 'side')", "pass", id="exists"),
        pytest.param("object.spec.containers.exists_one(c, has(c.ports))", "pass", id="exists-one"),
        pytest.param(
            "object.spec.containers.map(c, c.name) == ['app', 'side']", "pass", id="map-macro"
        ),
        pytest.param(
            "size(object.spec.containers.filter(c, c.image.endsWith(':latest'))) == 1",
            "pass",
            id="filter-macro",
        ),
        pytest.param("object.spec.?volumes.orValue([]) == []", "pass", id="optional-select"),
        pytest.param(
            "object.metadata.?labels[?'tier'].orValue('') == 'gold'", "pass", id="optional-index"
        ),
        pytest.param("!object.spec.?hostPID.hasValue()", "pass", id="has-value"),
        pytest.param("optional.none().orValue(3) == 3", "pass", id="optional-none"),
        pytest.param("optional.of(2).value() == 2", "pass", id="optional-of-value"),
        pytest.param("'a,b'.split(',').join('-') == 'a-b'", "pass", id="strings-split-join"),
        pytest.param(
            "object.spec.containers[0].securityContext.capabilities.drop"
            ".exists(d, d.upperAscii() == 'ALL')",
            "pass",
            id="strings-upper-ascii",
        ),
        pytest.param("'ABC'.lowerAscii() == 'abc'", "pass", id="strings-lower-ascii"),
        pytest.param(
            "duration(object.metadata.annotations['pod.kubernetes.io/lifetime']) <= duration('8h')",
            "pass",
            id="duration-compare",
        ),
        pytest.param("int(object.spec.replicas) == 4", "pass", id="int-of-float"),
        pytest.param(
            "object.spec.containers[0].image.matches('^registry[.]example[.]com/')",
            "pass",
            id="matches-regex",
        ),
        pytest.param("object.spec.replicas > 3", "pass", id="double-int-comparison"),
        pytest.param("object.spec.replicas == 4", "pass", id="double-int-equality"),
        pytest.param(
            "object.spec.containers[1].ports[0].hostPort >= 5000", "pass", id="nested-number"
        ),
        pytest.param("object.spec.foo == 1", "fail", id="missing-key-fails"),
        pytest.param("namespaceObject.metadata.name == 'team-a'", "pass", id="namespace-object"),
        pytest.param("request.operation == 'CREATE'", "pass", id="request-operation"),
        pytest.param("oldObject == null", "pass", id="old-object-null-on-create"),
        pytest.param("[1, 2].all(x, x > 0.5)", "pass", id="int-double-literal-comparison"),
    ],
)
def test_cel_expression_features(expression: str, status: str) -> None:
    assert _run(_expr(expression)).status == RuleStatus(status)


@pytest.mark.parametrize(
    ("expression", "variables"),
    [
        pytest.param("object.spec.missing.orValue(1) == 1", None, id="plain-missing-gives-default"),
        pytest.param("object.spec.replicas.orValue(0) == 4", None, id="plain-present-gives-value"),
        pytest.param(
            "object.spec.containers.all(c, c.volumeMounts.orValue([]).size() == 0)",
            None,
            id="plain-select-in-macro",
        ),
        pytest.param(
            "object.spec.containers.all(c, c.?securityContext.privileged.orValue(false) == false)",
            None,
            id="plain-select-after-optional",
        ),
        pytest.param("variables.v.orValue(9) == 2", {"v": "2"}, id="plain-variable-receiver"),
        pytest.param("variables.o.orValue(9) == 9", {"o": "object.?x"}, id="optional-variable"),
        pytest.param(
            "object.spec.containers.filter(c, c.name == 'x').orValue([1]) == []",
            None,
            id="plain-call-result-receiver",
        ),
    ],
)
def test_cel_orvalue_kyverno_compatibility(expression: str, variables: dict | None) -> None:
    result = _run(_expr(expression, variables=variables))
    assert (result.status, result.message) == (RuleStatus.PASS, "Validation rule 'r' passed.")


def test_cel_missing_key_message_names_the_key() -> None:
    result = _run(_expr("object.spec.foo == 1"))
    assert result.status == RuleStatus.FAIL
    assert "no such key: foo" in result.message
    assert "object.spec.foo == 1" in result.message


def test_cel_integer_arithmetic_on_resource_numbers_fails_like_the_cli() -> None:
    result = _run(_expr("object.spec.replicas + 1 > 3"))
    assert result.status == RuleStatus.FAIL
    assert "no such overload" in result.message


@pytest.mark.parametrize(
    ("cel", "message", "expected"),
    [
        pytest.param(
            {"expressions": [{"expression": "false", "messageExpression": "'n=' + string(2)"}]},
            "",
            "n=2",
            id="message-expression-wins",
        ),
        pytest.param(
            {"expressions": [{"expression": "false", "messageExpression": "' '", "message": "m"}]},
            "",
            "m",
            id="blank-message-expression-falls-back",
        ),
        pytest.param(
            {"expressions": [{"expression": "false", "messageExpression": "'a\\nb'",
                              "message": "m"}]},
            "",
            "m",
            id="multi-line-message-expression-falls-back",
        ),
        pytest.param(
            {"expressions": [{"expression": "false", "messageExpression": "object.nope",
                              "message": " m "}]},
            "",
            "m",
            id="failing-message-expression-falls-back",
        ),
        pytest.param(
            {"expressions": [{"expression": "false"}]}, "from validate", "from validate",
            id="validate-message-fills-empty",
        ),
        pytest.param(
            {"expressions": [{"expression": "1 == 2"}]}, "", "failed expression: 1 == 2",
            id="no-message-names-expression",
        ),
        pytest.param(
            {"expressions": [{"expression": "\n 1 == 2\n"}]}, "", "failed expression: 1 == 2",
            id="no-message-names-trimmed-expression",
        ),
        pytest.param(
            {"expressions": [{"expression": "true"}, {"expression": "false", "message": "2nd"},
                             {"expression": "false", "message": "3rd"}]},
            "",
            "2nd",
            id="first-false-expression-wins",
        ),
    ],
)  # fmt: skip
def test_cel_failure_message(cel: dict, message: str, expected: str) -> None:
    result = _run(cel, message=message)
    assert (result.status, result.message) == (RuleStatus.FAIL, expected)


@pytest.mark.parametrize(
    ("pre", "status", "message"),
    [
        pytest.param(
            [{"name": "a", "expression": "object.kind == 'Pod'"}], RuleStatus.FAIL, "failed",
            id="preconditions-met-rule-runs",
        ),
        pytest.param(
            [{"name": "a", "expression": "true"}, {"name": "b", "expression": "false"}],
            RuleStatus.SKIP, "cel preconditions not met",
            id="false-precondition-skips",
        ),
        pytest.param(
            [{"name": "a", "expression": "object.spec.nothing == 'x'"}],
            RuleStatus.FAIL, "no such key: nothing",
            id="precondition-error-fails",
        ),
        pytest.param(
            [{"name": "a", "expression": "object.spec.nothing == 'x'"},
             {"name": "b", "expression": "false"}],
            RuleStatus.SKIP, "cel preconditions not met",
            id="false-precondition-after-error-skips",
        ),
        pytest.param(
            [{"name": "a", "expression": "object.spec.one == 'x'"},
             {"name": "b", "expression": "true"},
             {"name": "c", "expression": "object.spec.two == 'x'"}],
            RuleStatus.FAIL,
            "[expression 'object.spec.one == 'x'' resulted in error: no such key: one, "
            "expression 'object.spec.two == 'x'' resulted in error: no such key: two]",
            id="precondition-errors-are-listed-together",
        ),
    ],
)  # fmt: skip
def test_cel_preconditions(pre: list[dict], status: RuleStatus, message: str) -> None:
    result = _run({"expressions": [{"expression": "false", "message": "failed"}]}, pre=pre)
    assert result.status == status
    assert message in result.message


@pytest.mark.parametrize(
    ("variables", "expression", "status"),
    [
        pytest.param(
            {"bad": "object.spec.volumes", "none": "!has(object.spec.volumes)"},
            "variables.none || variables.bad.size() > 0",
            RuleStatus.PASS,
            id="unused-failing-variable-is-lazy",
        ),
        pytest.param(
            {"bad": "object.spec.volumes"}, "variables.bad.size() > 0", RuleStatus.FAIL,
            id="used-failing-variable-fails",
        ),
        pytest.param(
            {"names": "object.spec.containers.map(c, c.name)",
             "count": "size(variables.names)"},
            "variables.count == 2",
            RuleStatus.PASS,
            id="variable-uses-earlier-variable",
        ),
    ],
)  # fmt: skip
def test_cel_variables(variables: dict, expression: str, status: RuleStatus) -> None:
    assert _run(_expr(expression, variables=variables)).status == status


def test_cel_runaway_comprehension_stops_with_an_error() -> None:
    big = {"kind": "Pod", "spec": {"items": list(range(300))}}
    result = _run(
        _expr("object.spec.items.all(a, object.spec.items.all(b, object.spec.items.all(c, true)))"),
        obj=big,
    )
    assert result.status == RuleStatus.FAIL
    assert "cost limit exceeded" in result.message


@pytest.mark.parametrize("function", ["indexOf", "lastIndexOf"])
def test_cel_list_function_met_at_run_time(function: str) -> None:
    tagged = {"kind": "Pod", "spec": {"tags": ["app", "side"]}}  # a list known only at run time
    result = _run(_expr(f"object.spec.tags.{function}('side') == 1"), obj=tagged)
    assert result.status == RuleStatus.PASS


def test_cel_list_function_on_durations_met_at_run_time_is_not_supported() -> None:
    result = _run(_expr("dyn([duration('1s'), duration('2s')]).isSorted() || true"))
    assert (result.status, result.message) == (
        RuleStatus.ERROR,
        "not supported: CEL function 'isSorted' on durations or timestamps "
        "(Kubernetes CEL library; the runtime binding truncates them to microseconds)",
    )


def test_cel_pass_message_names_the_rule() -> None:
    result = _run(_expr("true"))
    assert (result.status, result.message) == (RuleStatus.PASS, "Validation rule 'r' passed.")


def test_cel_old_object_and_delete_bindings() -> None:
    assert _run(_expr("oldObject.spec.replicas == 4"), old=POD).status == RuleStatus.PASS
    assert _run(_expr("object == null"), obj=None).status == RuleStatus.PASS


@pytest.mark.parametrize(
    ("cel", "pre", "pointer", "text"),
    [
        pytest.param(_expr("object.spec. == 1"), None, "/validate/cel/expressions/0/expression",
                     "Syntax error", id="syntax-error"),
        pytest.param(_expr("true", "nosuch.x == 1"), None,
                     "/validate/cel/expressions/1/expression", "undeclared reference",
                     id="undeclared-reference"),
        pytest.param(_expr("variables.later"), None, "/validate/cel/expressions/0/expression",
                     "undefined variable 'later'", id="undefined-variable"),
        pytest.param(_expr("quantity('1Gi') > quantity('1')"), None,
                     "/validate/cel/expressions/0/expression", "not supported",
                     id="kubernetes-library-not-supported"),
        pytest.param(_expr("[1u, 2u].sum() == 3u"), None,
                     "/validate/cel/expressions/0/expression", "not supported: CEL function 'sum' on list(uint)",
                     id="list-sum-of-uint-not-supported"),
        pytest.param(_expr("object.metadata.name.find(')') == ''"), None,
                     "/validate/cel/expressions/0/expression", "program instantiation failed: error parsing regexp",
                     id="constant-regex-checked-at-load"),
        pytest.param(_expr("authorizer != null"), None, "/validate/cel/expressions/0/expression",
                     "not supported: CEL function or variable 'authorizer'",
                     id="authorizer-not-supported"),
        pytest.param(_expr("format.dns1123Label().validate('x') == optional.none()"), None,
                     "/validate/cel/expressions/0/expression",
                     "not supported: CEL function or variable 'format'",
                     id="format-library-not-supported"),
        pytest.param(_expr("{'a': 1}.all(k, v, v == 1)"), None,
                     "/validate/cel/expressions/0/expression",
                     "not supported: two-variable comprehensions",
                     id="two-variable-comprehension-not-supported"),
        pytest.param(_expr("'ab'.reverse() == 'ba'"), None,
                     "/validate/cel/expressions/0/expression", "undeclared reference to 'reverse'",
                     id="strings-extension-is-version-2"),
        pytest.param(_expr("'text'"), None, "/validate/cel/expressions/0/expression",
                     "must evaluate to bool", id="non-bool-expression"),
        pytest.param({"expressions": [{"expression": "true", "messageExpression": "1"}]}, None,
                     "/validate/cel/expressions/0/messageExpression", "must evaluate to string",
                     id="non-string-message-expression"),
        pytest.param({"expressions": []}, None, "/validate/cel/expressions", "non-empty",
                     id="no-expressions"),
        pytest.param(_expr("true", variables={"a-b": "1"}), None, "/validate/cel/variables/0/name",
                     "invalid variable name", id="bad-variable-name"),
        pytest.param({"expressions": [{"expression": "true"}],
                      "variables": [{"name": "a", "expression": "1"},
                                    {"name": "a", "expression": "2"}]},
                     None, "/validate/cel/variables/1/name", "duplicate", id="duplicate-variable"),
        pytest.param(_expr("true", variables={"v": "object.("}), None,
                     "/validate/cel/variables/0/expression", "Syntax error",
                     id="broken-unused-variable"),
        pytest.param(_expr("__kyverno_or_1 == 1"), None,
                     "/validate/cel/expressions/0/expression", "reserved",
                     id="reserved-identifier"),
        pytest.param(_expr("true"), [{"name": "p", "expression": "object.kind +"}],
                     "/celPreconditions/0/expression", "Syntax error",
                     id="precondition-syntax-error"),
        pytest.param({"expressions": [{"expression": "true"}],
                      "paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
                      "paramRef": {"name": "x", "parameterNotFoundAction": "Maybe"}},
                     None, "/validate/cel/paramRef/parameterNotFoundAction", "Allow or Deny",
                     id="bad-parameter-not-found-action"),
    ],
)  # fmt: skip
def test_cel_compile_error_is_located(
    cel: dict, pre: list[dict] | None, pointer: str, text: str
) -> None:
    with pytest.raises(CelCompileError) as info:
        compile_cel_rule(cel, validate_message="", preconditions=pre)
    assert info.value.pointer == pointer
    assert text in info.value.message


PARAMS_CEL = {
    "expressions": [
        {
            "expression": "object.spec.replicas <= params.max",
            "messageExpression": "'at most ' + string(params.max)",
        }
    ],
    "paramKind": {"apiVersion": "example.com/v1", "kind": "Limit"},
    "paramRef": {"name": "limit", "parameterNotFoundAction": "Deny"},
}


@pytest.mark.parametrize(
    ("cel", "params", "status", "message"),
    [
        pytest.param(PARAMS_CEL, [{"max": 5}], RuleStatus.PASS, "passed", id="param-allows"),
        pytest.param(PARAMS_CEL, [{"max": 5}, {"max": 3}], RuleStatus.FAIL, "at most 3",
                     id="each-param-evaluated-first-failure-wins"),
        # CollectParams: a named object must exist, whatever parameterNotFoundAction says
        pytest.param(PARAMS_CEL, [], RuleStatus.ERROR,
                     'error in parameterized resource: limits.example.com "limit" not found',
                     id="named-param-missing-errors"),
        pytest.param({**PARAMS_CEL, "paramRef": {"name": "limit", "parameterNotFoundAction": "Allow"}}, [],
                     RuleStatus.ERROR, 'error in parameterized resource: limits.example.com "limit" not found',
                     id="named-param-missing-errors-under-allow"),
        pytest.param({**PARAMS_CEL, "paramRef": {"selector": {}, "parameterNotFoundAction": "Deny"}}, [],
                     RuleStatus.ERROR, "error in parameterized resource: no params found",
                     id="no-params-deny-errors"),
        pytest.param({**PARAMS_CEL, "paramRef": {"selector": {}}}, [], RuleStatus.PASS,
                     "passed", id="no-params-allow-passes"),
        pytest.param(PARAMS_CEL, [{"max": 5, "skip": True}, {"max": 3}], RuleStatus.SKIP,
                     "cel preconditions not met", id="preconditions-see-each-param"),
    ],
)  # fmt: skip
def test_cel_params(cel: dict, params: list[dict], status: RuleStatus, message: str) -> None:
    pre = [{"name": "enabled", "expression": "!params.?skip.orValue(false)"}]
    result = _run(cel, params=params, pre=pre)
    assert result.status == status
    assert message in result.message


@pytest.mark.parametrize(
    ("spec", "resource_namespace", "namespaced", "namespace", "error"),
    [
        pytest.param(CelParamSpec("v1", "ConfigMap", name="c"), "team-a", True, "team-a", "",
                     id="namespaced-kind-uses-resource-namespace"),
        pytest.param(CelParamSpec("v1", "ConfigMap", name="c", namespace="cfg"), "team-a", True,
                     "cfg", "", id="param-ref-namespace-wins"),
        pytest.param(CelParamSpec("v1", "ConfigMap", name="c"), "", True, None,
                     "cluster-scoped resource", id="cluster-scoped-resource-errors"),
        pytest.param(CelParamSpec("x/v1", "Limit", name="c", namespace="cfg"), "team-a", False,
                     None, "must not be provided for a cluster-scoped `paramKind`",
                     id="cluster-scoped-kind-with-namespace-errors"),
        pytest.param(CelParamSpec("x/v1", "Limit", name="c"), "team-a", False, None, "",
                     id="cluster-scoped-kind"),
    ],
)  # fmt: skip
def test_cel_plan_param_lookup(
    spec: CelParamSpec, resource_namespace: str, namespaced: bool, namespace: str | None,
    error: str,
) -> None:  # fmt: skip
    lookup = plan_param_lookup(
        spec, resource_namespace=resource_namespace, param_kind_namespaced=namespaced
    )
    assert lookup.namespace == namespace
    assert (error in lookup.error) if error else lookup.error == ""


@pytest.mark.parametrize(
    ("text", "controller", "expected"),
    [
        pytest.param("object.spec.containers", "Deployment", "object.spec.template.spec.containers",
                     id="spec-to-template-spec"),
        pytest.param("object.metadata.labels", "StatefulSet",
                     "object.spec.template.metadata.labels", id="metadata-to-template-metadata"),
        pytest.param("oldObject.spec.x == object.spec.x", "DaemonSet",
                     "oldObject.spec.template.spec.x == object.spec.template.spec.x",
                     id="old-object-too"),
        pytest.param("object.spec.containers", "CronJob",
                     "object.spec.jobTemplate.spec.template.spec.containers", id="cronjob-spec"),
        pytest.param("object.metadata.name", "CronJob",
                     "object.spec.jobTemplate.spec.template.metadata.name",
                     id="cronjob-metadata"),
        pytest.param("namespaceObject.metadata.name", "Deployment",
                     "namespaceObject.metadata.name", id="namespace-object-untouched"),
        pytest.param("object.?spec.x", "Job", "object.?spec.x", id="optional-select-untouched"),
    ],
)  # fmt: skip
def test_cel_rewrite_for_autogen(text: str, controller: str, expected: str) -> None:
    assert rewrite_cel_for_autogen(text, controller) == expected


def test_cel_autogen_rule_reads_the_pod_template() -> None:
    deployment = {"kind": "Deployment", "spec": {"template": POD}}
    text = rewrite_cel_for_autogen("object.metadata.labels.app == 'web'", "Deployment")
    assert _run(_expr(text), obj=deployment).status == RuleStatus.PASS


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("a.b.orValue(1)", "a.?b.orValue(1)", id="plain-select"),
        pytest.param("a.?b.c.orValue(1)", "a.?b.?c.orValue(1)", id="after-optional"),
        pytest.param("a.b[0].orValue(1)", "a.?b[?0].orValue(1)", id="plain-index"),
        pytest.param("a.f(x).b.orValue(1)", "a.f(x).?b.orValue(1)", id="stops-at-call"),
        pytest.param("a.?b.orValue(c.d.orValue(2))", "a.?b.orValue(c.?d.orValue(2))",
                     id="nested-default"),
        pytest.param("'a.orValue(1)'", "'a.orValue(1)'", id="string-literal-untouched"),
    ],
)  # fmt: skip
def test_cel_orvalue_rewrite(text: str, expected: str) -> None:
    assert apply_orvalue_compat(text) == expected


def test_cel_orvalue_rewrite_binds_plain_receivers() -> None:
    out = apply_orvalue_compat("x.orValue(1)")
    assert out.startswith("cel.bind(__kyverno_or_1, x, type(__kyverno_or_1) == optional_type")
