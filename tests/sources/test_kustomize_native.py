"""The in-process Kustomize renderer, checked against ``kubectl kustomize`` itself."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from scanner.sources.directory import DirectorySource
from scanner.sources.file_tree import DiskTree
from scanner.sources.kustomize.external import find_renderer, render_overlay, renderer_error
from scanner.sources.kustomize.native import (
    NativeRenderer,
    UnsupportedKustomization,
    render_native,
)
from scanner.sources.kustomize.native_fields import ImageRule, split_image
from scanner.sources.kustomize.plan import plan
from scanner.sources.kustomize.version import external_renderer
from scanner.sources.paths import PathFilter, Shard, walk_tree
from scanner.sources.provenance import Resource
from scanner.sources.tree import TreeOptions
from tests.sources.conftest import TREE_KINDS, overlay_folder, renderer_of, tree_of

KUBECTL = find_renderer("auto")
MAKE_CORPUS = "/work/shared/bench/make_corpus.py"


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


def as_json(documents: Any) -> list[str]:
    """Objects as JSON text: equal only when their values have the same types too (1 is not 1.0)."""
    return [json.dumps(d, sort_keys=True) for d in documents]


def kubectl_render(root: Path, overlay: str) -> list:
    assert KUBECTL is not None, "kubectl (or kustomize) must be on PATH for these tests"
    output = render_overlay(KUBECTL, str(root), overlay, 60.0)
    assert output.error is None, output.error
    return list(output.documents)


DEPLOY = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {app: web}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      serviceAccountName: web
      initContainers:
      - name: init
        image: busybox
      containers:
      - name: app
        image: registry.local:5000/team/web:1.0
        args: [serve]
        env: [{name: A, value: "1"}, {name: B, value: "2"}]
        envFrom: [{configMapRef: {name: cfg}}]
        volumeMounts: [{name: data, mountPath: /data}]
        ports: [{containerPort: 80, protocol: TCP}]
      - name: sidecar
        image: nginx@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
      volumes: [{name: data, emptyDir: {}}]
      tolerations: [{key: a, operator: Exists}]
"""
OTHERS = """\
apiVersion: v1
kind: ServiceAccount
metadata: {name: web}
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  selector: {app: web}
  ports: [{port: 80}]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: cfg, annotations: {note: kept}}
data: {key: value, empty: ""}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: reader}
rules: [{apiGroups: [""], resources: [pods], verbs: [get]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: web}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: reader}
subjects:
- {kind: ServiceAccount, name: web}
- {kind: ServiceAccount, name: web, namespace: base-ns}
- {kind: ServiceAccount, name: other, namespace: elsewhere}
- {kind: ServiceAccount, name: default}
- {kind: User, name: web}
---
apiVersion: v1
kind: Namespace
metadata: {name: base-ns}
---
apiVersion: batch/v1
kind: CronJob
metadata: {name: nightly}
spec:
  schedule: "0 1 * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: Never
          containers: [{name: job, image: busybox:1.36}]
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: web}
spec:
  podSelector: {matchLabels: {app: web}}
  ingress: [{from: [{podSelector: {matchLabels: {app: web}}}, {namespaceSelector: {}}]}]
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web}
spec: {minAvailable: 1, selector: {matchLabels: {app: web}}}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db, namespace: base-ns}
spec:
  selector: {matchLabels: {app: db}}
  serviceName: db
  template:
    metadata: {labels: {app: db}}
    spec: {containers: [{name: db, image: postgres:16}]}
  volumeClaimTemplates: [{metadata: {name: pgdata}, spec: {accessModes: [ReadWriteOnce]}}]
---
apiVersion: example.com/v1
kind: Widget
metadata: {name: w}
spec: {containers: [{name: c, image: busybox}]}
"""
BASE = {"base/kustomization.yaml": "resources: [deploy.yaml, others.yaml]\n",
        "base/deploy.yaml": DEPLOY, "base/others.yaml": OTHERS}
PATCH_HEAD = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n"


