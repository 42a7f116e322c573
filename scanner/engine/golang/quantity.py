"""Kubernetes resource quantities, parsed exactly (spec 7.8)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

BINARY_SI = "BinarySI"
DECIMAL_SI = "DecimalSI"
DECIMAL_EXPONENT = "DecimalExponent"

_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {
    "n": Fraction(1, 10**9),
    "u": Fraction(1, 10**6),
    "m": Fraction(1, 10**3),
    "": Fraction(1),
    "k": Fraction(10**3),
    "M": Fraction(10**6),
    "G": Fraction(10**9),
    "T": Fraction(10**12),
    "P": Fraction(10**15),
    "E": Fraction(10**18),
}
_SHAPE = re.compile(r"([+-]?)(\d+(?:\.\d*)?|\.\d+)(.*)", re.ASCII | re.DOTALL)
_EXPONENT = re.compile(r"[eE]([+-]?\d+)", re.ASCII)


@dataclass(frozen=True, slots=True)
class Quantity:
    """A Kubernetes resource quantity: its exact value and the format it was written in."""

    value: Fraction
    format: str


@lru_cache(maxsize=4096)
def parse_quantity(text: str) -> Quantity | None:
    """The quantity written in ``text``, or None when it is not a valid quantity."""
    if not isinstance(text, str):
        return None
    m = _SHAPE.fullmatch(text)
    if m is None:
        return None
    sign, number, suffix = m.groups()
    if "." in number:
        whole, _, frac = number.partition(".")
        value = Fraction(int(whole or "0")) + (
            Fraction(int(frac), 10 ** len(frac)) if frac else Fraction(0)
        )
    else:
        value = Fraction(int(number))
    if suffix in _BINARY:
        value *= _BINARY[suffix]
        fmt = BINARY_SI
    elif suffix in _DECIMAL:
        value *= _DECIMAL[suffix]
        fmt = DECIMAL_SI
    else:
        e = _EXPONENT.fullmatch(suffix)
        if e is None:
            return None
        exp = int(e.group(1))
        if abs(exp) > 1000:
            return None
        value *= Fraction(10) ** exp
        fmt = DECIMAL_EXPONENT
    if sign == "-":
        value = -value
    return Quantity(value, fmt)


_DECIMAL_SUFFIX = {
    -9: "n", -6: "u", -3: "m", 0: "", 3: "k", 6: "M", 9: "G", 12: "T", 15: "P", 18: "E",
}
_BINARY_SUFFIX = {0: "", 1: "Ki", 2: "Mi", 3: "Gi", 4: "Ti", 5: "Pi", 6: "Ei"}
_NANO = Fraction(1, 10**9)


def _decimal_parts(value: Fraction) -> tuple[int, int]:
    """``value == mantissa * 10**exponent`` with no trailing zeros in ``mantissa``."""
    den = value.denominator
    twos = fives = 0
    while den % 2 == 0:
        den //= 2
        twos += 1
    while den % 5 == 0:
        den //= 5
        fives += 1
    if den != 1:  # not a terminating decimal: round away from zero at nano precision
        scaled = value / _NANO
        ceil = -((-abs(scaled.numerator)) // scaled.denominator)
        value = Fraction(ceil if value > 0 else -ceil) * _NANO
        return _decimal_parts(value)
    exponent = -max(twos, fives)
    mantissa = int(value * Fraction(10) ** -exponent)
    while mantissa and mantissa % 10 == 0:
        mantissa //= 10
        exponent += 1
    return mantissa, exponent


def format_quantity(value: Fraction, fmt: str) -> str:
    """Kubernetes canonical quantity text (``Quantity.String()``): ``1536Mi``, ``1500m``, ``2k``.

    Binary quantities whose value is below 1024 in magnitude or not a whole number print
    in decimal SI. Decimal exponents are lowered to a multiple of three. As in Kubernetes,
    a decimal SI exponent without a suffix (beyond ``E``/``n``) prints without a suffix.
    """
    if value == 0:
        return "0"
    if fmt == BINARY_SI:
        if -1024 < value < 1024 or value.denominator != 1:
            fmt = DECIMAL_SI
        else:
            amount, power = int(value), 0
            while power < 6 and amount % 1024 == 0:
                amount //= 1024
                power += 1
            return f"{amount}{_BINARY_SUFFIX[power]}"
    mantissa, exponent = _decimal_parts(value)
    lowered = (exponent // 3) * 3
    mantissa *= 10 ** (exponent - lowered)
    if fmt == DECIMAL_EXPONENT:
        return f"{mantissa}e{lowered}" if lowered else str(mantissa)
    return f"{mantissa}{_DECIMAL_SUFFIX.get(lowered, '')}"
