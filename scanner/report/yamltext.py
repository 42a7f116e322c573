"""YAML scalars as text, exactly as PyYAML's safe dumper writes them, for reports that write
their YAML line by line (thousands of results of one fixed shape) instead of through PyYAML's
representer, which costs tens of microseconds per node.

A scalar's text depends on its value and on where it stands (a multi-line or very long value
is broken and indented by its column), so ``ScalarText`` is bound to one place in a document,
named by its path of mapping keys and list items (``0``), and asks PyYAML itself for any value
that is not plainly a word, once per distinct value.
"""

from __future__ import annotations

import re
from typing import Any

import yaml
from yaml.nodes import ScalarNode
from yaml.resolver import Resolver

try:
    from yaml import CSafeDumper as BaseDumper
except ImportError:  # pragma: no cover - libyaml missing
    from yaml import SafeDumper as BaseDumper  # type: ignore[assignment]


class Dumper(BaseDumper):  # type: ignore[misc,valid-type]
    """Plain YAML: no anchors or aliases for repeated values."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


DUMP_OPTIONS: dict[str, Any] = {"Dumper": Dumper, "sort_keys": False, "allow_unicode": True, "width": 100_000}

# what any emitter writes as it is, where it resolves to a string (not a number, a boolean, a null)
_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9_./-]*")
_STR_TAG = "tag:yaml.org,2002:str"
# the hexadecimal strings YAML 1.1 reads as integers (decimal, octal, binary); every other is a plain word
_NUMERIC_HEX = re.compile(r"[0-9]+|0b[01]+")
_RESOLVER = Resolver()


def _plain_word(value: str) -> bool:
    return (len(value) < 1000 and _WORD.fullmatch(value) is not None
            and _RESOLVER.resolve(ScalarNode, value, (True, False)) == _STR_TAG)


def _nest(path: tuple[str | int, ...], value: Any) -> Any:
    for step in reversed(path):
        value = [value] if isinstance(step, int) else {step: value}
    return value


class ScalarText:
    """The text of string values at one place of a document (``path``), as ``yaml.dump`` with
    ``DUMP_OPTIONS`` writes them there; memoized per value."""

    __slots__ = ("_known", "_path", "_prefix")

    def __init__(self, path: tuple[str | int, ...]) -> None:
        if not path:
            raise ValueError("a scalar's place needs at least one key or list item")
        self._path = path
        marker = yaml.dump(_nest(path, "x"), **DUMP_OPTIONS)
        self._prefix = marker[:-len("x\n")]
        self._known: dict[str, str] = {}

    def __call__(self, value: str) -> str:
        text = self._known.get(value)
        if text is None:
            text = self._known[value] = value if _plain_word(value) else self._dumped(value)
        return text

    def hex_digest(self, value: str) -> str:
        """The text of a hexadecimal digest (lower case), not memoized: each is met once."""
        return self(value) if _NUMERIC_HEX.fullmatch(value) else value

    def _dumped(self, value: str) -> str:
        text = yaml.dump(_nest(self._path, value), **DUMP_OPTIONS)
        if not text.startswith(self._prefix) or not text.endswith("\n"):
            raise ValueError(f"unexpected YAML for {value!r} at {self._path}: {text!r}")
        return text[len(self._prefix):-1]
