"""The in-process Kustomize renderer never differs silently from ``kubectl kustomize``.

Each case of the table is built by both renderers. The in-process one either gives the very
objects kubectl gives -- compared as JSON text, so ``1`` and ``1.0`` differ -- or hands the
overlay over to kubectl (``UnsupportedKustomization``). What kubectl refuses is always handed
over, so that the scan reports kustomize's own error. The table says which of the two each case
must do, so a case that starts rendering in process (or stops) is noticed too.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest

from scanner.sources.file_tree import DiskTree
from scanner.sources.kustomize.external import render_overlay
from scanner.sources.kustomize.native import NativeRenderer, UnsupportedKustomization
from tests.programs import need_program

NATIVE = "native"
K = "resources: [r.yaml]\n"
X = "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\n"
CM = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"
DEPLOY = ("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  replicas: 1.0\n  template:\n"
          "    spec:\n      containers:\n      - name: c\n        image: nginx:2001-12-14\n"
          "        resources: {limits: {cpu: 1.0, memory: 5e8}}\n")
RB = ("apiVersion: rbac.authorization.k8s.io/v1\nkind: {kind}\nmetadata: {{name: b}}\n"
      "roleRef: {{apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: r}}\nsubjects:\n{subjects}")
SA = "---\napiVersion: v1\nkind: ServiceAccount\nmetadata: {name: s}\n"


def case(resource: str, kustomization: str = K, expected: str = NATIVE, refused: str | None = None,
         **files: str) -> tuple[dict[str, str], str, str | None]:
    return ({"o/kustomization.yaml": kustomization, "o/r.yaml": resource,
             **{f"o/{name.replace('_', '.')}": text for name, text in files.items()}}, expected, refused)


def rb(subjects: str, kind: str = "RoleBinding") -> str:
    return RB.format(kind=kind, subjects=textwrap.indent(subjects, "")) + SA


CASES = {
    # numbers: kustomize writes every number through JSON
    "integral-floats-become-integers": case(X + "spec: {a: 1.0, b: 1e3, c: -0.0, d: 5., e: 1.0e+2, f: 1e6, "
                                            "g: [1.0, 2.50], h: !!float 1}\n"),
    "large-and-fractional-floats-stay": case(X + "spec: {a: 1e20, b: 1e21, c: 1.5e300, d: 0.5, e: 1e-5, "
                                             "f: 0.0001, g: 123456789012345678.0}\n"),
    "integers-in-every-base": case(X + "spec: {a: 017, b: 0o17, c: 0x1F, d: 0b101, e: +12, f: 1_0, "
                                   "g: 18446744073709551615, h: 18446744073709551616, "
                                   "i: -9223372036854775809, j: 99999999999999999999999}\n"),
    "integral-floats-at-the-64-bit-bounds": case(X + "spec: {a: 9223372036854775808.0, b: 18446744073709551615.0, "
                                                 "c: -9223372036854775808.0, d: -9223372036854774784.0, e: 1e19, "
                                                 "f: -1e19, g: 9.3e18, h: -9.3e18, i: -4611686018427387904.0}\n"),
    "floats-in-workload-fields": case(DEPLOY),
    "floats-in-configmap-data": case(CM + "data:\n  a: 1.0\n  b: 2.5\n"),
    "float-in-inline-patch": case(X, K + "patches:\n- patch: |\n    apiVersion: example.com/v1\n"
                                  "    kind: Widget\n    metadata: {name: w}\n    spec: {f: 2.0, g: [1.0]}\n"),
    "float-replica-count": case(DEPLOY, K + "replicas: [{name: d, count: 2.0}]\n"),
    "infinity-refused": case(X + "spec: {a: .inf}\n", expected="not a JSON number",
                             refused="unsupported value: +Inf"),
    # timestamps: kustomize rewrites plain ones (differently by kind and place)
    "date-in-spec": case(X + "spec: {d: 2001-12-14}\n", expected="YAML timestamp"),
    "timestamps-in-spec": case(X + "spec:\n  a: 2001-12-14T21:59:43.10Z\n  b: 2001-12-14 21:59:43.10\n"
                               "  c: 2001-12-14t21:59:43.10-05:00\n  d: 2001-1-4\n", expected="YAML timestamp"),
    "date-in-configmap-data": case(CM + "data: {d: 2001-12-14}\n", expected="YAML timestamp"),
    "date-in-label": case(X.replace("{name: w}", "{name: w, labels: {since: 2001-12-14}}"), expected="YAML timestamp"),
    "date-in-annotation": case(X.replace("{name: w}", "{name: w, annotations: {since: 2001-12-14}}"),
                               expected="YAML timestamp"),
    "date-in-inline-patch": case(X, K + "patches:\n- patch: |\n    apiVersion: example.com/v1\n"
                                 "    kind: Widget\n    metadata: {name: w}\n    spec: {d: 2001-12-14}\n",
                                 expected="YAML timestamp"),
    "date-in-patch-file": case(X, K + "patches:\n- path: p.yaml\n", expected="YAML timestamp",
                               p_yaml=X + "spec: {d: 2001-12-14}\n"),
    "date-in-common-annotations": case(X, K + "commonAnnotations: {since: 2001-12-14}\n", expected="YAML timestamp"),
    "explicit-timestamp-tag": case(X + "spec: {d: !!timestamp 2001-12-14}\n", expected="YAML timestamp"),
    "quoted-dates-and-dated-image-tags-stay": case(DEPLOY.replace("replicas: 1.0", "replicas: 1")
                                                   + "---\n" + CM + "data: {a: '2001-12-14', b: \"2001-12-14\"}\n"),
    # merge keys: go-yaml v3 lets an explicit key win wherever it stands
    "merge-key-after-explicit-key": case(X + "spec: {a: 1, <<: {a: 2, b: 3}}\n", expected="merge key"),
    "merge-key-before-explicit-key": case(X + "spec:\n  <<: {a: 2, b: 3}\n  a: 1\n", expected="merge key"),
    # line breaks kustomize writes back as line breaks
    "escaped-nel": case(X + 'spec: {a: "x\\Ny", b: "x \\N y"}\n', expected="NEL, LS or PS"),
    "escaped-ls-and-ps": case(X + 'spec: {a: "x\\Ly", b: "x\\Py", c: "\\u2028"}\n', expected="NEL, LS or PS"),
    "raw-nel": case(X + "spec: {a: x\u0085y}\n", expected="NEL, LS or PS"),
    "backslash-n-in-single-quotes-handed-over-too": case(X + "spec: {a: 'x\\Ny'}\n", expected="NEL, LS or PS"),
    "newline-escapes-stay": case(X + 'spec: {a: "x\\ny", b: "tab\\tthere", c: "\\x41"}\n'),
    # empty values: "" in a flow mapping, null in a block one
    "empty-value-in-flow-mapping": case(X + "spec: {a: , b: 1}\n", expected="empty value in a flow mapping"),
    "empty-value-in-flow-sequence-pair": case(X + "spec: {l: [a, {q: }]}\n", expected="empty value in a flow mapping"),
    "empty-subject-namespace-in-flow-mapping": case(rb("- {kind: User, name: u, namespace: }\n", "ClusterRoleBinding"),
                                                    expected="empty value in a flow mapping"),
    "empty-values-in-block-mapping-stay-null": case(X + "spec:\n  a:\n  b: null\n  c: ~\n"),
    # keys kustomize cannot write as JSON
    "integer-and-boolean-keys-refused": case(X + "data:\n  1: a\n  true: b\n", expected="mapping key that is not text",
                                             refused="unsupported type"),
    "float-key-refused": case(X + "data:\n  1.5: a\n", expected="mapping key that is not text",
                              refused="unsupported type"),
    "quoted-number-keys-stay": case(X + "data:\n  '1': a\n  \"true\": b\n"),
    # directives
    "yaml-directive-in-resource-refused": case("%YAML 1.1\n---\n" + X, expected="YAML directive",
                                               refused="did not find expected <document start>"),
    "yaml-directive-in-kustomization-refused": case(X, "%YAML 1.2\n---\n" + K, expected="YAML directive",
                                                    refused="incompatible YAML document"),
    "tag-directive-refused": case("%TAG !e! tag:example.com,2000:\n---\n" + X, expected="YAML directive",
                                  refused="did not find expected <document start>"),
    # empty kustomizations
    "empty-kustomization-file": case(X, "", expected="kustomization", refused="kustomization.yaml is empty"),
    "comment-only-kustomization": case(X, "# nothing yet\n", expected="kustomization",
                                       refused="kustomization.yaml is empty"),
    "empty-mapping-kustomization": case(X, "{}\n", expected="is empty", refused="kustomization.yaml is empty"),
    "type-only-kustomization": case(X, "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n",
                                    expected="is empty", refused="kustomization.yaml is empty"),
    "blank-namespace-only-kustomization": case(X, "namespace: ''\nresources: null\n", expected="is empty",
                                               refused="kustomization.yaml is empty"),
    "empty-resource-list-is-not-empty": case(X, "resources: []\n"),
    "empty-metadata-is-not-empty": case(X, "metadata: {}\n"),
    # subjects
    "blank-subject-namespace-refused": case(rb("- kind: ServiceAccount\n  name: s\n  namespace:\n"),
                                            expected="blank namespace", refused="namespace is blank for resource"),
    "null-subject-namespace-refused": case(rb("- {kind: ServiceAccount, name: s, namespace: null}\n"),
                                           expected="blank namespace", refused="namespace is blank for resource"),
    "null-subject-namespace-refused-under-namespace": case(
        rb("- {kind: ServiceAccount, name: s, namespace: ~}\n"), K + "namespace: p\n",
        expected="blank namespace", refused="namespace is blank for resource"),
    "null-namespace-of-user-subject-stays": case(rb("- {kind: User, name: u, namespace: null}\n")),
    "null-subject-namespace-in-cluster-binding-stays": case(
        rb("- {kind: ServiceAccount, name: s, namespace: null}\n", "ClusterRoleBinding")),
    "space-subject-namespace-stays": case(rb("- {kind: ServiceAccount, name: s, namespace: ' '}\n"),
                                          K + "namespace: p\n"),
    "blank-kustomization-namespace-stays": case(CM, K + "namespace: ''\n"),
    "space-kustomization-namespace-stays": case(CM, K + "namespace: ' '\n"),
}


def as_json(documents: Any) -> list[str]:
    return [json.dumps(d, sort_keys=True) for d in documents]


@pytest.fixture(scope="module")
def kubectl() -> list[str]:
    need_program("kubectl", "kubectl v1.32 (kustomize v5.5.0) on PATH")
    return ["kubectl", "kustomize"]


@pytest.mark.parametrize(("files", "expected", "refused"), list(CASES.values()), ids=list(CASES))
def test_native_equals_kubectl_or_hands_over(tmp_path: Path, kubectl: list[str], files: dict[str, str],
                                             expected: str, refused: str | None) -> None:
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="utf-8")
    theirs = render_overlay(kubectl, str(tmp_path), "o", 60.0)
    if refused is None:
        assert theirs.error is None, theirs.error
    else:
        assert theirs.error is not None and refused in theirs.error, theirs.error
    try:
        ours = NativeRenderer(DiskTree(str(tmp_path))).render("o")
    except UnsupportedKustomization as exc:
        assert expected != NATIVE, f"handed over: {exc}"
        assert expected in exc.reason
        return
    assert expected == NATIVE, "rendered in process, not handed over"
    assert as_json(ours) == as_json(theirs.documents)

