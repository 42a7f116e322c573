"""match/exclude, failure actions, anyPattern, autogen and messages: one policy x one resource."""

from __future__ import annotations

import pytest

from scanner.engine.evaluate import evaluate_policy
from scanner.engine.match import Request, UserInfo
from scanner.engine.policy import InvalidPolicyError, parse_policy
from scanner.engine.types import FailureAction

from .conftest import y


def policy(rules: str, spec_extra: str = "", kind: str = "ClusterPolicy", meta: str = "") -> dict:
    doc = y(f"""
apiVersion: kyverno.io/v1
kind: {kind}
metadata: {{name: p{(', ' + meta) if meta else ''}}}
spec:
  rules: {rules}
""")
    if spec_extra:
        doc["spec"].update(y(spec_extra))
    return doc


def rule(match: str = "{any: [{resources: {kinds: [Pod]}}]}", validate: str = "{pattern: {metadata: {labels: {team: '?*'}}}}",
         exclude: str | None = None, name: str = "r") -> str:
    ex = f", exclude: {exclude}" if exclude else ""
    return f"[{{name: {name}, match: {match}{ex}, validate: {validate}}}]"


def resource(kind: str = "Pod", name: str = "x", ns: str = "default", labels: dict | None = None,
             api: str = "v1", **extra) -> dict:
    meta = {"name": name, "labels": labels or {}}
    if ns:
        meta["namespace"] = ns
    return {"apiVersion": api, "kind": kind, "metadata": meta, **extra}


def outcome(doc: dict, res: dict, request: Request | None = None) -> list[tuple[str, str]]:
    return [(r.rule, str(r.status)) for r in evaluate_policy(parse_policy(doc), res, request)]


MATCH_CASES = [
    pytest.param("{any: [{resources: {kinds: [v1/Pod]}}]}", None, resource(), [("r", "fail")], id="version-kind-matches"),
    pytest.param("{any: [{resources: {kinds: [apps/v1/Pod]}}]}", None, resource(), [], id="wrong-group-no-result"),
    pytest.param("{any: [{resources: {kinds: [Pod/exec]}}]}", None, resource(), [], id="subresource-never-matches-manifest"),
    pytest.param("{any: [{resources: {kinds: ['Deployment,Pod']}}]}", None, resource(), [], id="comma-kinds-literal"),
    pytest.param("{any: [{resources: {kinds: [Pod], names: ['x*']}}]}", None, resource(), [("r", "fail")], id="names-wildcard"),
    pytest.param("{any: [{resources: {kinds: [Pod], namespaces: [prod]}}]}", None, resource(), [], id="namespace-mismatch"),
    pytest.param("{any: [{resources: {kinds: [Pod], selector: {matchLabels: {tier: 'w*'}}}}]}", None,
                 resource(labels={"tier": "web"}), [("r", "fail")], id="selector-wildcard-value"),
    pytest.param("{any: [{resources: {kinds: [Pod], selector: {matchExpressions: [{key: tier, operator: NotIn, values: [db]}]}}}]}",
                 None, resource(), [("r", "fail")], id="notin-matches-absent-key"),
    pytest.param("{any: [{resources: {kinds: [Pod], annotations: {'a/*': 'y*'}}}]}", None,
                 resource(metadata_extra=None), [], id="annotations-required"),
    pytest.param("{any: [{resources: {kinds: [Pod]}}, {resources: {kinds: [Service]}}]}", None,
                 resource(kind="Service"), [("r", "fail")], id="any-is-or"),
    pytest.param("{all: [{resources: {kinds: [Pod]}}, {resources: {kinds: [Pod], selector: {matchLabels: {a: b}}}}]}", None,
                 resource(), [], id="all-is-and"),
    pytest.param("{any: [{resources: {kinds: [Pod]}}]}", "{any: [{resources: {namespaces: [default]}}]}",
                 resource(), [], id="exclude-any"),
    pytest.param("{any: [{resources: {kinds: [Pod]}}]}", "{all: [{resources: {namespaces: [default]}}, {resources: {names: [y]}}]}",
                 resource(), [("r", "fail")], id="exclude-all-needs-every-filter"),
    pytest.param("{any: [{resources: {kinds: [Pod], operations: [UPDATE]}}]}", None, resource(), [],
                 id="operations-default-create"),
    pytest.param("{any: [{resources: {kinds: [Namespace], namespaces: [team-a]}}]}", None,
                 resource(kind="Namespace", name="team-a", ns=""), [("r", "fail")],
                 id="namespace-object-uses-own-name"),
    pytest.param("{any: [{resources: {kinds: [Pod], namespaceSelector: {matchLabels: {env: prod}}}}]}", None,
                 resource(), [], id="namespace-selector-without-labels"),
]


