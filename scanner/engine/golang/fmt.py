"""Go-compatible text of JSON values (spec 7.8).

Resources are evaluated as Kyverno's CLI sees them: every number is a 64-bit float.
Python ints are therefore formatted as the float of the same value. Booleans are
checked before numbers everywhere (``bool`` is an ``int`` in Python).
"""

from __future__ import annotations

import math
from decimal import Decimal
from typing import Any, TypeGuard


def is_number(value: Any) -> TypeGuard[int | float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _digits(value: float) -> tuple[str, int]:
    """Shortest round-trip digits of ``abs(value)`` and the decimal point position.

    The value equals ``0.<digits> * 10**dp``.
    """
    _, digits, exponent = Decimal(repr(abs(float(value)))).as_tuple()
    text = "".join(map(str, digits)).lstrip("0")
    if not text:
        return "0", 1
    # value = int(text) * 10**exponent
    dp = len(text) + int(exponent)  # type: ignore[arg-type]
    return text.rstrip("0"), dp


def _exp_text(digits: str, dp: int, letter: str, min_exp_digits: int = 2) -> str:
    exp = dp - 1
    mant = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
    sign = "-" if exp < 0 else "+"
    return f"{mant}{letter}{sign}{abs(exp):0{min_exp_digits}d}"


def _plain_text(digits: str, dp: int) -> str:
    if dp <= 0:
        return "0." + "0" * (-dp) + digits
    if dp >= len(digits):
        return digits + "0" * (dp - len(digits))
    return digits[:dp] + "." + digits[dp:]


def _special(value: float) -> str | None:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    return None


def format_g(value: float) -> str:
    """Go ``%v`` / ``strconv.FormatFloat(f, 'g', -1, 64)``: ``1e+06``, ``0.0001``, ``1e-05``."""
    special = _special(float(value))
    if special:
        return special
    if value == 0:
        return "-0" if math.copysign(1.0, float(value)) < 0 else "0"
    digits, dp = _digits(value)
    sign = "-" if value < 0 else ""
    exp = dp - 1
    if exp < -4 or exp >= 6:
        return sign + _exp_text(digits, dp, "e")
    return sign + _plain_text(digits, dp)


def format_upper_e(value: float) -> str:
    """Go ``strconv.FormatFloat(f, 'E', -1, 64)``: ``8E+01``, ``1.2325E+02``."""
    special = _special(float(value))
    if special:
        return special
    if value == 0:
        return "0E+00"
    digits, dp = _digits(value)
    return ("-" if value < 0 else "") + _exp_text(digits, dp, "E")


def format_fixed6(value: float) -> str:
    """Go ``%f``: six decimals (``80.000000``)."""
    return f"{float(value):.6f}"


def format_json_number(value: float) -> str:
    """Go ``encoding/json`` float text: plain unless < 1e-6 or >= 1e21."""
    if isinstance(value, int) and abs(value) < 10**21:
        return str(value)
    f = float(value)
    special = _special(f)
    if special:
        raise ValueError(f"unsupported value: {special}")
    if f == 0:
        return "0" if math.copysign(1.0, f) > 0 else "-0"
    digits, dp = _digits(f)
    sign = "-" if f < 0 else ""
    a = abs(f)
    if a < 1e-6 or a >= 1e21:
        text = _exp_text(digits, dp, "e", 1)
        # Go cleans e-07 to e-7 (exponent at least one digit)
        return sign + text
    return sign + _plain_text(digits, dp)


def text(value: Any) -> str:
    """Go ``fmt.Sprint`` of a scalar: strings as is, ``true``/``false``, floats ``%v``."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if is_number(value):
        return format_g(value)
    if value is None:
        return "<nil>"
    return to_json(value)



def sprint(value: Any) -> str:
    """Go ``fmt.Sprint`` of a JSON value: maps as ``map[k:v]`` with sorted keys, lists as ``[a b]``."""
    if isinstance(value, dict):
        items = sorted(value.items(), key=lambda kv: str(kv[0]))
        return "map[" + " ".join(f"{k}:{sprint(v)}" for k, v in items) + "]"
    if isinstance(value, list):
        return "[" + " ".join(sprint(v) for v in value) + "]"
    return text(value)


def type_name(value: Any) -> str:
    """Go ``%T`` of a decoded JSON value."""
    if isinstance(value, dict):
        return "map[string]interface {}"
    if isinstance(value, list):
        return "[]interface {}"
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, str):
        return "string"
    return "float64"

_HTML_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def _json_string(value: str) -> str:
    import json

    out = json.dumps(value, ensure_ascii=False)
    if any(c in out for c in _HTML_ESCAPES):
        out = "".join(_HTML_ESCAPES.get(c, c) for c in out)
    return out


def to_json(value: Any) -> str:
    """Go ``json.Marshal``: compact, sorted map keys, HTML characters escaped."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return _json_string(value)
    if is_number(value):
        return format_json_number(value)
    if isinstance(value, dict):
        items = sorted(value.items(), key=lambda kv: str(kv[0]))
        return "{" + ",".join(_json_string(str(k)) + ":" + to_json(v) for k, v in items) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(to_json(v) for v in value) + "]"
    return _json_string(str(value))


def to_text(value: Any) -> str:
    """How a value is embedded into a larger string: strings as is, others as Go JSON."""
    if isinstance(value, str):
        return value
    return to_json(value)

