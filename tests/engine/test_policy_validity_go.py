"""Kyverno's own policy-validation unit tests, translated row by row (spec 1.7).

Sources (kyverno/kyverno), read together with the code they exercise:

* ``pkg/validation/policy/validate_test.go`` (``Validate``, ``validateConditions``, ``validateNamespaces``,
  ``ruleOnlyDealsWithResourceMetaData``, ``isMapStringString``, ...) with ``validate.go``;
* ``pkg/validation/policy/allowed_vars_test.go`` (``hasInvalidVariables``) and ``background_test.go``
  (``ValidateVariables``) with ``background.go`` and ``pkg/engine/context/mock_context.go``;
* ``pkg/policy/validate/validate_test.go`` with ``validate.go`` there and ``pkg/policy/common/validate_pattern.go``
  (the factory that checks a ``validate`` block);
* ``api/kyverno/v1``: ``rule_test.go`` (``ValidateRuleType``, ``ValidateMatchExcludeConflict``,
  ``ValidatePSaControlNames``), ``match_resources_test.go``, ``resource_description_test.go``,
  ``user_info_test.go``, ``policy_types_test.go``, ``spec_test.go``, ``clusterpolicy_test.go``,
  ``policy_test.go``, ``wrappers_test.go``, with the ``*_types.go`` ``Validate`` methods beside them.

The Go tests call one validation function on a Go struct; each row here is a whole policy document given to
``parse_policy``, so a row sometimes adds what a complete policy needs (a ``match`` with a kind, a ``validate``
block, ``background: false`` when the Go test validates in non-background mode). Mutate, generate and
verifyImages cases are not translated. Rows that keep a spec choice over the Go expectation say so.
"""

from __future__ import annotations

import pytest

from scanner.engine.policy import InvalidPolicyError, parse_policy

from .conftest import policy

POD = "{any: [{resources: {kinds: [Pod]}}]}"
PATTERN = "{pattern: {metadata: {labels: {team: '?*'}}}}"
STAR = "{any: [{resources: {kinds: ['*']}}]}"
NO_BG = "{background: false}"
OVERRIDES = "/spec/validationFailureActionOverrides"
RULE = "/spec/rules/0"


def rule(match: str = POD, validate: str = PATTERN, extra: str = "", name: str = "r") -> str:
    return f"[{{name: {name}, match: {match}, validate: {validate}{extra}}}]"


def overrides(*entries: str, action: str = "Enforce") -> str:
    return f"{{validationFailureAction: {action}, validationFailureActionOverrides: [{', '.join(entries)}]}}"


def deny(conditions: str, extra: str = "") -> str:
    """A rule whose validate.deny has the given conditions."""
    return rule(validate=f"{{deny: {{conditions: {conditions}}}}}", extra=extra)


def precondition(conditions: str, extra: str = "") -> str:
    return rule(validate="{deny: {}}", extra=f", preconditions: {conditions}{extra}")


def problems_of(doc: dict) -> list[tuple[str, str]]:
    try:
        parse_policy(doc)
    except InvalidPolicyError as exc:
        return exc.problems
    return []


# -- validate_test.go ---------------------------------------------------------------------------------------

OP_CTX = ", context: [{name: ops-cm, configMap: {name: ops-cm, namespace: default}}]"
LB_CTX = ", context: [{name: lbServiceCount, variable: {value: 2}}]"
OPERATION_VALUES = """[
  {key: '{{request.operation}}', operator: Equals, value: DELETE},
  {key: '{{request.operation}}', operator: NotEquals, value: CREATE},
  {key: '{{request.operation}}', operator: NotEquals, value: CONNECT},
  {key: '{{ request.operation }}', operator: NotEquals, value: UPDATE},
  {key: '{{lbServiceCount}}', operator: Equals, value: '2'}]"""
OPERATION_LISTS = """[
  {key: '{{request.operation}}', operator: Equals, value: [CREATE, DELETE, CONNECT]},
  {key: '{{request.operation}}', operator: NotEquals, value: [UPDATE]},
  {key: '{{lbServiceCount}}', operator: Equals, value: '2'}]"""
SECURITY_CONTEXT_RULES = """[
  {name: validate-runAsNonRoot,
   match: {resources: {kinds: [Deployment], selector: {matchLabels: {app.type: prod}}}},
   validate: {message: validate container security contexts,
              anyPattern: [{spec: {template: {spec: {'^(containers)': [{securityContext: {runAsNonRoot: 'true'}}]}}}}]}},
  {name: validate-allowPrivilegeEscalation,
   match: {resources: {kinds: [Deployment], selector: {matchLabels: {app.type: prod}}}},
   validate: {message: validate container security contexts,
              pattern: {spec: {template: {spec: {'^(containers)': [
                {securityContext: {allowPrivilegeEscalation: 'false'}}]}}}}}}]"""
ERROR_FORMAT_RULES = """[
  {name: image-pull-policy,
   match: {resources: {kinds: [Deployment], selector: {matchLabels: {app: nginxlatest}}}},
   exclude: {resources: {selector: {app: nginxlatest}}},
   mutate: {patchStrategicMerge: {spec: {template: {spec: {containers: [
     {'=(image)': '*latest', imagePullPolicy: IfNotPresent}]}}}}}},
  {name: validate-user-privilege,
   match: {resources: {kinds: [], selector: {matchLabels: {app.type: prod}}}},
   validate: {message: validate container security contexts,
              anyPattern: [{spec: {template: {spec: {'^(containers)': [{securityContext: {runAsNonRoot: 'true'}}]}}}}]}},
  {name: validate-user-privilege,
   match: {resources: {kinds: [Deployment], selector: {matchLabels: {app.type: prod}}}},
   validate: {message: validate container security contexts,
              pattern: {spec: {template: {spec: {containers: [
                {'^(securityContext)': {allowPrivilegeEscalation: 'false'}}]}}}}}},
  {name: default-networkpolicy,
   match: {resources: {kinds: [Namespace], name: devtest}},
   generate: {kind: ConfigMap, name: copied-cm, clone: {'^(namespace)': default, name: game-config}}}]"""
SIGNER_RULE = """[
  {name: call-aws-signer-extension,
   match: {any: [{resources: {namespaces: [test-notation], kinds: [Pod]}}]},
   context: [{name: response, apiCall: {method: POST, data: [{key: imagesInfo, value: '{{ images }}'}],
              service: {url: 'https://svc.kyverno-notation-aws/checkimages', caBundle: 'ca'}}}],
   validate: {message: not allowed,
              deny: {conditions: {all: [{key: '{{ response.verified }}', operator: %s, value: false}]}}}}]"""
PROBES = "{spec: {containers: [{livenessProbe: {periodSeconds: '>0'}, readinessProbe: {periodSeconds: '>0'}}]}}"
PROBES_RULE = (f"[{{name: validate-livenessProbe-readinessProbe, match: {{resources: {{kinds: [Pod]}}}}, "
               f"validate: {{message: Liveness and readiness probes are required., pattern: {PROBES}}}}}]")


def autogen_policy(controllers: str) -> dict:
    return policy(PROBES_RULE, "{validationFailureAction: Enforce, background: false}",
                  meta=f"{{annotations: {{pod-policies.kyverno.io/autogen-controllers: '{controllers}'}}}}")


def labels_rule(labels: str) -> str:
    return rule(validate=f"{{pattern: {{metadata: {{labels: {labels}}}}}}}")


