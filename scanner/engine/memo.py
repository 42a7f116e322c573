"""Forms compiled once per policy object.

A compiled policy keeps its raw document alive for as long as it is used, so what is built
from a part of it (parsed conditions, a compiled pattern) can be kept by that part's identity
instead of being rebuilt for every resource. Only objects owned by a policy belong here:
objects built per evaluation (substituted documents) would never be hit again.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

_LIMIT = 65_536
_BUILT: dict[tuple[int, Callable[[Any], Any]], tuple[Any, Any]] = {}


def built(raw: Any, build: Callable[[Any], T]) -> T:
    """``build(raw)``, computed once per (``raw`` object, ``build`` function).

    ``build`` must be a module-level function (its identity is part of the key); an
    exception it raises is raised again on the next call, nothing is kept.
    """
    key = (id(raw), build)
    hit = _BUILT.get(key)
    if hit is not None and hit[0] is raw:
        return hit[1]  # type: ignore[no-any-return]
    value = build(raw)
    if len(_BUILT) >= _LIMIT:
        _BUILT.clear()
    _BUILT[key] = (raw, value)  # the entry holds raw, so its id cannot be reused meanwhile
    return value