def patch(body: str) -> str:
    return PATCH_HEAD + textwrap.dedent(body)


def overlay(kustomization: str, **files: str) -> dict[str, str]:
    return {**BASE, "o/kustomization.yaml": kustomization,
            **{f"o/{name.replace('_', '.')}": text for name, text in files.items()}}


SUPPORTED = [
    pytest.param(overlay("resources: [../base]\n"), id="base-only-in-legacy-order"),
    pytest.param(overlay("resources: [../base, extra.yaml]\n",
                         extra_yaml="apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm1, annotations: {}, labels: {}}\n"
                                    "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm2, annotations: null}\n"),
                 id="empty-annotations-dropped-empty-labels-kept"),
    pytest.param(overlay("namespace: prod\nresources: [../base, extra.yaml]\n",
                         extra_yaml="apiVersion: example.com/v1\nkind: ServiceAccount\nmetadata: {name: crd-sa}\n---\n"
                                    "apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata: {name: crd}\n"
                                    "roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: r}\n"
                                    "subjects: [{kind: ServiceAccount, name: crd-sa}]\n"),
                 id="subject-follows-a-v1-service-account-of-any-group"),
    pytest.param(overlay("namespace: prod\nresources: [../base]\n"),
                 id="namespace-moves-namespaced-kinds-renames-namespace-and-subjects"),
    pytest.param(overlay("resources: [../base]\nlabels:\n- pairs: {env: dev}\n"),
                 id="labels-metadata-only"),
    pytest.param(overlay("resources: [../base]\nlabels:\n- pairs: {env: dev}\n"
                         "  includeSelectors: true\n"), id="labels-include-selectors"),
    pytest.param(overlay("resources: [../base]\nlabels:\n- pairs: {env: dev}\n"
                         "  includeTemplates: true\n"), id="labels-include-templates"),
    pytest.param(overlay("resources: [../base]\ncommonLabels: {team: a, app: web2}\n"
                         "commonAnnotations: {owner: me}\n"),
                 id="common-labels-and-annotations-reach-selectors-and-templates"),
    pytest.param(overlay("resources: [../base]\nimages:\n"
                         "- {name: registry.local:5000/team/web, newTag: '2.0'}\n"
                         "- {name: nginx, newName: mirror/nginx, newTag: '1.27'}\n"
                         "- {name: busybox, digest: 'sha256:abc'}\n"
                         "- {name: postgres, newName: pg}\n"),
                 id="images-name-tag-digest-rules"),
    pytest.param(overlay("resources: [../base]\nreplicas:\n- {name: web, count: 5}\n"
                         "- {name: db, count: 2}\n"), id="replicas-by-name"),
    pytest.param(overlay("resources: [../base]\npatches:\n- path: p.yaml\n", p_yaml=patch("""\
        spec:
          template:
            spec:
              containers:
              - name: new
                image: added
              - name: app
                image: patched
                env: [{name: C, value: "3"}, {name: A, value: null}]
                args: [replaced]
                volumeMounts: [{name: extra, mountPath: /extra}]
              - name: sidecar
                $patch: delete
              volumes: [{name: extra, emptyDir: {}}]
              tolerations: [{key: b}]
              nodeSelector: {disk: ssd, gone: null}
        """)), id="strategic-merge-pod-spec-lists"),
    pytest.param(overlay("resources: [../base]\npatches:\n- path: p.yaml\n"
                         "  target: {kind: Deployment|StatefulSet}\n", p_yaml="""\
        apiVersion: any/v1
        kind: Anything
        metadata: {name: ignored, labels: {patched: "yes"}}
        spec:
          template:
            spec:
              containers:
              - {name: app, resources: {limits: {cpu: 100m}}}
        """), id="patch-with-target-selector-ignores-its-own-id"),
    pytest.param(overlay("resources: [../base]\npatchesStrategicMerge:\n- p.yaml\n- |\n"
                         "  apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: cfg}\n"
                         "  $patch: delete\n", p_yaml=patch("""\
        spec:
          template:
            $patch: replace
            spec:
              containers: [{name: only, image: only}]
        """)), id="patches-strategic-merge-file-inline-delete-replace"),
    pytest.param({**overlay("namespace: outer\nresources: [../mid]\npatches:\n- path: p.yaml\n",
                            p_yaml=PATCH_HEAD + "spec: {replicas: 7}\n"),
                  "mid/kustomization.yaml": "namespace: mid\nresources: [../base]\n"
                                            "labels: [{pairs: {layer: mid}}]\n"},
                 id="nested-namespaces-patch-finds-original-id"),
    pytest.param(overlay("resources: [../base, extra.yaml]\npatches:\n- path: p.yaml\n",
                         extra_yaml="apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x, namespace: ''}\n",
                         p_yaml="apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x, labels: {a: b}}\n"),
                 id="patch-drops-empty-namespace"),
    pytest.param(overlay("resources: [../base]\npatches:\n- target: {kind: Ingress}\n  patch: |\n"
                         "    apiVersion: v1\n    kind: X\n    metadata: {name: x, labels: {a: b}}\n"),
                 id="patch-target-selecting-nothing-changes-nothing"),
    pytest.param(overlay("namespace: prod\nresources: [../base, crb.yaml]\n", crb_yaml="""\
        apiVersion: rbac.authorization.k8s.io/v1
        kind: ClusterRoleBinding
        metadata: {name: web}
        roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: reader}
        subjects: [{kind: ServiceAccount, name: web, namespace: default}]
        """), id="subject-in-default-namespace-follows-service-account-without-namespace"),
    pytest.param({**overlay("resources: [../mid]\ncommonLabels: {team: b}\n"),
                  "mid/kustomization.yaml": "resources: [../base]\ncommonLabels: {team: a}\n"},
                 id="common-labels-twice-rewrite-every-shared-label"),
]


