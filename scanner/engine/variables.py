"""``{{ }}`` variable substitution (spec 7.2) and ``$( )`` pattern references (spec 4.9).

Both walk a JSON document (strings, map keys, nested maps and lists) and return a new
document; the input is never modified. Variables are evaluated by a ``resolve`` callable
(a JMESPath evaluator supplied by the caller), so this module knows nothing about the
evaluation context.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from scanner.engine.anchor import strip_anchor
from scanner.engine.budget import BudgetExceededError, active, text_size
from scanner.engine.golang import path as gopath
from scanner.engine.golang.fmt import format_fixed6, is_number, sprint, to_json
from scanner.engine.operators import EQUAL, operator_of
from scanner.errors import EngineError

_BODY = r"(?:\{[^{}]*\}|[^{}])*"
# a variable, with the character before it (not a backslash) unless it starts the text
_VARIABLE = re.compile(rf"(?:^|[^\\])\{{\{{{_BODY}\}}\}}")
_VARIABLE_AT_START = re.compile(rf"\{{\{{{_BODY}\}}\}}")
_ESCAPED_VARIABLE = re.compile(rf"\\\{{\{{{_BODY}\}}\}}")
_ANY_VARIABLE = re.compile(rf"(?<!\\)\{{\{{{_BODY}\}}\}}")
_REFERENCE = re.compile(r"^\$\(.[^ ]*\)|[^\\]\$\(.[^ ]*\)")
_ESCAPED_REFERENCE = re.compile(r"\\\$\(.[^ ]*\)")
# a value that keeps producing new variables (x resolves to "{{x}}") must not loop forever
_MAX_PASSES = 64

Resolve = Callable[[str], Any]


def _escape(key: str) -> str:
    """A map key as a path segment (Kyverno escapes ``/`` as ``\\/``)."""
    return key.replace("/", "\\/")


class SubstitutionError(EngineError):
    """A variable or reference could not be resolved; the message follows Kyverno's wording."""

    def __init__(self, message: str, *, expression: str | None = None, path: str | None = None):
        super().__init__(message)
        self.message = message
        self.expression = expression
        self.path = path


def has_variables(value: Any) -> bool:
    """Whether any string (or map key) inside ``value`` contains ``{{``."""
    if isinstance(value, str):
        return "{{" in value
    if isinstance(value, dict):
        return any(("{{" in k) or has_variables(v) for k, v in value.items())
    if isinstance(value, list):
        return any(has_variables(v) for v in value)
    return False


def has_references(value: Any) -> bool:
    """Whether any string (or map key) inside ``value`` contains ``$(``."""
    if isinstance(value, str):
        return "$(" in value
    if isinstance(value, dict):
        return any(("$(" in k) or has_references(v) for k, v in value.items())
    if isinstance(value, list):
        return any(has_references(v) for v in value)
    return False


def _expression(variable: str) -> tuple[str, bool]:
    """The JMESPath text of a ``{{ }}`` variable and whether it is shallow (``{{- x}}``)."""
    expression = variable.replace("{{", "").replace("}}", "").strip()
    if expression.startswith("-"):
        return expression[1:].strip(), True
    return expression, False


def find_variables(text: str) -> list[str]:
    """The expressions of every unescaped ``{{ }}`` variable in ``text``, left to right."""
    return [_expression(m.group(0))[0] for m in _ANY_VARIABLE.finditer(text)]


@lru_cache(maxsize=4096)
def _variables(text: str) -> tuple[tuple[str, str, str, bool], ...]:
    """The variables of ``text``, left to right: the character before each (kept), the
    variable, its expression and whether it is shallow. Policies repeat their strings."""
    found = []
    for m in _VARIABLE.finditer(text):
        match = m.group(0)
        prefix, variable = ("", match) if _VARIABLE_AT_START.match(match) else (match[0], match[1:])
        found.append((prefix, variable, *_expression(variable)))
    return tuple(found)


_SHORT = 4096  # strings shorter than this are not worth a look at the budget


def _check_written_size(value: Any) -> None:
    """A map or list a variable brings into text may not exceed the rule's string limit
    written out (a value of shared parts can be exponentially larger so)."""
    if isinstance(value, (dict, list)):
        budget = active()
        budget.check_string(text_size(value, budget.limits.string_length), "a variable's value")