@pytest.mark.parametrize(("match", "exclude", "res", "expected"), MATCH_CASES)
def test_match_filters(match: str, exclude: str | None, res: dict, expected: list) -> None:
    res.pop("metadata_extra", None)
    doc = policy(rule(match=match, exclude=exclude), "{background: false}")
    assert outcome(doc, res) == expected


def test_match_namespace_selector_uses_request_labels() -> None:
    doc = policy(rule(match="{any: [{resources: {kinds: [Pod], namespaceSelector: {matchLabels: {env: prod}}}}]}"))
    request = Request(namespace_labels={"default": {"env": "prod"}}.get)
    assert outcome(doc, resource(), request) == [("r", "fail")]


def test_match_user_info_ignored_offline_in_match_but_not_in_exclude() -> None:
    doc = policy(rule(match="{any: [{resources: {kinds: [Pod]}, subjects: [{kind: User, name: alice}]}]}",
                      exclude="{any: [{clusterRoles: [admin]}]}"), "{background: false}")
    assert outcome(doc, resource()) == [("r", "fail")]
    bob = Request(user=UserInfo(username="bob"))
    assert outcome(doc, resource(), bob) == []
    alice_admin = Request(user=UserInfo(username="alice", cluster_roles=("admin",)))
    assert outcome(doc, resource(), alice_admin) == []


def test_autogen_names_and_wrapped_paths() -> None:
    doc = policy(rule())
    deploy = resource(kind="Deployment", api="apps/v1", spec={"template": {"metadata": {"labels": {}}}})
    results = evaluate_policy(parse_policy(doc), deploy)
    assert [(r.rule, str(r.status), r.path, r.declared_rule) for r in results] == [
        ("autogen-r", "fail", "/spec/template/metadata/labels/team/", "r")]
    cron = resource(kind="CronJob", api="batch/v1",
                    spec={"jobTemplate": {"spec": {"template": {"metadata": {"labels": {"team": "a"}}}}}})
    assert outcome(doc, cron) == [("autogen-cronjob-r", "pass")]


@pytest.mark.parametrize(
    ("annotation", "expected"),
    [
        pytest.param("none", [], id="autogen-disabled"),
        pytest.param("Deployment", [("autogen-r", "fail")], id="autogen-listed-controller"),
        pytest.param("StatefulSet", [], id="autogen-other-controller"),
    ],
)
def test_autogen_controllers_annotation(annotation: str, expected: list) -> None:
    doc = policy(rule(), meta=f"annotations: {{pod-policies.kyverno.io/autogen-controllers: {annotation}}}")
    deploy = resource(kind="Deployment", api="apps/v1", spec={"template": {"metadata": {"labels": {}}}})
    assert outcome(doc, deploy) == expected


def test_autogen_disabled_by_name_filter() -> None:
    doc = policy(rule(match="{any: [{resources: {kinds: [Pod], names: ['*']}}]}"))
    deploy = resource(kind="Deployment", api="apps/v1", spec={"template": {}})
    assert outcome(doc, deploy) == []