VALIDATE_GO_REJECTS = [
    pytest.param(policy(rule(validate="{message: '{{ bar }} world!', deny: {}}"), NO_BG),
                 RULE + "/validate/message", "'bar' is not defined",
                 id="Test_PolicyValidationWithInvalidVariable"),
    pytest.param(policy(rule(match="{resources: {}}")), RULE + "/match/resources/kinds", "at least one kind",
                 id="Test_Validate_ResourceDescription_Empty"),
    pytest.param(policy(deny("""[{key: '{{request.operation}}', operator: Equals, value: '{{ "ops-cm".data."deny-ops" }'},
                                 {key: '{{ request.operation }}', operator: NotEquals, value: UPDATE}]""")),
                 RULE + "/validate/deny/conditions/0/value", "unknown value '{{ \"ops-cm\".data.\"deny-ops\" }'",
                 id="Test_Validate_DenyConditionsValuesString_KeyRequestOperation_WrongfullyTemplatizedValue"),
    # The Go test hands validateConditions untyped JSON, which it does not inspect, so it expects no error;
    # a policy's preconditions are decoded into typed conditions (api/kyverno/v1/wrappers.go), whose
    # request.operation values are checked: foobar is rejected (spec 1.7).
    pytest.param(policy(precondition("""[{key: '{{request.operation}}', operator: Equals, value: foobar},
                                         {key: '{{request.operation}}', operator: NotEquals, value: CREATE}]""")),
                 RULE + "/preconditions/0/value", "unknown value 'foobar'",
                 id="Test_Validate_PreconditionsValuesString_KeyRequestOperation_UnknownValue"),
    pytest.param(policy(precondition("""[{key: '{{request.operation}}', operator: Equals, value: [foobar, CREATE]},
                                         {key: '{{request.operation}}', operator: NotEquals, value: [foobar]}]""")),
                 RULE + "/preconditions/0/value/0", "unknown value 'foobar'",
                 id="Test_Validate_PreconditionsValuesList_KeyRequestOperation_UnknownItem"),
    pytest.param(policy(ERROR_FORMAT_RULES), "/spec/rules/1/match/resources/kinds", "at least one kind",
                 id="Test_Validate_ErrorFormat-kindless-match"),
    pytest.param(policy(ERROR_FORMAT_RULES), "/spec/rules/2/name", "Duplicate rule name",
                 id="Test_Validate_ErrorFormat-duplicate-name"),
    # the Go rules have no kind and no validate block; both are added so that only the user info is at fault
    pytest.param(policy(rule(match="{resources: {kinds: [Pod]}, roles: ['ns:a', 'ns:b']}")),
                 RULE + "/match/roles", "roles are not allowed when background is true",
                 id="Test_BackGroundUserInfo_match_roles"),
    pytest.param(policy(rule(match="{resources: {kinds: [Pod]}, clusterRoles: [a, b]}")),
                 RULE + "/match/clusterRoles", "clusterRoles are not allowed when background is true",
                 id="Test_BackGroundUserInfo_match_clusterRoles"),
    pytest.param(policy(rule(match="{resources: {kinds: [Pod]}, subjects: [{kind: User, name: a}, {kind: User, name: b}]}")),
                 RULE + "/match/subjects", "subjects are not allowed when background is true",
                 id="Test_BackGroundUserInfo_match_subjects"),
    pytest.param(policy(rule(validate="{pattern: {var1: '{{request.userInfo}}'}}")),
                 RULE + "/validate/pattern/var1", "not allowed when background is true",
                 id="Test_BackGroundUserInfo_validate_pattern"),
    pytest.param(policy(rule(validate="{anyPattern: [{var1: temp}, {var1: '{{request.userInfo}}'}]}")),
                 RULE + "/validate/anyPattern/1/var1", "not allowed when background is true",
                 id="Test_BackGroundUserInfo_validate_anyPattern"),
    pytest.param(policy(rule(validate="{anyPattern: [{var1: temp}, {var1: '{{request.userInfo}}-{{temp}}'}]}")),
                 RULE + "/validate/anyPattern/1/var1", "not allowed when background is true",
                 id="Test_BackGroundUserInfo_validate_anyPattern_multiple_var"),
    pytest.param(policy(rule(validate="{anyPattern: [{var1: temp}, {var1: '{{serviceAccountName}}'}]}")),
                 RULE + "/validate/anyPattern/1/var1", "not allowed when background is true",
                 id="Test_BackGroundUserInfo_validate_anyPattern_serviceAccount"),
    # Test_Context_Variable_Substitution only runs ValidateVariables; the whole of Validate also checks the
    # condition operator, and EQUALS is not one (operator names are case-sensitive)
    pytest.param(policy(SIGNER_RULE % "EQUALS", "{validationFailureAction: Enforce, webhookTimeoutSeconds: 30}"),
                 RULE + "/validate/deny/conditions/all/0/operator", "unknown condition operator 'EQUALS'",
                 id="Test_Context_Variable_Substitution-operator-as-written"),
    # Test_ruleOnlyDealsWithResourceMetaData, validate cases, under a match-every-kind rule
    pytest.param(policy(rule(match=STAR, validate="{message: m, pattern: {spec: {containers: [{(name): '*', "
                                                  "ports: [{containerPort: 80}]}]}}}"), NO_BG),
                 RULE + "/match/any/0/resources/kinds", "only deal with the metadata field",
                 id="Test_ruleOnlyDealsWithResourceMetaData-testValidate2"),
    pytest.param(policy(rule(match=STAR, validate="{message: m, anyPattern: [{spec: {volumes: [{hostPath: '*'}]}}, "
                                                  "{metadata: {volumes: [{emptyDir: '*'}]}}]}"), NO_BG),
                 RULE + "/match/any/0/resources/kinds", "only deal with the metadata field",
                 id="Test_ruleOnlyDealsWithResourceMetaData-testValidateAnyPattern2"),
    pytest.param(policy(rule(match="{resources: {selector: {matchLabels: {AllowRootUserAccess: 'true'}}}}"),
                        "{validationFailureAction: audit}"),
                 RULE + "/match/resources/kinds", "at least one kind", id="Test_Validate_Kind"),
    pytest.param(policy(rule(match="{any: [{resources: {selector: {matchLabels: {AllowRootUserAccess: 'true'}}}}]}"),
                        "{validationFailureAction: audit}"),
                 RULE + "/match/any/0/resources/kinds", "at least one kind", id="Test_Validate_Any_Kind"),
    pytest.param(policy(rule(match="{resources: {kinds: ['*']}}"), "{validationFailureAction: enforce}"),
                 RULE + "/match/resources/kinds", "not allowed in background mode", id="Test_Wildcards_Kind"),
    pytest.param(policy(rule(match="{resources: {kinds: [Pod], namespaces: [customer-bar]}}"),
                        "{validationFailureAction: enforce, background: false}", kind="Policy"),
                 RULE + "/match/resources/namespaces", "filtering namespaces not allowed", id="Test_Namespced_Policy"),
    # Test_ValidateNamespace (validateNamespaces on spec.validationFailureActionOverrides)
    pytest.param(policy(rule(), overrides("{action: Enforce, namespaces: [default, test]}",
                                          "{action: Audit, namespaces: [default]}")),
                 OVERRIDES + "/1/namespaces", "conflicting namespaces found: default", id="Test_ValidateNamespace-tc1"),
    pytest.param(policy("[{name: require-labels, match: {resources: {kinds: [Pod]}}, mutate: {patchStrategicMerge: "
                        "{metadata: {labels: {app-name: '{{request.object.metadata.name}}'}}}}}]",
                        overrides("{action: Enforce, namespaces: [default, test]}",
                                  "{action: Audit, namespaces: [default]}")),
                 OVERRIDES + "/1/namespaces", "conflicting namespaces found: default", id="Test_ValidateNamespace-tc2"),
    pytest.param(policy(rule(), overrides("{action: Enforce, namespaces: ['default*', test]}",
                                          "{action: Audit, namespaces: [default]}")),
                 OVERRIDES + "/1/namespaces", "wildcard pattern 'default*' matches with namespace 'default'",
                 id="Test_ValidateNamespace-tc3"),
    pytest.param(policy(rule(), overrides("{action: Enforce, namespaces: [default, test]}",
                                          "{action: Audit, namespaces: ['*']}")),
                 OVERRIDES + "/1/namespaces", "wildcard pattern '*' matches with namespace 'default'",
                 id="Test_ValidateNamespace-tc4"),
    pytest.param(policy(rule(), overrides("{action: Enforce, namespaces: [default, test]}",
                                          "{action: Audit, namespaces: ['?*']}")),
                 OVERRIDES + "/1/namespaces", "wildcard pattern '?*' matches with namespace 'default'",
                 id="Test_ValidateNamespace-tc5"),
    pytest.param(policy(rule(), overrides("{action: Enforce, namespaces: ['default?', test]}",
                                          "{action: Audit, namespaces: [default1]}")),
                 OVERRIDES + "/1/namespaces", "wildcard pattern 'default?' matches with namespace 'default1'",
                 id="Test_ValidateNamespace-tc6"),
    pytest.param(policy(rule(), overrides("{action: Enforce, namespaces: ['default*', test]}",
                                          "{action: Audit, namespaces: ['?*']}")),
                 OVERRIDES + "/1/namespaces", "wildcard pattern '?*' matches with namespace 'test'",
                 id="Test_ValidateNamespace-tc7"),
    pytest.param(policy(rule(), overrides("{action: Enforce, namespaces: ['*']}",
                                          "{action: Audit, namespaces: ['?*']}")),
                 OVERRIDES + "/1/namespaces", "wildcard pattern '?*' conflicts with the pattern '*'",
                 id="Test_ValidateNamespace-tc8"),
    pytest.param(policy(rule(), overrides("{action: Enforce, namespaces: ['default*', test]}",
                                          "{action: Audit, namespaces: [default, 'test*']}")),
                 OVERRIDES + "/1/namespaces", "wildcard pattern 'test*' matches with namespace 'test'",
                 id="Test_ValidateNamespace-tc9"),
    # the Go row spells the expected text '*efault'; assert.Error only checks that there is an error
    pytest.param(policy(rule(), overrides("{action: Enforce, namespaces: ['*default', test]}",
                                          "{action: Audit, namespaces: [default]}")),
                 OVERRIDES + "/1/namespaces", "wildcard pattern '*default' matches with namespace 'default'",
                 id="Test_ValidateNamespace-tc10"),
    # tc14-tc16 use a DeferEnforce action: the spec's actions are Audit/Enforce (and their lowercase forms)
    # only (spec 1.3, 1.4), so the override is rejected as an invalid action, also where the Go row (tc16)
    # expects no error
    pytest.param(policy(rule(), overrides("{action: DeferEnforce, namespaces: [default]}",
                                          "{action: Audit, namespaces: [default]}")),
                 OVERRIDES + "/0/action", "invalid action", id="Test_ValidateNamespace-tc14"),
    pytest.param(policy(rule(), overrides("{action: DeferEnforce, namespaces: ['*']}",
                                          "{action: Audit, namespaces: [default]}", action="DeferEnforce")),
                 OVERRIDES + "/0/action", "invalid action", id="Test_ValidateNamespace-tc15"),
    pytest.param(policy(rule(), overrides("{action: DeferEnforce, namespaces: [test]}",
                                          "{action: Audit, namespaces: [default]}", action="DeferEnforce")),
                 OVERRIDES + "/0/action", "invalid action", id="Test_ValidateNamespace-tc16"),
    # Test_isMapStringString, through the label check of validate patterns
    pytest.param(policy(labels_rule("{a: b, c: 123}")), RULE + "/validate/pattern/metadata/labels/c",
                 "must be strings", id="Test_isMapStringString-int-value"),
    pytest.param(policy(labels_rule("{a: b, c: null}")), RULE + "/validate/pattern/metadata/labels/c",
                 "must be strings", id="Test_isMapStringString-nil-value"),
]

