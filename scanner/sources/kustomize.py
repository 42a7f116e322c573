"""Kustomize overlays: which directories to render, which raw files they cover, rendering.

An overlay is a directory with a ``kustomization.yaml`` that no other kustomization of
the tree refers to and that is not a ``kind: Component`` (a component is only ever part of
another build); a kustomization the config lists as a root is rendered as an entry point
too, even when another overlay refers to it. Its rendered output replaces the raw files it reads (resources and
patches of the overlay and of every kustomization it refers to, transitively); other
files in those directories are not part of any render and are still read raw.
Overlays the in-process renderer (``kustomize_native``) does not cover are rendered by
``kustomize build`` or ``kubectl kustomize``, one process per overlay, through a wrapper
kustomization asking for kustomize's origin annotations (see ``kustomize_origin``).
"""

from __future__ import annotations

import contextlib
import json
import os
import posixpath
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from scanner.errors import ManifestError
from scanner.sources.file_tree import FileTree
from scanner.sources.kustomize_origin import RenderOrigin, take_origin
from scanner.yamldoc import iter_documents

KUSTOMIZATION_FILES = ("kustomization.yaml", "kustomization.yml", "Kustomization")
KustomizeMode = Literal["auto", "off"]


@dataclass(slots=True)
class Kustomization:
    """A kustomization file of a tree and the directories and files it refers to."""

    directory: str  # relative to the tree root, "" for the root itself
    file: str
    references: set[str] = field(default_factory=set)  # directories, tree-relative
    resources: set[str] = field(default_factory=set)  # resource files, tree-relative
    patches: set[str] = field(default_factory=set)  # patch files, tree-relative
    component: bool = False  # kind: Component


@dataclass(frozen=True, slots=True)
class RenderPlan:
    """Which overlays of a tree to render, and which files their rendering covers."""

    overlays: tuple[str, ...]  # directories to render
    covered: frozenset[str]  # files the rendered overlays read: not read raw again
    patches: frozenset[str]  # patch files (not resources when read raw)
    files: dict[str, str]  # directory -> its kustomization file (tree-relative)
    kustomizations: dict[str, Kustomization] = field(default_factory=dict)  # by directory
    missing_roots: tuple[str, ...] = ()  # configured roots with no kustomization

    def reads(self, overlays: Iterable[str]) -> list[str]:
        """The files rendering ``overlays`` reads, roughly in the order it reads them: each
        kustomization file, its resources and patches, then the kustomizations it refers to."""
        found: list[str] = []
        seen: set[str] = set()

        def visit(directory: str) -> None:
            k = self.kustomizations.get(directory)
            if k is None or directory in seen:
                return
            seen.add(directory)
            found.extend([k.file, *sorted(k.resources), *sorted(k.patches)])
            for reference in sorted(k.references):
                visit(reference)

        for overlay in overlays:
            visit(overlay)
        return found


@dataclass(frozen=True, slots=True)
class RenderOutput:
    """One overlay rendered: its objects, or why it could not be rendered."""

    overlay: str
    documents: tuple[Any, ...] = ()  # rendered objects, build annotations removed
    error: str | None = None
    origins: tuple[RenderOrigin, ...] = ()  # one per document (none when unknown)


def find_renderer(mode: KustomizeMode) -> list[str] | None:
    """The command that renders a directory: ``kustomize build`` or ``kubectl kustomize``."""
    if mode == "off":
        return None
    if shutil.which("kustomize"):
        return ["kustomize", "build"]
    if shutil.which("kubectl"):
        return ["kubectl", "kustomize"]
    return None


def _local(base: str, ref: Any) -> str | None:
    if not isinstance(ref, str) or "://" in ref or ref.startswith(("git@", "github.com/")):
        return None
    joined = posixpath.normpath(posixpath.join(base, ref))
    return None if joined.startswith("..") else ("" if joined == "." else joined)


def read_kustomization(tree: FileTree, relfile: str) -> Kustomization:
    directory = posixpath.dirname(relfile)
    k = Kustomization(directory, relfile)
    try:
        docs = [d.data for d in iter_documents(tree.read(os.path.join(tree.root, relfile)), relfile)]
    except (OSError, ValueError):
        return k  # the renderer will report it
    data = docs[0] if docs and isinstance(docs[0], dict) else {}
    k.component = data.get("kind") == "Component"
    refs = [*(data.get("resources") or []), *(data.get("bases") or []),
            *(data.get("components") or [])]
    for ref in refs:
        local = _local(directory, ref)
        if local is None:
            continue
        if local.endswith((".yaml", ".yml", ".json")):
            k.resources.add(local)
        else:
            k.references.add(local)
    # files kustomize reads as its own configuration, never as manifests: patches, and the
    # configs of transformer, generator and validator plugins and of replacements
    patch_refs: list[Any] = list(data.get("patchesStrategicMerge") or [])
    for key in ("transformers", "generators", "validators"):
        patch_refs += [p for p in data.get(key) or [] if isinstance(p, str)]
    for key in ("patches", "patchesJson6902", "replacements"):
        patch_refs += [p.get("path") for p in data.get(key) or [] if isinstance(p, dict)]
    for ref in patch_refs:
        local = _local(directory, ref)
        if local is not None and local.endswith((".yaml", ".yml", ".json")):
            k.patches.add(local)
    return k


