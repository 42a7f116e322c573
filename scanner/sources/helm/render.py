"""Render one chart with ``helm template`` and map each object back to its template file.

helm runs with a time limit, without network access it could need (dependencies must be
vendored or local) and with a scrubbed environment: its home, cache, config and plugin folders
are a fresh temporary folder, no kubeconfig and no proxy or credential variable reaches it.
Chart tests (``helm.sh/hook: test``) are left out, as ``helm install`` does not create them;
CRDs in ``crds/`` are kept, as ``helm install`` creates them.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from scanner.errors import ManifestError
from scanner.sources.bounded_run import OutputTooLarge, run_bounded
from scanner.sources.helm.charts import Chart, missing_dependencies
from scanner.sources.tool_versions import probe_output
from scanner.yamldoc import DEFAULT_LIMITS, iter_documents


@dataclass(frozen=True, slots=True)
class Release:
    """How one chart is rendered: what ``helm install`` (or a GitOps controller) would be given."""

    name: str
    namespace: str = "default"
    values_files: tuple[str, ...] = ()  # paths on disk, in the order helm merges them
    values: dict[str, Any] | None = None  # inline values, merged after the files
    set_values: tuple[tuple[str, str, bool], ...] = ()  # (name, value, as string): --set / --set-string


@dataclass(frozen=True, slots=True)
class RenderedObject:
    """One rendered object, the chart-relative template that produced it, and its first line
    in that template's rendered text."""

    data: Any
    template: str
    line: int


@dataclass(frozen=True, slots=True)
class ChartOutput:
    """A chart rendered: its objects, or why it could not be rendered."""

    objects: tuple[RenderedObject, ...] = ()
    error: str | None = None


class HelmNotFound(Exception):
    """No usable helm 3 binary."""


def helm_probe(binary: str) -> tuple[Sequence[str], Mapping[str, str]]:
    """The version probe of the helm at ``binary`` (for ``tool_versions``)."""
    return (binary, "version", "--short"), _scrubbed_env(tempfile.gettempdir())


def find_helm(path: str | None = None) -> str:
    """The helm 3 binary on ``PATH``; ``HelmNotFound`` saying what to do otherwise."""
    binary = shutil.which("helm", path=path)
    if binary is None:
        raise HelmNotFound("helm not found: install helm 3 or set helm: off")
    output = probe_output(*helm_probe(binary))
    if output is None:
        raise HelmNotFound(f"helm could not be run ({binary} version): install helm 3 or set helm: off")
    version = output[1].strip()
    if output[0] != 0 or not version.startswith("v3."):
        raise HelmNotFound(f"helm 3 is needed, {binary} is {version or 'unknown'}: install helm 3 or set helm: off")
    return binary


def render_chart(helm: str, chart: Chart, chart_dir: str, release: Release, timeout: float) -> ChartOutput:
    """The objects of ``chart`` (on disk at ``chart_dir``) rendered for ``release``."""
    missing = missing_dependencies(chart, chart_dir)
    if missing:
        d = missing[0]
        return ChartOutput(error=f"chart dependency {d.name!r} ({d.repository or 'no repository'}) is not "
                                 f"vendored in charts/ ({d.location}): run helm dependency build and commit "
                                 "charts/, since charts are rendered without network access")
    with tempfile.TemporaryDirectory(prefix="scanner-helm-") as work:
        try:
            directory = _with_local_dependencies(chart, chart_dir, work)
        except OSError as exc:
            return ChartOutput(error=f"cannot copy the chart's file:// dependencies: {exc}")
        command = [helm, "template", release.name, directory, "--namespace", release.namespace,
                   "--include-crds", "--skip-tests"]
        for values_file in release.values_files:
            command += ["--values", values_file]
        if release.values:
            inline = os.path.join(work, "inline-values.json")
            with open(inline, "w", encoding="utf-8") as f:
                json.dump(release.values, f)
            command += ["--values", inline]
        for name, value, as_string in release.set_values:
            command += ["--set-string" if as_string else "--set", f"{name}={value}"]
        try:
            proc = run_bounded(command, timeout=timeout, max_output=DEFAULT_LIMITS.max_file_bytes,
                               env=_scrubbed_env(work), cwd=work)
        except subprocess.TimeoutExpired:
            return ChartOutput(error=f"helm template timed out after {timeout:g}s")
        except OutputTooLarge as exc:
            return ChartOutput(error=str(exc))
        except OSError as exc:
            return ChartOutput(error=f"helm could not be started: {exc}")
    if proc.returncode != 0:
        return ChartOutput(error=helm_error(proc.stderr) or f"helm template exited with {proc.returncode}")
    try:
        return ChartOutput(tuple(parse_output(proc.stdout)))
    except ManifestError as exc:
        return ChartOutput(error=f"helm template output is not valid YAML: {exc}")


