"""``scanner apply`` against the summary counts that Kyverno's own ``kyverno apply`` tests expect.

The cases come from the Go tests of kyverno/kyverno:

- ``cmd/cli/kubectl-kyverno/commands/apply/command_test.go`` (``Test_Apply``), the ClusterPolicy
  validate cases: each runs ``applyCommandHelper`` with ``PolicyReport: true``, merges the cluster
  reports (``report.ComputePolicyReports`` then ``report.MergeClusterReports``) and compares the
  merged summary;
- ``cmd/cli/kubectl-kyverno/commands/apply/allow_existing_violations_test.go``
  (``Test_Apply_AllowExistingViolations``), same comparison;
- ``cmd/cli/kubectl-kyverno/commands/apply/apply_list_test.go`` (``TestApply_KindListResource``),
  which checks only the fail count.

Each case is rewritten here in its own shape (policy annotations and descriptions dropped, flow
style YAML); the expected counts are the Go case's. Here the counts are summed over every report
that ``--output policy-report`` prints. A ``--set request.operation=UPDATE`` of the Go case is
given as a values file (``globalValues``), the form ``scanner apply`` takes.

Left out: the cases on ``pod_with_version_tag.yaml`` (including the two git ones with a fake
cloner) and the three ``exception-within-*`` cases, whose files are not all available;
``test/cli/apply/type`` (``policy2.yaml`` missing); ``DefaultAllowExistingViolations: false``
(``scanner apply`` has no option for a global default); ValidatingAdmissionPolicy,
ValidatingPolicy, ImageValidatingPolicy, DeletingPolicy, MutatingAdmissionPolicy, JSON payload and
authz cases (other engines).
"""

from __future__ import annotations

import io
import pathlib
import sys

import pytest
import yaml

from scanner.cli import main

STATUSES = ("pass", "fail", "warn", "error", "skip")

# test/best_practices/disallow_latest_tag.yaml as Test_Apply reads it (policy-level Audit);
# shortened: annotations dropped.
LATEST_TAG = """\
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: disallow-latest-tag}
spec:
  validationFailureAction: Audit
  background: true
  rules:
  - name: require-image-tag
    match: {any: [{resources: {kinds: [Pod]}}]}
    validate:
      message: an image tag is required
      pattern: {spec: {containers: [{image: "*:*"}]}}
  - name: validate-image-tag
    match: {any: [{resources: {kinds: [Pod]}}]}
    validate:
      message: a mutable image tag such as latest is not allowed
      pattern: {spec: {containers: [{image: "!*:latest"}]}}
"""

LATEST_POD = """\
apiVersion: v1
kind: Pod
metadata: {name: myapp-pod, labels: {app: myapp}}
spec: {containers: [{name: nginx, image: "nginx:latest"}]}
"""

# test/cli/apply/policies: a latest-tag ClusterPolicy in the legacy match form, a ClusterPolicy
# scored "false" whose failures are reported as warnings, and an unrelated PolicyException;
# shortened: annotations other than scored dropped.
FOLDER_POLICIES = """\
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: disallow-latest-tag}
spec:
  validationFailureAction: audit
  rules:
  - name: validate-image-tag
    match: {resources: {kinds: [Pod]}}
    validate:
      message: a mutable image tag such as latest is not allowed
      pattern: {spec: {containers: [{image: "!*:latest"}]}}
---
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: drop-all-capabilities
  annotations: {policies.kyverno.io/scored: "false"}
spec:
  validationFailureAction: audit
  rules:
  - name: require-drop-all
    match: {any: [{resources: {kinds: [Pod]}}]}
    preconditions:
      all: [{key: "{{ request.operation }}", operator: NotEquals, value: DELETE}]
    validate:
      message: containers must drop ALL capabilities
      foreach:
      - list: request.object.spec.[ephemeralContainers, initContainers, containers][]
        deny:
          conditions:
            all:
            - {key: ALL, operator: AnyNotIn, value: "{{ element.securityContext.capabilities.drop || '' }}"}
"""

FOLDER_EXCEPTION = """\
apiVersion: kyverno.io/v2
kind: PolicyException
metadata: {name: delta-exception, namespace: delta}
spec:
  exceptions:
  - policyName: disallow-host-namespaces
    ruleNames: [host-namespaces, autogen-host-namespaces]
  match:
    any:
    - resources: {kinds: [Pod, Deployment], namespaces: [delta], names: [important-tool*]}
"""

