"""Argo CD ``ApplicationSet``: the Applications its generators of plain paths make.

Generators expanded: ``list`` (its ``elements``) and ``git`` over a scanned source
(``directories`` with ``path`` globs and ``exclude: true`` entries; ``files`` whose JSON or YAML
content gives the parameters). Each parameter set renders ``spec.template`` (merged with the
generator's own ``template``) as Argo CD does: fasttemplate ``{{path}}``, ``{{path.basename}}``,
``{{path[1]}}``, ``{{name}}`` (spaces inside the braces trimmed, unknown names left as they are),
or with ``goTemplate: true`` Go template field references ``{{.path.path}}``, ``{{.name}}``,
``{{index .path.segments 1}}``. Any other generator, a ``templatePatch`` or another Go template
action is a located "not supported" record, never a silent skip.
"""

from __future__ import annotations

import fnmatch
import json
import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from scanner.errors import ManifestError
from scanner.sources.gitops.entries import Files, Read, merge_values
from scanner.sources.paths import glob_match
from scanner.yamldoc import iter_documents


class Unsupported(Exception):
    """A part of an ApplicationSet this module does not expand (the message says which)."""


@dataclass(frozen=True, slots=True)
class Generated:
    """One Application an ApplicationSet generates."""

    name: str
    data: dict


def expand(data: dict, source_of: Callable[[str], str | None], files: Files, read: Read) -> list[Generated]:
    """The Applications of an ApplicationSet; ``Unsupported`` for what is not expanded, and
    ``LookupError`` naming a repository URL that is not one of the scanned sources."""
    spec = _dict(data.get("spec"))
    if spec.get("templatePatch"):
        raise Unsupported("not supported: ApplicationSet templatePatch")
    template = _dict(spec.get("template"))
    go = bool(spec.get("goTemplate"))
    found: list[Generated] = []
    for generator in spec.get("generators") or []:
        kinds = [k for k in generator if k != "selector"] if isinstance(generator, dict) else []
        if len(kinds) != 1:
            raise Unsupported("not supported: an ApplicationSet generator of several kinds (or none)")
        kind = kinds[0]
        if generator.get("selector"):
            raise Unsupported("not supported: ApplicationSet generator selector")
        body = _dict(generator[kind])
        if kind == "list":
            params = [_element(e, go) for e in body.get("elements") or [] if isinstance(e, dict)]
            if body.get("elementsYaml"):
                raise Unsupported("not supported: ApplicationSet list generator elementsYaml")
        elif kind == "git":
            params = _git(body, go, source_of, files, read)
        else:
            raise Unsupported(f"not supported: ApplicationSet generator {kind}")
        merged = merge_values(template, _dict(body.get("template")))
        for values in params:
            app = _render(merged, values, go)
            metadata = _dict(app.get("metadata"))
            name = str(metadata.get("name") or "")
            if not name:
                raise Unsupported("the ApplicationSet template gives an Application no name")
            found.append(Generated(name, {"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
                                          "metadata": metadata, "spec": app.get("spec") or {}}))
    return found