VALIDATE_GO_ACCEPTS = [
    pytest.param(policy(rule(match="{resources: {kinds: [Deployment], selector: {matchLabels: {app.type: prod}}}}")),
                 id="Test_Validate_ResourceDescription_MatchedValid"),
    pytest.param(policy(rule(validate="{deny: {conditions: []}}")),
                 id="Test_Validate_DenyConditions_KeyRequestOperation_Empty"),
    pytest.param(policy(precondition("[]")), id="Test_Validate_Preconditions_KeyRequestOperation_Empty"),
    # lbServiceCount is declared, as a complete policy must do (the Go test checks the conditions alone)
    pytest.param(policy(deny(OPERATION_VALUES, LB_CTX)),
                 id="Test_Validate_DenyConditionsValuesString_KeyRequestOperation_ExpectedValue"),
    pytest.param(policy(deny("""[{key: '{{request.operation}}', operator: Equals, value: '{{ "ops-cm".data."deny-ops"}}'},
                                 {key: '{{ request.operation }}', operator: NotEquals, value: UPDATE}]""", OP_CTX)),
                 id="Test_Validate_DenyConditionsValuesString_KeyRequestOperation_RightfullyTemplatizedValue"),
    pytest.param(policy(deny(OPERATION_LISTS, LB_CTX)),
                 id="Test_Validate_DenyConditionsValuesList_KeyRequestOperation_ExpectedItem"),
    pytest.param(policy(SECURITY_CONTEXT_RULES), id="Test_Validate_Policy"),
    pytest.param(policy(SIGNER_RULE % "Equals", "{validationFailureAction: Enforce, webhookTimeoutSeconds: 30}"),
                 id="Test_Context_Variable_Substitution"),
    pytest.param(policy(rule(match=STAR, validate="{message: m, pattern: {metadata: {containers: [{(name): '*', "
                                                  "ports: [{containerPort: 80}]}]}}}"), NO_BG),
                 id="Test_ruleOnlyDealsWithResourceMetaData-testValidate1"),
    pytest.param(policy(rule(match=STAR, validate="{message: m, anyPattern: [{metadata: {volumes: [{hostPath: '*'}]}}, "
                                                  "{metadata: {volumes: [{emptyDir: '*'}]}}, "
                                                  "{metadata: {volumes: [{configMap: '*'}]}}]}"), NO_BG),
                 id="Test_ruleOnlyDealsWithResourceMetaData-testValidateAnyPattern1"),
    pytest.param(policy(rule(match="{resources: {kinds: [PodExecOptions]}}", validate="{message: m, deny: {}}",
                             extra=", preconditions: {all: [{key: '{{ request.operation }}', operator: Equals, "
                                   "value: CONNECT}]}"),
                        "{validationFailureAction: enforce, background: false, schemaValidation: false}"),
                 id="Test_deny_exec"),
    pytest.param(policy(rule(match="{any: [{resources: {kinds: [networking.k8s.io/v1/NetworkPolicy]}}]}",
                             validate="{message: np-test, pattern: {metadata: {name: '?*'}}}"),
                        "{validationFailureAction: audit}"),
                 id="Test_existing_resource_policy"),
    pytest.param(autogen_policy("DaemonSet,Job,CronJob,Deployment,StatefulSet"),
                 id="Test_PodControllerAutoGenExclusion_All_Controllers_Policy"),
    pytest.param(autogen_policy("DaemonSet,Job,CronJob,Deployment"),
                 id="Test_PodControllerAutoGenExclusion_Not_All_Controllers_Policy"),
    pytest.param(autogen_policy("none"), id="Test_PodControllerAutoGenExclusion_None_Policy"),
    pytest.param(policy(rule(), overrides("{action: Enforce, namespaces: ['default-*', test]}",
                                          "{action: Audit, namespaces: [default]}")),
                 id="Test_ValidateNamespace-tc11"),
    pytest.param(policy(rule(), overrides("{action: Enforce, namespaces: ['default*?']}",
                                          "{action: Audit, namespaces: [default, 'test*']}")),
                 id="Test_ValidateNamespace-tc12"),
    pytest.param(policy(rule(), overrides("{action: Enforce, namespaces: ['default?']}",
                                          "{action: Audit, namespaces: [default]}")),
                 id="Test_ValidateNamespace-tc13"),
    pytest.param(policy(labels_rule("null")), id="Test_isMapStringString-nil"),
    pytest.param(policy(labels_rule("{}")), id="Test_isMapStringString-empty"),
    pytest.param(policy(labels_rule("{a: b, c: d}")), id="Test_isMapStringString-string-values"),
]


