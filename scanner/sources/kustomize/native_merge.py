"""Strategic merge patches as Kustomize (kyaml's merge2) applies them, for known lists.

Maps merge key by key; a null patch value deletes the key; ``$patch: delete`` and
``$patch: replace`` work on maps and on list elements. A list is merged element by
element only where its merge key is known (the pod-spec lists of the built-in
workload kinds); lists known to be atomic are replaced. Merged lists hold the patch's
elements in the patch's order, then the target's elements the patch did not name.
A patch that meets any other list present in the target raises the fallback signal.
"""

from __future__ import annotations

from typing import Any

from scanner.sources.kustomize.native_ids import NativeResource
from scanner.sources.kustomize.native_yaml import UnsupportedKustomization

_POD_LISTS: dict[tuple[str, ...], str | None] = {  # merge key, or None: replaced whole
    ("containers",): "name", ("initContainers",): "name", ("ephemeralContainers",): "name",
    ("volumes",): "name", ("imagePullSecrets",): "name", ("tolerations",): None,
}
for _c in ("containers", "initContainers", "ephemeralContainers"):
    _POD_LISTS.update({(_c, "*", "env"): "name", (_c, "*", "volumeMounts"): "mountPath",
                       (_c, "*", "volumeDevices"): "devicePath", (_c, "*", "envFrom"): None,
                       (_c, "*", "args"): None, (_c, "*", "command"): None})

_POD_SPEC_AT: dict[tuple[str, str], tuple[str, ...]] = {
    ("v1", "Pod"): ("spec",),
    ("v1", "ReplicationController"): ("spec", "template", "spec"),
    ("v1", "PodTemplate"): ("template", "spec"),
    ("apps/v1", "Deployment"): ("spec", "template", "spec"),
    ("apps/v1", "StatefulSet"): ("spec", "template", "spec"),
    ("apps/v1", "DaemonSet"): ("spec", "template", "spec"),
    ("apps/v1", "ReplicaSet"): ("spec", "template", "spec"),
    ("batch/v1", "Job"): ("spec", "template", "spec"),
    ("batch/v1", "CronJob"): ("spec", "jobTemplate", "spec", "template", "spec"),
    ("batch/v1beta1", "CronJob"): ("spec", "jobTemplate", "spec", "template", "spec"),
}
_DELETE = object()


def list_strategies(api_version: str, kind: str) -> dict[tuple[str, ...], str | None]:
    """Path (``*`` for a list element) -> merge key (None: replace) of a kind's lists."""
    prefix = _POD_SPEC_AT.get((api_version, kind))
    if prefix is None:
        return {}
    return {prefix + path: key for path, key in _POD_LISTS.items()}


def apply_patch(target: NativeResource, patch: dict[str, Any]) -> bool:
    """Merge ``patch`` into ``target``; False when the patch deletes the whole object."""
    data = target.data
    kind, name, namespace = data["kind"], data["metadata"]["name"], data["metadata"].get("namespace")
    strategies = list_strategies(data["apiVersion"], kind)
    result = _merge_map(data, patch, (), strategies)
    if result is _DELETE:
        return False
    if not isinstance(result.get("metadata"), dict):
        raise UnsupportedKustomization("patch removes metadata")
    result["kind"], result["metadata"]["name"] = kind, name
    if not namespace:
        result["metadata"].pop("namespace", None)
    else:
        result["metadata"]["namespace"] = namespace
    target.data = result
    return True


