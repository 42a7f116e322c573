"""Flux's post-build variable substitution (``spec.postBuild``) on rendered objects.

As kustomize-controller does it: on each object's YAML text, ``${var}`` and the default forms
``${var:=default}``, ``${var:-default}``, ``${var=default}``, ``${var-default}``; a variable that is
not set and has no default becomes empty; ``$${var}`` is a literal ``${var}``; an object annotated
``kustomize.toolkit.fluxcd.io/substitute: disabled`` is left as it is.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import yaml

DISABLED = "kustomize.toolkit.fluxcd.io/substitute"
_VARIABLE = re.compile(r"\$(\$?)\{([_a-zA-Z][_a-zA-Z0-9]*)(?:(:?[=-])([^}]*))?\}")


def substitute_text(text: str, variables: Mapping[str, str]) -> str:
    """``text`` with its variables replaced."""

    def replace(match: re.Match[str]) -> str:
        if match[1]:  # $${var}: escaped
            return match[0][1:]
        name, operator, default = match[2], match[3], match[4]
        value = variables.get(name)
        if operator is None:
            return value or ""
        if operator.startswith(":"):  # the default also applies to a set but empty variable
            return value if value else default
        return value if value is not None else default

    return _VARIABLE.sub(replace, text)


def substitute_object(data: Any, variables: Mapping[str, str]) -> Any:
    """One rendered object after substitution (its YAML text substituted and read again)."""
    if not isinstance(data, dict):
        return data
    annotations = (data.get("metadata") or {}).get("annotations") or {}
    if isinstance(annotations, dict) and annotations.get(DISABLED) == "disabled":
        return data
    text = yaml.safe_dump(data, width=1 << 30, sort_keys=False, allow_unicode=True)
    if "${" not in text:
        return data
    return yaml.safe_load(substitute_text(text, variables))