FOLDER_PODS = """\
apiVersion: v1
kind: Pod
metadata: {name: untagged, labels: {app: app}}
spec: {containers: [{name: nginx, image: nginx}]}
---
apiVersion: v1
kind: Pod
metadata: {name: latest, labels: {app: app}}
spec: {containers: [{name: nginx, image: "nginx:latest"}]}
"""

# test/cli/apply/policies-set: the policy folder also holds a file of Pods (not policies).
OP_LABEL = """\
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: enforce-label}
spec:
  validationFailureAction: Audit
  background: false
  rules:
  - name: enforce-label
    match: {any: [{resources: {kinds: [Pod]}}]}
    validate:
      message: the op label must name the operation
      pattern: {metadata: {labels: {op: "{{ request.operation }}"}}}
"""


def _op_pods(op: str | None) -> str:
    label = f", op: {op}" if op else ""
    return "---\n".join(
        f"apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, labels: {{foo: bar{label}}}}}\n"
        f"spec: {{containers: [{{name: nginx{image}}}]}}\n"
        for name, image in (("test-pod-1", ", image: 'nginx:latest'"), ("test-pod-2", "")))


UPDATE_VALUES = "globalValues:\n  request.operation: UPDATE\n"


def _existing_violations_policy(name: str, allow: bool | None) -> str:
    """The Enforce latest-tag policy of ``Test_Apply_AllowExistingViolations``, with or without
    ``validate.allowExistingViolations``."""
    allow_line = "" if allow is None else f"      allowExistingViolations: {str(allow).lower()}\n"
    return (
        "apiVersion: kyverno.io/v1\nkind: ClusterPolicy\n"
        f"metadata: {{name: {name}}}\n"
        "spec:\n  validationFailureAction: Enforce\n  rules:\n  - name: validate-image-tag\n"
        "    match: {any: [{resources: {kinds: [Pod]}}]}\n    validate:\n"
        f"{allow_line}"
        "      message: a mutable image tag such as latest is not allowed\n"
        "      pattern: {spec: {containers: [{image: '!*:latest'}]}}\n"
    )


SERVICE_LABEL = """\
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: require-labels}
spec:
  validationFailureAction: Audit
  background: true
  rules:
  - name: check-for-labels
    match: {any: [{resources: {kinds: [Service]}}]}
    validate:
      message: the testlabel label is required
      pattern: {metadata: {labels: {testlabel: "?*"}}}
"""

LIST_OF_TWO = """\
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Service
  metadata: {name: list-service-test}
  spec: {ports: [{protocol: TCP, port: 80}]}
- apiVersion: apps/v1
  kind: Deployment
  metadata: {name: list-deployment-test, labels: {app: list-deployment-test}}
  spec:
    replicas: 1
    selector: {matchLabels: {app: list-deployment-test}}
    template:
      metadata: {labels: {app: list-deployment-test}}
      spec: {containers: [{name: nginx, image: nginx}]}
"""


def counts(pass_: int = 0, fail: int = 0, warn: int = 0, error: int = 0, skip: int = 0) -> dict[str, int]:
    return {"pass": pass_, "fail": fail, "warn": warn, "error": error, "skip": skip}


