"""kubectl List dumps read item by item: the same documents, lines and errors as a whole parse."""

from __future__ import annotations

import subprocess

import pytest

import scanner.yamldoc as yamldoc
import scanner.yamldoc.lists as yamllists
from scanner.errors import ManifestError
from scanner.sources.export import ExportSource
from scanner.sources.paths import Shard
from scanner.yamldoc.lists import split_list_items


def kubectl_list(count: int) -> str:
    """A List as ``kubectl get -o yaml`` prints it, built from kubectl's own output."""
    items = []
    for i in range(count):
        out = subprocess.run(["kubectl", "create", "deployment", f"web-{i}", "--image=nginx:1.25",
                              "--dry-run=client", "-o", "yaml"], capture_output=True, text=True, check=True).stdout
        items.append("- " + out.rstrip("\n").replace("\n", "\n  "))
    return "apiVersion: v1\nitems:\n" + "\n".join(items) + "\nkind: List\nmetadata:\n  resourceVersion: \"\"\n"


@pytest.fixture
def no_threshold(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(yamllists, "SPLIT_MIN_BYTES", 0)


def whole(text: str) -> list[tuple]:
    pieces = list(yamldoc.iter_documents(text, "x.yaml", keep_nodes=True, split_lists=True))  # nodes: whole parse
    return [(d.data, d.line, d.item) for d in pieces]


def test_yamllist_items_equal_the_whole_parse(no_threshold: None) -> None:
    text = kubectl_list(3)
    assert len(split_list_items(text) or []) == 3
    fast = [(d.data, d.line, d.item) for d in yamldoc.iter_documents(text, "x.yaml", split_lists=True)]
    assert fast == whole(text)
    assert [line for _, line, _ in fast] == [3, 3 + text.split("\n- ")[1].count("\n") + 1,
                                             fast[2][1]]


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("apiVersion: v1\nkind: List\nitems: []\n", id="flow-items"),
        pytest.param("apiVersion: v1\nkind: List\nitems:\n  - {kind: Pod}\n", id="indented-sequence"),
        pytest.param("kind: List\nitems:\n- &a {kind: Pod}\n- *a\n", id="anchors"),
        pytest.param("kind: List\nitems:\n- {kind: Pod}\n---\nkind: Pod\n", id="several-documents"),
        pytest.param("kind: Deployment\nitems:\n- {kind: Pod}\n", id="not-a-list-kind"),
        pytest.param("kind: List\nitems:\n- {kind: Pod}\n - x\n", id="odd-indentation"),
    ],
)
def test_yamllist_other_layouts_are_not_split(text: str) -> None:
    assert split_list_items(text) is None


def test_yamllist_error_is_located_in_the_file(no_threshold: None) -> None:
    text = "apiVersion: v1\nkind: List\nitems:\n- kind: Pod\n  metadata: {name: a}\n- kind: Pod\n  metadata: {name: [\n"
    with pytest.raises(ManifestError) as info:
        list(yamldoc.iter_documents(text, "x.yaml", split_lists=True))
    assert info.value.location is not None and info.value.location.line == 8


def test_yamllist_shards_share_one_export_file(tmp_path, no_threshold: None) -> None:
    path = tmp_path / "export.yaml"
    path.write_text(kubectl_list(5))
    names = []
    for index in range(2):
        source = ExportSource("c", [str(path)], shard=Shard(index, 2))
        names.append([r.identity.name for r in source.iter_items()])
    assert names == [["web-0", "web-2", "web-4"], ["web-1", "web-3"]]


@pytest.mark.parametrize("wanted", [{0, 2, 4}, {1, 3}, {4}, set()])
def test_yamllist_wanted_items_keep_their_index_and_line(wanted: set[int]) -> None:
    text = kubectl_list(5)
    every = split_list_items(text) or []
    assert split_list_items(text, wanted.__contains__) == [item for item in every if item.index in wanted]
