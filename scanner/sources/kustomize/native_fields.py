"""Kustomize's field transformers: namespace, labels, annotations, replicas, images.

Field specs are Kustomize's built-in defaults (v5): a group/version/kind selector, a
slash-separated path (``[]`` marks a list, and a list met on the way is entered
element by element) and whether missing maps are created.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from scanner.sources.kustomize.native_ids import Location, NativeResource, is_cluster_scoped
from scanner.sources.kustomize.native_yaml import UnsupportedKustomization

FieldSpec = tuple[str, str, str, tuple[str, ...], bool]  # group, version, kind, path, create

_WORKLOADS = [("", "v1", "ReplicationController"), ("", "", "Deployment"), ("", "", "ReplicaSet"),
              ("", "", "DaemonSet"), ("apps", "", "StatefulSet"), ("batch", "", "Job")]
_AFFINITY = [f"spec/template/spec/affinity/{a}/{w}" for a in ("podAffinity", "podAntiAffinity")
             for w in ("preferredDuringSchedulingIgnoredDuringExecution/podAffinityTerm"
                       "/labelSelector/matchLabels",
                       "requiredDuringSchedulingIgnoredDuringExecution/labelSelector/matchLabels")]
_AFFINITY.append("spec/template/spec/topologySpreadConstraints/labelSelector/matchLabels")


def _spec(group: str, version: str, kind: str, path: str, create: bool) -> FieldSpec:
    return group, version, kind, tuple(path.split("/")), create


TEMPLATE_LABELS: tuple[FieldSpec, ...] = (
    _spec("", "", "", "metadata/labels", True),
    *(_spec(g, v, k, "spec/template/metadata/labels", True) for g, v, k in _WORKLOADS),
    _spec("apps", "", "StatefulSet", "spec/volumeClaimTemplates[]/metadata/labels", True),
    _spec("batch", "", "CronJob", "spec/jobTemplate/metadata/labels", True),
    _spec("batch", "", "CronJob", "spec/jobTemplate/spec/template/metadata/labels", True),
)
COMMON_LABELS: tuple[FieldSpec, ...] = (
    _spec("", "v1", "Service", "spec/selector", True),
    _spec("", "v1", "ReplicationController", "spec/selector", True),
    _spec("", "", "Deployment", "spec/selector/matchLabels", True),
    *(_spec("apps", "", "Deployment", p, False) for p in _AFFINITY),
    _spec("", "", "ReplicaSet", "spec/selector/matchLabels", True),
    _spec("", "", "DaemonSet", "spec/selector/matchLabels", True),
    _spec("apps", "", "StatefulSet", "spec/selector/matchLabels", True),
    *(_spec("apps", "", "StatefulSet", p, False) for p in _AFFINITY),
    _spec("batch", "", "Job", "spec/selector/matchLabels", False),
    _spec("batch", "", "CronJob", "spec/jobTemplate/spec/selector/matchLabels", False),
    _spec("policy", "", "PodDisruptionBudget", "spec/selector/matchLabels", False),
    _spec("networking.k8s.io", "", "NetworkPolicy", "spec/podSelector/matchLabels", False),
    _spec("networking.k8s.io", "", "NetworkPolicy", "spec/ingress/from/podSelector/matchLabels",
          False),
    _spec("networking.k8s.io", "", "NetworkPolicy", "spec/egress/to/podSelector/matchLabels",
          False),
    *TEMPLATE_LABELS,
)
METADATA_LABELS: tuple[FieldSpec, ...] = (_spec("", "", "", "metadata/labels", True),)
COMMON_ANNOTATIONS: tuple[FieldSpec, ...] = (
    _spec("", "", "", "metadata/annotations", True),
    *(_spec(g if k == "Job" else "", v, k, "spec/template/metadata/annotations", True)
      for g, v, k in _WORKLOADS),
    _spec("batch", "", "CronJob", "spec/jobTemplate/metadata/annotations", True),
    _spec("batch", "", "CronJob", "spec/jobTemplate/spec/template/metadata/annotations", True),
)
NAMESPACE_FIELDS: tuple[FieldSpec, ...] = (
    _spec("apiregistration.k8s.io", "", "APIService", "spec/service/namespace", True),
    _spec("apiextensions.k8s.io", "", "CustomResourceDefinition",
          "spec/conversion/webhook/clientConfig/service/namespace", False),
)
REPLICA_KINDS = ("Deployment", "ReplicationController", "ReplicaSet", "StatefulSet")

Setter = Callable[[dict[str, Any], str, bool, Location], None]


def apply_field_specs(r: NativeResource, specs: tuple[FieldSpec, ...], setter: Setter) -> None:
    group, _, version = r.api_version.rpartition("/")
    for g, v, k, path, create in specs:
        if (g and g != group) or (v and v != version) or (k and k != r.kind):
            continue
        _walk(r.data, path, create, setter, ())


def _walk(node: Any, path: tuple[str, ...], create: bool, setter: Setter,
          location: Location) -> None:
    if isinstance(node, list):
        for index, element in enumerate(node):
            _walk(element, path, create, setter, (*location, index))
        return
    if not isinstance(node, dict):
        raise UnsupportedKustomization(f"field spec path {'/'.join(path)} meets a scalar")
    name, is_list = (path[0][:-2], True) if path[0].endswith("[]") else (path[0], False)
    if len(path) == 1 and not is_list:
        setter(node, name, create, (*location, name))
        return
    child = node.get(name)
    if child is None:
        if name in node and (not create or is_list):
            raise UnsupportedKustomization(f"field spec path {'/'.join(path)} meets null")
        if not create or is_list:
            return
        child = node[name] = {}
    _walk(child, path[1:], create, setter, (*location, name))


def set_map_entries(r: NativeResource, specs: tuple[FieldSpec, ...],
                    values: dict[str, str]) -> None:
    """Set ``values`` in the maps the field specs reach (created when allowed).

    An entry added where its key was missing is one node shared by all those places
    of the object (see :class:`NativeResource`); an entry that exists is overwritten.
    """
    added: dict[str, list[Location]] = {key: [] for key in values}

    def setter(parent: dict[str, Any], key: str, create: bool, location: Location) -> None:
        current = parent.get(key)
        if current is None:
            if key in parent and not create:
                raise UnsupportedKustomization(f"null {key} where labels are set")
            if not create:
                return
            current = parent[key] = {}
        if not isinstance(current, dict):
            raise UnsupportedKustomization(f"{key} is not a mapping")
        for name in values:
            if name not in current:
                added[name].append((*location, name))
        current.update(values)

    apply_field_specs(r, specs, setter)
    r.check_shared()
    r.shared.extend(tuple(places) for places in added.values() if len(places) > 1)


def scalar_setter(value: Any) -> Setter:
    def setter(parent: dict[str, Any], key: str, create: bool, _location: Location) -> None:
        if key not in parent and not create:
            return
        if isinstance(parent.get(key), dict | list):
            raise UnsupportedKustomization(f"{key} is not a scalar")
        parent[key] = value
    return setter


def set_namespace(r: NativeResource, namespace: str) -> None:
    r.remember_id()
    if not is_cluster_scoped(r.api_version, r.kind):
        r.data["metadata"]["namespace"] = namespace
    specs = NAMESPACE_FIELDS
    if r.kind == "Namespace" and r.api_version == "v1":
        specs = (*specs, _spec("", "", "Namespace", "metadata/name", True))
    apply_field_specs(r, specs, scalar_setter(namespace))
    if r.kind in ("RoleBinding", "ClusterRoleBinding"):
        subjects = r.data.get("subjects")
        if subjects is None:
            return
        if not isinstance(subjects, list) or not all(isinstance(s, dict) for s in subjects):
            raise UnsupportedKustomization("subjects is not a list of mappings")
        for subject in subjects:
            if subject.get("name") == "default":
                subject["namespace"] = namespace


def set_replicas(resources: list[NativeResource], name: str, count: int) -> None:
    found = False
    for r in resources:
        if r.kind in REPLICA_KINDS and any(n == name for n, _ in r.ids()):
            found = True
            spec = r.data.get("spec")
            if spec is None:
                spec = r.data["spec"] = {}
            if not isinstance(spec, dict) or isinstance(spec.get("replicas"), dict | list):
                raise UnsupportedKustomization("spec.replicas cannot be set")
            spec["replicas"] = count
    if not found:
        raise UnsupportedKustomization(f"replicas: no workload named {name}")


_IMAGE_NAME = re.compile(r"^[A-Za-z0-9._/:-]+$")


class ImageRule:
    """One ``images`` entry: which image references it matches and what it writes."""

    def __init__(self, entry: dict[str, Any]) -> None:
        name = entry.get("name")
        if not isinstance(name, str) or not _IMAGE_NAME.match(name):
            raise UnsupportedKustomization(f"image name {name!r}")
        self.pattern = re.compile("^" + name + r"(:[a-zA-Z0-9_.{}-]*)?(@sha256:[a-zA-Z0-9_.{}-]*)?$")
        self.new_name = entry.get("newName") or ""
        self.new_tag = entry.get("newTag") or ""
        self.digest = entry.get("digest") or ""

    def rewrite(self, image: str) -> str:
        if not self.pattern.match(image):
            return image
        name, tag, digest = split_image(image)
        if self.new_name:
            name = self.new_name
        if self.new_tag and self.digest:
            tag, digest = self.new_tag, self.digest
        elif self.new_tag:
            tag, digest = self.new_tag, ""
        elif self.digest:
            tag, digest = "", self.digest
        return name + (":" + tag if tag else "") + ("@" + digest if digest else "")

    def apply(self, r: NativeResource) -> None:
        if r.kind != "CustomResourceDefinition":
            self._walk(r.data)

    def _walk(self, node: Any) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                self._walk(value)
                if key in ("containers", "initContainers") and isinstance(value, list):
                    for container in value:
                        self._container(container)
        elif isinstance(node, list):
            for value in node:
                self._walk(value)

    def _container(self, container: Any) -> None:
        if not isinstance(container, dict):
            raise UnsupportedKustomization("container is not a mapping")
        if "image" in container:
            image = container["image"]
            if not isinstance(image, str):
                raise UnsupportedKustomization("image is not text")
            container["image"] = self.rewrite(image)


def split_image(image: str) -> tuple[str, str, str]:
    """name, tag, digest of an image reference, as Kustomize splits it."""
    slash = image.find("/")
    offset = slash if slash > 0 else 0
    search = image[offset:]
    at, colon = search.find("@"), search.find(":")
    if colon < 0 and at < 0:
        return image, "", ""
    if at >= 0 and (at < colon or colon < 0):
        return image[:offset + at], "", image[offset + at + 1:]
    if at >= 0 and colon >= 0:
        return (image[:offset + colon], image[offset + colon + 1:offset + at],
                image[offset + at + 1:])
    return image[:offset + colon], image[offset + colon + 1:], ""
