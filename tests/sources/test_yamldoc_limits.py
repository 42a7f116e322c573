from __future__ import annotations

import pytest

from scanner.errors import ManifestError
from scanner.yamldoc import YamlLimits, iter_documents, load_documents

BOMB = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 10)}]\n" for i in range(8)
)
STREAM = YamlLimits(stream_bytes=1)  # forces the event-driven composer
LIST = ("apiVersion: v1\nitems:\n- apiVersion: v1\n  kind: Pod\n  metadata: {name: a}\n"
        "- apiVersion: v1\n  kind: Pod\n  metadata: {name: b}\nkind: List\nmetadata: {}\n")


def _read(text: str, limits: YamlLimits, split: bool = False):
    errors: list[ManifestError] = []
    docs = list(iter_documents(text, "f.yaml", limits=limits, split_lists=split,
                               on_error=errors.append))
    return [(d.index, d.item, d.line, d.data) for d in docs], [str(e) for e in errors]


@pytest.mark.parametrize("limits", [YamlLimits(), STREAM], ids=["c-composer", "event-composer"])
@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param(BOMB + "---\nok: 1\n", "values once aliases are expanded", id="alias-bomb"),
        pytest.param("[" * 100_000 + "]" * 100_000, "nested too deeply", id="deep-flow-nesting"),
        pytest.param("- " * 50_000 + "x", "nested too deeply", id="deep-compact-sequence"),
        pytest.param("a: &a [*a]\n---\nok: 1\n", "recursive alias", id="recursive-alias"),
        pytest.param("a: " + "x" * 2000 + "\n---\nok: 1\n", "document too large",
                     id="big-document"),
    ],
)
def test_iter_documents_limits_reject_only_the_bad_document(text, message, limits):
    size = 1000 if "too large" in message and "aliases" not in message else 10**7
    limits = YamlLimits(max_document_bytes=size, stream_bytes=limits.stream_bytes)
    docs, errors = _read(text, limits)
    assert len(errors) == 1 and message in errors[0] and errors[0].startswith("f.yaml:")
    assert [d[3] for d in docs] in ([], [{"ok": 1}])


@pytest.mark.parametrize("limits", [YamlLimits(), STREAM], ids=["c-composer", "event-composer"])
def test_iter_documents_limit_without_handler_raises(limits):
    with pytest.raises(ManifestError, match="nested too deeply"):
        list(iter_documents("[" * 300 + "]" * 300, "f.yaml", limits=limits))


@pytest.mark.parametrize("limits", [YamlLimits(), STREAM], ids=["c-composer", "event-composer"])
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param(LIST, [(0, 0, 3, "a"), (0, 1, 6, "b")], id="kubectl-list-items-with-lines"),
        pytest.param("---\nkind: PodList\nitems:\n- {kind: Pod, metadata: {name: a}}\n",
                     [(0, 0, 4, "a")], id="kind-before-items"),
        pytest.param('{"kind": "ConfigMapList", "items": [{"metadata": {"name": "j"}}]}',
                     [(0, 0, 1, "j")], id="json-list"),
        pytest.param("kind: List\nitems: []\n", [], id="empty-list-yields-nothing"),
    ],
)
def test_iter_documents_split_lists_yields_items(text, expected, limits):
    docs, errors = _read(text, limits, split=True)
    assert errors == []
    assert [(i, item, line, data["metadata"]["name"]) for i, item, line, data in docs] == expected


@pytest.mark.parametrize("limits", [YamlLimits(), STREAM], ids=["c-composer", "event-composer"])
def test_iter_documents_non_list_with_items_stays_whole(limits):
    docs, _ = _read("kind: Foo\nitems: [1, 2]\nz: 3\n", limits, split=True)
    assert docs == [(0, None, 1, {"kind": "Foo", "items": [1, 2], "z": 3})]