@pytest.mark.parametrize("kind", TREE_KINDS)
@pytest.mark.parametrize("files", SUPPORTED)
def test_native_render_equals_kubectl(tmp_path: Path, files: dict[str, str], kind: str) -> None:
    write(tmp_path / "k", files)
    expected = kubectl_render(tmp_path / "k", "o")
    write(tmp_path / "t", files)
    assert as_json(NativeRenderer(tree_of(tmp_path / "t", kind)).render("o")) == as_json(expected)


FALLBACKS = [
    pytest.param(overlay("resources: [../base]\nconfigMapGenerator: [{name: x, literals: [a=b]}]\n"),
                 "kustomization field configMapGenerator", id="generator-falls-back"),
    pytest.param(overlay("resources: [../base]\nnamePrefix: p-\n"), "namePrefix",
                 id="name-prefix-falls-back"),
    pytest.param(overlay("resources: [../base]\ncomponents: [../c]\n"), "components",
                 id="components-fall-back"),
    pytest.param(overlay("resources: [https://example.com/x.yaml]\n"), "resource",
                 id="remote-resource-falls-back"),
    pytest.param(overlay("resources: [../base]\npatches:\n- path: p.yaml\n"
                         "  target: {kind: Deployment}\n",
                         p_yaml="- {op: replace, path: /spec/replicas, value: 3}\n"),
                 "not a strategic merge patch", id="json6902-patch-falls-back"),
    pytest.param(overlay("resources: [../base]\npatches:\n- path: p.yaml\n", p_yaml=PATCH_HEAD
                         + "spec: {template: {spec: {containers: [{name: app, ports: "
                           "[{containerPort: 81}]}]}}}\n"),
                 "merge key unknown", id="patch-on-container-ports-falls-back"),
    pytest.param(overlay("resources: [../base]\npatches:\n- path: p.yaml\n"
                         "  target: {labelSelector: app=web}\n", p_yaml=PATCH_HEAD),
                 "patch target selector", id="label-selector-target-falls-back"),
    pytest.param(overlay("resources: [../base, extra.yaml]\n",
                         extra_yaml="apiVersion: v1\nkind: ConfigMap\nmetadata: {name: y}\n"
                                    "data: {flag: yes}\n"),
                 "YAML 1.1 boolean", id="yaml11-boolean-falls-back"),
    pytest.param(overlay("resources: [../base, missing.yaml]\n"), "not found",
                 id="missing-resource-falls-back-for-kubectl-to-report"),
    pytest.param({**overlay("resources: [../plain]\n"), "plain/x.yaml": OTHERS},
                 "0 kustomization files", id="directory-without-kustomization-falls-back"),
    pytest.param(overlay("resources: [../base]\nreplicas: [{name: nothing, count: 1}]\n"),
                 "no workload named", id="replicas-without-target-falls-back"),
    pytest.param({**overlay("resources: [../mid]\npatches:\n- path: p.yaml\n",
                            p_yaml=PATCH_HEAD.replace("{name: web}", "{name: web, labels: {team: b}}")),
                  "mid/kustomization.yaml": "resources: [../base]\ncommonLabels: {team: a}\n"},
                 "Kustomize shares", id="patch-to-label-shared-with-selector-falls-back"),
    pytest.param(overlay("resources: [../base]\nlabels:\n- pairs: {team: a}\n  includeSelectors: true\n"
                         "- pairs: {team: b}\n"),
                 "Kustomize shares", id="metadata-label-over-shared-selector-label-falls-back"),
    pytest.param(overlay("resources: [../base]\npatchesStrategicMerge:\n- p.yaml\n",
                         p_yaml=PATCH_HEAD.replace("{name: web}", "{name: web, labels: {app: null}}")),
                 "not text", id="null-label-in-patches-strategic-merge-falls-back"),
    pytest.param(overlay("resources: [../base, extra.yaml]\n",
                         extra_yaml="apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n"
                                    "  annotations: {replicas: 3}\n"),
                 "not text", id="annotation-number-falls-back"),
    pytest.param(overlay("resources: [../base]\npatches:\n- target: {kind: Deployment}\n"
                         "  patch: 'metadata: {name: any, annotations: {a: b}}'\n"),
                 "patch without kind/name", id="targeted-patch-without-kind-falls-back-for-kubectl-to-report"),
    pytest.param(overlay("resources: [../base]\npatches:\n- target: {kind: Deployment}\n"
                         "  patch: 'kind: Deployment\n\n    metadata: {name: any, labels: {app: null}}'\n"),
                 "not text", id="null-label-in-targeted-patch-falls-back"),
    pytest.param(overlay("resources: [../base]\npatches:\n- path: p.yaml\n",
                         p_yaml=patch("spec: {template: {spec: {containers: [{name: app, image: x, $patch: replace}]}}}\n")),
                 "replace on a list element", id="replace-directive-on-a-list-element-falls-back"),
    pytest.param(overlay("resources: [../base]\npatches:\n- path: p.yaml\n",
                         p_yaml=patch("$patch: delete\n") + "---\n" + patch("spec: {replicas: 2}\n")),
                 "delete before another document", id="delete-before-another-patch-document-falls-back"),
    pytest.param(overlay("resources: [../base]\npatches:\n- path: p.yaml\n",
                         p_yaml=patch("spec: {template: {spec: {initContainers: [{name: init, env: "
                                      "[{name: A, value: '1'}, {name: A, value: '2'}]}]}}}\n")),
                 "repeating name", id="new-env-list-repeating-a-name-falls-back"),
    pytest.param(overlay("resources: [../base]\npatches:\n- path: p.yaml\n",
                         p_yaml=patch("spec: {template: {spec: {initContainers: [{name: init, env: [{}]}]}}}\n")),
                 "lacking or repeating name", id="new-env-list-element-without-name-falls-back"),
]


