"""The condition operators of spec 6.4, with Kyverno's exact type coercions.

K is the substituted condition key, V the substituted value; both are JSON values where
every number counts as a 64-bit float (Python ints are treated as the same float). The
membership operators charge the rule's budget for the pairs they may compare.
"""

from __future__ import annotations

import json
import operator as op
from collections.abc import Callable, Iterator
from functools import partial
from typing import Any

from scanner.engine import wildcard
from scanner.engine.budget import active, text_size
from scanner.engine.golang.duration import SECOND, parse_duration
from scanner.engine.golang.fmt import is_number, sprint, text
from scanner.engine.golang.quantity import parse_quantity
from scanner.engine.golang.semver import parse_version
from scanner.engine.operators import compare_scalar, is_range, parse_go_float
from scanner.errors import EngineError

Compare = Callable[[Any, Any], bool]


class ConditionError(EngineError):
    """A condition Kyverno cannot evaluate: unknown operator, non-string ``In`` key element."""


# -- shared conversions ---------------------------------------------------------------


def _deep_equal(a: Any, b: Any) -> bool:
    """Type-sensitive deep equality (Go ``reflect.DeepEqual`` on decoded JSON)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if is_number(a) or is_number(b):
        return is_number(a) and is_number(b) and float(a) == float(b)
    if isinstance(a, dict):
        active().charge(len(a))
        return (
            isinstance(b, dict)
            and a.keys() == b.keys()
            and all(_deep_equal(v, b[k]) for k, v in a.items())
        )
    if isinstance(a, list):
        active().charge(len(a))
        return (
            isinstance(b, list) and len(a) == len(b) and all(map(_deep_equal, a, b))
        )
    return type(a) is type(b) and a == b


def _seconds(ns: int) -> float:
    """Go ``Duration.Seconds``."""
    sign = -1 if ns < 0 else 1
    whole, rest = divmod(abs(ns), SECOND)
    return float(sign * whole) + float(sign * rest) / 1e9


def _duration_pair(key: Any, value: Any) -> tuple[float, float] | None:
    """The duration rule: both sides in seconds, or None when the rule does not apply."""

    def as_duration(x: Any) -> int | None:
        return parse_duration(x) if isinstance(x, str) and x != "0" else None

    def as_seconds(x: Any) -> int | None:
        return int(float(x)) * SECOND if is_number(x) else None

    k, v = as_duration(key), as_duration(value)
    if k is None and v is None:
        return None
    k = k if k is not None else as_seconds(key)
    v = v if v is not None else as_seconds(value)
    if k is None or v is None:
        return None
    return _seconds(k), _seconds(v)


# -- Equals / NotEquals ----------------------------------------------------------------


def _equals(key: Any, value: Any, *, negate: bool = False) -> bool:
    """Equals, or with ``negate`` NotEquals (which answers true on most type mismatches)."""
    mismatch = negate
    if isinstance(key, bool):
        if not isinstance(value, bool):
            return mismatch
        return (key == value) != negate
    if is_number(key):
        if isinstance(value, bool):
            return mismatch
        if is_number(value):
            return (float(key) == float(value)) != negate
        if isinstance(value, str):
            parsed = parse_go_float(value)
            return mismatch if parsed is None else (parsed == float(key)) != negate
        return mismatch
    if isinstance(key, str):
        pair = _duration_pair(key, value)
        if pair is not None:
            return (pair[0] == pair[1]) != negate
        key_quantity = parse_quantity(key)
        if key_quantity is not None and isinstance(value, str):
            value_quantity = parse_quantity(value)
            if value_quantity is None:
                return mismatch
            return (key_quantity.value == value_quantity.value) != negate
        if isinstance(value, str):
            return wildcard.match(value, key) != negate
        return mismatch
    if isinstance(key, (dict, list)):
        if type(value) is not type(key):
            return mismatch
        return _deep_equal(key, value) != negate
    return False


# -- GreaterThan / LessThan family -----------------------------------------------------


def _ordering_number(cmp: Compare, key: float, value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if is_number(value):
        return cmp(key, float(value))
    if isinstance(value, str):
        pair = _duration_pair(key, value)
        if pair is not None:
            return cmp(*pair)
        parsed = parse_go_float(value)
        return parsed is not None and cmp(key, parsed)
    return False


def _ordering(cmp: Compare, key: Any, value: Any) -> bool:
    if isinstance(key, bool):
        return False
    if is_number(key):
        return _ordering_number(cmp, float(key), value)
    if not isinstance(key, str):
        return False
    pair = _duration_pair(key, value)
    if pair is not None:
        return cmp(*pair)
    if isinstance(value, str):
        key_quantity, value_quantity = parse_quantity(key), parse_quantity(value)
        if key_quantity is not None and value_quantity is not None:
            return cmp(key_quantity.value, value_quantity.value)
    number = parse_go_float(key)
    if number is not None:
        return _ordering_number(cmp, number, value)
    version = parse_version(key)
    if version is not None:
        other = parse_version(value) if isinstance(value, str) else None
        return other is not None and cmp(version.compare(other), 0)
    return False


def _duration_operand(x: Any) -> int | None:
    if isinstance(x, bool):
        return None
    if is_number(x):
        return int(float(x)) * SECOND
    if isinstance(x, str):
        return parse_duration(x)
    return None


def _duration_ordering(cmp: Compare, key: Any, value: Any) -> bool:
    k, v = _duration_operand(key), _duration_operand(value)
    return k is not None and v is not None and cmp(k, v)


# -- In family ---------------------------------------------------------------------------


def _texts(items: list[Any]) -> list[str]:
    """``sprint`` of each item, charged to the rule's budget: one step per item, and a
    written-out size check for maps and lists (a value of shared parts can be huge)."""
    budget = active()
    budget.charge(len(items))
    if all(item.__class__ is str for item in items):
        return items  # (most lists: ``sprint`` gives a string as it is)
    texts = []
    for item in items:
        if item.__class__ is str:  # (most items: ``sprint`` gives a string as it is)
            texts.append(item)
            continue
        if isinstance(item, (dict, list)):
            budget.check_string(text_size(item, budget.limits.string_length), "a condition value")
        texts.append(sprint(item))
    return texts


def _partnered(keys: list[str], values: list[str]) -> Iterator[bool]:
    """For each key, whether a value matches it either way; each key's comparisons are
    charged to the rule's budget before they are made."""
    budget = active()
    for k in keys:
        budget.charge(len(values))
        yield any(_both_ways(k, v) for v in values)


