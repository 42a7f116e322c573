"""Documents -> resources: a document that cannot be a Kubernetes object is a located error, and the
rest of the file is still read."""

from __future__ import annotations

import pytest

from scanner.sources.documents import Origin, resources_from_text
from scanner.sources.provenance import ErrorRecord, Resource, SourceStats

GOOD = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: good, namespace: apps}\n"


@pytest.mark.parametrize(("document", "message"), [
    ("apiVersion: [v1]\nkind: Pod\nmetadata: {name: a}", "apiVersion must be a string, not a list"),
    ("apiVersion: v1\nkind: {a: Pod}\nmetadata: {name: a}", "kind must be a string, not a mapping"),
    ("apiVersion: 1\nkind: Pod\nmetadata: {name: a}", "apiVersion must be a string, not a number"),
    ("apiVersion: v1\nkind: Pod\nmetadata: [a]", "metadata must be a mapping, not a list"),
    ("apiVersion: v1\nkind: Pod\nmetadata: {name: [a]}", "metadata.name must be a string, not a list"),
    ("apiVersion: v1\nkind: Pod\nmetadata: {name: a, namespace: {x: 1}}",
     "metadata.namespace must be a string, not a mapping"),
    ("apiVersion: v1\nkind: Pod\nmetadata: {name: 5}", "metadata.name must be a string, not a number"),
    ("apiVersion: v1\nkind: Pod\nmetadata: {generateName: true}", "metadata.generateName must be a string, not a boolean"),
])
def test_a_document_that_cannot_be_an_object_is_a_located_error(document, message):
    stats = SourceStats()
    items = list(resources_from_text(f"{GOOD}---\n{document}\n---\n{GOOD}", "apps.yaml", Origin("repo", "git"), stats))
    errors = [i for i in items if isinstance(i, ErrorRecord)]
    assert [(e.kind, e.message, e.location.path, e.location.line) for e in errors] == [
        ("manifest", message, "apps.yaml", 5)]
    assert [i.identity.name for i in items if isinstance(i, Resource)] == ["good", "good"]
    assert (stats.errors, stats.resources) == (1, 2)


def test_a_list_item_that_cannot_be_an_object_names_the_item():
    text = ("apiVersion: v1\nkind: List\nitems:\n"
            "- {apiVersion: v1, kind: ConfigMap, metadata: {name: a}}\n"
            "- {apiVersion: v1, kind: ConfigMap, metadata: {name: b, namespace: [x]}}\n")
    items = list(resources_from_text(text, "dump.yaml", Origin("cluster", "export"), SourceStats()))
    assert [i.message for i in items if isinstance(i, ErrorRecord)] == [
        "List item 1: metadata.namespace must be a string, not a list"]
    assert [i.identity.name for i in items if isinstance(i, Resource)] == ["a"]


@pytest.mark.parametrize("document", [
    "name: values\nreplicas: 3",  # Helm values, CI files: not Kubernetes, skipped and counted
    "apiVersion: v2\nname: chart",  # a Helm Chart.yaml
    "kind: Config\nclusters: []",
])
def test_documents_without_api_version_and_kind_are_skipped(document):
    stats = SourceStats()
    assert list(resources_from_text(document, "x.yaml", Origin("repo", "git"), stats)) == []
    assert (stats.errors, stats.skipped["not-kubernetes"]) == (0, 1)


@pytest.mark.parametrize(("text", "line", "stream"), [
    pytest.param("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  name: b\n", 5, False,
                 id="block-mapping-repeated-key"),
    pytest.param("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, name: b}\n", 3, True,
                 id="flow-mapping-repeated-key-streamed"),
])
def test_a_repeated_key_keeps_its_last_value_with_a_located_warning(text, line, stream):
    stats = SourceStats()
    items = list(resources_from_text(f"{text}---\n{GOOD}", "cm.yaml", Origin("repo", "git"), stats, stream=stream))
    assert [(i.kind, i.message, i.location.line) for i in items if isinstance(i, ErrorRecord)] == [
        ("warning", 'mapping key "name" already defined: its last value is used', line)]
    assert [i.identity.name for i in items if isinstance(i, Resource)] == ["b", "good"]
    assert stats.errors == 0 and stats.resources == 2  # read, as Kyverno reads it: no error


CM = "apiVersion: v1\nkind: ConfigMap\n"


@pytest.mark.parametrize(("text", "expected"), [
    pytest.param(CM + "metadata:\n  labels:\n  name: a\n", [{"labels": {}, "name": "a"}], id="empty-then-sibling"),
    pytest.param(CM + "metadata:\n  name: a\n  labels:\n", [{"name": "a", "labels": {}}], id="empty-at-end"),
    pytest.param(CM + "metadata:\n  name: a\n  annotations: ~\n  labels: null\n",
                 [{"name": "a", "annotations": {}, "labels": {}}], id="null-scalars"),
    pytest.param(CM + "metadata:\n  name: a\n  labels: 'null'\n", [{"name": "a", "labels": "null"}],
                 id="quoted-null-is-text"),
    pytest.param(CM + "metadata:\n  name: a\n  labels: &none\nspec: {x: *none}\n", [{"name": "a", "labels": {}}],
                 id="libyaml-path-with-alias"),
    pytest.param("apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n"
                 "    name: a\n    labels:\n" + "# pad\n" * 60000, [{"name": "a", "labels": {}}],
                 id="list-dump-split-item-by-item"),
])
def test_null_maps_are_read_as_empty_mappings_on_every_reading_path(text, expected):
    items = list(resources_from_text(text, "x.yaml", Origin("repo", "git"), SourceStats()))
    assert [i.data["metadata"] for i in items if isinstance(i, Resource)] == [
        {**meta, "namespace": "default"} for meta in expected]


def test_null_maps_outside_their_keys_stay_null():
    text = CM + "metadata:\n  name: a\ndata:\nspec:\n  template:\n    metadata:\n      labels:\n    other:\n"
    [resource] = list(resources_from_text(text, "x.yaml", Origin("repo", "git"), SourceStats()))
    assert resource.data["data"] == {}
    assert resource.data["spec"] == {"template": {"metadata": {"labels": {}}, "other": None}}
