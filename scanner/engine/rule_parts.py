"""The parts of a validate rule compiled with its policy: ``deny`` conditions and ``foreach``
entries (their preconditions, deny conditions, patterns and anyPatterns, nested foreach).

A pattern or anyPattern with variables or ``$( )`` references is substituted per element,
so only its raw form is kept; conditions are parsed once, and conditions that do not parse
fail when they are evaluated, as Kyverno parses them then (spec 6.3, 9).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from scanner.engine.conditions import ConditionBlock, parse_conditions
from scanner.engine.pattern import CompiledPattern
from scanner.engine.variables import has_references, has_variables
from scanner.errors import Location, PolicyError


@dataclass(frozen=True, slots=True)
class Conditions:
    """A condition block as compiled: the block, or why it does not parse."""

    block: ConditionBlock | None
    problem: str = ""
    location: Location | None = None

    def parsed(self) -> ConditionBlock:
        """The block; raises the ``PolicyError`` parsing it raised, when it does not parse."""
        if self.block is None:
            raise PolicyError(self.problem, self.location)
        return self.block


def compile_conditions(raw: Any, *, foreach: bool = False) -> Conditions:
    try:
        return Conditions(parse_conditions(raw, foreach=foreach))
    except PolicyError as exc:
        return Conditions(None, exc.message, exc.location)


def compile_deny(deny: Any) -> Conditions:
    """The conditions of a ``deny`` block (none: an empty block, always true)."""
    return compile_conditions(deny.get("conditions") if isinstance(deny, dict) else None)


def compile_pattern(raw: Any) -> CompiledPattern | None:
    """The compiled pattern when it has no variables or references (else it is built per use)."""
    return None if has_variables(raw) or has_references(raw) else CompiledPattern(raw)


def compile_any_pattern(raw: Any) -> tuple[CompiledPattern, ...] | None:
    """The compiled patterns of an anyPattern list without variables or references."""
    if not isinstance(raw, list) or has_variables(raw) or has_references(raw):
        return None
    return tuple(CompiledPattern(p) for p in raw)


@dataclass(frozen=True, slots=True)
class ForeachEntry:
    """One ``foreach`` entry, compiled; ``raw`` is the entry as written."""

    raw: dict
    list: str
    preconditions: Conditions | None = None
    deny: Conditions | None = None
    pattern: CompiledPattern | None = None
    any_pattern: tuple[CompiledPattern, ...] | None = None
    nested: tuple[ForeachEntry, ...] | None = None


def compile_foreach(raw: Any) -> tuple[ForeachEntry, ...]:
    """The entries of a ``foreach`` list (the policy checks refuse any other shape)."""
    if not isinstance(raw, list):
        return ()
    return tuple(_compile_entry(entry) for entry in raw if isinstance(entry, dict))


def _compile_entry(entry: dict) -> ForeachEntry:
    preconditions = entry.get("preconditions")
    pattern, any_pattern, nested = entry.get("pattern"), entry.get("anyPattern"), entry.get("foreach")
    return ForeachEntry(
        raw=entry,
        list=str(entry.get("list") or ""),
        preconditions=None if preconditions is None else compile_conditions(preconditions, foreach=True),
        deny=None if entry.get("deny") is None else compile_deny(entry["deny"]),
        pattern=None if pattern is None else compile_pattern(pattern),
        any_pattern=None if any_pattern is None else compile_any_pattern(any_pattern),
        nested=None if nested is None else compile_foreach(nested),
    )