def _merge_map(dest: dict[str, Any], patch: dict[str, Any], path: tuple[str, ...],
               strategies: dict[tuple[str, ...], str | None]) -> Any:
    directive = patch.get("$patch")
    if directive == "delete":
        return _DELETE
    if directive == "replace":
        if path and path[-1] == "*":  # kyaml keeps a replaced list element as it was
            raise UnsupportedKustomization("$patch: replace on a list element")
        return added({k: v for k, v in patch.items() if k != "$patch"}, drop_nulls=False,
                     path=path, strategies=strategies)
    if directive is not None:
        raise UnsupportedKustomization(f"$patch: {directive}")
    for key, value in patch.items():
        if key.startswith("$"):
            raise UnsupportedKustomization(f"patch directive {key}")
        current = dest.get(key)
        if value is None:
            dest.pop(key, None)
        elif key not in dest:
            dest[key] = added(value, path=(*path, key), strategies=strategies)
        elif isinstance(value, dict):
            if not isinstance(current, dict):
                raise UnsupportedKustomization(f"patch merges a mapping into {key}")
            merged = _merge_map(current, value, (*path, key), strategies)
            if merged is _DELETE:
                del dest[key]
            else:
                dest[key] = merged
        elif isinstance(value, list):
            if not isinstance(current, list):
                raise UnsupportedKustomization(f"patch merges a list into {key}")
            dest[key] = _merge_list(current, value, (*path, key), strategies)
        else:
            if isinstance(current, dict | list):
                raise UnsupportedKustomization(f"patch sets a scalar over {key}")
            dest[key] = value
    return dest


def _merge_list(dest: list[Any], patch: list[Any], path: tuple[str, ...],
                strategies: dict[tuple[str, ...], str | None]) -> list[Any]:
    if path not in strategies:
        raise UnsupportedKustomization(f"patch merges list {'.'.join(path)} (merge key unknown)")
    key = strategies[path]
    if key is None:
        return added(patch, drop_nulls=False)
    if not all(isinstance(e, dict) and isinstance(e.get(key), str) for e in dest):
        raise UnsupportedKustomization(f"list {'.'.join(path)} has elements without {key}")
    items = [e for e in patch if not (isinstance(e, dict) and e == {"$patch": "replace"})]
    if len(items) != len(patch):
        return added(items, path=path, strategies=strategies)
    by_key = {e[key]: e for e in dest}
    if len(by_key) != len(dest):
        raise UnsupportedKustomization(f"list {'.'.join(path)} repeats a {key}")
    result, named = [], set()
    for element in items:
        if not isinstance(element, dict) or not isinstance(element.get(key), str):
            raise UnsupportedKustomization(f"patch element of {'.'.join(path)} without {key}")
        value = element[key]
        if value in named:
            raise UnsupportedKustomization(f"patch repeats {key} {value!r}")
        named.add(value)
        if value not in by_key:
            if "$patch" in element:
                raise UnsupportedKustomization("$patch on an element the target lacks")
            result.append(added(element, path=(*path, "*"), strategies=strategies))
            continue
        merged = _merge_map(by_key[value], element, (*path, "*"), strategies)
        if merged is not _DELETE:
            result.append(merged)
    result.extend(e for e in dest if e[key] not in named)
    return result


def added(value: Any, drop_nulls: bool = True, path: tuple[str, ...] = (),
          strategies: dict[tuple[str, ...], str | None] | None = None) -> Any:
    """Patch content for a place the target does not have (at ``path``): nulls in maps dropped.

    With ``drop_nulls`` false (content that replaces, where kyaml's handling of nulls
    is not reproduced) a null raises the fallback signal instead. A list with a merge key
    (in ``strategies``) whose elements lack or repeat it raises it too: kyaml merges such
    elements into each other.
    """
    if isinstance(value, dict):
        out = {}
        for key, child in value.items():
            if key.startswith("$"):
                raise UnsupportedKustomization(f"patch directive {key} in new content")
            if child is None and not drop_nulls:
                raise UnsupportedKustomization("null in replacing patch content")
            if child is not None:
                out[key] = added(child, drop_nulls, (*path, key), strategies)
        return out
    if isinstance(value, list):
        if any(child is None for child in value):
            raise UnsupportedKustomization("null list element in a patch")
        key = (strategies or {}).get(path)
        if key is not None:
            names = [e.get(key) if isinstance(e, dict) else None for e in value]
            if not all(isinstance(n, str) for n in names) or len(set(names)) != len(names):
                raise UnsupportedKustomization(f"new list {'.'.join(path)} with elements lacking or repeating {key}")
        return [added(child, drop_nulls, (*path, "*"), strategies) for child in value]
    return value
