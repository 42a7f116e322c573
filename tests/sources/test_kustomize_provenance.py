"""A resource rendered from an overlay points at the file and line that define it, names the
overlay and the patches that changed it, with either renderer (in process, ``kubectl kustomize``)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from scanner.sources.directory import DirectorySource
from scanner.sources.kustomize.origin import ORIGIN_ANNOTATION
from scanner.sources.kustomize.version import external_renderer
from scanner.sources.provenance import ErrorRecord, Resource
from scanner.sources.tree import TreeOptions
from scanner.yamldoc import iter_documents
from tests.sources.conftest import overlay_folder, renderer_of

# the base: a Service (line 1) and, after it, a Deployment (line 8) in one file
BASE_APP = """\
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  ports: [{port: 80}]
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  template:
    spec:
      containers: [{name: app, image: nginx}]
"""
REPLICAS = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec: {replicas: 3}\n"
EXTRA = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: extra}\ndata: {a: b}\n"

BASE = {
    "base/kustomization.yaml": "resources: [app.yaml]\n",
    "base/app.yaml": BASE_APP,
}


def _overlays(extra: str) -> dict[str, str]:
    """dev renders the base as it is; prod patches the Deployment and adds a file of its own.
    ``extra`` is added to both kustomizations (a name prefix leaves them to kubectl)."""
    return {
        "overlays/dev/kustomization.yaml": f"namespace: dev\n{extra}resources: [../../base]\n",
        "overlays/prod/kustomization.yaml": f"namespace: prod\n{extra}resources: [../../base, extra.yaml]\n"
                                            "patches: [{path: replicas.yaml}]\n",
        "overlays/prod/replicas.yaml": REPLICAS,
        "overlays/prod/extra.yaml": EXTRA,
    }


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def _scan(root: Path, **options) -> tuple[list[Resource], list[ErrorRecord]]:
    items = list(DirectorySource("d", str(root), TreeOptions(**options)).iter_items())
    return ([i for i in items if isinstance(i, Resource)], [i for i in items if isinstance(i, ErrorRecord)])


def _where(resources: list[Resource]) -> set[tuple]:
    return {(overlay_folder(r), r.identity.kind, r.provenance.path, r.provenance.line, r.provenance.patches)
            for r in resources}


BASE_WITH_TWO_OVERLAYS = {
    ("overlays/dev", "Service", "base/app.yaml", 1, ()),
    ("overlays/dev", "Deployment", "base/app.yaml", 8, ()),
    ("overlays/prod", "Service", "base/app.yaml", 1, ()),
    ("overlays/prod", "Deployment", "base/app.yaml", 8, ("overlays/prod/replicas.yaml",)),
    ("overlays/prod", "ConfigMap", "overlays/prod/extra.yaml", 1, ()),
}


@pytest.mark.parametrize(("extra", "external"), [
    pytest.param("", False, id="in-process-renderer-points-at-the-base"),
    pytest.param("namePrefix: x-\n", True, id="kubectl-renderer-points-at-the-base"),
])
def test_overlay_resources_point_at_the_defining_file_and_line(tmp_path: Path, extra: str, external: bool) -> None:
    _write(tmp_path, {**BASE, **_overlays(extra)})
    resources, errors = _scan(tmp_path)
    assert errors == []
    assert _where(resources) == BASE_WITH_TWO_OVERLAYS
    assert all(r.provenance.rendered_by == "kustomize" for r in resources)
    assert {renderer_of(r) for r in resources} == {external_renderer("auto").label if external else "in-process"}


@pytest.mark.parametrize("extra", [
    pytest.param("", id="in-process-output-equals-kubectl"),
    pytest.param("namePrefix: x-\n", id="origin-annotations-are-taken-off"),
])
def test_overlay_objects_are_what_kubectl_prints(tmp_path: Path, extra: str) -> None:
    _write(tmp_path, {**BASE, **_overlays(extra)})
    resources, _ = _scan(tmp_path)
    for overlay in ("overlays/dev", "overlays/prod"):
        printed = subprocess.run(["kubectl", "kustomize", str(tmp_path / overlay)], check=True,
                                 capture_output=True, text=True).stdout
        assert [r.data for r in resources if overlay_folder(r) == overlay] == \
            [d.data for d in iter_documents(printed)]
    assert not any(ORIGIN_ANNOTATION in str(r.data) for r in resources)


@pytest.mark.parametrize(("files", "expected"), [
    pytest.param({"o/kustomization.yaml": "resources: [../base]\n"
                                          "patches: [{path: p.yaml, target: {kind: Deployment}}]\n",
                  "o/p.yaml": "- {op: add, path: /spec/replicas, value: 2}\n"},
                 {("o", "Service", "base/app.yaml", 1, ()),
                  ("o", "Deployment", "base/app.yaml", 8, ("o/p.yaml",))},
                 id="json6902-patch-with-target-names-its-file"),
    pytest.param({"o/kustomization.yaml": "namePrefix: a-\nresources: [../base]\n"
                                          "patchesStrategicMerge: [p.yaml]\n",
                  "o/p.yaml": REPLICAS},
                 {("o", "Service", "base/app.yaml", 1, ()),
                  ("o", "Deployment", "base/app.yaml", 8, ("o/p.yaml",))},
                 id="strategic-merge-patch-by-name-under-a-prefix"),
    pytest.param({"o/kustomization.yaml": "resources: [../base]\n"
                                          "configMapGenerator:\n- name: one\n  literals: [a=b]\n"
                                          "- name: settings\n  literals: [c=d]\n"},
                 {("o", "Service", "base/app.yaml", 1, ()),
                  ("o", "Deployment", "base/app.yaml", 8, ()),
                  ("o", "ConfigMap", "o/kustomization.yaml", 3, ()),
                  ("o", "ConfigMap", "o/kustomization.yaml", 5, ())},
                 id="generated-configmap-points-at-its-generator-entry"),
    pytest.param({"o/kustomization.yaml": "resources: [../mid]\n",
                  "mid/kustomization.yaml": "resources: [../base]\npatches: [{path: r.yaml}]\n",
                  "mid/r.yaml": REPLICAS},
                 {("o", "Service", "base/app.yaml", 1, ()),
                  ("o", "Deployment", "base/app.yaml", 8, ("mid/r.yaml",))},
                 id="patch-of-an-intermediate-kustomization-is-named"),
])
def test_overlay_provenance_cases(tmp_path: Path, files: dict[str, str], expected: set[tuple]) -> None:
    _write(tmp_path, {**BASE, **files})
    resources, errors = _scan(tmp_path)
    assert errors == []
    assert _where(resources) == expected


COMPONENT = ("apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\n"
             "patches: [{path: p.yaml, target: {kind: Deployment}}]\n")
PATCH_LABEL = "- {op: add, path: /metadata/labels, value: {tier: web}}\n"


@pytest.mark.parametrize(("kustomization", "line"), [
    pytest.param("resources:\n- ../base\n- missing.yaml\n", 3, id="missing-resource-located-at-its-entry"),
    pytest.param("resources: [../base]\npatches:\n- path: gone.yaml\n", 3, id="missing-patch-located-at-its-entry"),
    pytest.param("resources: [../base]\nunknownField: 1\n", 1, id="other-failure-located-at-the-file"),
])
def test_failing_overlay_error_is_located(tmp_path: Path, kustomization: str, line: int) -> None:
    _write(tmp_path, {**BASE, "ok/kustomization.yaml": "resources: [../base]\n",
                      "broken/kustomization.yaml": kustomization})
    resources, errors = _scan(tmp_path)
    assert [(e.kind, e.location.path, e.location.line) for e in errors] == [
        ("render", "broken/kustomization.yaml", line)]
    assert {overlay_folder(r) for r in resources} == {"ok"}


@pytest.mark.parametrize(("files", "options", "overlays", "error_paths"), [
    pytest.param({"o/kustomization.yaml": "resources: [../base]\ncomponents: [../comp]\n",
                  "comp/kustomization.yaml": COMPONENT, "comp/p.yaml": PATCH_LABEL,
                  "lonely/kustomization.yaml": COMPONENT, "lonely/p.yaml": PATCH_LABEL},
                 {}, {"o"}, set(), id="components-are-not-rendered-on-their-own"),
    pytest.param({"o/kustomization.yaml": "resources: [../base]\n"},
                 {"kustomize_roots": ("base",)}, {"o", "base"}, set(),
                 id="listed-root-is-rendered-though-referenced"),
    pytest.param({"o/kustomization.yaml": "resources: [../base]\n"},
                 {}, {"o"}, set(), id="referenced-base-alone-is-not-an-entry-point"),
    pytest.param({"o/kustomization.yaml": "resources: [../base]\n"},
                 {"kustomize_roots": ("nowhere",)}, {"o"}, {"nowhere"},
                 id="listed-root-without-kustomization-is-an-error"),
    pytest.param({"o/kustomization.yaml": "resources: [../base]\n",
                  "broken/kustomization.yaml": "resources: [missing.yaml]\n"},
                 {}, {"o"}, {"broken/kustomization.yaml"},
                 id="failing-overlay-is-located-and-others-go-on"),
])
def test_entry_points(tmp_path: Path, files: dict[str, str], options: dict, overlays: set[str],
                      error_paths: set[str]) -> None:
    _write(tmp_path, {**BASE, **files})
    resources, errors = _scan(tmp_path, **options)
    assert {overlay_folder(r) for r in resources} == overlays
    assert {e.location.path for e in errors} == error_paths
    assert all(e.kind == "render" and e.location.line == 1 for e in errors if e.location.path.endswith(".yaml"))
    assert not any("scanner-kustomize-" in e.message for e in errors)  # kustomize's words about the overlay
    assert all(r.provenance.path == "base/app.yaml" for r in resources)


def test_component_patch_is_named(tmp_path: Path) -> None:
    _write(tmp_path, {**BASE, "o/kustomization.yaml": "resources: [../base]\ncomponents: [../comp]\n",
                      "comp/kustomization.yaml": COMPONENT, "comp/p.yaml": PATCH_LABEL})
    resources, errors = _scan(tmp_path)
    assert errors == []
    deployment = next(r for r in resources if r.identity.kind == "Deployment")
    assert (deployment.provenance.path, deployment.provenance.patches) == ("base/app.yaml", ("comp/p.yaml",))
    assert deployment.data["metadata"]["labels"] == {"tier": "web"}


INLINE_COMPONENT = ("apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\npatches:\n"
                    "- patch: |-\n    apiVersion: apps/v1\n    kind: Deployment\n    metadata: {name: web}\n"
                    "    spec: {replicas: 2}\n")


def test_inline_patch_of_a_component_names_the_component(tmp_path: Path) -> None:
    _write(tmp_path, {**BASE, "o/kustomization.yaml": "resources: [../base]\ncomponents: [../comp]\n",
                      "comp/kustomization.yaml": INLINE_COMPONENT})
    resources, errors = _scan(tmp_path)
    assert errors == []
    assert _where(resources) == {("o", "Service", "base/app.yaml", 1, ()),
                                 ("o", "Deployment", "base/app.yaml", 8, ("comp/kustomization.yaml",))}


# files whose documents are placed in odd ways: empty documents, comments, a leading marker, a
# document end, a timestamp (read by the loader rather than the block reader)
PLACED = {
    "base/kustomization.yaml": "resources: [a.yaml, b.yaml, c.yaml]\n",
    "base/a.yaml": "# leading comment\n---\n---\n" + EXTRA.replace("extra", "a1") + "---\n# only a comment\n---\n"
                   + EXTRA.replace("extra", "a2") + "...\n---\n" + REPLICAS,
    "base/b.yaml": "\n\n" + EXTRA.replace("extra", "b1") + "---\n~\n---\n" + EXTRA.replace("extra", "b2"),
    "base/c.yaml": EXTRA.replace("extra", "c1").replace("{a: b}", "{when: '2001-12-14'}") + "---\n"
                   + EXTRA.replace("extra", "c2"),
    "overlays/one/kustomization.yaml": "resources: [../../base]\nnamespace: one\n",
}


@pytest.mark.parametrize("files", [pytest.param(BASE | _overlays(""), id="base-and-overlays"),
                                   pytest.param(PLACED, id="odd-documents")])
def test_rendered_objects_are_placed_as_their_files_read_alone_place_them(tmp_path: Path, files: dict) -> None:
    """Where the in-process renderer read an object (its document's index and line) is where
    the file read on its own (``iter_documents``) places that document."""
    from dataclasses import replace

    from scanner.sources.file_tree import DiskTree
    from scanner.sources.kustomize.locate import OriginLocator
    from scanner.sources.kustomize.native import render_native
    from scanner.sources.kustomize.plan import plan

    _write(tmp_path, files)
    tree = DiskTree(str(tmp_path))
    render_plan = plan(tree, sorted(files))
    native = render_native(tree, list(render_plan.overlays))
    assert not native.fallback and native.outputs
    located = 0
    for output in native.outputs:
        kustomization = render_plan.files[output.overlay]
        for data, origin in zip(output.documents, output.origins, strict=True):
            assert origin.place is not None
            read_again = OriginLocator(tree, render_plan.kustomizations)
            assert (read_again.locate(output.overlay, kustomization, origin, data)
                    == read_again.locate(output.overlay, kustomization, replace(origin, place=None), data))
            located += 1
    assert located == sum(len(o.documents) for o in native.outputs) > 0