# -- allowed_vars_test.go, background_test.go ---------------------------------------------------------------

def ns_selector(values: str, key: str = "value") -> str:
    return f"{{matchExpressions: [{{key: '{key}', operator: In, values: {values}}}]}}"


def variable_format(variable: str) -> dict:
    """TestNotAllowedVars_VariableFormats: hasInvalidVariables runs in non-background mode there, hence
    ``background: false``; the Go rule is a mutate rule, its variable is kept in a precondition."""
    rules = (f"[{{name: mutate-rules-host, match: {{resources: {{kinds: [Ingress], namespaces: [test-ingress]}}}}, "
             f"preconditions: {{any: [{{key: '{{{{ {variable} }}}}', operator: NotEquals, value: ''}}]}}, "
             "validate: {deny: {}}}]")
    return policy(rules, NO_BG)


VARIABLE_FORMATS = [
    ("request_object", "request.object.meta"),
    ("service_account_name", "serviceAccountName"),
    ("service_account_namespace", "serviceAccountNamespace"),
    ("self", "@"),
    ("custom_func_compare", "compare(string, string)"),
    ("custom_func_contains", "contains(string, string)"),
    ("custom_func_equal_fold", "equal_fold(string, string)"),
    ("custom_func_replace", "replace(str string, old string, new string, n float64)"),
    ("custom_func_replace_all", "replace_all(str string, old string, new string)"),
    ("custom_func_to_upper", "to_upper(string)"),
    ("custom_func_to_lower", "to_lower(string)"),
    ("custom_func_trim", "trim(str string, cutset string)"),
    ("custom_func_trim_prefix", "trim_prefix(str string, prefix string)"),
    ("custom_func_split", "split(str string, sep string)"),
    ("custom_func_regex_replace_all", "regex_replace_all(regex string, src string|number, replace string|number)"),
    ("custom_func_regex_replace_all_literal",
     "regex_replace_all_literal(regex string, src string|number, replace string|number)"),
    ("custom_func_regex_match", "regex_match(string, string|number)"),
    ("custom_func_label_match", "label_match(object, object)"),
    *((name, f"{name}(foo, bar)") for name in (
        "abs", "avg", "contains", "ceil", "ends_with", "floor", "join", "keys", "length", "map", "max", "max_by",
        "merge", "min", "min_by", "not_null", "reverse", "sort", "sort_by", "starts_with", "sum", "to_array",
        "to_string", "to_number", "type", "values")),
    ("self_path_test", "@"),
]

CM_CTX = ", context: [{name: mycm, configMap: {name: config-name, namespace: default}}]"
NAME_PRECONDITION = ", preconditions: {all: [{key: '{{request.object.metadata.name}}', operator: NotEquals, value: ''}]}"


def background_gen(name: str) -> dict:
    """Test_Validation_*_backgroundPolicy: the variables of the Go generate rule, kept in a validate message."""
    return policy(rule(match="{resources: {kinds: [Namespace]}}",
                       validate=f"{{message: '{name}-config-name {{{{ mycm.data.foo }}}}', deny: {{}}}}",
                       extra=NAME_PRECONDITION + CM_CTX),
                  meta="{annotations: {policies.kyverno.io/category: Best Practices}}")


VARIABLE_GO_REJECTS = [
    pytest.param(policy(rule(match=f"{{resources: {{kinds: [Pod], namespaceSelector: "
                                   f"{ns_selector('[managed]', '{{very.unusual.variable.here}}')}}}}}",
                             validate="{message: m, pattern: {metadata: {name: '*-nginx'}}}"),
                        "{validationFailureAction: audit}"),
                 RULE + "/match/resources/namespaceSelector/matchExpressions/0/key", "variables are not allowed in match",
                 id="TestNotAllowedVars_MatchSection"),
    # the Go rule has no match block; one is added
    pytest.param(policy(rule(match="{resources: {kinds: [Pod]}}",
                             validate="{message: m, pattern: {metadata: {name: '*-nginx'}}}",
                             extra=f", exclude: {{resources: {{kinds: [Pod], namespaceSelector: "
                                   f"{ns_selector(chr(39) + '{{very.unusual.variable.here}}' + chr(39))}}}}}"),
                        "{validationFailureAction: audit}"),
                 RULE + "/exclude/resources/namespaceSelector/matchExpressions/0/values", "variables are not allowed in exclude",
                 id="TestNotAllowedVars_ExcludeSection"),
    pytest.param(variable_format("not a valid variable"), RULE + "/preconditions/any/0/key", "not a valid variable",
                 id="TestNotAllowedVars_VariableFormats-invalid_var"),
    pytest.param(background_gen("{{serviceAccountName}}"), RULE + "/validate/message",
                 "'serviceAccountName' is not allowed", id="Test_Validation_invalid_backgroundPolicy"),
]

VARIABLE_GO_ACCEPTS = [
    pytest.param(policy(rule(match="{resources: {kinds: [Pod]}}",
                             validate="{message: m, pattern: {metadata: {name: '*-nginx'}}}",
                             extra=f", exclude: {{resources: {{kinds: [Pod], namespaceSelector: "
                                   f"{ns_selector('[value1, value2]')}}}}}"),
                        "{validationFailureAction: audit}"),
                 id="TestNotAllowedVars_ExcludeSection_PositiveCase"),
    *(pytest.param(variable_format(variable), id=f"TestNotAllowedVars_VariableFormats-{name}")
      for name, variable in VARIABLE_FORMATS),
    pytest.param(background_gen("{{request.object.metadata.name}}"), id="Test_Validation_valid_backgroundPolicy"),
]


# -- pkg/policy/validate/validate_test.go (the validate block factory) ---------------------------------------

PRIVILEGED = "{securityContext: {allowPrivilegeEscalation: false, privileged: false}}"
CONTAINERS = "{containers: [{name: '*', securityContext: {allowPrivilegeEscalation: false, privileged: false}}]}"
TEMPLATE = "{spec: {template: {spec: %s}}}"