def _dict(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


def _element(element: dict, go: bool) -> dict[str, Any]:
    """A list element's parameters: as they are for Go templates, else flattened to text."""
    return element if go else {k: v if isinstance(v, str) else json.dumps(v) for k, v in _flat(element).items()}


def _git(body: dict, go: bool, source_of: Callable[[str], str | None], files: Files, read: Read) -> list[dict]:
    url = str(body.get("repoURL") or "")
    source = source_of(url)
    if source is None:
        raise LookupError(url or "(no repoURL)")
    listed = files(source)
    params: list[dict] = []
    if body.get("directories"):
        folders = sorted({posixpath.dirname(p) for p in listed} - {""})
        folders = sorted({"/".join(f.split("/")[:i]) for f in folders for i in range(1, f.count("/") + 2)})
        entries = [d for d in body["directories"] if isinstance(d, dict) and d.get("path")]
        included = [d["path"] for d in entries if not d.get("exclude")]
        excluded = [d["path"] for d in entries if d.get("exclude")]
        for folder in folders:
            if any(_dir_match(p, folder) for p in included) and not any(_dir_match(p, folder) for p in excluded):
                params.append(_path_params(folder, None, go))
    entries = [f for f in body.get("files") or [] if isinstance(f, dict) and f.get("path")]
    included = [str(f["path"]) for f in entries if not f.get("exclude")]
    excluded = [str(f["path"]) for f in entries if f.get("exclude")]
    for path in listed if included else ():
        if any(glob_match(p, path) for p in included) and not any(glob_match(p, path) for p in excluded):
            for content in _file_params(source, path, read):
                values = content if go else {k: v if isinstance(v, str) else json.dumps(v)
                                             for k, v in _flat(content).items()}
                params.append({**values, **_path_params(posixpath.dirname(path), path, go)})
    if not body.get("directories") and not body.get("files"):
        raise Unsupported("not supported: ApplicationSet git generator without directories or files")
    return params


def _dir_match(pattern: str, folder: str) -> bool:
    """Argo CD's directory match: shell patterns per path segment (``*`` stays in one folder)."""
    parts, names = pattern.strip("/").split("/"), folder.split("/")
    return len(parts) == len(names) and all(fnmatch.fnmatchcase(n, p) for p, n in zip(parts, names, strict=True))


def _file_params(source: str, path: str, read: Read) -> list[dict]:
    try:
        docs = [d.data for d in iter_documents(read(source, path), path)]
    except (OSError, ManifestError) as exc:
        raise Unsupported(f"ApplicationSet git files generator: cannot read {path}: {exc}") from exc
    found: list[dict] = []
    for doc in docs:
        if isinstance(doc, list):
            found += [d for d in doc if isinstance(d, dict)]
        elif isinstance(doc, dict):
            found.append(doc)
    return found


def _normalized(name: str) -> str:
    return re.sub(r"[^a-zA-Z0-9-.]", "-", name)


def _path_params(folder: str, file: str | None, go: bool) -> dict[str, Any]:
    segments = folder.split("/") if folder else []
    base = posixpath.basename(folder)
    values: dict[str, Any] = {"path": folder, "basename": base, "basenameNormalized": _normalized(base),
                              "segments": segments}
    if file is not None:
        name = posixpath.basename(file)
        values.update(filename=name, filenameNormalized=_normalized(name))
    if go:
        return {"path": values}
    flat = {"path": folder, **{f"path.{k}": v for k, v in values.items() if k not in ("path", "segments")}}
    flat.update({f"path[{i}]": s for i, s in enumerate(segments)})
    return flat


def _flat(data: dict, prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, value in data.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            flat.update(_flat(value, name + "."))
        else:
            flat[name] = value
    return flat


_FAST = re.compile(r"\{\{(.*?)\}\}")
_GO = re.compile(r"\{\{-?(.*?)-?\}\}", re.DOTALL)
_GO_FIELD = re.compile(r"^\.([\w.]*)$")
_GO_INDEX = re.compile(r"^index\s+\.([\w.]+)\s+(\d+)$")


def _render(node: Any, values: dict[str, Any], go: bool) -> Any:
    if isinstance(node, dict):
        return {_render(k, values, go): _render(v, values, go) for k, v in node.items()}
    if isinstance(node, list):
        return [_render(v, values, go) for v in node]
    if not isinstance(node, str) or "{{" not in node:
        return node
    if not go:
        return _FAST.sub(lambda m: str(values[m[1].strip()]) if m[1].strip() in values else m[0], node)
    return _GO.sub(lambda m: _go_value(m[1].strip(), values), node)


def _go_value(action: str, values: dict[str, Any]) -> str:
    match = _GO_FIELD.match(action)
    index = None
    if match is None:
        match = _GO_INDEX.match(action)
        if match is None:
            raise Unsupported(f"not supported: ApplicationSet Go template action {{{{{action}}}}}")
        index = int(match[2])
    value: Any = values
    for part in [p for p in match[1].split(".") if p]:
        value = value.get(part) if isinstance(value, dict) else None
    if index is not None:
        value = value[index] if isinstance(value, list) and index < len(value) else None
    return "<no value>" if value is None else value if isinstance(value, str) else json.dumps(value)

