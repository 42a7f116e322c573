"""The cost of JMESPath function calls against the rule's budget (``budget``).

A call costs one step plus the items of its list and map arguments (the functions walk
them) and one step per KiB of its string arguments. Functions whose result can outgrow
their arguments are checked before they build it: ``replace_all``, ``replace`` and
``join`` by the exact length they would produce, ``to_string`` by the JSON size of its
argument (a value built from shared parts, such as a YAML alias chain or nested
multi-selects, can be exponentially larger written out than held), ``split`` by the
number of parts. Every result is then checked: a string's length, a list's or map's items
(charged as steps too).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from scanner.engine.budget import Budget, text_size

_KIB = 10


def argument_cost(args: list[Any]) -> int:
    cost = 1
    for arg in args:
        if isinstance(arg, (list, dict)):
            cost += len(arg)
        elif isinstance(arg, str):
            cost += len(arg) >> _KIB
    return cost


def _replace_length(text: str, old: str, new: str, count: int) -> int:
    found = len(text) + 1 if old == "" else text.count(old)
    if count >= 0:
        found = min(found, count)
    return len(text) + found * (len(new) - len(old))


def _replace_all(args: list[Any], budget: Budget) -> None:
    if len(args) == 3 and all(isinstance(a, str) for a in args) and len(args[2]) > len(args[1]):
        budget.check_string(_replace_length(args[0], args[1], args[2], -1), "replace_all()")


def _replace(args: list[Any], budget: Budget) -> None:
    if len(args) == 4 and all(isinstance(a, str) for a in args[:3]) and len(args[2]) > len(args[1]):
        n = args[3]
        count = int(n) if isinstance(n, (int, float)) and -(2**63) <= n < 2**63 else -1
        budget.check_string(_replace_length(args[0], args[1], args[2], count), "replace()")


def _join(args: list[Any], budget: Budget) -> None:
    if len(args) == 2 and isinstance(args[0], str) and isinstance(args[1], list):
        items = args[1]
        length = sum(len(x) for x in items if isinstance(x, str)) + len(args[0]) * max(0, len(items) - 1)
        budget.check_string(length, "join()")


def _to_string(args: list[Any], budget: Budget) -> None:
    if len(args) == 1 and isinstance(args[0], (list, dict)):
        limit = budget.limits.string_length
        budget.check_string(text_size(args[0], limit), "to_string()")


def _split(args: list[Any], budget: Budget) -> None:
    if len(args) == 2 and isinstance(args[0], str) and isinstance(args[1], str):
        text, sep = args
        budget.check_list(len(text) if sep == "" else text.count(sep) + 1, "split()")


GROWTH_CHECKS: dict[str, Callable[[list[Any], Budget], None]] = {
    "replace_all": _replace_all,
    "replace": _replace,
    "join": _join,
    "to_string": _to_string,
    "split": _split,
}
