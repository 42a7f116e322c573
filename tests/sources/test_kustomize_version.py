"""The external renderer is used only when its Kustomize is v5; otherwise each overlay says why."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from scanner.sources.directory import DirectorySource
from scanner.sources.kustomize.version import ExternalRenderer, external_renderer
from scanner.sources.provenance import ErrorRecord, Resource

KUBECTL_V5 = json.dumps({"clientVersion": {"gitVersion": "v1.32.4"}, "kustomizeVersion": "v5.5.0"})
KUBECTL_V4 = json.dumps({"clientVersion": {"gitVersion": "v1.24.0"}, "kustomizeVersion": "v4.5.4"})


def fake_programs(folder: Path, programs: dict[str, str]) -> None:
    """Programs printing ``output`` for any arguments (``!`` as output: exit 1)."""
    folder.mkdir()
    for name, output in programs.items():
        script = "exit 1\n" if output == "!" else f"printf '%s\\n' {shlex.quote(output)}\n"  # a shell builtin
        (folder / name).write_text(f"#!/bin/sh\n{script}")
        (folder / name).chmod(0o755)


@pytest.mark.parametrize(("programs", "expected"), [
    pytest.param({"kubectl": KUBECTL_V5},
                 ExternalRenderer(("kubectl", "kustomize"), "kubectl kustomize v5.5.0"), id="kubectl-v5"),
    pytest.param({"kustomize": "v5.4.3", "kubectl": KUBECTL_V5},
                 ExternalRenderer(("kustomize", "build"), "kustomize v5.4.3"), id="kustomize-v5-first"),
    pytest.param({"kustomize": "{Version:kustomize/v4.5.7 GitCommit:56d82a8 BuildDate:2022-08-02}",
                  "kubectl": KUBECTL_V5},
                 ExternalRenderer(("kubectl", "kustomize"), "kubectl kustomize v5.5.0"), id="kustomize-v4-passed-over"),
    pytest.param({"kustomize": "{Version:kustomize/v4.5.7 GitCommit:56d82a8}"},
                 ExternalRenderer(problem="not supported: kustomize v4.5.7 (kustomize); kustomize v5 required"),
                 id="kustomize-v4-only"),
    pytest.param({"kubectl": KUBECTL_V4},
                 ExternalRenderer(problem="not supported: kustomize v4.5.4 (kubectl); kustomize v5 required"),
                 id="kubectl-with-kustomize-v4"),
    pytest.param({"kustomize": "v6.0.0", "kubectl": "!"},
                 ExternalRenderer(problem="not supported: kustomize v6.0.0 (kustomize), kubectl (its kustomize "
                                          "version could not be read); kustomize v5 required"),
                 id="newer-major-and-unreadable-version"),
    pytest.param({}, ExternalRenderer(problem="no Kustomize renderer (kustomize or kubectl) on PATH"),
                 id="none"),
])
def test_external_renderer_needs_kustomize_v5(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               programs: dict[str, str], expected: ExternalRenderer) -> None:
    fake_programs(tmp_path / "bin", programs)
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    assert external_renderer("auto") == expected


def test_overlay_without_a_v5_renderer_is_a_located_error_and_read_raw(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    fake_programs(tmp_path / "bin", {"kubectl": KUBECTL_V4})
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    root = tmp_path / "repo"
    (root / "app").mkdir(parents=True)
    (root / "app/kustomization.yaml").write_text("namespace: x\nresources: [cm.yaml]\n")
    (root / "app/cm.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n")
    items = list(DirectorySource("d", str(root)).iter_items())
    errors = [(e.kind, str(e.location), e.message) for e in items if isinstance(e, ErrorRecord)]
    assert errors == [("renderer-missing", "app/kustomization.yaml",
                       "not supported: kustomize v4.5.4 (kubectl); kustomize v5 required; raw files scanned instead")]
    [resource] = [i for i in items if isinstance(i, Resource)]
    assert (resource.provenance.path, resource.provenance.overlay) == ("app/cm.yaml", None)