def test_any_pattern_fail_message_omits_skipped_patterns() -> None:
    doc = policy(rule(validate="{anyPattern: [{spec: {(hostNetwork): true, hostPort: 1}}, {spec: {x: 1}}]}"))
    [result] = evaluate_policy(parse_policy(doc), resource(spec={}))
    assert (str(result.status), result.message) == ("fail", "validation error: rule r[1] failed at path /spec/x/")


def test_failure_message_with_custom_message() -> None:
    doc = policy(rule(validate="{message: 'The label team is required', pattern: {metadata: {labels: {team: '?*'}}}}"))
    [result] = evaluate_policy(parse_policy(doc), resource())
    assert result.message == ("validation error: The label team is required. rule r failed at path "
                              "/metadata/labels/team/")


@pytest.mark.parametrize(
    ("spec", "validate_extra", "namespace", "expected"),
    [
        pytest.param("{}", "", "default", FailureAction.AUDIT, id="default-audit"),
        pytest.param("{validationFailureAction: enforce}", "", "default", FailureAction.ENFORCE, id="legacy-lowercase"),
        pytest.param("{validationFailureAction: Enforce, validationFailureActionOverrides: [{action: Audit, namespaces: ['dev-*']}]}",
                     "", "dev-1", FailureAction.AUDIT, id="spec-override-by-namespace"),
        pytest.param("{validationFailureAction: Audit}", "failureAction: Enforce, ", "default", FailureAction.ENFORCE,
                     id="rule-action-wins"),
        pytest.param("{validationFailureAction: Audit}",
                     "failureAction: Enforce, failureActionOverrides: [{action: Audit, namespaces: [sandbox]}], ",
                     "sandbox", FailureAction.AUDIT, id="rule-override-wins"),
    ],
)
def test_failure_action_resolution(spec: str, validate_extra: str, namespace: str, expected: FailureAction) -> None:
    doc = policy(rule(validate=f"{{{validate_extra}pattern: {{metadata: {{labels: {{team: '?*'}}}}}}}}"), spec)
    [result] = evaluate_policy(parse_policy(doc), resource(ns=namespace))
    assert result.action is expected


def test_namespaced_policy_applies_only_to_its_namespace() -> None:
    doc = policy(rule(), kind="Policy", meta="namespace: team")
    assert outcome(doc, resource(ns="team")) == [("r", "fail")]
    assert outcome(doc, resource(ns="other")) == []


def test_apply_rules_one_stops_after_first_decision() -> None:
    rules = ("[{name: a, match: {any: [{resources: {kinds: [Pod]}}]}, validate: {pattern: {metadata: {name: x}}}},"
             " {name: b, match: {any: [{resources: {kinds: [Pod]}}]}, validate: {pattern: {metadata: {name: y}}}}]")
    assert outcome(policy(rules, "{applyRules: One}"), resource()) == [("a", "pass")]


def test_a_defect_in_one_rule_is_its_error_result_and_the_other_rules_still_run() -> None:
    rules = ("[{name: a, match: {any: [{resources: {kinds: [Pod]}}]}, validate: {deny: {}}},"
             " {name: b, match: {any: [{resources: {kinds: [Pod]}}]}, validate: {pattern: {metadata: {name: x}}}}]")
    compiled = parse_policy(policy(rules))
    compiled.rules[0].deny = object()  # type: ignore[assignment]  # (rule a's evaluation fails as a defect would)
    results = evaluate_policy(compiled, resource())
    assert [(r.rule, r.status.value) for r in results] == [("a", "error"), ("b", "pass")]
    assert results[0].message.startswith("internal error: ")
    assert results[1].message == "validation rule 'b' passed."


