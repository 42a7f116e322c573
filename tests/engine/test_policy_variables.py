"""Which variables a rule may use, as Kyverno's validator decides (hasInvalidVariables)."""

from __future__ import annotations

import pytest

from scanner.engine.policy import InvalidPolicyError, parse_policy

from .conftest import policy

MATCH = "match: {any: [{resources: {kinds: [Pod]}}]}"
NOT_DEFINED = "is not defined"


def problems_of(doc: dict) -> list[tuple[str, str]]:
    try:
        parse_policy(doc)
    except InvalidPolicyError as exc:
        return exc.problems
    return []


def rule(body: str) -> str:
    return f"[{{name: r, {MATCH}, {body}}}]"


MUTATE_FOREACH = rule("""mutate: {foreach: [{list: request.object.spec.containers,
    context: [{name: labelled, variable: {jmesPath: element.name}}],
    patchStrategicMerge: {metadata: {labels: {a: '{{ labelled }}'}}}}]}""")
MUTATE_NESTED_FOREACH = rule("""mutate: {foreach: [{list: request.object.spec.containers,
    foreach: [{list: element.ports, context: [{name: deep, variable: {jmesPath: element.name}}],
               patchStrategicMerge: {metadata: {labels: {a: '{{ deep }}'}}}}]}]}""")
VALIDATE_NESTED_FOREACH = rule("""validate: {foreach: [{list: request.object.spec.containers,
    foreach: [{list: element.ports, context: [{name: deep, variable: {jmesPath: element.name}}],
               deny: {conditions: {any: [{key: '{{ deep }}', operator: Equals, value: x}]}}}]}]}""")
GENERATE_FOREACH = rule("""generate: {foreach: [{list: request.object.spec.containers,
    context: [{name: ns, variable: {jmesPath: element.name}}],
    apiVersion: v1, kind: ConfigMap, name: cm, namespace: '{{ ns }}', data: {data: {a: b}}}]}""")
ATTESTATION_CONDITIONS = rule("""verifyImages: [{imageReferences: ['ghcr.io/team/*'],
    attestations: [{type: https://cyclonedx.org/bom, attestors: [{entries: [{keyless: {subject: s, issuer: i}}]}],
      conditions: [{all: [{key: '{{ Data.bomFormat }}', operator: Equals, value: CycloneDX}]}]}]}]""")
ATTESTATION_NAME = rule("""verifyImages: [{imageReferences: ['ghcr.io/team/*'],
    attestations: [{name: sbom, type: https://cyclonedx.org/bom}],
    validate: {deny: {conditions: {any: [{key: '{{ sbom.bomFormat }}', operator: NotEquals, value: x}]}}}}]""")
ATTESTATION_NAME_WITHOUT_VALIDATE = rule("""verifyImages: [{imageReferences: ['ghcr.io/team/*'],
    attestations: [{name: sbom, type: https://cyclonedx.org/bom}], repository: '{{ sbom.repo }}'}]""")
TARGET_PATCH = rule("""mutate: {targets: [{apiVersion: v1, kind: ConfigMap, name: cm, namespace: default}],
    patchStrategicMerge: {data: {copy: '{{ target.data.source }}'}}}""")
TARGET_IN_TARGET_NAME = rule("""mutate: {targets: [{apiVersion: v1, kind: ConfigMap, name: '{{ target.x }}',
    namespace: default}], patchStrategicMerge: {data: {a: b}}}""")
TARGET_IN_RULE_CONTEXT = rule("""context: [{name: copied, variable: {jmesPath: '{{ target.data.content }}'}}],
    mutate: {targets: [{apiVersion: v1, kind: ConfigMap, name: cm, namespace: default}],
    patchStrategicMerge: {data: {a: '{{ copied }}'}}}""")
TARGET_CONTEXT = rule("""mutate: {targets: [{apiVersion: v1, kind: ConfigMap, name: cm, namespace: default,
    context: [{name: found, variable: {value: x}}]}], patchStrategicMerge: {data: {a: '{{ found }}'}}}""")
