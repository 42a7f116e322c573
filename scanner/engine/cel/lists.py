"""Kubernetes' CEL lists library (k8s.io/apiserver ``pkg/cel/library/lists.go``) for the
C++ runtime: ``isSorted``, ``sum``, ``min``, ``max``, ``indexOf`` and ``lastIndexOf`` on lists.

Type checking uses Kubernetes' overloads (``list_int_sum_int`` ...). The C++ runtime picks a
function by the argument kinds only (every list is a ``list``), so each function has one
Python implementation that redoes cel-go's dispatch: the first element of the list selects
the overload (an empty list selects the first declared one), and the values then behave as
cel-go's (``Compare``, ``Add``, ``Equal``, heterogeneous numbers included).

The Python binding hands values over in plain form: a ``uint`` arrives as an ``int`` and
cannot be returned as a ``uint``, durations and timestamps arrive truncated to microseconds
and cannot be returned. So ``sum``/``min``/``max`` are not declared on ``list(uint)``,
nothing but ``indexOf``/``lastIndexOf`` is declared on lists of durations or timestamps
(``not supported`` when the policy is loaded), and a duration or timestamp met at run time
in an ordering, a sum, an equality or a result raises ``NotImplementedError`` (``not
supported``). Left over: a ``uint`` list reaching ``sum``/``min``/``max`` as ``dyn`` gives an
``int``, and ``sum()`` of an empty list gives ``0`` (cel-go picks ``0.0`` for a list typed
``list(double)``).
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta
from typing import Any

# Kubernetes' element types per function, in declaration order (the dispatch order)
_COMPARABLE = ("int", "uint", "double", "bool", "duration", "timestamp", "string", "bytes")
KUBERNETES_ELEMENT_TYPES = {
    "isSorted": _COMPARABLE,
    "sum": ("int", "uint", "double", "duration"),
    "max": _COMPARABLE,
    "min": _COMPARABLE,
}
# the subset declared here: the element types whose values the binding carries exactly
DECLARED_ELEMENT_TYPES = {
    "isSorted": ("int", "uint", "double", "bool", "string", "bytes"),
    "sum": ("int", "double"),
    "max": ("int", "double", "bool", "string", "bytes"),
    "min": ("int", "double", "bool", "string", "bytes"),
}
_RESULT = {"isSorted": "bool"}  # the others return the element type
_ID_PART = {"isSorted": "is_sorted"}

# an element type no expression can produce: the overload that carries the implementation
_CARRIER_TYPE = "kyverno.internal.RuntimeList"

_INT64 = (-(2**63), 2**63 - 1)
_TIME = ("duration", "timestamp")


def carrier_overload(function: str) -> str:
    """The id of the overload that carries ``function``'s implementation at run time."""
    return f"list_runtime_{_ID_PART.get(function, function)}"


def checker_config() -> str:
    """The environment config (YAML) declaring the typed overloads for the type checker,
    plus each function's carrier overload (returning ``dyn`` unless the result type is fixed)."""
    lines = ["functions:"]
    for function, element_types in DECLARED_ELEMENT_TYPES.items():
        lines += [f"  - name: {function}", "    overloads:"]
        part = _ID_PART.get(function, function)
        for name in element_types:
            result = _RESULT.get(function, name)
            lines += [
                f"      - id: list_{name}_{part}_{result}",
                f'        signature: "list<{name}>.{function}()"',
                f'        return: "{result}"',
            ]
        lines += [
            f"      - id: {carrier_overload(function)}",
            f'        signature: "list<{_CARRIER_TYPE}>.{function}()"',
            f'        return: "{_RESULT.get(function, "dyn")}"',
        ]
    return "\n".join(lines) + "\n"