def _both_ways(a: str, b: str) -> bool:
    return wildcard.match(a, b) or wildcard.match(b, a)


def _decode_json(raw: str) -> tuple[bool, Any]:
    def reject(constant: str) -> Any:
        raise ValueError(constant)

    try:
        return True, json.loads(raw, parse_constant=reject)
    except (ValueError, RecursionError):
        return False, None


def _string_array(data: Any) -> list[str] | None:
    """Go ``json.Unmarshal`` into ``[]string`` of decoded data; None when it fails."""
    if data is None:
        return []
    if not isinstance(data, list):
        return None
    out = []
    for item in data:
        if item is not None and not isinstance(item, str):
            return None
        out.append(item or "")
    return out


def _strings_of(raw: str, *, lenient: bool) -> list[str] | None:
    """V as a string list: a JSON string array, or (``lenient``, not JSON at all) ``[V]``."""
    valid, data = _decode_json(raw)
    if not valid:
        return [raw] if lenient else None
    return _string_array(data)


def _in_scalar(key: str, value: Any) -> bool | None:
    """Deprecated ``In`` for a scalar key; None when V has an invalid type."""
    if isinstance(value, list):
        return any(_both_ways(item, key) for item in _texts(value))
    if isinstance(value, str):
        if wildcard.match(value, key):
            return True
        values = _strings_of(value, lenient=False)
        return None if values is None else key in values
    return None