CASES = [
    pytest.param(
        {"disallow_latest_tag.yaml": LATEST_TAG, "pod_with_latest_tag.yaml": LATEST_POD},
        ["disallow_latest_tag.yaml", "--resource", "pod_with_latest_tag.yaml"], None,
        counts(pass_=1, fail=1),
        id="latest-tag-policy-fails-the-latest-pod-once"),
    pytest.param(
        # the Go folder also holds a vim swap file (binary, not stored): a stand-in of our own
        {"policies/policy.yaml": FOLDER_POLICIES, "policies/exception.yaml": FOLDER_EXCEPTION,
         "policies/.policy.yaml.swp": b"b0VIM 8.2\x00\x00\x10\x00\xff\xfe swap", "resource/resources.yaml": FOLDER_PODS},
        ["policies", "--resource", "resource"], None,
        counts(pass_=1, fail=1, warn=2),
        id="policy-folder-reports-unscored-failures-as-warnings"),
    pytest.param(
        {"disallow_latest_tag.yaml": LATEST_TAG, "pod_with_latest_tag.yaml": LATEST_POD},
        ["disallow_latest_tag.yaml", "--resource", "pod_with_latest_tag.yaml", "--audit-warn"], None,
        counts(pass_=1, warn=1),
        id="audit-warn-turns-the-audit-failure-into-a-warning"),
    pytest.param(
        {"pod_with_latest_tag.yaml": LATEST_POD},
        ["-", "--resource", "pod_with_latest_tag.yaml", "--audit-warn"], LATEST_TAG,
        counts(pass_=1, warn=1),
        id="audit-warn-with-the-policy-read-from-stdin"),
    pytest.param(
        {"disallow_latest_tag.yaml": LATEST_TAG},
        ["disallow_latest_tag.yaml", "--resource", "-", "--audit-warn"], LATEST_POD,
        counts(pass_=1, warn=1),
        id="audit-warn-with-the-resource-read-from-stdin"),
    pytest.param(
        {"policies-set/policy.yaml": OP_LABEL, "policies-set/resources-set/resources.yaml": _op_pods(None),
         "resources-set/resources.yaml": _op_pods("UPDATE"), "values.yaml": UPDATE_VALUES},
        ["policies-set", "--resource", "resources-set", "--values-file", "values.yaml"], None,
        counts(pass_=2),
        id="update-operation-from-values-matches-the-op-label"),
    pytest.param(
        {"policy.yaml": _existing_violations_policy("disallow-latest-tag", None),
         "resource.yaml": LATEST_POD, "values.yaml": UPDATE_VALUES},
        ["policy.yaml", "--resource", "resource.yaml", "--values-file", "values.yaml"], None,
        counts(skip=1),
        id="default-allows-existing-violations-on-update"),
    pytest.param(
        {"policy.yaml": _existing_violations_policy("disallow-latest-tag-true", True),
         "resource.yaml": LATEST_POD, "values.yaml": UPDATE_VALUES},
        ["policy.yaml", "--resource", "resource.yaml", "--values-file", "values.yaml"], None,
        counts(skip=1),
        id="rule-allowing-existing-violations-skips-the-update"),
    pytest.param(
        {"policy.yaml": _existing_violations_policy("disallow-latest-tag-false", False),
         "resource.yaml": LATEST_POD, "values.yaml": UPDATE_VALUES},
        ["policy.yaml", "--resource", "resource.yaml", "--values-file", "values.yaml"], None,
        counts(fail=1),
        id="rule-forbidding-existing-violations-fails-the-update"),
    pytest.param(
        {"policy.yaml": SERVICE_LABEL, "list.yaml": LIST_OF_TWO},
        ["policy.yaml", "--resource", "list.yaml"], None,
        {"fail": 1},  # TestApply_KindListResource checks the fail count only
        id="list-items-are-applied-and-the-service-fails"),
]


def _summed_counts(out: str) -> dict[str, int]:
    total = dict.fromkeys(STATUSES, 0)
    for doc in yaml.safe_load_all(out):
        for status in STATUSES:
            total[status] += int(((doc or {}).get("summary") or {}).get(status, 0))
    return total


@pytest.mark.parametrize(("files", "argv", "stdin", "expected"), CASES)
def test_apply_summary_matches_kyverno(
    tmp_path: pathlib.Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    files: dict[str, str | bytes],
    argv: list[str],
    stdin: str | None,
    expected: dict[str, int],
) -> None:
    for rel, content in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
    if stdin is not None:
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin.encode())))
    args = [a if a.startswith("-") else str(tmp_path / a) for a in argv]
    main(["apply", *args, "--output", "policy-report"])
    out, err = capsys.readouterr()
    got = _summed_counts(out)
    assert {k: got[k] for k in expected} == expected, err


def test_apply_reads_the_standard_input_once(capsys: pytest.CaptureFixture[str]) -> None:
    """Kyverno's checkArguments: policies and resources cannot both come from the standard input."""
    assert main(["apply", "-", "--resource", "-"]) == 2
    assert "the standard input (-) can be read once" in capsys.readouterr().err
