"""The ``images`` context variable: the images of a pod-bearing resource's containers, parsed as
Kyverno's image extractors parse them (spec 7.5)."""

from __future__ import annotations

from typing import Any

from scanner.engine.imageref import ImageReferenceError, parse_image

_IMAGE_KINDS = {
    "Pod": ("spec",),
    "Deployment": ("spec", "template", "spec"),
    "DaemonSet": ("spec", "template", "spec"),
    "StatefulSet": ("spec", "template", "spec"),
    "ReplicaSet": ("spec", "template", "spec"),
    "ReplicationController": ("spec", "template", "spec"),
    "Job": ("spec", "template", "spec"),
    "CronJob": ("spec", "jobTemplate", "spec", "template", "spec"),
}


def compute_images(resource: dict) -> dict | None:
    """The ``images`` variable of a pod-bearing resource (spec 7.5), or None for other kinds.

    Walks the resource as Kyverno's image extractors do (``pkg/utils/api/image.go``): a
    container without a text ``name``, a container or spec that is not a map, or a container
    list that is neither a list nor a map fails the whole variable (``ImageReferenceError``),
    as does an image that cannot be parsed; a missing or blank image is left out. Empty
    ``registry``, ``tag`` and ``digest`` fields are left out, as Kyverno's JSON leaves them.
    """
    path = _IMAGE_KINDS.get(str(resource.get("kind")))
    if path is None:
        return None
    images: dict[str, dict] = {}
    for group in ("initContainers", "containers", "ephemeralContainers"):
        found: dict[str, dict] = {}
        _extract_images(resource, [], [*path, group], found)
        if found:
            images[group] = found
    return images


def _extract_images(node: Any, at: list[str], fields: list[str], found: dict[str, dict]) -> None:
    if node is None:
        return
    if not fields:  # a container list's members
        members = (enumerate(node) if isinstance(node, list) else node.items() if isinstance(node, dict)
                   else None)
        if members is None:
            raise ImageReferenceError("invalid type")
        for key, container in members:
            if container is None:
                continue
            if not isinstance(container, dict):
                raise ImageReferenceError("invalid image config")
            name = container.get("name")
            if not isinstance(name, str):
                raise ImageReferenceError("invalid key")
            image = container.get("image")
            if not isinstance(image, str) or not image.strip():
                continue
            try:
                info = parse_image(image)
            except ImageReferenceError as exc:
                raise ImageReferenceError(f"invalid image '{image}' ({exc})") from None
            entry = {"registry": info.registry, "path": info.path, "name": info.name, "tag": info.tag,
                     "digest": info.digest, "reference": info.reference,
                     "referenceWithTag": info.reference_with_tag,
                     "jsonPointer": "/" + "/".join([*at, str(key), "image"])}
            found[name] = {k: v for k, v in entry.items() if v or k not in _OMITTED_WHEN_EMPTY}
        return
    if not isinstance(node, dict):
        raise ImageReferenceError("invalid image config")
    _extract_images(node.get(fields[0]), [*at, fields[0]], fields[1:], found)


_OMITTED_WHEN_EMPTY = frozenset({"registry", "tag", "digest"})