@pytest.mark.parametrize("kind", TREE_KINDS)
@pytest.mark.parametrize(("files", "reason"), FALLBACKS)
def test_native_render_unsupported_falls_back(tmp_path: Path, files: dict[str, str],
                                              reason: str, kind: str) -> None:
    write(tmp_path, files)
    with pytest.raises(UnsupportedKustomization, match=reason):
        NativeRenderer(tree_of(tmp_path, kind)).render("o")


EXTRA = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: extra}\n"
SYMLINKED = [
    pytest.param(overlay("resources: [../base, extra.yaml]\n", real_yaml=EXTRA), {"o/extra.yaml": "real.yaml"},
                 None, id="resource-file-linked-inside-its-kustomization"),
    pytest.param(overlay("resources: [../linked-base]\n"), {"linked-base": "base"}, None,
                 id="resource-folder-linked-to-a-base"),
    pytest.param(overlay("resources: [../base]\npatches:\n- path: p.yaml\n",
                         real_yaml=PATCH_HEAD + "spec: {replicas: 3}\n"), {"o/p.yaml": "real.yaml"}, None,
                 id="patch-file-linked-inside-its-kustomization"),
    pytest.param({**overlay("resources: [../base, extra.yaml]\n"), "elsewhere/x.yaml": EXTRA},
                 {"o/extra.yaml": "../elsewhere/x.yaml"}, "resource file outside its kustomization",
                 id="resource-file-linked-outside-falls-back"),
    pytest.param({**overlay("resources: [../base]\npatches:\n- path: p.yaml\n"),
                  "elsewhere/p.yaml": PATCH_HEAD + "spec: {replicas: 3}\n"},
                 {"o/p.yaml": "../elsewhere/p.yaml"}, "patch file", id="patch-file-linked-outside-falls-back"),
]


