"""YAML for the in-process Kustomize renderer: read files as ``kubectl kustomize`` would.

Kustomize reads YAML 1.2 (go-yaml v3) and writes it back; the scanner reads the
rendered text with YAML 1.1 rules. Some plain scalars mean different things to the
two (``y``/``yes``/``on``/``off``/``no``/``n`` are booleans only in 1.1), so the
renderer's output would carry them as quoted strings while a direct read gives
booleans. Files holding such scalars, anchors or very deep nesting are not rendered
in process (:class:`UnsupportedKustomization`).
"""

from __future__ import annotations

import os
from typing import Any

import yaml

from scanner.sources.file_tree import FileTree
from scanner.yamlblock import read_block_documents
from scanner.yamldoc import DEFAULT_LIMITS, _Loader, nesting_bound


class UnsupportedKustomization(Exception):
    """The overlay uses something the in-process renderer does not reproduce exactly."""

    def __init__(self, reason: str, path: str = "") -> None:
        super().__init__(f"{path}: {reason}" if path else reason)
        self.reason = reason
        self.path = path


_YAML12_BOOLS = frozenset({"true", "True", "TRUE", "false", "False", "FALSE"})
_MAX_NESTING = 2_000  # composed inline by the scanner's own reader up to this depth


class _NativeLoader(_Loader):  # type: ignore[misc,valid-type]
    """The scanner's loader, refusing scalars whose meaning differs in YAML 1.2."""

    def construct_yaml_bool(self, node: yaml.ScalarNode) -> bool:
        if node.value not in _YAML12_BOOLS:
            raise UnsupportedKustomization(f"YAML 1.1 boolean {node.value!r}")
        return bool(super().construct_yaml_bool(node))


_NativeLoader.add_constructor("tag:yaml.org,2002:bool", _NativeLoader.construct_yaml_bool)


def parse_documents(text: bytes | str, path: str) -> list[Any]:
    """The non-empty documents of ``text``; anything unusual raises the fallback signal."""
    if len(text) > DEFAULT_LIMITS.max_file_bytes:
        raise UnsupportedKustomization("file too large", path)
    if (b"&" in text) if isinstance(text, bytes) else ("&" in text):
        raise UnsupportedKustomization("YAML anchors", path)  # kustomize expands them
    read = read_block_documents(text, _YAML12_BOOLS, _MAX_NESTING)
    if read is not None:
        return [data for data, _ in read if data is not None]
    bound = nesting_bound(text)
    if bound > _MAX_NESTING:
        raise UnsupportedKustomization("deeply nested YAML", path)
    loader = _NativeLoader(text)
    construct = loader.constructor(False, bound)
    documents = []
    try:
        while loader.check_node():
            data = construct(loader.get_node())
            if data is not None:
                documents.append(data)
    except UnsupportedKustomization as exc:
        raise UnsupportedKustomization(exc.reason, path) from None
    except (yaml.YAMLError, RecursionError) as exc:
        raise UnsupportedKustomization(f"not valid YAML: {exc}", path) from exc
    finally:
        loader.dispose()
    return documents


class FileCache:
    """Parsed files by absolute path; callers get fresh copies they may change."""

    def __init__(self, tree: FileTree) -> None:
        self.tree = tree
        self._documents: dict[str, list[Any] | UnsupportedKustomization] = {}
        self._real_folders: dict[str, str] = {}

    def realpath(self, path: str) -> str:
        """``os.path.realpath`` of a normalized absolute path, its folder's resolved once: a
        tree's files share a few folders, and resolving a path checks every folder on the way."""
        folder, name = os.path.split(path)
        real = self._real_folders.get(folder)
        if real is None:
            real = self._real_folders[folder] = self.tree.realpath(folder)
        joined = os.path.join(real, name)
        return self.tree.realpath(joined) if self.tree.islink(joined) else joined

    def documents(self, path: str) -> list[Any]:
        cached = self._documents.get(path)
        if cached is None:
            try:
                cached = parse_documents(self.tree.read(path), path)
            except OSError as exc:
                cached = UnsupportedKustomization(f"cannot read: {exc.strerror}", path)
            except UnsupportedKustomization as exc:
                cached = exc
            self._documents[path] = cached
        if isinstance(cached, UnsupportedKustomization):
            raise cached
        return [clone(d) for d in cached]


def clone(value: Any) -> Any:
    """A deep copy of JSON-shaped data (dicts, lists, scalars), faster than ``copy``."""
    if type(value) is dict:
        return {k: clone(v) for k, v in value.items()}
    if type(value) is list:
        return [clone(v) for v in value]
    return value
