"""Typed access to the config document: each value read is checked, and each problem is a
``ConfigError`` located at file:line:col with its key path (``sources[1].git.url``)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from scanner.engine.normalize import describe_type
from scanner.errors import ConfigError, Location
from scanner.yamldoc import YamlDocument

Keys = list[str | int]


class Reader:
    """Typed access to the config document with located errors; relative paths are relative
    to ``base`` (the config file's folder)."""

    def __init__(self, doc: YamlDocument, base: Path) -> None:
        self.doc = doc
        self.base = base

    def fail(self, keys: Keys, message: str) -> ConfigError:
        pointer = "/" + "/".join(str(k) for k in keys) if keys else ""
        loc = self.doc.locate(pointer) if keys else Location(self.doc.path, 1, 1)
        return ConfigError(f"{dotted(keys) or 'config'}: {message}",
                           Location(loc.path, loc.line, loc.column, None))

    def mapping(self, value: Any, keys: Keys, allowed: set[str]) -> Mapping[str, Any]:
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise self.fail(keys, f"must be a mapping, not {describe_type(value)}")
        for key in value:
            if key not in allowed:
                hint = f" (known keys: {', '.join(sorted(allowed))})"
                raise self.fail([*keys, key], f"unknown key {key!r}{hint}")
        return value

    def string(self, value: Any, keys: Keys, *, required: bool = False) -> str | None:
        if value is None:
            if required:
                raise self.fail(keys, "is required")
            return None
        if not isinstance(value, str) or (required and not value):
            shown = "an empty string" if value == "" else describe_type(value)
            raise self.fail(keys, f"must be a non-empty string, not {shown}")
        return value

    def required_string(self, value: Any, keys: Keys) -> str:
        """A non-empty string that must be there."""
        text = self.string(value, keys, required=True)
        assert text is not None
        return text

    def strings(self, value: Any, keys: Keys) -> tuple[str, ...]:
        if value is None:
            return ()
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self.fail(keys, "must be a list of strings")
        return tuple(value)

    def integer(self, value: Any, keys: Keys, default: int | None, minimum: int = 0,
                maximum: int | None = None) -> int | None:
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise self.fail(keys, f"must be an integer >= {minimum}")
        if maximum is not None and value > maximum:
            raise self.fail(keys, f"must be at most {maximum}, not {value}")
        return value

    def boolean(self, value: Any, keys: Keys, default: bool) -> bool:
        if value is None:
            return default
        if not isinstance(value, bool):
            raise self.fail(keys, "must be true or false")
        return value

    def seconds(self, value: Any, keys: Keys) -> float:
        """A positive number of seconds."""
        if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
            raise self.fail(keys, "must be a positive number of seconds")
        return float(value)

    def path(self, value: str) -> str:
        value = os.path.expanduser(value)
        return str(value) if os.path.isabs(value) or "://" in value else str((self.base / value).resolve())

    def switch(self, s: Mapping[str, Any], keys: Keys, key: str) -> str:
        """An ``auto``/``off`` key (default ``auto``)."""
        value = s.get(key, "auto")
        if value is False:  # YAML 1.1 reads an unquoted off as false
            value = "off"
        if value not in ("auto", "off"):
            raise self.fail([*keys, key], "must be auto or off")
        return str(value)

    def ref(self, value: Any, keys: Keys) -> str | None:
        """A branch, tag or commit. YAML reads an unquoted ``1.10`` as the number 1.1 and
        ``0123456`` as 42798: anything but a string is refused, not converted."""
        if value is None or isinstance(value, str):
            return value or None
        raise self.fail(keys, f"must be a string, not {describe_type(value)}: quote it (unquoted, YAML reads a tag "
                              "like 1.10 as the number 1.1 and a commit like 0123456 as 42798)")


def dotted(keys: Keys) -> str:
    """A key path as users write it: ``sources[1].git.url``."""
    out = ""
    for k in keys:
        out += f"[{k}]" if isinstance(k, int) else (f".{k}" if out else str(k))
    return out