@pytest.mark.parametrize(("files", "links", "reason"), SYMLINKED)
@pytest.mark.parametrize("via_linked_root", [False, True], ids=["real-root", "linked-root"])
def test_native_render_resolves_symlinks(tmp_path: Path, files: dict[str, str], links: dict[str, str],
                                         reason: str | None, via_linked_root: bool) -> None:
    """Linked files and folders resolve as Kustomize's loader resolves them (a file must
    stay within its kustomization), whether or not the tree's own path goes through a link."""
    tree = tmp_path / "tree"
    write(tree, files)
    for name, target in links.items():
        (tree / name).symlink_to(target)
    root = tree
    if via_linked_root:
        root = tmp_path / "link"
        root.symlink_to(tree)
    if reason is not None:
        with pytest.raises(UnsupportedKustomization, match=reason):
            NativeRenderer(DiskTree(str(root))).render("o")
    else:
        assert as_json(NativeRenderer(DiskTree(str(root))).render("o")) == as_json(kubectl_render(tree, "o"))


@pytest.mark.parametrize(
    ("image", "expected"),
    [
        pytest.param("nginx", ("nginx", "", ""), id="bare-name"),
        pytest.param("nginx:1.27", ("nginx", "1.27", ""), id="name-and-tag"),
        pytest.param("host:5000/a/b", ("host:5000/a/b", "", ""), id="registry-port-no-tag"),
        pytest.param("host:5000/a/b:v1@sha256:ff", ("host:5000/a/b", "v1", "sha256:ff"),
                     id="registry-port-tag-and-digest"),
        pytest.param("a/b@sha256:ff", ("a/b", "", "sha256:ff"), id="digest-only"),
    ],
)
def test_split_image_parts(image: str, expected: tuple[str, str, str]) -> None:
    assert split_image(image) == expected


@pytest.mark.parametrize(
    ("rule", "image", "expected"),
    [
        pytest.param({"name": "nginx", "newTag": "2"}, "nginx:1@sha256:aa", "nginx:2",
                     id="new-tag-drops-digest"),
        pytest.param({"name": "nginx", "digest": "sha256:bb"}, "nginx:1", "nginx@sha256:bb",
                     id="digest-drops-tag"),
        pytest.param({"name": "nginx", "newTag": "2", "digest": "sha256:bb"}, "nginx",
                     "nginx:2@sha256:bb", id="tag-and-digest-both-written"),
        pytest.param({"name": "nginx", "newName": "m/nginx"}, "nginx:1", "m/nginx:1",
                     id="new-name-keeps-tag"),
        pytest.param({"name": "nginx", "newTag": "2"}, "nginx-extra:1", "nginx-extra:1",
                     id="longer-name-does-not-match"),
        pytest.param({"name": "my.app", "newTag": "2"}, "myxapp:1", "myxapp:2",
                     id="dot-matches-any-character-as-in-kustomize"),
    ],
)
def test_image_rule_rewrite(rule: dict[str, str], image: str, expected: str) -> None:
    assert ImageRule(rule).rewrite(image) == expected


