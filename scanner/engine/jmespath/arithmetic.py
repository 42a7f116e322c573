"""Kyverno's arithmetic functions over numbers, quantities and durations (spec 7.7).

Operands: a JSON number is a scalar; a string is tried as a Kubernetes quantity first,
then as a Go duration (so ``"5"`` and ``"10m"`` are quantities, ``"1h"`` a duration).
Scalars behave like Go float64, quantities are exact and print canonically, durations are
integer nanoseconds and print Go style.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from scanner.engine.golang import fmt as gofmt
from scanner.engine.golang.duration import SECOND, format_duration, parse_duration
from scanner.engine.golang.quantity import Quantity, format_quantity, parse_quantity
from scanner.engine.jmespath.registry import FunctionSpec, error, int_number

_TYPES = "Types mismatch"


@dataclass(frozen=True, slots=True)
class _Qty:
    """A quantity operand of JMESPath arithmetic, with the scale Go's inf.Dec gives it."""

    q: Quantity
    scale: int  # Go inf.Dec scale of the parsed value (digits after the decimal point)


_QTY_TEXT = re.compile(r"[+-]?0*(\d*)(?:\.(\d*))?(.*)", re.DOTALL)
_DEC_EXP = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BIN_EXP = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}


def _go_scale(text: str) -> int:
    """The inf.Dec scale Kubernetes' ParseQuantity stores for ``text``.

    Values on ParseQuantity's int64 fast path keep their own scale; the others are stored
    as decimals rounded to nano precision (scale 9).
    """
    m = _QTY_TEXT.fullmatch(text)
    num, denom, suffix = (m.group(1) or "0"), (m.group(2) or ""), m.group(3)  # type: ignore[union-attr]
    if suffix in _BIN_EXP:
        digits = 15 - len(num) - _BIN_EXP[suffix] * 3 // 10 - 1
        return 0 if not denom and digits >= 0 else 9
    exponent = _DEC_EXP.get(suffix)
    if exponent is None:
        exponent = int(suffix[1:])
    scale = exponent - len(denom)
    if 18 - (len(num) + len(denom)) >= 0 and scale >= -9:
        return -scale
    return 9


def _operand(name: str, value: Any) -> float | _Qty | int | None:
    """float = scalar, _Qty = quantity, int = duration in nanoseconds."""
    if gofmt.is_number(value):
        return float(value)
    if isinstance(value, str):
        q = parse_quantity(value)
        if q is not None:
            return _Qty(q, _go_scale(value))
        ns = parse_duration(value)
        if ns is not None:
            return _Dur(ns)
    return None


class _Dur(int):
    """A duration operand (nanoseconds), distinct from scalars."""


def _operands(name: str, args: list[Any]) -> tuple[Any, Any]:
    a, b = _operand(name, args[0]), _operand(name, args[1])
    if a is None or b is None:
        raise error(name, "invalid operands")
    return a, b


def _scalar_quantity(name: str, value: float) -> _Qty:
    text = gofmt.format_g(value)
    q = parse_quantity(text)
    if q is None:
        raise error(name, f"quantities: invalid scalar {text}")
    return _Qty(q, _go_scale(text))


def _add_sub(name: str, args: list[Any], sign: int) -> Any:
    a, b = _operands(name, args)
    if isinstance(a, _Qty) and isinstance(b, _Qty):
        fmt = b.q.format if a.q.value == 0 else a.q.format
        return format_quantity(a.q.value + sign * b.q.value, fmt)
    if isinstance(a, _Dur) and isinstance(b, _Dur):
        return format_duration(a + sign * b)
    if isinstance(a, float) and isinstance(b, float):
        return a + sign * b
    raise error(name, _TYPES)


def _truncated_mod(a: int, b: int) -> int:
    r = abs(a) % abs(b)
    return -r if a < 0 else r


def _multiply(args: list[Any]) -> Any:
    a, b = _operands("multiply", args)
    if isinstance(a, float) and not isinstance(b, float):
        a, b = b, a
    if isinstance(b, float):
        if isinstance(a, float):
            return a * b
        if isinstance(a, _Qty):
            factor = _scalar_quantity("multiply", b)
            return format_quantity(a.q.value * factor.q.value, a.q.format)
        if isinstance(a, _Dur):
            return format_duration(int(a / SECOND * b * SECOND))
    raise error("multiply", _TYPES)


