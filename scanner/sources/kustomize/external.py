"""The external Kustomize renderer: ``kustomize build`` or ``kubectl kustomize``, one process per overlay.

Overlays the in-process renderer (``native``) does not cover are rendered by ``kustomize
build`` or ``kubectl kustomize``, one process per overlay, through a wrapper kustomization
asking for kustomize's origin annotations (see ``origin``).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import tempfile
from typing import Any

from scanner.errors import ManifestError
from scanner.sources.bounded_run import OutputTooLarge, run_bounded
from scanner.sources.kustomize.origin import RenderOutput, take_origin
from scanner.sources.kustomize.plan import KustomizeMode
from scanner.sources.kustomize.version import external_renderer
from scanner.yamldoc import DEFAULT_LIMITS, iter_documents


def find_renderer(mode: KustomizeMode) -> list[str] | None:
    """The command that renders a directory with Kustomize v5: ``kustomize build`` or ``kubectl
    kustomize`` (see ``version``), or None when there is none."""
    command = external_renderer(mode).command
    return list(command) if command is not None else None


def render_overlay(command: list[str], root: str, overlay: str, timeout: float,
                   kustomization: str = "", renderer: str = "") -> RenderOutput:
    """Render one overlay with its own renderer process. Overlays are never built together: one
    build fixes name references across everything it holds, so an overlay's reference would
    take the generated name of an object of another overlay.

    The build is of a wrapper kustomization (in a temporary folder) whose one resource is the
    overlay and which asks for origin annotations; they are read and taken off the objects.
    A failed build is run again without the wrapper, so the error is kustomize's own wording
    about the overlay. ``kustomization`` is the overlay's file (tree-relative), the origin of
    an object kustomize gives none; ``renderer`` names the renderer in the output
    (``kubectl kustomize v5.5.0``)."""
    target = os.path.join(root, overlay or ".")
    with tempfile.TemporaryDirectory(prefix="scanner-kustomize-") as wrapper:
        relative = os.path.relpath(os.path.realpath(target), os.path.realpath(wrapper))
        with open(os.path.join(wrapper, "kustomization.yaml"), "w", encoding="utf-8") as f:
            json.dump({"resources": [relative], "buildMetadata": ["originAnnotations"]}, f)
        ok, text = _run([*command, wrapper], timeout)
        if not ok:
            ok, text = _run([*command, target], timeout)
            if not ok:
                return RenderOutput(overlay, error=text, renderer=renderer)
        try:
            documents = _documents(text, overlay)
        except ManifestError as exc:
            return RenderOutput(overlay, error=f"renderer output is not valid YAML: {exc}", renderer=renderer)
        origins = tuple(take_origin(d, os.path.realpath(wrapper), root, kustomization or overlay)
                        for d in documents)
    return RenderOutput(overlay, tuple(documents), origins=origins, renderer=renderer)


def _documents(text: str, path: str) -> list[Any]:
    return [d.data for d in iter_documents(text, path)]


def _run(command: list[str], timeout: float) -> tuple[bool, str]:
    # kustomize allocates heavily; a lazier Go collector saves a third of its CPU time
    env = {**os.environ, "GOGC": os.environ.get("GOGC", "400")}
    try:
        proc = run_bounded(command, timeout=timeout, max_output=DEFAULT_LIMITS.max_file_bytes, env=env)
    except subprocess.TimeoutExpired:
        return False, f"renderer timed out after {timeout:g}s"
    except OutputTooLarge as exc:
        return False, f"renderer {exc}"
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
    quoting and the ``Error:`` (kubectl 1.31: ``error:``) before it taken away; several lines joined)."""
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
    joined = " ".join(part.strip() for part in message.splitlines() if part.strip())
    return joined[len("error: "):] if joined[:len("error: ")].lower() == "error: " else joined


def run_renderer(command: list[str], timeout: float) -> tuple[bool, str]:
    """Run a renderer command: (True, its output) or (False, kustomize's message)."""
    return _run(command, timeout)