@pytest.mark.parametrize("limits", [YamlLimits(), STREAM], ids=["c-composer", "event-composer"])
def test_iter_documents_syntax_error_keeps_earlier_documents(limits):
    seen = []
    with pytest.raises(ManifestError) as info:
        for doc in iter_documents("a: 1\n---\nb: [\n", "f.yaml", limits=limits):
            seen.append(doc.data)
    assert seen == [{"a": 1}]
    assert info.value.location is not None and info.value.location.line == 4


@pytest.mark.parametrize("limits", [YamlLimits(), STREAM], ids=["c-composer", "event-composer"])
@pytest.mark.parametrize(("text", "expected"), [
    pytest.param(b'a: 1\n---\nb: "caf\xe9"\n', "f.yaml:3: invalid YAML: invalid trailing UTF-8 octet "
                 "(the file must be UTF-8 text)", id="latin-1-byte"),
    pytest.param(b"a: 1\n\xff\xfe: 2\n", "f.yaml:2: invalid YAML: invalid leading UTF-8 octet "
                 "(the file must be UTF-8 text)", id="stray-bytes"),
    pytest.param("a: 1\nb: \x07\n", "f.yaml:2: invalid YAML: control characters are not allowed", id="control"),
])
def test_iter_documents_unreadable_characters_name_their_line(text, expected, limits):
    with pytest.raises(ManifestError) as info:
        list(iter_documents(text, "f.yaml", limits=limits))
    assert str(info.value) == expected


def test_iter_documents_event_composer_matches_c_composer(tmp_path):
    text = LIST + "---\nx: &anchor {a: 1}\ny: *anchor\nz: [1, 2.5, yes, null, '3']\n"
    assert _read(text, YamlLimits(), True) == _read(text, STREAM, True)


def test_load_documents_unchanged_for_policies():
    docs = load_documents("a: 1\n---\n---\nb: 2\n", "p.yaml", keep_nodes=True)
    assert [(d.index, d.line, d.data) for d in docs] == [(0, 1, {"a": 1}), (2, 4, {"b": 2})]
    assert docs[1].locate("/b").line == 4


def _block_maps(depth: int, indent: int) -> str:
    return "".join(" " * (indent * i) + f"k{i}:\n" for i in range(depth)) + " " * (indent * depth) + "v\n"


SHAPES = {
    "block-maps-indent-1": lambda n: _block_maps(n, 1),
    "block-maps-indent-2": lambda n: _block_maps(n, 2),
    "compact-sequences": lambda n: "- " * n + "x\n",
    "flow-sequences": lambda n: "a: " + "[" * n + "x" + "]" * n + "\n",
    "flow-maps": lambda n: "{a: " * n + "x" + "}" * n + "\n",
    "empty-flow-inside": lambda n: "[" * n + "[]" + "]" * n + "\n",
    "flow-in-block": lambda n: "a:\n  b:\n  - c: " + "[" * n + "]" * n + "\n",
    "dense-flow-scalars": lambda n: "[" + ",".join("a" * n) + "]",
    "single-pair-maps": lambda n: "[" + ", ".join(["a: b"] * n) + "]\n",
    "nested-complex-keys": lambda n: "? " * n + "x\n",
}


@pytest.mark.parametrize("shape", SHAPES)
def test_limits_verdict_matches_the_node_walk_at_every_size(shape):
    """Texts judged within the limits by their size and indentation alone must be exactly those
    a walk of the node graph accepts: documents just inside and just beyond each limit."""
    import yaml

    from scanner.yamldoc.limits import _tree_size

    limits = YamlLimits(max_depth=12, max_nodes=40)
    for n in range(1, 30):
        text = SHAPES[shape](n)
        total, depth = _tree_size(yaml.compose(text, Loader=yaml.SafeLoader), 10**6)
        beyond = depth > limits.max_depth or total > limits.max_nodes
        try:
            _, errors = _read(text, limits)
        except ManifestError as exc:  # a key that is a mapping: refused once read, as Kyverno does
            assert "unsupported mapping key" in str(exc)
            errors = []
        assert bool(errors) == beyond, (n, total, depth, errors)
