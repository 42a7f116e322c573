"""``sources[].cluster``: the cluster a source's look-ups see (by default the source's own)."""

from __future__ import annotations

import pathlib

import pytest

from scanner.config import load_config
from scanner.errors import ConfigError


@pytest.mark.parametrize(("sources", "clusters"), [
    pytest.param("[{name: a, export: {path: e}}, {name: b, directory: {path: d}}]", ["a", "b"],
                 id="each-source-is-its-own-cluster"),
    pytest.param("[{name: a, export: {path: e}}, {name: b, directory: {path: d}, cluster: a}]", ["a", "a"],
                 id="a-source-joins-another-s-cluster"),
    pytest.param("[{name: a, export: {path: e}, cluster: prod}, {name: b, directory: {path: d}, cluster: prod}]",
                 ["prod", "prod"], id="sources-name-one-cluster"),
])
def test_config_source_cluster(tmp_path: pathlib.Path, sources: str, clusters: list[str]) -> None:
    path = tmp_path / "scanner.yaml"
    path.write_text(f"policies: [{{path: p}}]\nsources: {sources}\n")
    assert [s.cluster_name for s in load_config(path, env={}).sources] == clusters


@pytest.mark.parametrize("value", [
    pytest.param("3", id="number"),
    pytest.param("''", id="empty"),
    pytest.param("[a]", id="list"),
])
def test_config_source_cluster_must_be_a_name(tmp_path: pathlib.Path, value: str) -> None:
    path = tmp_path / "scanner.yaml"
    path.write_text(f"policies: [{{path: p}}]\nsources:\n  - name: a\n    export: {{path: e}}\n    cluster: {value}\n")
    with pytest.raises(ConfigError, match=r"sources\[0\]\.cluster: must be a non-empty string") as info:
        load_config(path, env={})
    assert f"{path}:5:" in str(info.value)