def _divide(args: list[Any]) -> Any:
    a, b = _operands("divide", args)
    zero = error("divide", "Zero divisor passed")
    if isinstance(a, _Qty) and isinstance(b, _Qty):
        if float(b.q.value) == 0:
            raise zero
        return float(a.q.value) / float(b.q.value)
    scalar_zero = isinstance(b, float) and b == 0
    duration_zero = isinstance(a, _Dur) and isinstance(b, _Dur) and b == 0
    if scalar_zero or duration_zero:
        raise zero
    if isinstance(a, _Qty) and isinstance(b, float):
        divisor = _scalar_quantity("divide", b)
        scale = max(a.scale, divisor.scale)
        step = Fraction(1, 10**scale) if scale >= 0 else Fraction(10 ** -scale)
        quotient = a.q.value / divisor.q.value / step
        truncated = math.trunc(quotient) * step
        return format_quantity(truncated, a.q.format)
    if isinstance(a, _Dur) and isinstance(b, _Dur):
        return (a / SECOND) / (b / SECOND)
    if isinstance(a, _Dur) and isinstance(b, float):
        return format_duration(int(a / SECOND / b * SECOND))
    if isinstance(a, float) and isinstance(b, float):
        return a / b
    raise error("divide", _TYPES)


def _integral(value: float) -> int:
    if not math.isfinite(value) or value != int(value):
        raise error("modulo", "Non-integer argument(s) passed for modulo")
    return int(value)


def _modulo(args: list[Any]) -> Any:
    a, b = _operands("modulo", args)
    zero = error("modulo", "Zero divisor passed")
    if isinstance(a, _Qty) and isinstance(b, _Qty):
        i1, i2 = _integral(float(a.q.value)), _integral(float(b.q.value))
        if i2 == 0:
            raise zero
        return format_quantity(Fraction(_truncated_mod(i1, i2)), a.q.format)
    if isinstance(a, _Dur) and isinstance(b, _Dur):
        if b == 0:
            raise zero
        return format_duration(_truncated_mod(a, b))
    if isinstance(a, float) and isinstance(b, float):
        i1, i2 = _integral(a), _integral(b)
        if i2 == 0:
            raise zero
        return float(_truncated_mod(i1, i2))
    raise error("modulo", _TYPES)


def _sum(args: list[Any]) -> Any:
    items = args[0]
    if not items:
        raise error("sum", "at least one element in the array is required")
    result = items[0]
    for item in items[1:]:
        result = _add_sub("sum", [result, item], 1)
    return result


def _go_round(value: float) -> float:
    """Go ``math.Round``: half away from zero; infinities and NaN unchanged."""
    if not math.isfinite(value):
        return value
    t: float = math.trunc(value)
    if abs(value - t) >= 0.5:
        t += math.copysign(1.0, value)
    return float(t)


def _power_of_ten(places: int) -> float:
    """Go ``math.Pow(10, places)``: overflows to +Inf."""
    try:
        return math.pow(10, places)
    except OverflowError:
        return math.inf


def _round(args: list[Any]) -> Any:
    try:
        places = int_number(float(args[1]))
    except ValueError:
        raise error("round", "Non-integer argument(s) passed for round off") from None
    if places < 0:
        # Kyverno formats argOutOfBoundsError without its two values: Go prints them so.
        raise error("round", "%!d(MISSING) argument is out of bounds (%!d(MISSING))")
    shift = _power_of_ten(places)
    return _go_round(float(args[0]) * shift) / shift


_KINDS = "numbers, quantities, and durations"

SPECS = (
    FunctionSpec("add", (("any",), ("any",)), "any",
                 "does arithmetic addition of two specified values of " + _KINDS,
                 lambda a: _add_sub("add", a, 1)),
    FunctionSpec("sum", (("array",),), "any",
                 "does arithmetic addition of specified array of values of " + _KINDS,
                 _sum),
    FunctionSpec("subtract", (("any",), ("any",)), "any",
                 "does arithmetic subtraction of two specified values of " + _KINDS,
                 lambda a: _add_sub("subtract", a, -1)),
    FunctionSpec("multiply", (("any",), ("any",)), "any",
                 "does arithmetic multiplication of two specified values of " + _KINDS,
                 _multiply),
    FunctionSpec("divide", (("any",), ("any",)), "any", "divisor must be non zero", _divide),
    FunctionSpec("modulo", (("any",), ("any",)), "any",
                 "divisor must be non-zero, arguments must be integers", _modulo),
    FunctionSpec("round", (("number",), ("number",)), "number",
                 "does roundoff to upto the given decimal places", _round),
)