def _with_local_dependencies(chart: Chart, chart_dir: str, work: str) -> str:
    """The chart folder to render: ``chart_dir`` itself, or a copy with its ``file://``
    dependencies copied into ``charts/`` (what ``helm dependency build`` does, offline)."""
    local = [d for d in chart.dependencies if d.local_path is not None]
    if not local:
        return chart_dir
    copy = os.path.join(work, "chart")
    shutil.copytree(chart_dir, copy, symlinks=True)
    for dependency in local:
        assert dependency.local_path is not None
        source = os.path.normpath(os.path.join(chart_dir, dependency.local_path))
        target = os.path.join(copy, "charts", dependency.name)
        if not os.path.exists(target):
            shutil.copytree(source, target, symlinks=True)
    return copy


def _scrubbed_env(work: str) -> dict[str, str]:
    """helm's environment: ``PATH`` and folders of its own under ``work``, nothing else."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": work, "KUBECONFIG": os.devnull,
           "HELM_CACHE_HOME": os.path.join(work, ".cache"),
           "HELM_CONFIG_HOME": os.path.join(work, ".config"),
           "HELM_DATA_HOME": os.path.join(work, ".data"),
           "HELM_PLUGINS": os.path.join(work, ".plugins"),
           "GOGC": "400"}
    return env


_SOURCE = re.compile(r"^# Source: (?P<path>.+?)\s*$")


def parse_output(text: str) -> list[RenderedObject]:
    """The objects of ``helm template`` output, each with the chart-relative template it came
    from (the ``# Source:`` comment without the chart's name) and its line in that template's
    rendered text (a template's documents are numbered on from one another)."""
    objects: list[RenderedObject] = []
    lines_so_far: dict[str, int] = {}
    for chunk in re.split(r"^---[ \t]*$\n?", text, flags=re.MULTILINE):
        lines = chunk.splitlines()
        source = next((m["path"] for m in map(_SOURCE.match, lines[:2]) if m), None)
        if source is None:
            if chunk.strip():
                raise ManifestError("a rendered document has no '# Source:' comment")
            continue
        template = source.split("/", 1)[1] if "/" in source else source
        start = lines_so_far.get(template, 0)
        body_start = next(i for i, ln in enumerate(lines) if _SOURCE.match(ln)) + 1
        body = "\n".join(lines[body_start:]) + "\n"
        for doc in iter_documents(body, template):
            objects.append(RenderedObject(doc.data, template, start + doc.line))
        lines_so_far[template] = start + len(lines) - body_start + 1  # the template's "---" too
    return objects


def helm_error(stderr: str) -> str:
    """helm's own message (``Error: ...``), warnings and its ``--debug`` hint left out, lines joined."""
    lines = [ln.strip() for ln in stderr.strip().splitlines() if ln.strip()]
    errors = [i for i, ln in enumerate(lines) if ln.startswith("Error:")]
    text = " ".join(lines[errors[-1]:]) if errors else " ".join(lines[-3:])
    return text.removeprefix("Error: ").removesuffix("Use --debug flag to render out invalid YAML").strip()


# "template: web/templates/bad.yaml:1:10: executing ..." and
# "YAML parse error on web/templates/x.yaml: error converting YAML to JSON: yaml: line 3: ..."
_TEMPLATE_AT = re.compile(r"template: (?P<path>[^\s:]+):(?P<line>\d+)(?::\d+)?:")
_YAML_AT = re.compile(r"YAML parse error on (?P<path>[^\s:]+):.*?\bline (?P<line>\d+):")


def error_template(message: str) -> tuple[str, int] | None:
    """The chart-relative template and line a helm error names, if it names one."""
    match = _TEMPLATE_AT.search(message) or _YAML_AT.search(message)
    if match is None or "/" not in match["path"]:
        return None
    return match["path"].split("/", 1)[1], int(match["line"])
