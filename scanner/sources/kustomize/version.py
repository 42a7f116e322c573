"""Which external Kustomize renderer to use, and whether its Kustomize is the supported major version.

The scanner renders with whatever ``kustomize`` or ``kubectl`` is on ``PATH``, but only with
Kustomize v5 (the version the in-process renderer reproduces and the tests pin: kubectl
v1.32 embeds kustomize v5.5.0). ``kustomize version`` prints it (``v5.4.3``, or
``{Version:kustomize/v4.5.7 ...}`` before v5); ``kubectl version --client -o json`` gives it
as ``kustomizeVersion``. ``kustomize`` is preferred, then ``kubectl``; a program whose
Kustomize is of another major version (or says none) is not used, and when no program is
usable the overlays are reported, each as a located error saying why ("not supported:
kustomize v4.5.7 (kubectl); v5 required"), and their raw files are scanned instead.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from scanner.sources.kustomize.plan import KustomizeMode
from scanner.sources.tool_versions import probe_output

SUPPORTED_MAJOR = 5
_VERSION = re.compile(r"v(\d+)\.(\d+)\.(\d+)")
# (program, command that renders a folder, label prefix, command printing the version)
_CANDIDATES = (
    ("kustomize", ("build",), "kustomize", ("version",)),
    ("kubectl", ("kustomize",), "kubectl kustomize", ("version", "--client", "-o", "json")),
)


@dataclass(frozen=True, slots=True)
class ExternalRenderer:
    """The renderer chosen: its command and label (``kubectl kustomize v5.5.0``), or why none is usable."""

    command: tuple[str, ...] | None = None
    label: str = ""
    problem: str = ""


def external_renderer(mode: KustomizeMode) -> ExternalRenderer:
    """The first renderer on ``PATH`` whose Kustomize is v5, else why there is none."""
    if mode == "off":
        return ExternalRenderer(problem="kustomize: off")
    refused = []
    for program, render, label, _ in _CANDIDATES:
        path = shutil.which(program)
        if path is None:
            continue
        version = kustomize_version(program, path)
        if version is not None and _major(version) == SUPPORTED_MAJOR:
            return ExternalRenderer((program, *render), f"{label} {version}")
        refused.append(f"kustomize {version} ({program})" if version else f"{program} (its kustomize version "
                                                                            "could not be read)")
    if not refused:
        return ExternalRenderer(problem="no Kustomize renderer (kustomize or kubectl) on PATH")
    return ExternalRenderer(problem=f"not supported: {', '.join(refused)}; kustomize v{SUPPORTED_MAJOR} required")


def renderer_probes() -> list[tuple[Sequence[str], Mapping[str, str] | None]]:
    """The version probes of the renderers on ``PATH`` (for ``tool_versions.start_probes``)."""
    found = [(shutil.which(program), probe) for program, _, _, probe in _CANDIDATES]
    return [((path, *probe), None) for path, probe in found if path is not None]


def kustomize_version(program: str, path: str) -> str | None:
    """The Kustomize version (``v5.5.0``) of ``program`` found at ``path``, read once per file."""
    probe = next(c[3] for c in _CANDIDATES if c[0] == program)
    output = probe_output((path, *probe))
    if output is None or output[0] != 0:
        return None
    text = output[1]
    if program == "kubectl":
        try:
            text = str(json.loads(text).get("kustomizeVersion") or "")
        except (ValueError, AttributeError):
            return None
    match = _VERSION.search(text)
    return match[0] if match else None


def _major(version: str) -> int:
    match = _VERSION.fullmatch(version)
    return int(match[1]) if match else -1
