"""Text as the store keeps it: the same value on SQLite and PostgreSQL, whatever it holds.

PostgreSQL refuses a NUL character in ``text`` (and in JSON strings); SQLite keeps it. So
that one resource named with a NUL cannot fail a whole run, and so that both backends store
(and the reports show) the same thing, text bound for the store is escaped at its boundary
and unescaped when read back: the original is recovered exactly.

The escape character is U+2400 (SYMBOL FOR NULL, ``␀``): a NUL is stored as ``␀0`` and the
escape character itself as ``␀␀``. Text holding neither (all but a hostile few values) is
stored unchanged, so existing databases need no migration.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from operator import itemgetter
from typing import Any

from sqlalchemy import Text
from sqlalchemy.engine import Dialect
from sqlalchemy.types import TypeDecorator

ESCAPE = "\u2400"
_NUL = "\x00"
_ENCODED = {_NUL: ESCAPE + "0", ESCAPE: ESCAPE + ESCAPE}
_DECODED = {"0": _NUL, ESCAPE: ESCAPE}


def escape_text(value: str) -> str:
    """``value`` as stored: NUL and the escape character escaped (unchanged if it has neither)."""
    if _NUL not in value and ESCAPE not in value:
        return value
    return "".join(_ENCODED.get(char, char) for char in value)


def unescape_text(value: str) -> str:
    """The original of a stored value (the inverse of ``escape_text``)."""
    if ESCAPE not in value:
        return value
    out: list[str] = []
    chars = iter(value)
    for char in chars:
        if char != ESCAPE:
            out.append(char)
            continue
        following = next(chars, "")
        # a lone escape character (written by something else than this store) stays as it is
        out.append(_DECODED.get(following, ESCAPE + following))
    return "".join(out)


def escape_value(value: Any) -> Any:
    """``value`` with every string in it escaped, inside lists and mappings too (JSON data)."""
    if isinstance(value, str):
        return escape_text(value)
    if isinstance(value, dict):
        return {escape_value(key): escape_value(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(escape_value(item) for item in value)
    return value


def unescape_value(value: Any) -> Any:
    """The inverse of ``escape_value``."""
    if isinstance(value, str):
        return unescape_text(value)
    if isinstance(value, dict):
        return {unescape_value(key): unescape_value(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(unescape_value(item) for item in value)
    return value


def escape_rows(rows: list[tuple[Any, ...]], positions: Sequence[int]) -> list[tuple[Any, ...]]:
    """Rows for a bulk write with the strings at ``positions`` escaped (the same list when
    none needs it: the common case costs one pass over the values, in C)."""
    if not positions or not rows or not any(_needs_escape(rows, i) for i in positions):
        return rows
    wanted = set(positions)
    return [tuple(escape_text(value) if i in wanted and isinstance(value, str) else value
                  for i, value in enumerate(row)) for row in rows]


def _needs_escape(rows: list[tuple[Any, ...]], position: int) -> bool:
    # each distinct value once (a run's messages and paths repeat), joined and searched in C
    values = set(map(itemgetter(position), rows))
    values.discard(None)
    try:
        joined = "".join(values)
    except TypeError:  # not only strings there
        return any(isinstance(value, str) and (_NUL in value or ESCAPE in value) for value in values)
    return _NUL in joined or ESCAPE in joined


class StoredText(TypeDecorator[str]):
    """A ``Text`` column holding any string: escaped when bound, unescaped when read."""

    impl = Text
    cache_ok = True

    def process_bind_param(self, value: str | None, dialect: Dialect) -> str | None:
        return None if value is None else escape_text(value)

    def result_processor(self, dialect: Dialect, coltype: object) -> Callable[[Any], Any]:
        def process(value: Any) -> Any:
            return unescape_text(value) if value.__class__ is str and ESCAPE in value else value
        return process

    def process_result_value(self, value: str | None, dialect: Dialect) -> str | None:
        return None if value is None else unescape_text(value)