def _in_list(keys: list[Any], value: Any, *, negate: bool) -> bool | None:
    for item in keys:
        if not isinstance(item, str):
            raise ConditionError(f"In/NotIn key list element {item!r} is not a string")
    if isinstance(value, list):
        if not all(isinstance(item, str) for item in value):
            return None
        values: list[str] | None = value
    elif isinstance(value, str):
        if len(keys) == 1 and keys[0] == value:
            return True  # also for NotIn (Kyverno quirk)
        values = _strings_of(value, lenient=False)
    else:
        return None
    if values is None:
        return None
    active().charge(len(keys) + len(values))
    present = set(values)
    if negate:
        return any(item not in present for item in keys)
    return all(item in present for item in keys)


def _any_in_scalar(key: str, value: Any) -> bool | None:
    """``AnyIn``/``AllIn`` for a scalar key; None when V has an invalid type."""
    if isinstance(value, list):
        return any(_both_ways(item, key) for item in _texts(value))
    if isinstance(value, str):
        if wildcard.match(value, key):
            return True
        if is_range(value):
            return compare_scalar(key, value)
        values = _strings_of(value, lenient=True)
        return None if values is None else key in values
    return None


def _any_in_list(keys: list[str], value: Any, *, negate: bool) -> bool:
    if isinstance(value, list):
        values: list[str] | None = _texts(value)
    elif isinstance(value, bool) or is_number(value):
        values = [text(value)]
    elif isinstance(value, str):
        if len(keys) == 1 and keys[0] == value:
            return not negate
        if is_range(value):
            pattern = value.replace("-", "!-", 1) if negate else value
            return any(compare_scalar(item, pattern) for item in keys)
        values = _strings_of(value, lenient=True)
    else:
        return False
    if values is None:
        return False
    if negate:
        return not all(_partnered(keys, values))
    return any(_partnered(keys, values))


def _all_in_list(keys: list[str], value: Any, *, negate: bool) -> bool:
    if isinstance(value, list):
        values: list[str] | None = _texts(value)
    elif isinstance(value, str):
        if len(keys) == 1 and keys[0] == value:
            return not negate
        if is_range(value):
            inside = [compare_scalar(item, value) for item in keys]
            return not any(inside) if negate else all(inside)
        values = _strings_of(value, lenient=True)
    else:
        return False
    if values is None:
        return False
    partnered = list(_partnered(keys, values))
    return not any(partnered) if negate else all(partnered)


def _membership(name: str, key: Any, value: Any) -> bool:
    if isinstance(key, (str, bool)) or is_number(key):
        key_text = text(key)
        found = _in_scalar(key_text, value) if name in ("in", "notin") else _any_in_scalar(
            key_text, value
        )
        if name in ("in", "anyin", "allin"):
            return bool(found)
        return found is not None and not found
    if isinstance(key, list):
        if name in ("in", "notin"):
            return bool(_in_list(key, value, negate=name == "notin"))
        texts = _texts(key)
        if name in ("anyin", "anynotin"):
            return _any_in_list(texts, value, negate=name == "anynotin")
        return _all_in_list(texts, value, negate=name == "allnotin")
    return False


_HANDLERS: dict[str, Callable[[Any, Any], bool]] = {
    "equals": _equals,
    "equal": _equals,
    "notequals": partial(_equals, negate=True),
    "notequal": partial(_equals, negate=True),
    **{name: partial(_membership, name) for name in
       ("in", "notin", "anyin", "allin", "anynotin", "allnotin")},
    "greaterthan": partial(_ordering, op.gt),
    "greaterthanorequals": partial(_ordering, op.ge),
    "lessthan": partial(_ordering, op.lt),
    "lessthanorequals": partial(_ordering, op.le),
    "durationgreaterthan": partial(_duration_ordering, op.gt),
    "durationgreaterthanorequals": partial(_duration_ordering, op.ge),
    "durationlessthan": partial(_duration_ordering, op.lt),
    "durationlessthanorequals": partial(_duration_ordering, op.le),
}


def evaluate_operator(name: str, key: Any, value: Any) -> bool:
    """Apply the operator ``name`` (case-insensitive) to K and V."""
    handler = _HANDLERS.get(name.lower())
    if handler is None:
        raise ConditionError(f"unknown condition operator {name!r}")
    return handler(key, value)