FACTORY_GO_REJECTS = [
    pytest.param(policy(rule(validate="{}")), RULE, "No operation defined in the rule", id="Test_Validate_OverlayPattern_Empty"),
    pytest.param(policy(rule(validate="{message: Privileged mode is not allowed}")), RULE + "/validate",
                 "one of pattern, anyPattern, deny, foreach, cel must be specified",
                 id="Test_Validate_OverlayPattern_Nil_PatternAnypattern"),
    pytest.param(policy(rule(validate=f"{{message: m, anyPattern: [{{spec: {PRIVILEGED}}}], "
                                      f"pattern: {{spec: {CONTAINERS}}}}}")),
                 RULE + "/validate", "only one of pattern, anyPattern, deny, foreach, cel can be specified",
                 id="Test_Validate_OverlayPattern_Exist_PatternAnypattern"),
    pytest.param(policy(rule(validate="{message: m, anyPattern: ["
                                      + TEMPLATE % "{containers: [{'^(securityContext)': {runAsNonRoot: true}}]}"
                                      + "]}")),
                 RULE + "/validate/anyPattern/0/spec/template/spec/containers/0/^(securityContext)",
                 "existence anchor should have value of type list", id="Test_Validate_ExistingAnchor_AnchorOnMap"),
    pytest.param(policy(rule(validate="{message: m, pattern: {spec: {containers: [{name: '*', "
                                      "securityContext: {'+(runAsNonRoot)': true}}]}}}")),
                 RULE + "/validate/pattern/spec/containers/0/securityContext/+(runAsNonRoot)",
                 "unsupported anchor +(runAsNonRoot)", id="Test_Validate_Validate_Mismatched"),
]

FACTORY_GO_ACCEPTS = [
    pytest.param(policy(rule(validate=f"{{message: m, anyPattern: [{{spec: {PRIVILEGED}}}, {{spec: {CONTAINERS}}}]}}")),
                 id="Test_Validate_OverlayPattern_Valid"),
    pytest.param(policy(rule(validate="{message: m, pattern: "
                                      + TEMPLATE % "{containers: [{securityContext: {allowPrivilegeEscalation: '^(false)'}}]}"
                                      + "}")),
                 id="Test_Validate_ExistingAnchor_AnchorOnString"),
    pytest.param(policy(rule(validate="{message: m, anyPattern: ["
                                      + TEMPLATE % "{'^(containers)': [{securityContext: {runAsNonRoot: 'true'}}]}"
                                      + "]}")),
                 id="Test_Validate_ExistingAnchor_Valid-anyPattern"),
    pytest.param(policy(rule(validate="{message: m, pattern: "
                                      + TEMPLATE % "{'^(containers)': [{securityContext: {allowPrivilegeEscalation: 'false'}}]}"
                                      + "}")),
                 id="Test_Validate_ExistingAnchor_Valid-pattern"),
    pytest.param(policy(rule(validate="{message: m, anyPattern: [{spec: {securityContext: {(runAsNonRoot): true}}}, "
                                      "{spec: {'^(containers)': [{name: '*', securityContext: {runAsNonRoot: true}}]}}]}")),
                 id="Test_Validate_Validate_ValidAnchor-case1"),
    pytest.param(policy(rule(validate="{message: m, pattern: {spec: {'=(securityContext)': {runAsNonRoot: 'true'}}}}")),
                 id="Test_Validate_Validate_ValidAnchor-case2"),
]


# -- api/kyverno/v1 -----------------------------------------------------------------------------------------

USER_INFO = ("roles: ['ns:something', 'ns:something1'], clusterRoles: [something, something1], "
             "subjects: [{kind: User, name: something}, {kind: Group, name: something1}]")
SELECTOR = "{matchLabels: {memory: high}, matchExpressions: [{key: tier, operator: In, values: [database]}]}"


def legacy(kinds: str = "[Pod, Namespace]", name: str = "something", namespaces: str = "[something, something1]",
           selector: str = SELECTOR, user: str = USER_INFO) -> str:
    return (f"{{resources: {{kinds: {kinds}, name: '{name}', namespaces: {namespaces}, selector: {selector}}}"
            + (f", {user}" if user else "") + "}")


def conflict(exclude: str, match: str | None = None) -> dict:
    """Test_doesMatchExcludeConflict: the Go rules have no validate block, one is added; their subjects,
    roles and clusterroles are made valid (kinds User/Group, namespace:name roles) so that only the
    match/exclude comparison decides, and background is off because the blocks use user info."""
    return policy(rule(match=match or legacy(), extra=f", exclude: {exclude}", name="set-image-pull-policy-2"), NO_BG)


def simple(name: str) -> dict:
    return policy(rule(match=f"{{resources: {{kinds: [Pod, Namespace], name: {name}, "
                             "namespaces: [something, something1]}}",
                       extra=", exclude: {resources: {kinds: [Pod, Namespace, Job], name: 'some*', "
                             "namespaces: [something, something1, something2]}}"))


def pss(level: str, excludes: str, version: str = "v1.24") -> dict:
    return policy(rule(validate=f"{{podSecurity: {{level: {level}, version: '{version}', exclude: {excludes}}}}}"))


IMAGES = ", images: [nginx, nodejs]"
EXCLUDE0 = RULE + "/validate/podSecurity/exclude/0/controlName"


def namespaced(resources: str, spec_extra: str = "") -> dict:
    return policy(rule(match=f"{{any: [{{resources: {resources}}}]}}"), spec_extra, kind="Policy")


LONG_NAME = "this-is-a-way-too-long-policy-name-that-should-trigger-an-error-when-calling-the-policy-validation-method"
AUTOGEN_ALL = "{annotations: {pod-policies.kyverno.io/autogen-controllers: all}}"

