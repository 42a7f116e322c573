"""The Kubernetes CEL libraries the C++ runtime environment gets: lists (``cel_lists``) and
regex (``cel_regex``), declared and bound for ``cel-expr-python``.

The other Kubernetes libraries (quantity, url, ip/cidr, semver, format, image, authz) are
built on opaque CEL types (``kubernetes.Quantity``, ``net.IP`` ...). The Python binding has
no opaque values: a Python function can only exchange null, bool, int, uint, double, string,
bytes, duration, timestamp, list, map, type and protobuf messages; an overload declared with
an abstract type fails at run time ("Unimplemented type"). Those libraries stay "not
supported" (``cel_env.KUBERNETES_LIBRARY``).

A library function that meets a value the binding cannot carry exactly raises
``NotImplementedError``; the message is kept (``take_unsupported``) so that the evaluation
reports "not supported" even when CEL absorbed the error (``false && ...``, ``orValue``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any

from cel_expr_python import cel as _cel

from scanner.engine.cel import lists as cel_lists
from scanner.engine.cel import regex as cel_regex

_UNSUPPORTED: ContextVar[str | None] = ContextVar("kubernetes_cel_unsupported", default=None)


def _bound(function: Callable[..., Any]) -> Callable[..., Any]:
    """``function`` as the runtime calls it: a ``NotImplementedError`` is remembered."""

    def call(*args: Any) -> Any:
        try:
            return function(*args)
        except NotImplementedError as e:
            _UNSUPPORTED.set(str(e))
            raise

    return call


def reset_unsupported() -> None:
    """Forget a "not supported" message of an earlier evaluation."""
    _UNSUPPORTED.set(None)


def take_unsupported() -> str | None:
    """The "not supported" message raised during the last evaluation, if any (and forget it)."""
    message = _UNSUPPORTED.get()
    _UNSUPPORTED.set(None)
    return message


def checker_config() -> Any:
    """The environment config declaring the lists library's typed overloads."""
    return _cel.NewEnvConfigFromYaml(cel_lists.checker_config())


def function_impls() -> dict[str, Callable[..., Any]]:
    """The implementations of the config-declared functions, by carrier overload id."""
    return {cel_lists.carrier_overload(name): _bound(function) for name, function in cel_lists.IMPLEMENTATIONS.items()}


def extension() -> Any:
    """The functions declared next to the strings extension's (``indexOf``, ``lastIndexOf``
    on lists) and the regex library."""
    t = _cel.Type
    list_dyn = t.List(t.DYN)

    def overload(overload_id: str, result: Any, parameters: list[Any], function: Callable[..., Any]) -> Any:
        return _cel.Overload(overload_id, result, parameters, is_member=True, impl=_bound(function))

    return _cel.CelExtension(
        "kubernetes",
        [
            _cel.FunctionDecl(
                "indexOf", [overload("list_a_index_of_int", t.INT, [list_dyn, t.DYN], cel_lists.index_of)]
            ),
            _cel.FunctionDecl(
                "lastIndexOf",
                [overload("list_a_last_index_of_int", t.INT, [list_dyn, t.DYN], cel_lists.last_index_of)],
            ),
            _cel.FunctionDecl("find", [overload("string_find_string", t.STRING, [t.STRING, t.STRING], cel_regex.find)]),
            _cel.FunctionDecl(
                "findAll",
                [
                    overload("string_find_all_string", t.List(t.STRING), [t.STRING, t.STRING], cel_regex.find_all),
                    overload(
                        "string_find_all_string_int", t.List(t.STRING), [t.STRING, t.STRING, t.INT], cel_regex.find_all
                    ),
                ],
            ),
        ],
    )


# the functions declared here: a call the type checker rejects is a compile error, as in Kubernetes
FUNCTIONS = (*cel_lists.IMPLEMENTATIONS, "indexOf", "lastIndexOf", *cel_regex.FUNCTIONS)
_REJECTED = re.compile("no matching overload for '(?:" + "|".join(FUNCTIONS) + ")'")


def rejected_call(message: str) -> bool:
    """Whether a type-check ``message`` rejects a call of one of the library functions."""
    return _REJECTED.search(message) is not None


_NO_OVERLOAD = re.compile(r"no matching overload for '(\w+)' applied to '\(list\(([\w.]+)\)\)'")
_ELEMENT = {"google.protobuf.Duration": "duration", "google.protobuf.Timestamp": "timestamp"}
_REASON = {
    "uint": "the runtime binding reads uint values as int",
    "duration": "the runtime binding truncates durations to microseconds",
    "timestamp": "the runtime binding truncates timestamps to microseconds",
}


def unsupported_overload(message: str) -> str | None:
    """The Kubernetes list function a type-check ``message`` rejects only because its
    overload for that element type is not declared here."""
    for function, type_name in _NO_OVERLOAD.findall(message):
        element = _ELEMENT.get(type_name, type_name)
        kubernetes = cel_lists.KUBERNETES_ELEMENT_TYPES.get(function, ())
        if element in kubernetes and element not in cel_lists.DECLARED_ELEMENT_TYPES[function]:
            return f"CEL function {function!r} on list({element}) (Kubernetes CEL library; {_REASON[element]})"
    return None