@pytest.mark.parametrize(
    ("doc", "pointer", "text"),
    [
        pytest.param(policy(rule(match="{any: [{resources: {names: [x]}}]}")), "/spec/rules/0/match/any/0/resources/kinds",
                     "at least one kind", id="kindless-match"),
        pytest.param(policy(rule(match="{any: [{resources: {kinds: [Pod]}}], all: [{resources: {kinds: [Pod]}}]}")),
                     "/spec/rules/0/match", "any and all", id="any-and-all"),
        pytest.param(policy(rule() + "", "{validationFailureAction: Block}"), "/spec/validationFailureAction",
                     "invalid validationFailureAction", id="bad-action"),
        pytest.param(policy(rule(validate="{pattern: {spec: {'!(hostPID)': true}}}")), "/spec/rules/0/validate/pattern/spec/!(hostPID)",
                     "unknown anchor", id="unknown-anchor"),
        pytest.param(policy(rule(validate="{pattern: {metadata: {labels: {app: 1}}}}")),
                     "/spec/rules/0/validate/pattern/metadata/labels/app", "must be strings", id="non-string-label"),
        pytest.param(policy(rule(match="{any: [{resources: {kinds: ['{{request.object.kind}}']}}]}")),
                     "/spec/rules/0/match/any/0/resources/kinds/0", "not allowed in match", id="variable-in-match"),
        pytest.param(policy("[{name: a, match: {any: [{resources: {kinds: [Pod]}}]}, validate: {deny: {conditions: [{key: a, operator: Equal5, value: b}]}}}]"),
                     "/spec/rules/0/validate/deny/conditions/0/operator", "unknown condition operator", id="bad-operator"),
        pytest.param(policy(rule(name="a" * 64)), "/spec/rules/0/name", "at most 63", id="long-rule-name"),
        pytest.param(policy(rule(match="{any: [{resources: {kinds: ['*']}}]}")), "/spec/rules/0/match/any/0/resources/kinds",
                     "not allowed in background mode", id="wildcard-kind-in-background"),
        pytest.param(policy(rule(validate="{foreach: {list: request.object.spec.containers, deny: {}}}")),
                     "/spec/rules/0/validate/foreach", "foreach must be a list of objects", id="foreach-mapping"),
        pytest.param(policy(rule(validate="{foreach: [{list: a, foreach: [x]}]}")),
                     "/spec/rules/0/validate/foreach/0/foreach", "foreach must be a list of objects",
                     id="nested-foreach-scalar"),
    ],
)
def test_policy_validity_errors_are_located(doc: dict, pointer: str, text: str) -> None:
    with pytest.raises(InvalidPolicyError) as info:
        parse_policy(doc)
    assert any(p == pointer and text in m for p, m in info.value.problems), info.value.problems


TEAM_PATTERN = "{metadata: {labels: {team: '?*'}}}"
EMPTY_MESSAGE = "\"{{request.object.metadata.labels.none || ''}}\""
TWO_TRUE_CONDITIONS = ("[{key: a, operator: Equals, value: a, message: one},"
                       " {key: b, operator: Equals, value: b, message: two}]")


@pytest.mark.parametrize(
    ("validate", "expected"),
    [
        pytest.param(f"{{message: 'needs {{{{request.object.missing.key}}}}', anyPattern: [{TEAM_PATTERN}]}}",
                     "validation error: variables substitution error in rule r execution error: "
                     "rule r[0] failed at path /metadata/labels/team/",
                     id="any-pattern-message-substitution-error"),
        pytest.param(f"{{message: {EMPTY_MESSAGE}, pattern: {TEAM_PATTERN}}}",
                     "validation error: . rule r failed at path /metadata/labels/team/",
                     id="pattern-message-resolving-to-empty-is-still-a-message"),
        pytest.param(f"{{message: {EMPTY_MESSAGE}, anyPattern: [{TEAM_PATTERN}]}}",
                     "validation error: . rule r[0] failed at path /metadata/labels/team/",
                     id="any-pattern-message-resolving-to-empty-is-still-a-message"),
        pytest.param("{message: 'pod {{request.object.metadata.name}}', anyPattern: []}",
                     "pod {{request.object.metadata.name}}", id="empty-any-pattern-passes-with-the-raw-message"),
        pytest.param(f"{{message: top, deny: {{conditions: {TWO_TRUE_CONDITIONS}}}}}",
                     "top; one;two", id="deny-legacy-list-keeps-its-separator"),
        pytest.param(f"{{message: 'top {{{{request.object.missing.key}}}}', deny: {{conditions: {TWO_TRUE_CONDITIONS}}}}}",
                     "one;two", id="deny-message-substitution-error-keeps-condition-messages"),
        pytest.param("{message: '{{ `5` }}', deny: {}}",
                     "the produced message didn't resolve to a string, check your policy definition.",
                     id="deny-message-that-is-not-a-string"),
    ],
)
def test_rule_message_wording(validate: str, expected: str) -> None:
    [result] = evaluate_policy(parse_policy(policy(rule(validate=validate))), resource())
    assert result.message == expected