def value_type(value: Any) -> str:
    """The CEL type name of a plain value from the binding (``uint`` reads as ``int``)."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "double"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (bytes, bytearray)):
        return "bytes"
    if isinstance(value, datetime):
        return "timestamp"
    if isinstance(value, timedelta):
        return "duration"
    if value is None:
        return "null_type"
    if isinstance(value, list):
        return "list"
    if isinstance(value, dict):
        return "map"
    return "type"


def _time_value(function: str) -> NotImplementedError:
    return NotImplementedError(
        f"not supported: CEL function {function!r} on durations or timestamps "
        "(Kubernetes CEL library; the runtime binding truncates them to microseconds)"
    )


def _dispatch(function: str, items: list[Any]) -> str:
    """The element type of the overload cel-go selects for ``items``."""
    candidates = KUBERNETES_ELEMENT_TYPES[function]
    if not items:
        return candidates[0]
    first = value_type(items[0])
    if first not in candidates:
        raise ValueError(f"no such overload: {function}(list)")
    return first


def _compare(function: str, a: Any, b: Any) -> int | None:
    """cel-go's ``a.Compare(b)``: -1, 0, 1, or None for its errors (NaN, other types)."""
    ta, tb = value_type(a), value_type(b)
    if ta in ("int", "double") and tb in ("int", "double"):
        if math.isnan(a) or math.isnan(b):
            return None
    elif ta != tb:
        return None
    elif ta in _TIME:
        raise _time_value(function)
    return (a > b) - (a < b)


def _comparable(value: Any) -> None:
    if value_type(value) not in _COMPARABLE:
        raise ValueError("no such overload")


def is_sorted(items: list[Any]) -> bool:
    """``<list>.isSorted()``: no element is greater than the next (errors are skipped)."""
    _dispatch("isSorted", items)
    for i, item in enumerate(items):
        _comparable(item)
        if i and _compare("isSorted", items[i - 1], item) == 1:
            return False
    return True


def _extreme(function: str, items: list[Any], replace_when: int) -> Any:
    _dispatch(function, items)
    if not items:
        raise ValueError(f"{function} called on empty list")
    result = items[0]
    for i, item in enumerate(items):
        _comparable(item)
        if i and _compare(function, result, item) == replace_when:
            result = item
    if value_type(result) in _TIME:
        raise _time_value(function)
    return result


def list_min(items: list[Any]) -> Any:
    """``<list>.min()``: the first least element."""
    return _extreme("min", items, 1)


def list_max(items: list[Any]) -> Any:
    """``<list>.max()``: the first greatest element."""
    return _extreme("max", items, -1)


def list_sum(items: list[Any]) -> int | float:
    """``<list>.sum()``: the zero of the selected overload plus every element (no mixing)."""
    element = _dispatch("sum", items)
    if element in _TIME:
        raise _time_value("sum")
    total: int | float = 0 if element == "int" else 0.0
    for item in items:
        if value_type(item) != element:
            raise ValueError("no such overload")
        total += item
        if element == "int" and not _INT64[0] <= total <= _INT64[1]:
            raise ValueError("integer overflow")
    return total


def equal(a: Any, b: Any, function: str = "indexOf") -> bool:
    """cel-go's ``Equal``: numbers across types, lists and maps deeply, else same type and
    value; ``function`` names the caller in the ``not supported`` error of time values."""
    ta, tb = value_type(a), value_type(b)
    if ta in ("int", "double") and tb in ("int", "double"):
        return not (math.isnan(a) or math.isnan(b)) and a == b
    if ta != tb:
        return False
    if ta in _TIME:
        raise _time_value(function)
    if ta == "list":
        return len(a) == len(b) and all(equal(x, y, function) for x, y in zip(a, b, strict=True))
    if ta == "map":
        return _maps_equal(a, b, function)
    return bool(a == b)


def _maps_equal(a: dict, b: dict, function: str) -> bool:
    if len(a) != len(b):
        return False
    keyed = {(value_type(k), k): v for k, v in b.items()}  # True and 1 are different keys
    missing = object()
    for k, v in a.items():
        other = keyed.get((value_type(k), k), missing)
        if other is missing or not equal(v, other, function):
            return False
    return True


def index_of(items: list[Any], item: Any) -> int:
    """``<list>.indexOf(<item>)``: the first index of an equal element, else -1."""
    return next((i for i, e in enumerate(items) if equal(e, item, "indexOf")), -1)


def last_index_of(items: list[Any], item: Any) -> int:
    """``<list>.lastIndexOf(<item>)``: the last index of an equal element, else -1."""
    return next((i for i in range(len(items) - 1, -1, -1) if equal(items[i], item, "lastIndexOf")), -1)


IMPLEMENTATIONS = {"isSorted": is_sorted, "sum": list_sum, "min": list_min, "max": list_max}