API_GO_REJECTS = [
    pytest.param(policy("[{name: validate-user-privilege}]"), RULE, "No operation defined in the rule",
                 id="Test_Validate_RuleType_EmptyRule"),
    pytest.param(policy("[{name: validate-user-privilege, "
                        "match: {resources: {kinds: [Deployment], selector: {matchLabels: {app.type: prod}}}}, "
                        "mutate: {patchStrategicMerge: {spec: {template: {spec: {containers: [{(name): '*', resources: "
                        "{limits: {'+(memory)': 300Mi, '+(cpu)': '100'}}}]}}}}}, "
                        "validate: {message: m, anyPattern: [" + TEMPLATE % "{containers: [{securityContext: "
                        "{runAsNonRoot: true}}]}" + "]}}]"),
                 RULE, "only one operation (mutate,validate,generate,verifyImages) is allowed per rule (found validate, mutate)",
                 id="Test_Validate_RuleType_MultipleRule"),
    pytest.param(conflict(legacy()), RULE, "matching an empty set", id="Test_doesMatchExcludeConflict-same"),
    pytest.param(simple("something"), RULE, "matching an empty set", id="Test_doesMatchExcludeConflict-simple"),
    pytest.param(pss("baseline", f"[{{controlName: Running as Non-root{IMAGES}}}, {{controlName: Seccomp{IMAGES}}}]"),
                 EXCLUDE0, "Invalid control name defined at the given level",
                 id="Test_ValidatePSaControlNames-baseline_with_restricted_control_name"),
    pytest.param(pss("restricted", "[{controlName: Privilege Escalation}]"), EXCLUDE0,
                 "exclude.images must be specified for the container level control",
                 id="Test_ValidatePSaControlNames-container_level_control_with_images"),
    pytest.param(pss("baseline", f"[{{controlName: Host Namespaces{IMAGES}}}]"), EXCLUDE0,
                 "exclude.images must not be specified for the pod level control",
                 id="Test_ValidatePSaControlNames-pod_level_control_with_images"),
    pytest.param(pss("baseline", "[{controlName: Volume Types}]"), EXCLUDE0,
                 "Invalid control name defined at the given level",
                 id="Test_ValidatePSaControlNames-baseline_policy_with_restricted_control"),
    pytest.param(policy(rule(match="{any: [{subjects: [{kind: ServiceAccount, namespace: ns, name: sa-1}], "
                                   "resources: {kinds: [Pod]}}], all: [{subjects: [{kind: ServiceAccount, "
                                   "namespace: ns, name: sa-1}], resources: {kinds: [Pod]}}]}"), NO_BG, kind="Policy"),
                 RULE + "/match", "any and all cannot be used together", id="Test_MatchResources-any-all"),
    pytest.param(namespaced("{kinds: [Pod], name: foo, names: [bar, baz]}"), RULE + "/match/any/0/resources",
                 "name and names are mutually exclusive", id="Test_ResourceDescription-name-names"),
    pytest.param(namespaced("{kinds: [Deployment], selector: {}}"), RULE + "/match/any/0/resources/selector",
                 "The requirements are not specified in selector", id="Test_ResourceDescription-bad-selector"),
    pytest.param(namespaced("{kinds: [Pod], namespaces: [abc]}"), RULE + "/match/any/0/resources/namespaces",
                 "filtering namespaces not allowed", id="Test_ResourceDescription-namespaces"),
    pytest.param(policy(rule(match="{resources: {kinds: [Pod]}, subjects: [{kind: ServiceAccount, name: sa-1}, "
                                   "{kind: ServiceAccount, name: sa-2}]}"), NO_BG),
                 RULE + "/match/subjects/0", "ServiceAccount subject needs a namespace",
                 id="Test_Validate_ServiceAccount-0"),
    pytest.param(policy(rule(match="{resources: {kinds: [Pod]}, subjects: [{kind: ServiceAccount, name: sa-1}, "
                                   "{kind: ServiceAccount, name: sa-2}]}"), NO_BG),
                 RULE + "/match/subjects/1", "ServiceAccount subject needs a namespace",
                 id="Test_Validate_ServiceAccount-1"),
    pytest.param(policy(rule(match="{resources: {kinds: [Pod]}, roles: ['namespace1:name1', name2]}"), NO_BG),
                 RULE + "/match/roles/1", "namespace:name", id="Test_Validate_Roles"),
    pytest.param(policy(rule(extra=", exclude: {subjects: [{kind: ServiceAccount, name: sa-1}, "
                                   "{kind: ServiceAccount, name: sa-2}]}"), NO_BG),
                 RULE + "/exclude/subjects/1", "ServiceAccount subject needs a namespace",
                 id="Test_Validate_ServiceAccount2"),
    pytest.param(policy("[{name: deny-privileged-disallowpriviligedescalation, match: {resources: {kinds: [Pod]}}, "
                        "validate: {message: message, anyPattern: [{metadata: {name: '?*'}}]}}, "
                        "{name: deny-privileged-disallowpriviligedescalation, match: {resources: {kinds: [Pod]}}, "
                        "validate: {message: message, anyPattern: [{metadata: {name: '?*'}}]}}]"),
                 "/spec/rules/1/name", "Duplicate rule name", id="Test_Validate_UniqueRuleName"),
    # the Go ClusterPolicy also has metadata.namespace abcd, which Kyverno's Validate ignores but a
    # ClusterPolicy may not have (spec 1.1); the namespace is left out so that only the name is at fault
    pytest.param(policy(rule(), meta=f"{{name: {LONG_NAME}}}"), "/metadata/name", "must have at most 63 bytes",
                 id="Test_ClusterPolicy_Name"),
    pytest.param(policy(rule(), meta=AUTOGEN_ALL), "/metadata/annotations", "does not support 'all' anymore",
                 id="Test_ClusterPolicy_Autogen_All"),
    pytest.param(policy(rule(), kind="Policy", meta=f"{{name: {LONG_NAME}, namespace: null}}"), "/metadata/name",
                 "must have at most 63 bytes", id="Test_Policy_Name"),
    pytest.param(policy(rule(), kind="Policy", meta=AUTOGEN_ALL), "/metadata/annotations",
                 "does not support 'all' anymore", id="Test_Policy_Autogen_All"),
    pytest.param(policy(precondition("[{key: test, operator: Equals, value: test, additionalProperties: []}]")),
                 RULE + "/preconditions/0", 'unknown field "additionalProperties"',
                 id="Test_ConditionsWrapper_UnmarshalJSON-invalid-conditions-with-apiCall"),
    pytest.param(policy(precondition("{all: [{key: test, operator: Equals, value: test, additionalProperties: []}]}")),
                 RULE + "/preconditions/all/0", 'unknown field "additionalProperties"',
                 id="Test_ConditionsWrapper_UnmarshalJSON-invalid-all-conditions"),
]

API_GO_ACCEPTS = [
    pytest.param(policy("[{name: validate-user-privilege, "
                        "match: {resources: {kinds: [Deployment], selector: {matchLabels: {app.type: prod}}}}, "
                        "validate: {message: m, anyPattern: [" + TEMPLATE % "{containers: [{securityContext: "
                        "{runAsNonRoot: 'true'}}]}" + "]}}]"),
                 id="Test_Validate_RuleType_SingleRule"),
    pytest.param(conflict(legacy(kinds="[Namespace]")), id="Test_doesMatchExcludeConflict-kind"),
    pytest.param(conflict(legacy(name="something-*")), id="Test_doesMatchExcludeConflict-name"),
    pytest.param(conflict(legacy(namespaces="[something3, something1]")), id="Test_doesMatchExcludeConflict-namespace"),
    pytest.param(conflict(legacy(selector=SELECTOR.replace("high", "higha"))), id="Test_doesMatchExcludeConflict-labels"),
    pytest.param(conflict(legacy(selector=SELECTOR.replace("database", "databases"))),
                 id="Test_doesMatchExcludeConflict-expression"),
    pytest.param(conflict(legacy(user=USER_INFO.replace("name: something}", "name: something2}"))),
                 id="Test_doesMatchExcludeConflict-subjects"),
    pytest.param(conflict(legacy(user=USER_INFO.replace("clusterRoles: [something,", "clusterRoles: [something3,"))),
                 id="Test_doesMatchExcludeConflict-clusterroles"),
    pytest.param(conflict(legacy(user=USER_INFO.replace("'ns:something',", "'ns:something3',"))),
                 id="Test_doesMatchExcludeConflict-roles"),
    pytest.param(simple("somxething"), id="Test_doesMatchExcludeConflict-simple-fail"),
    # "empty case": the Go match block has no kind; Pod is added
    pytest.param(policy("[{name: check-allow-deletes, match: {resources: {kinds: [Pod], "
                        "selector: {matchLabels: {allow-deletes: 'false'}}}}, exclude: {clusterRoles: [random]}, "
                        "validate: {message: 'Deleting {{request.object.kind}}/{{request.object.metadata.name}} is not "
                        "allowed', deny: {conditions: {all: [{key: '{{request.operation}}', operator: Equal, "
                        "value: DELETE}]}}}}]", NO_BG),
                 id="Test_doesMatchExcludeConflict-empty-case"),
    pytest.param(pss("baseline", f"[{{controlName: /proc Mount Type{IMAGES}}}, {{controlName: Seccomp{IMAGES}}}]"),
                 id="Test_ValidatePSaControlNames-baseline_with_baseline_control_name"),
    pytest.param(pss("restricted", f"[{{controlName: /proc Mount Type{IMAGES}}}, {{controlName: Seccomp{IMAGES}}}]"),
                 id="Test_ValidatePSaControlNames-restricted_with_baseline_control_name"),
    pytest.param(pss("restricted", f"[{{controlName: Privilege Escalation{IMAGES}}}]"),
                 id="Test_ValidatePSaControlNames-restricted_with_restricted_control_name"),
    pytest.param(pss("restricted", f"[{{controlName: Privilege Escalation{IMAGES}}}]"),
                 id="Test_ValidatePSaControlNames-container_level_control_without_images"),
    pytest.param(pss("baseline", "[{controlName: Host Namespaces}]"),
                 id="Test_ValidatePSaControlNames-pod_level_control_without_images"),
    pytest.param(pss("baseline", "[{controlName: SELinux}]"),
                 id="Test_ValidatePSaControlNames-mixed_level_controls_without_images"),
    pytest.param(pss("baseline", f"[{{controlName: SELinux{IMAGES}}}]"),
                 id="Test_ValidatePSaControlNames-mixed_level_controls_with_images"),
    pytest.param(pss("restricted", "[{controlName: Privileged Containers, images: ['dummyimagename*']}]", "latest"),
                 id="Test_ValidatePSaControlNames-restricted_latest_privileged_containers"),
    # the Go filter has no kind (MatchResources.Validate does not check kinds); Pod is added, and
    # background is off because the filter has subjects
    pytest.param(policy(rule(match="{any: [{subjects: [{kind: ServiceAccount, namespace: ns, name: sa-1}], "
                                   "resources: {kinds: [Pod]}}]}"), NO_BG, kind="Policy"),
                 id="Test_MatchResources-valid"),
    pytest.param(namespaced("{kinds: [Pod]}"), id="Test_ResourceDescription-valid"),
    pytest.param(namespaced("{kinds: [Pod], selector: {matchLabels: {app.type: prod}}}"),
                 id="Test_ResourceDescription-selector"),
    pytest.param(policy(rule(match="{resources: {kinds: [Pod]}, subjects: null}")), id="Test_Validate_EmptyUserInfo"),
    pytest.param(policy(precondition("[{key: test, operator: Equals, value: test}]")),
                 id="Test_ConditionsWrapper_UnmarshalJSON-valid-conditions"),
    pytest.param(policy(precondition("{any: [{key: test, operator: Equals, value: test}]}")),
                 id="Test_ConditionsWrapper_UnmarshalJSON-valid-any-conditions"),
]