# One compiled policy meets many resources in a scan, and keeps what depends only on the kind
# (kind-only match blocks) or on the operation (preconditions reading request.operation alone):
# it must answer each resource exactly as a policy compiled for that resource alone does.
REUSED_RULES = {
    "kind-only-match": rule("{any: [{resources: {kinds: [apps/v1/Deployment, Pod]}}]}"),
    "kind-only-exclude": rule("{any: [{resources: {kinds: [Pod, Deployment, Service, Job]}}]}",
                              exclude="{any: [{resources: {kinds: [Service, batch/*/Job]}}]}"),
    "all-block": rule("{all: [{resources: {kinds: [Pod, Service]}}, {resources: {kinds: ['v1/*']}}]}"),
    "operation-precondition": (
        "[{name: r, match: {any: [{resources: {kinds: [Pod, Deployment]}}]},"
        " preconditions: {all: [{key: \"{{ request.operation || 'BACKGROUND' }}\", operator: NotEquals,"
        " value: DELETE}]}, validate: {message: 'op {{ request.operation }}',"
        " deny: {conditions: {any: [{key: \"{{ request.operation }}\", operator: Equals, value: UPDATE}]}}}}]"),
    "operation-list-precondition": (
        "[{name: r, match: {any: [{resources: {kinds: [Pod]}}]},"
        " preconditions: {any: [{key: '{{ request.operation }}', operator: AnyIn, value: [CREATE, UPDATE]}]},"
        " validate: {pattern: {metadata: {labels: {team: '?*'}}}}}]"),
}
REUSED_RESOURCES = [
    (resource(), Request()),
    (resource(kind="Deployment", api="apps/v1"), Request()),
    (resource(kind="Deployment", api="extensions/v1beta1"), Request()),
    (resource(kind="Service"), Request()),
    (resource(kind="Job", api="batch/v1"), Request()),
    (resource(labels={"team": "a"}), Request(operation="DELETE")),
    (resource(), Request(operation="UPDATE")),
    (resource(kind="Deployment", api="apps/v1"), Request(operation="DELETE")),
    (resource(), Request()),
]


@pytest.mark.parametrize("name", REUSED_RULES)
def test_a_compiled_policy_answers_each_resource_as_a_fresh_one(name: str) -> None:
    doc = policy(REUSED_RULES[name])
    compiled = parse_policy(doc)
    for res, request in REUSED_RESOURCES:
        fresh = evaluate_policy(parse_policy(doc), res, request)
        assert evaluate_policy(compiled, res, request) == fresh, (res, request)


def test_values_setting_the_operation_reach_preconditions_of_a_reused_policy() -> None:
    from scanner.engine.environment import make_environment
    from scanner.engine.values import parse_values

    compiled = parse_policy(policy(REUSED_RULES["operation-precondition"]))
    plain = evaluate_policy(compiled, resource(), Request())
    deleting = make_environment(values=parse_values({"globalValues": {"request.operation": "DELETE"}}))
    skipped = evaluate_policy(compiled, resource(), Request(), env=deleting)
    assert [str(r.status) for r in plain] == ["pass"]
    assert [(str(r.status), r.message) for r in skipped] == [("skip", "preconditions not met")]
