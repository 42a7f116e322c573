"""The fast tree constructor gives exactly what PyYAML's constructor gives, or the same error."""

from __future__ import annotations

import math
import re

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from scanner.errors import ManifestError
from scanner.yamldoc import Loader, load_documents

# plain scalars whose YAML 1.1 type is not what they look like, and other traps
TRICKY = ["yes", "No", "on", "OFF", "y", "n", "~", "null", "Null", "", "0777", "0o17", "0x1F", "1_000", "1:20",
          "190:20:30", ".inf", "-.Inf", ".NaN", "1e3", "1.5e+3", "+12", "-0", "2001-12-14", "=", "<<", "!x",
          "&a", "*a", "true", "False", "3.", ".5", "0b101", "- x", "a: b", "#c", "'q'", '"q"', "x\ty", " lead",
          "trail ", "multi\nline", "é", "\u2028"]
SCALARS = st.one_of(st.sampled_from(TRICKY), st.text(max_size=8), st.integers(), st.booleans(), st.none(),
                    st.floats(allow_nan=False, allow_infinity=False))
DATA = st.recursive(SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.one_of(st.sampled_from(TRICKY), st.text(max_size=6)), inner,
                                                 max_size=4)), max_leaves=20)
STYLES = st.sampled_from([{}, {"default_flow_style": True}, {"default_style": '"'}, {"default_style": "'"},
                          {"default_style": "|"}, {"width": 4}])


def both(text: str) -> tuple[object, object]:
    """(construct_tree, construct_document) of every document of ``text``; a document that
    cannot be constructed gives the text of its error."""
    loader = Loader(text)
    nodes = []
    while loader.check_node():
        nodes.append(loader.get_node())
    return [_outcome(loader.construct_tree, n) for n in nodes], [_outcome(loader.construct_document, n) for n in nodes]


def _outcome(construct, node) -> object:
    try:
        return construct(node)
    except yaml.YAMLError as exc:  # the problem, not where: the two may meet a bad value in another order
        problem = str(getattr(exc, "problem", None) or exc)  # nor which value (it names it)
        return "error: " + re.sub(r"'[^']*'", "'...'", problem)


def same(a: object, b: object) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)  # type: ignore[index]
    if isinstance(a, list | tuple):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))  # type: ignore[arg-type]
    return a == b


@settings(max_examples=400, deadline=None)
@given(DATA, STYLES)
def test_construct_tree_equals_construct_document_for_dumped_data(data: object, style: dict) -> None:
    text = yaml.safe_dump(data, allow_unicode=True, **style)
    tree, document = both(text)
    assert same(tree, document)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(TRICKY), min_size=1, max_size=6))
def test_construct_tree_equals_construct_document_for_plain_scalars(words: list[str]) -> None:
    lines = [f"k{i}: {w}" for i, w in enumerate(words)] + [f"- {w}" for w in words]
    for text in ("\n".join(lines[:len(words)]), "\n".join(lines[len(words):])):
        try:
            tree, document = both(text)
        except yaml.YAMLError:
            continue  # not YAML at all: both loaders refuse it (the reader reports it)
        assert same(tree, document)


@pytest.mark.parametrize("text", [
    pytest.param("base: &b {a: 1}\nmerged:\n  <<: *b\n  c: 2\n", id="merge-key-with-alias"),
    pytest.param("merged:\n  <<: {a: 1}\n  c: 2\n", id="merge-key-inline"),
    pytest.param("a: !!str 12\nb: !!int '7'\nc: !!float '1'\nd: !!binary aGk=\n", id="explicit-core-tags"),
    pytest.param("s: !!set {a, b}\n", id="set-tag"),
    pytest.param("1: a\n2.5: b\ntrue: c\n1e3: d\n.inf: e\n", id="non-string-keys"),
    pytest.param("a: !Ref x\nb: !GetAtt [c, d]\ne: !!set {f}\n", id="uninterpreted-tags"),
    pytest.param("a: 2001-12-14t21:59:43.10-05:00\n", id="timestamp-stays-text"),
    pytest.param("a: [1, {b: [2, {c: null}]}]\n", id="nested-flow"),
])
def test_construct_tree_equals_construct_document_for_special_nodes(text: str) -> None:
    tree, document = both(text)
    assert same(tree, document)


@pytest.mark.parametrize("text", [
    pytest.param("~: x\n", id="null-key"),
    pytest.param("? [a, b]\n: c\n", id="sequence-key"),
    pytest.param("a: !!int 1.5\n", id="explicit-tag-disagrees"),
    pytest.param("a: .inf\n", id="infinity-value"),
    pytest.param("a: 1\na: 2\n", id="duplicate-key"),
    pytest.param("x:\n  k: 1\n  k: 2\n", id="nested-duplicate-key"),
])
def test_load_documents_errors_are_the_same_with_either_constructor(text: str) -> None:
    tree_loader, document_loader = Loader(text), Loader(text)
    with pytest.raises(yaml.YAMLError) as tree_error:
        tree_loader.construct_tree(tree_loader.get_single_node())
    with pytest.raises(yaml.YAMLError) as document_error:
        document_loader.construct_document(document_loader.get_single_node())
    assert str(tree_error.value) == str(document_error.value)
    with pytest.raises(ManifestError, match=r"f\.yaml:\d+:\d+: invalid YAML"):
        load_documents(text, "f.yaml")