# -- rows read from the code the tests exercise -------------------------------------------------------------

def context(entry: str, validate: str = "{deny: {}}") -> dict:
    return policy(rule(validate=validate, extra=f", context: [{entry}]"))


def foreach(entry: str, rule_extra: str = "") -> dict:
    return policy(rule(validate=f"{{foreach: [{entry}]}}", extra=rule_extra))


def message(text: str, spec_extra: str = "", extra: str = "") -> dict:
    return policy(rule(validate=f"{{message: '{text}', deny: {{}}}}", extra=extra), spec_extra)


OPERATION = "{key: '{{request.operation}}', operator: Equals, value: %s}"
LIST = "request.object.spec.containers"
FE_DENY = f"list: {LIST}, deny: {{}}"
CEL_TRUE = "expressions: [{expression: 'true'}]"
PARAM_KIND = "paramKind: {apiVersion: v1, kind: ConfigMap}"
LEGACY_POD = "{resources: {kinds: [Pod]}}"
FE0 = RULE + "/validate/foreach/0"

CODE_REJECTS = [
    # validateRuleContext: reserved names are the built-in roots and their sub-paths
    pytest.param(context("{name: images.custom, variable: {value: 1}}"), RULE + "/context/0/name",
                 "conflicts with a pre-defined variable images", id="validate.go-context-name-below-images"),
    pytest.param(context("{name: request, variable: {value: 1}}"), RULE + "/context/0/name",
                 "conflicts with a pre-defined variable request", id="validate.go-context-name-request"),
    pytest.param(context("{name: c, apiCall: {urlPath: /api/v1/pods, service: {url: 'https://svc'}}}"),
                 RULE + "/context/0/apiCall", "a URLPath cannot be used for service API calls",
                 id="validate.go-api-call-url-path-and-service"),
    pytest.param(context("{name: c, imageRegistry: {jmesPath: manifest}}"), RULE + "/context/0/imageRegistry/reference",
                 "a ref is required for imageRegistry context entry", id="validate.go-image-registry-without-reference"),
    pytest.param(context("{name: c, imageRegistry: {reference: 'Ghcr.io/Org/App:v1'}}"),
                 RULE + "/context/0/imageRegistry/reference", "bad image: Ghcr.io/Org/App:v1",
                 id="validate.go-image-registry-bad-reference"),
    # validateConditions: key, value and operator are all needed; request.operation values are checked
    pytest.param(policy(deny("[{key: '{{request.object.metadata.name}}', operator: Equals}]")),
                 RULE + "/validate/deny/conditions/0", "`key`, `value` or `operator` is missing",
                 id="validate.go-condition-without-value"),
    pytest.param(policy(deny(f"[{OPERATION % repr('prefix-{{ x }}')}]")), RULE + "/validate/deny/conditions/0/value",
                 "unknown value 'prefix-{{ x }}'", id="validate.go-operation-template-not-the-whole-value"),
    pytest.param(policy(deny("[{key: '{{request.operation}}', operator: Equals, value: [CREATE, '{{ x }}']}]")),
                 RULE + "/validate/deny/conditions/0/value/1", "unknown value '{{ x }}'",
                 id="validate.go-operation-template-in-a-list"),
    pytest.param(policy(deny(f"[{OPERATION % '5'}]")), RULE + "/validate/deny/conditions/0/value",
                 "'value' field found to be of the type float64", id="validate.go-operation-number-value"),
    pytest.param(foreach(f"{{{FE_DENY.replace('{}', '{conditions: [{key: a, operator: equals, value: a}]}')}}}"),
                 FE0 + "/deny/conditions/0/operator", "unknown condition operator 'equals'",
                 id="validate.go-foreach-deny-operator"),
    pytest.param(foreach(f"{{{FE_DENY.replace('{}', '{conditions: [{key: a, operator: Equals, value: a, note: x}]}')}}}"),
                 FE0 + "/deny/conditions/0", 'unknown field "note"', id="wrappers.go-foreach-deny-unknown-field"),
    # the validate factory (pkg/policy/validate/validate.go, pkg/policy/common/validate_pattern.go)
    pytest.param(policy(rule(validate="{anyPattern: {metadata: {name: '?*'}}}")), RULE + "/validate/anyPattern",
                 "failed to deserialize anyPattern, expect array", id="validate-factory-any-pattern-map"),
    pytest.param(policy(rule(validate="{pattern: {spec: {'^(containers)': []}}}")),
                 RULE + "/validate/pattern/spec/^(containers)", "existence anchor: should have atleast one value",
                 id="validate-factory-existence-anchor-empty-list"),
    pytest.param(policy(rule(validate=f"{PATTERN[:-1]}, podSecurity: {{}}}}")), RULE + "/validate",
                 "only one of pattern, anyPattern, deny, foreach, cel can be specified",
                 id="validate-factory-empty-pod-security-counts"),
    pytest.param(policy(rule(validate="{message: m, deny: null}")), RULE + "/validate",
                 "one of pattern, anyPattern, deny, foreach, cel must be specified",
                 id="validate-factory-null-deny-does-not-count"),
    pytest.param(foreach("{deny: {}}"), FE0 + "/list", "foreach.list is required",
                 id="validate-factory-foreach-without-list"),
    pytest.param(foreach(f"{{list: {LIST}}}"), FE0, "one of pattern, anyPattern, deny, or a nested foreach must be",
                 id="validate-factory-foreach-without-validation"),
    pytest.param(foreach(f"{{{FE_DENY}, foreach: [{{list: element.ports, deny: {{}}}}]}}"), FE0,
                 "only one of pattern, anyPattern, deny, or a nested foreach", id="validate-factory-foreach-deny-and-nested"),
    pytest.param(policy(rule(extra=", celPreconditions: [{name: a, expression: 'true'}]")), RULE + "/celPreconditions",
                 "celPrecondition can only be used with validate.cel", id="validate-factory-cel-preconditions-without-cel"),
    pytest.param(policy(rule(validate=f"{{cel: {{{CEL_TRUE}, {PARAM_KIND}}}}}"), NO_BG),
                 RULE + "/validate/cel/paramRef", "cel.paramRef is required", id="validate-factory-param-kind-alone"),
    pytest.param(policy(rule(validate=f"{{cel: {{{CEL_TRUE}, {PARAM_KIND}, paramRef: {{name: p}}}}}}"), NO_BG),
                 RULE + "/validate/cel/paramRef/parameterNotFoundAction", "parameterNotFoundAction is required",
                 id="validate-factory-param-ref-without-not-found-action"),
    pytest.param(policy(rule(validate=f"{{cel: {{{CEL_TRUE}, auditAnnotations: [{{key: a}}]}}}}")),
                 RULE + "/validate/cel/auditAnnotations/0/valueExpression", "valueExpression is required",
                 id="validate-factory-audit-annotation-without-value"),
    # rule_types.go / spec_types.go
    pytest.param(policy(rule(extra=", imageExtractors: {Pod: [{path: /spec/image}]}")), RULE + "/imageExtractors",
                 "imageExtractors can only be defined for verifyImages rule", id="rule_types.go-image-extractors"),
    pytest.param(policy(rule(), "{webhookTimeoutSeconds: 31}"), "/spec/webhookTimeoutSeconds",
                 "between 1 and 30 seconds", id="spec_types.go-webhook-timeout"),
    # ValidateMatchExcludeConflict compares a legacy exclude block field by field with the legacy match
    # block; an exclude block with nothing at the legacy level (only any) is therefore "wider"
    pytest.param(policy(rule(match=LEGACY_POD, extra=f", exclude: {LEGACY_POD}")), RULE, "matching an empty set",
                 id="rule_types.go-legacy-exclude-same-kind"),
    pytest.param(policy(rule(match=LEGACY_POD, extra=", exclude: {any: [{resources: {namespaces: [kube-system]}}]}")),
                 RULE, "matching an empty set", id="rule_types.go-legacy-match-any-exclude"),
    # the mock context of hasInvalidVariables: allowed roots anywhere in the expression, else a context
    # entry's patterns (name* for most sources, name.data / name.metadata for a ConfigMap)
    pytest.param(message("{{ request }}"), RULE + "/validate/message", "'request' is not defined",
                 id="mock_context-request-alone-in-background"),
    pytest.param(message("{{ cm }}", extra=CM_CTX.replace("mycm", "cm")), RULE + "/validate/message",
                 "'cm' is not defined", id="mock_context-config-map-root"),
    pytest.param(message("{{ [a, b] }}", extra=", context: [{name: a, variable: {value: 1}}]"), RULE + "/validate/message",
                 "'[a, b]' is not defined", id="mock_context-multi-select-with-unknown-identifier"),
]