TARGET_WITHOUT_TARGETS = rule("validate: {message: '{{ target.name }}', deny: {}}")
PATCH_PATH_VARIABLE = rule("""mutate: {patchesJson6902: "- op: add\\n  path: /metadata/labels/{{ request.object.kind }}\\n
    value: x"}""")
PATCH_VALUE_VARIABLE = rule("""mutate: {patchesJson6902: "- op: add\\n  path: /metadata/labels/kind\\n
    value: '{{ request.object.kind }}'"}""")
IMAGE_REFERENCE_VARIABLE = rule("verifyImages: [{imageReferences: ['{{ request.object.spec.image }}']}]")


@pytest.mark.parametrize(
    ("doc", "pointer", "text"),
    [
        pytest.param(policy(MUTATE_NESTED_FOREACH), "/spec/rules/0/mutate/foreach/0/foreach/0/patchStrategicMerge"
                     "/metadata/labels/a", NOT_DEFINED, id="nested-mutate-foreach-context-declares-nothing"),
        pytest.param(policy(VALIDATE_NESTED_FOREACH), "/spec/rules/0/validate/foreach/0/foreach/0/deny/conditions"
                     "/any/0/key", NOT_DEFINED, id="nested-validate-foreach-context-declares-nothing"),
        pytest.param(policy(ATTESTATION_NAME_WITHOUT_VALIDATE), "/spec/rules/0/verifyImages/0/repository",
                     NOT_DEFINED, id="attestation-name-declared-only-with-an-image-validate"),
        pytest.param(policy(TARGET_IN_TARGET_NAME), "/spec/rules/0/mutate/targets/0/name",
                     "invalid variables defined at mutate.targets[0]", id="target-variable-in-a-target-name"),
        pytest.param(policy(TARGET_IN_RULE_CONTEXT, "{background: false}"), "/spec/rules/0/context/0/variable/jmesPath",
                     "invalid variables defined at mutate.targets[0]", id="target-variable-in-the-rule-context"),
        pytest.param(policy(TARGET_WITHOUT_TARGETS), "/spec/rules/0/validate/message", NOT_DEFINED,
                     id="target-variable-without-mutate-targets"),
        pytest.param(policy(PATCH_PATH_VARIABLE), "/spec/rules/0/mutate/patchesJson6902",
                     "should not have variables in patchesJSON6902 path section", id="variable-in-a-json-patch-path"),
        pytest.param(policy(rule("""mutate: {foreach: [{list: request.object.spec.containers,
                     context: [{name: v, variable: 'element.name'}], patchStrategicMerge: {}}]}""")),
                     "/spec/rules/0/mutate/foreach/0/context/0/variable", "cannot unmarshal string",
                     id="mutate-foreach-context-of-the-wrong-shape"),
        pytest.param(policy(IMAGE_REFERENCE_VARIABLE), "/spec/rules/0/verifyImages/0/imageReferences",
                     "should not have variables in image reference section", id="variable-in-an-image-reference"),
    ],
)
def test_rule_variables_refused(doc: dict, pointer: str, text: str) -> None:
    found = problems_of(doc)
    assert any(p == pointer and text in m for p, m in found), found


@pytest.mark.parametrize(
    "doc",
    [
        pytest.param(policy(MUTATE_FOREACH), id="mutate-foreach-context-declares-its-names"),
        pytest.param(policy(GENERATE_FOREACH), id="generate-foreach-context-declares-its-names"),
        pytest.param(policy(ATTESTATION_CONDITIONS), id="attestation-conditions-are-not-checked"),
        pytest.param(policy(ATTESTATION_NAME), id="attestation-name-declared-with-an-image-validate"),
        pytest.param(policy(TARGET_PATCH), id="target-variable-with-mutate-targets"),
        pytest.param(policy(TARGET_CONTEXT), id="mutate-target-context-declares-its-names"),
        pytest.param(policy(PATCH_VALUE_VARIABLE), id="variable-in-a-json-patch-value"),
    ],
)
def test_rule_variables_accepted(doc: dict) -> None:
    assert problems_of(doc) == []