class _Substitution:
    """One document's substitution; the items of every map and list it walks (a variable's
    value included, which may be built of shared parts) are charged to the rule's budget."""

    __slots__ = ("budget", "delete", "resolve")

    def __init__(self, resolve: Resolve, delete: bool) -> None:
        self.resolve = resolve
        self.delete = delete
        self.budget = active()

    def evaluate(self, expression: str, path: str) -> Any:
        if expression == "@":
            raise SubstitutionError(
                f"not supported: the {{{{@}}}} variable (at path {path})",
                expression=expression,
                path=path,
            )
        if self.delete:
            expression = expression.replace("request.object", "request.oldObject")
        try:
            return self.resolve(expression)
        except (SubstitutionError, BudgetExceededError):
            raise
        except Exception as e:  # the resolver is foreign code: this is the seam
            raise SubstitutionError(
                f"failed to resolve {expression} at path {path}: {e}",
                expression=expression,
                path=path,
            ) from e

    def string(self, value: str, path: str) -> Any:
        """Substitute the variables of one string; a whole-string variable keeps its type."""
        found = _variables(value)
        passes = 0
        while found:
            passes += 1
            if passes > _MAX_PASSES:
                raise SubstitutionError(
                    f"failed to resolve variables at path {path}: substitution does not end",
                    path=path,
                )
            original = value
            shallow = False
            for prefix, variable, expression, shallow in found:
                result = self.evaluate(expression, path)
                if original == variable:
                    return result
                if isinstance(result, str):
                    replacement = result.replace("{{", "\\{{") if shallow else result
                else:
                    _check_written_size(result)
                    try:
                        replacement = to_json(result)
                    except ValueError as e:
                        raise SubstitutionError(
                            f"failed to resolve {expression} at path {path}: {e}",
                            expression=expression,
                            path=path,
                        ) from e
                value = value.replace(prefix + variable, prefix + replacement, 1)
                if len(value) > _SHORT:
                    active().check_string(len(value), "variable substitution")
            if shallow:
                break
            found = _variables(value)
        return _ESCAPED_VARIABLE.sub(lambda m: m.group(0)[1:], value) if "\\" in value else value

    def key(self, key: str, path: str) -> str:
        if "{{" not in key:
            return key
        result = self.string(key, path)
        if result is None:
            return key
        if not isinstance(result, str):
            raise SubstitutionError(
                f'expected string after substituting variables in key "{key}"', path=path
            )
        return result

    def walk(self, node: Any, path: str) -> Any:
        if isinstance(node, str):
            if "{{" not in node:
                return node
            node = self.string(node, path)
            if not isinstance(node, (dict, list)):
                return node
            # Kyverno keeps walking into a map or list a whole-string variable produced
        if isinstance(node, dict):
            self.budget.charge(len(node))
            out = {}
            for key, child in node.items():
                child_path = f"{path}/{_escape(key)}"
                out[self.key(key, path)] = self.walk(child, child_path)
            return out
        if isinstance(node, list):
            self.budget.charge(len(node))
            return [self.walk(child, f"{path}/{i}") for i, child in enumerate(node)]
        return node


def substitute_all(document: Any, resolve: Resolve, *, delete: bool = False) -> Any:
    """A copy of ``document`` with every ``{{ }}`` variable substituted (spec 7.2).

    ``resolve(expression)`` evaluates a JMESPath expression and raises on failure;
    ``delete`` rewrites ``request.object`` to ``request.oldObject`` (DELETE requests).
    Raises ``SubstitutionError`` (``failed to resolve <expr> at path <p>: <cause>``).
    """
    if not has_variables(document):
        return document
    try:
        return _Substitution(resolve, delete).walk(document, "")
    except RecursionError as e:
        raise SubstitutionError("failed to substitute variables: nesting too deep") from e


# -- $( ) references -----------------------------------------------------------------


def _without_anchors(path: str) -> str:
    parts = path.split("/")
    if parts[0] == "":
        parts = parts[1:]
    stripped = gopath.join(*(strip_anchor(part) for part in parts))
    return "/" + stripped if path.startswith("/") else stripped


def _leaf_index(document: Any) -> dict[str, Any]:
    """Anchor-free path -> leaf (map keys are indexed under their map's path)."""
    index: dict[str, Any] = {}

    def visit(node: Any, path: str) -> None:
        if isinstance(node, dict):
            plain = _without_anchors(path)
            for key, child in node.items():
                index[plain] = key
                visit(child, f"{path}/{_escape(key)}")
        elif isinstance(node, list):
            for i, child in enumerate(node):
                visit(child, f"{path}/{i}")
        else:
            index[_without_anchors(path)] = node

    visit(document, "")
    return index


def _reference_value(reference: str, path: str, index: dict[str, Any]) -> Any:
    target = reference.strip("$()")
    operation = operator_of(target)
    target = target[len(operation) :]
    if not target:
        raise SubstitutionError(
            f"failed to resolve {reference} at path {path}: expected path, found empty reference",
            expression=reference,
            path=path,
        )
    target = target if target.startswith("/") else gopath.join(path, target)
    found = index.get(target)
    if operation == EQUAL:
        return found
    if isinstance(found, str):
        return operation + found
    if is_number(found):
        return operation + format_fixed6(found)
    # Kyverno formats the value with %v: a missing or null target is "<nil>"
    raise SubstitutionError(
        f"failed to resolve {reference} at path {path}: incorrect expression: "
        f"operator {operation} does not match with value {sprint(found)}",
        expression=reference,
        path=path,
    )


def _resolve_string(value: str, path: str, index: dict[str, Any]) -> str:
    for match in _REFERENCE.finditer(value):
        old = match.group(0)
        initial = old.startswith("$(")
        reference = old if initial else old[1:]
        resolved = _reference_value(reference, path, index)
        if resolved is None:
            raise SubstitutionError(
                f"got nil resolved variable {reference} at path {path}: <nil>",  # Kyverno prints its nil error
                expression=reference,
                path=path,
            )
        if not isinstance(resolved, str):
            raise SubstitutionError(
                f"NotResolvedReferenceErr,reference {reference} not resolved at path {path}",
                expression=reference,
                path=path,
            )
        value = value.replace(old, ("" if initial else old[0]) + resolved, 1)
    return _ESCAPED_REFERENCE.sub(lambda m: m.group(0)[1:], value)


def resolve_references(pattern: Any) -> Any:
    """A copy of ``pattern`` with every ``$(path)`` reference resolved against the pattern
    itself (spec 4.9); raises ``SubstitutionError`` when a reference cannot be resolved."""
    if not has_references(pattern):
        return pattern
    index = _leaf_index(pattern)

    def walk(node: Any, path: str) -> Any:
        if isinstance(node, str):
            return _resolve_string(node, path, index) if "$(" in node else node
        if isinstance(node, dict):
            out = {}
            for key, child in node.items():
                new_key = _resolve_string(key, path, index) if "$(" in key else key
                out[new_key] = walk(child, f"{path}/{_escape(key)}")
            return out
        if isinstance(node, list):
            return [walk(child, f"{path}/{i}") for i, child in enumerate(node)]
        return node

    return walk(pattern, "")
