"""Manifests read as Kyverno reads them: sigs.k8s.io/yaml on go-yaml v2, then JSON."""

from __future__ import annotations

import pytest

from scanner.errors import ManifestError
from scanner.yamldoc import YamlLimits, iter_documents

COMPOSERS = pytest.mark.parametrize(
    "limits", [YamlLimits(), YamlLimits(stream_bytes=1)], ids=["c-composer", "event-composer"])


def _data(text: str, limits: YamlLimits) -> list[object]:
    return [doc.data for doc in iter_documents(text, "f.yaml", limits=limits)]


@COMPOSERS
@pytest.mark.parametrize(("scalar", "expected"), [
    pytest.param("y", True, id="y-is-true"),
    pytest.param("N", False, id="n-is-false"),
    pytest.param("Off", False, id="off-is-false"),
    pytest.param("1e3", 1000.0, id="exponent-without-dot-is-float"),
    pytest.param("1.0e3", 1000.0, id="exponent-without-sign-is-float"),
    pytest.param("-.5", -0.5, id="signed-float-without-leading-digit"),
    pytest.param("14398205e3", 14398205000.0, id="hash-like-label-value-is-float"),
    pytest.param("0o17", 15, id="0o-octal"),
    pytest.param("0X1F", 31, id="upper-case-hex-prefix"),
    pytest.param("0B101", 5, id="upper-case-binary-prefix"),
    pytest.param("010", 8, id="leading-zero-octal"),
    pytest.param("08", 8.0, id="leading-zero-not-octal-is-float"),
    pytest.param("1_000", 1000, id="underscores-dropped"),
    pytest.param("99999999999999999999", 1e20, id="int-beyond-64-bits-is-float"),
    pytest.param("18446744073709551615", 2**64 - 1, id="unsigned-64-bit-int"),
    pytest.param("-9223372036854775809", -9223372036854775809.0, id="int-below-64-bits-is-float"),
    pytest.param("+18446744073709551615", 18446744073709551615.0, id="signed-unsigned-64-bit-is-float"),
    pytest.param("1" * 300, float("1" * 300), id="300-digit-int-is-float"),
    pytest.param("1" * 5000, "1" * 5000, id="5000-digit-int-stays-text"),
    pytest.param("-" + "9" * 5000, "-" + "9" * 5000, id="5000-digit-negative-int-stays-text"),
    pytest.param("0x1" + "0" * 16, "0x1" + "0" * 16, id="hex-beyond-64-bits-stays-text"),
    pytest.param("0x" + "f" * 5000, "0x" + "f" * 5000, id="5000-digit-hex-stays-text"),
    pytest.param("0" + "7" * 5000, "0" + "7" * 5000, id="5000-digit-octal-stays-text"),
    pytest.param("0" * 40 + "17", 15, id="leading-zeros-octal-in-range"),
    pytest.param("1:20", "1:20", id="no-base-60-int"),
    pytest.param("190:20:30.15", "190:20:30.15", id="no-base-60-float"),
    pytest.param("1e400", "1e400", id="float-overflow-stays-text"),
    pytest.param("2001-12-14t21:59:43.10-05:00", "2001-12-14t21:59:43.10-05:00", id="timestamp-stays-text"),
    pytest.param("<<", "<<", id="merge-word-as-value-is-text"),
])
def test_iter_documents_plain_scalars_resolve_as_go_yaml_v2(scalar, expected, limits):
    [data] = _data(f"v: {scalar}\n", limits)
    value = data["v"]  # type: ignore[index]
    assert type(value) is type(expected) and value == expected