def test_render_native_splits_supported_and_fallback(tmp_path: Path) -> None:
    write(tmp_path, {**overlay("resources: [../base]\n"),
                     "gen/kustomization.yaml": "configMapGenerator: [{name: g, literals: [a=b]}]\n"})
    result = render_native(DiskTree(str(tmp_path)), ["o", "gen"])
    assert [o.overlay for o in result.outputs] == ["o"]
    assert list(result.fallback) == ["gen"]


def test_tree_renders_native_and_fallback_overlays_alike(tmp_path: Path) -> None:
    write(tmp_path, {**overlay("namespace: dev\nresources: [../base]\n"),
                     "gen/kustomization.yaml": "namespace: gen\n"
                                               "configMapGenerator: [{name: g, literals: [a=b]}]\n"})
    items = list(DirectorySource("d", str(tmp_path)).iter_items())
    resources = [i for i in items if isinstance(i, Resource)]
    assert len(resources) == len(items)
    by_overlay = {(overlay_folder(r), r.identity.kind, r.identity.name): r for r in resources}
    generated = [k for k in by_overlay if k[0] == "gen"]
    assert len(generated) == 1 and generated[0][2].startswith("g-")  # name hash: kubectl made it
    native = [r for r in resources if overlay_folder(r) == "o"]
    assert as_json(r.data for r in native) == as_json(kubectl_render(tmp_path, "o"))
    assert all(r.provenance.path.startswith("base/") and r.provenance.line for r in native)
    assert [(r.provenance.path, r.provenance.line) for r in resources if overlay_folder(r) == "gen"] == [
        ("gen/kustomization.yaml", 2)]
    assert all(r.provenance.rendered_by == "kustomize" for r in resources)
    # each object names what rendered it: in process, or kubectl/kustomize with its Kustomize version
    assert {renderer_of(r) for r in native} == {"in-process"}
    assert {renderer_of(r) for r in resources if overlay_folder(r) == "gen"} == {external_renderer("auto").label}
    assert external_renderer("auto").label.startswith(("kubectl kustomize v5.", "kustomize v5."))


def test_native_render_equals_kubectl_on_generated_corpus(tmp_path: Path) -> None:
    subprocess.run([sys.executable, MAKE_CORPUS, "--resources", "800", "--seed", "7",
                    "--out", str(tmp_path / "c")], check=True, capture_output=True)
    root = str(tmp_path / "c" / "repo")
    files = [f.relpath for f in walk_tree(root, PathFilter((), ()), {})]
    overlays = list(plan(DiskTree(root), files).overlays)
    result = render_native(DiskTree(root), overlays)
    assert KUBECTL is not None
    with ThreadPoolExecutor(4) as pool:
        expected = {o.overlay: o for o in pool.map(lambda o: render_overlay(KUBECTL, root, o, 300.0), overlays)}
    assert result.fallback == {} and len(result.outputs) == len(overlays) > 10
    for output in result.outputs:
        assert expected[output.overlay].error is None
        assert as_json(output.documents) == as_json(expected[output.overlay].documents), output.overlay
    assert os.path.isdir(root)