CODE_ACCEPTS = [
    pytest.param(context("{name: imagesList, variable: {value: 1}}"), id="validate.go-context-name-starting-like-images"),
    pytest.param(context("{name: requestData, variable: {value: 1}}"), id="validate.go-context-name-starting-like-request"),
    pytest.param(context("{name: c, imageRegistry: {reference: 'ghcr.io/{{request.object.metadata.name}}:v1'}}"),
                 id="validate.go-image-registry-templated-reference"),
    pytest.param(policy(deny(f"[{OPERATION % repr('{{ request.object.metadata.annotations.op }}')}]")),
                 id="validate.go-operation-whole-template"),
    # foreach conditions: only the operator is checked
    pytest.param(foreach(f"{{{FE_DENY.replace('{}', '{conditions: {any: [{operator: Equals, value: a}]}}')}}}"),
                 id="validate.go-foreach-condition-without-key"),
    pytest.param(foreach(f"{{{FE_DENY}, preconditions: {{any: [{OPERATION % 'foobar'}]}}}}"),
                 id="validate.go-foreach-precondition-operation-not-checked"),
    pytest.param(foreach(f"{{{FE_DENY}, preconditions: {{any: [{{key: a, operator: Equals, value: a, note: x}}]}}}}"),
                 id="validate.go-foreach-precondition-unknown-field-ignored"),
    # foreach context entries are only decoded
    pytest.param(foreach(f"{{{FE_DENY}, context: [{{name: element, variable: {{}}}}]}}"),
                 id="validate.go-foreach-context-not-validated"),
    pytest.param(policy(rule(validate="{pattern: {spec: {'^(containers)': [a]}}}")),
                 id="validate-factory-existence-anchor-list-of-strings"),
    pytest.param(policy(rule(validate="{message: m, podSecurity: {}}")), id="validate-factory-empty-pod-security"),
    pytest.param(foreach(f"{{list: {LIST}, foreach: [{{list: element.ports, deny: {{}}}}]}}"),
                 id="validate-factory-foreach-nested-only"),
    pytest.param(policy(rule(validate=f"{{cel: {{{CEL_TRUE}, {PARAM_KIND}, paramRef: {{name: p, "
                                      "parameterNotFoundAction: Deny}}}"), NO_BG),
                 id="validate-factory-cel-params"),
    pytest.param(policy(rule(match=LEGACY_POD, extra=", exclude: {resources: {kinds: [Pod], namespaces: [kube-system]}}")),
                 id="rule_types.go-legacy-exclude-narrower"),
    pytest.param(message("{{ request }}", NO_BG), id="mock_context-request-alone-without-background"),
    pytest.param(message("{{ foo[?@ > `1`] }}"), id="mock_context-at-anywhere"),
    pytest.param(message("{{ foo | length(@) }}"), id="mock_context-function-anywhere"),
    pytest.param(message("{{ cm.data.key }} {{ cm.metadata }}", extra=CM_CTX.replace("mycm", "cm")),
                 id="mock_context-config-map-data-and-metadata"),
    pytest.param(message("{{ [a, b] }}", extra=", context: [{name: a, variable: {value: 1}}, {name: b, variable: {value: 2}}]"),
                 id="mock_context-multi-select-of-known-identifiers"),
]


@pytest.mark.parametrize(("doc", "pointer", "text"),
                         VALIDATE_GO_REJECTS + VARIABLE_GO_REJECTS + FACTORY_GO_REJECTS + API_GO_REJECTS + CODE_REJECTS)
def test_go_rejects(doc: dict, pointer: str, text: str) -> None:
    found = problems_of(doc)
    assert any(p == pointer and text in m for p, m in found), found


@pytest.mark.parametrize("doc", VALIDATE_GO_ACCEPTS + VARIABLE_GO_ACCEPTS + FACTORY_GO_ACCEPTS + API_GO_ACCEPTS
                         + CODE_ACCEPTS)
def test_go_accepts(doc: dict) -> None:
    assert problems_of(doc) == []