@COMPOSERS
@pytest.mark.parametrize(("text", "expected"), [
    pytest.param("v: !Ref x\n", {"v": "x"}, id="unknown-tag-on-scalar-is-its-text"),
    pytest.param("v: !GetAtt [a, b]\n", {"v": ["a", "b"]}, id="unknown-tag-on-sequence-ignored"),
    pytest.param("v: !!str {a: 1}\n", {"v": {"a": 1}}, id="scalar-tag-on-mapping-ignored"),
    pytest.param("v: !!set {a, b}\n", {"v": {"a": None, "b": None}}, id="set-is-a-mapping-of-nulls"),
    pytest.param("v: !!omap [{a: 1}]\n", {"v": [{"a": 1}]}, id="omap-is-a-list-of-mappings"),
    pytest.param("v: !!timestamp 2015-01-01\n", {"v": "2015-01-01"}, id="timestamp-tag-gives-text"),
    pytest.param("v: !!binary aGk=\n", {"v": "hi"}, id="binary-decoded-to-text"),
    pytest.param("v: !!binary gIGC\n", {"v": "\ufffd" * 3}, id="binary-not-utf8-replaced-per-byte"),
    pytest.param("v: !!bool y\n", {"v": True}, id="bool-tag-accepts-y"),
    pytest.param("v: !!float 1\n", {"v": 1.0}, id="float-tag-accepts-int"),
    pytest.param("1.0: a\n1e6: b\n.inf: c\n.nan: d\n-0.0: e\n",
                 {"1": "a", "1e+06": "b", ".inf": "c", ".nan": "d", "-0": "e"},
                 id="float-keys-as-go-formats-them"),
    pytest.param("y: 1\nx: 2\n010: 3\n", {"true": 1, "x": 2, "8": 3}, id="bool-and-int-keys-as-text"),
    pytest.param("b: &b {a: 1, c: 1}\nm:\n  <<: *b\n  a: 2\n", {"b": {"a": 1, "c": 1}, "m": {"a": 2, "c": 1}},
                 id="key-after-merge-overrides-it"),
    pytest.param("m:\n  a: 1\n  <<: {a: 2, b: 2}\n", {"m": {"a": 2, "b": 2}}, id="merge-overrides-key-before-it"),
    pytest.param("m:\n  <<: [{a: 1}, {a: 2, b: 2}]\n", {"m": {"a": 1, "b": 2}}, id="first-merged-mapping-wins"),
    pytest.param("x: &a 1\ny1: *a\nz: &a 2\ny2: *a\n", {"x": 1, "y1": 1, "z": 2, "y2": 2},
                 id="anchor-defined-again-replaces-it"),
])
def test_iter_documents_tags_keys_and_merges_as_sigs_yaml(text, expected, limits):
    assert _data(text, limits) == [expected]


@COMPOSERS
@pytest.mark.parametrize(("text", "message"), [
    pytest.param("~: a\n", "f.yaml:1:1: invalid YAML: unsupported mapping key: null", id="null-key"),
    pytest.param("? [a]\n: b\n", "f.yaml:1:3: invalid YAML: unsupported mapping key: a sequence",
                 id="sequence-key"),
    pytest.param("v: .inf\n", "f.yaml:1:4: invalid YAML: '.inf' is not a JSON number", id="infinity-value"),
    pytest.param("- .NaN\n", "f.yaml:1:3: invalid YAML: '.NaN' is not a JSON number", id="nan-value"),
    pytest.param("v: !!int 1.5\n", "f.yaml:1:4: invalid YAML: '1.5' is not a valid int", id="int-tag-on-float"),
    pytest.param("v: !!binary ==\n", "f.yaml:1:4: invalid YAML: !!binary value is not valid base64",
                 id="binary-not-base64"),
    pytest.param("m:\n  <<: 1\n", "f.yaml:2:7: invalid YAML: a merge key (<<) needs a mapping or a list of "
                 "mappings (while constructing a mapping)", id="merge-of-a-scalar"),
])
def test_iter_documents_refuses_what_sigs_yaml_cannot_turn_into_json(text, message, limits):
    with pytest.raises(ManifestError) as info:
        _data(text, limits)
    assert str(info.value) == message


def test_iter_documents_anchor_defined_again_keeps_documents_and_errors_once():
    text = "a: " + "x" * 50 + "\n---\np: &a 1\nq: &a 2\nr: *a\n---\nb: 2\n"
    errors: list[ManifestError] = []
    docs = list(iter_documents(text, "f.yaml", limits=YamlLimits(max_document_bytes=40),
                               on_error=errors.append))
    assert [(doc.index, doc.data) for doc in docs] == [(1, {"p": 1, "q": 2, "r": 2}), (2, {"b": 2})]
    assert len(errors) == 1 and "document too large" in str(errors[0])

