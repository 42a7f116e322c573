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