@pytest.mark.parametrize(("line", "expected"), [
    pytest.param('E1125 15:33:45.243354   23524 run.go:72] "command failed" err="accumulating resources: '
                 'lstat /r/missing.yaml: no such file or directory"',
                 "accumulating resources: lstat /r/missing.yaml: no such file or directory", id="kubectl-klog"),
    pytest.param('E0101 00:00:00.000001 1 run.go:72] "command failed" err="field \\"x\\" is not \\"y\\""',
                 'field "x" is not "y"', id="kubectl-quoted"),
    pytest.param("Error: accumulating resources: bad", "accumulating resources: bad", id="kustomize-binary"),
    pytest.param("something else", "something else", id="other"),
    pytest.param("panic: runtime error: invalid memory address or nil pointer dereference\n[signal SIGSEGV]\n\n"
                 "goroutine 1 [running]:\nmain.main()\n\tk8s.io/kubernetes/cmd/kubectl-sdk/kubectl.go:41 +0x85\n",
                 "kustomize crashed: runtime error: invalid memory address or nil pointer dereference", id="panic"),
    pytest.param('warning: ignored\nE1125 16:51:09.773856    7126 run.go:72] "command failed" err=<\n'
                 "\ttrouble configuring builtin HelmChartInflationGenerator with config: `\n\tname: x\n"
                 "\t`: must specify --enable-helm\n >\n",
                 "trouble configuring builtin HelmChartInflationGenerator with config: ` name: x `: "
                 "must specify --enable-helm", id="kubectl-several-lines"),
])
def test_renderer_error_keeps_kustomize_message(line: str, expected: str) -> None:
    assert renderer_error(line) == expected


def test_failing_overlay_error_is_kustomize_message(tmp_path: Path) -> None:
    write(tmp_path, {"base/kustomization.yaml": "resources: [missing.yaml]\n"})
    assert KUBECTL is not None
    output = render_overlay(KUBECTL, str(tmp_path), "base", 60.0)
    assert output.error is not None and output.error.startswith("accumulating resources")
    assert f"{tmp_path}/base/missing.yaml: no such file or directory" in output.error


def test_kustomize_plugin_configs_are_not_read_as_manifests(tmp_path: Path) -> None:
    write(tmp_path, {
        "app/kustomization.yaml": "resources: [deploy.yaml]\ntransformers: [labeller.yaml]\n",
        "app/deploy.yaml": DEPLOY,
        "app/labeller.yaml": "apiVersion: builtin\nkind: LabelTransformer\nmetadata: {name: add-team}\n"
                             "labels: {team: a}\nfieldSpecs: [{path: metadata/labels, create: true}]\n",
    })
    resources = [i for i in DirectorySource("d", str(tmp_path)).iter_items() if isinstance(i, Resource)]
    assert [(r.identity.kind, r.identity.name) for r in resources] == [("Deployment", "web")]
    assert resources[0].data["metadata"]["labels"]["team"] == "a"


@pytest.mark.parametrize("count", [1, 2])
def test_fallback_overlays_never_share_a_build(tmp_path: Path, count: int) -> None:
    """Two overlays that fall back to kubectl in one namespace: b refers to a ConfigMap named like
    the one a generates, which b itself does not have, so b's reference stays as written."""
    write(tmp_path, {
        "a/kustomization.yaml": "namespace: shared\nconfigMapGenerator:\n- {name: app-config, literals: [X=1]}\n",
        "b/kustomization.yaml": "namespace: shared\nresources: [deploy.yaml]\n"
                                "configMapGenerator:\n- {name: other, literals: [Y=1]}\n",
        "b/deploy.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  template:\n"
                         "    spec:\n      containers:\n      - name: app\n        image: nginx:1.27\n"
                         "        envFrom: [{configMapRef: {name: app-config}}]\n",
    })
    resources = []
    for index in range(count):
        source = DirectorySource("d", str(tmp_path), TreeOptions(shard=Shard(index, count)))
        resources += [i for i in source.iter_items() if isinstance(i, Resource)]
    [deploy] = [r for r in resources if r.identity.kind == "Deployment"]
    assert deploy.data == next(d for d in kubectl_render(tmp_path, "b") if d["kind"] == "Deployment")
    assert deploy.data["spec"]["template"]["spec"]["containers"][-1]["envFrom"] == [
        {"configMapRef": {"name": "app-config"}}]