def plan(tree: FileTree, relfiles: Iterable[str], roots: Iterable[str] = ()) -> RenderPlan:
    """The overlays of the tree's kustomizations (``relfiles`` lists the tree's files): those no
    other kustomization refers to, and ``roots`` (tree-relative folders) listed as entry points."""
    kustomizations = {}
    for rel in relfiles:
        if posixpath.basename(rel) in KUSTOMIZATION_FILES:
            k = read_kustomization(tree, rel)
            kustomizations.setdefault(k.directory, k)
    referenced = set().union(*(k.references for k in kustomizations.values()))
    wanted = {"" if r in (".", "") else posixpath.normpath(r.strip("/")) for r in roots}
    overlays = tuple(sorted(d for d, k in kustomizations.items()
                            if not k.component and (d not in referenced or d in wanted)))
    missing = tuple(sorted(r for r in wanted if r not in kustomizations or kustomizations[r].component))
    seen: set[str] = set()
    covered: set[str] = set()
    todo = list(overlays)
    while todo:
        d = todo.pop()
        if d in seen or d not in kustomizations:
            continue
        seen.add(d)
        k = kustomizations[d]
        covered |= k.resources | k.patches
        todo.extend(k.references)
    patches = frozenset().union(*(k.patches for k in kustomizations.values()))
    files = {d: k.file for d, k in kustomizations.items()}
    return RenderPlan(overlays, frozenset(covered), patches, files, kustomizations, missing)


def render_overlay(command: list[str], root: str, overlay: str, timeout: float,
                   kustomization: str = "") -> RenderOutput:
    """Render one overlay with its own renderer process. Overlays are never built together: one
    build fixes name references across everything it holds, so an overlay's reference would
    take the generated name of an object of another overlay.

    The build is of a wrapper kustomization (in a temporary folder) whose one resource is the
    overlay and which asks for origin annotations; they are read and taken off the objects.
    A failed build is run again without the wrapper, so the error is kustomize's own wording
    about the overlay. ``kustomization`` is the overlay's file (tree-relative), the origin of
    an object kustomize gives none."""
    target = os.path.join(root, overlay or ".")
    with tempfile.TemporaryDirectory(prefix="scanner-kustomize-") as wrapper:
        relative = os.path.relpath(os.path.realpath(target), os.path.realpath(wrapper))
        with open(os.path.join(wrapper, "kustomization.yaml"), "w", encoding="utf-8") as f:
            json.dump({"resources": [relative], "buildMetadata": ["originAnnotations"]}, f)
        ok, text = _run([*command, wrapper], timeout)
        if not ok:
            ok, text = _run([*command, target], timeout)
            if not ok:
                return RenderOutput(overlay, error=text)
        try:
            documents = _documents(text, overlay)
        except ManifestError as exc:
            return RenderOutput(overlay, error=f"renderer output is not valid YAML: {exc}")
        origins = tuple(take_origin(d, os.path.realpath(wrapper), root, kustomization or overlay)
                        for d in documents)
    return RenderOutput(overlay, tuple(documents), origins=origins)


def _documents(text: str, path: str) -> list[Any]:
    return [d.data for d in iter_documents(text, path)]


def _run(command: list[str], timeout: float) -> tuple[bool, str]:
    # kustomize allocates heavily; a lazier Go collector saves a third of its CPU time
    env = {**os.environ, "GOGC": os.environ.get("GOGC", "400")}
    try:
        proc = subprocess.run(command, capture_output=True, text=True, timeout=timeout,
                              check=False, env=env)
    except subprocess.TimeoutExpired:
        return False, f"renderer timed out after {timeout:g}s"
    except OSError as exc:
        return False, f"renderer could not be started: {exc}"
    if proc.returncode != 0:
        return False, renderer_error(proc.stderr) or f"renderer exited with {proc.returncode}"
    return True, proc.stdout


# kubectl logs its failure through klog: E1125 15:33:45.243354   23524 run.go:72] "command failed" err="..."
# (a message of several lines is quoted as err=<\n\t...\n >)
_KLOG = re.compile(r'[IWEF]\d{4} [\d:.]+\s+\d+ [\w.-]+:\d+\] (?:"command failed" err=)?(?P<message>.*)', re.DOTALL)


def renderer_error(stderr: str) -> str:
    """Kustomize's own message from what the renderer printed last (kubectl's log prefix, its
    quoting and the ``Error:`` of the kustomize binary taken away; several lines joined)."""
    lines = [ln for ln in stderr.strip().splitlines() if ln.strip()]
    panics = [ln.strip() for ln in lines if ln.startswith("panic: ")]
    if panics:  # a crash: its stack trace ends the output, the panic line says what happened
        return f"kustomize crashed: {panics[0].removeprefix('panic: ')}"
    starts = [i for i, ln in enumerate(lines) if _KLOG.match(ln.strip())]
    text = "\n".join(lines[starts[-1]:]) if starts else (lines[-1] if lines else "")
    match = _KLOG.fullmatch(text.strip())
    message = match["message"].strip() if match else text.strip()
    if message.startswith("<") and message.endswith(">"):  # klog's block quoting
        message = message[1:-1]
    elif len(message) > 1 and message[0] == message[-1] == '"':
        with contextlib.suppress(ValueError):
            message = json.loads(message)
    return " ".join(part.strip() for part in message.splitlines() if part.strip()).removeprefix("Error: ")


def run_renderer(command: list[str], timeout: float) -> tuple[bool, str]:
    """Run a renderer command: (True, its output) or (False, kustomize's message)."""
    return _run(command, timeout)
