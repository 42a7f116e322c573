"""The CEL environment of Kyverno's ``validate.cel`` rules, on the CEL C++ runtime.

Library: ``cel-expr-python`` (Google's CEL C++ implementation). The environment declares
the admission-policy variables as ``dyn`` and loads the optional-types, strings and
bindings extensions and the Kubernetes lists and regex libraries (``cel_kubernetes``);
Kyverno's ``variables`` and ``orValue`` behaviour are source rewrites (``cel_rewrite``).
Evaluation is bounded by the runtime's comprehension iteration budget (10,000 iterations
per evaluated expression): a runaway expression stops with an error.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from cel_expr_python import cel as _cel
from cel_expr_python.ext import ext_bindings, ext_optional, ext_strings

from scanner.engine.cel import kubernetes as cel_kubernetes
from scanner.engine.cel import regex as cel_regex
from scanner.engine.types import RuleStatus
from scanner.errors import EngineError

# the root variables of an admission-policy expression (spec 12.2); ``authorizer`` is left
# undeclared, so that every use of it is reported as not supported
ROOT_VARIABLES = ("object", "oldObject", "request", "namespaceObject", "params")

# functions and variables of the Kubernetes CEL environment the C++ runtime lacks (the
# Kubernetes libraries built on opaque types, see ``cel_kubernetes``, the sets extension
# and cel-go's two-variable comprehensions); named in compile errors
KUBERNETES_LIBRARY = frozenset(
    {
        "quantity",
        "isQuantity",
        "url",
        "isURL",
        "ip",
        "isIP",
        "cidr",
        "isCIDR",
        "semver",
        "isSemver",
        "sets",
        "format",
        "image",
        "isImage",
        "authorizer",
        "transformList",
        "transformMap",
        "transformMapEntry",
    }
)

# comprehension macros that also take a two-variable form (cel-go ``TwoVarComprehensions``)
_TWO_VARIABLE_COMPREHENSION = re.compile(
    r"\.\s*(?:all|exists|existsOne|exists_one)\s*\(\s*[A-Za-z_]\w*\s*,\s*[A-Za-z_]\w*\s*,"
)

# the strings extension version of the Kubernetes base environment
STRINGS_VERSION = 2


class CelCompileError(EngineError):
    """A CEL expression of a policy does not compile; ``pointer`` is its JSON pointer."""

    def __init__(self, message: str, pointer: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.pointer = pointer

    def __str__(self) -> str:
        return f"{self.pointer}: {self.message}" if self.pointer else self.message


@dataclass(frozen=True, slots=True)
class CelResult:
    """A ``validate.cel`` rule's status and message for one resource."""

    status: RuleStatus
    message: str


@dataclass(frozen=True, slots=True)
class CelOutcome:
    """The value of one evaluation, or the error text when it failed."""

    value: Any = None
    error: str | None = None


_ENV: Any = None


def environment() -> Any:
    """The shared environment (built on first use; environments are immutable)."""
    global _ENV
    if _ENV is None:
        _ENV = _cel.NewEnv(
            config=cel_kubernetes.checker_config(),
            variables={name: _cel.Type.DYN for name in ROOT_VARIABLES},
            extensions=[
                ext_optional.ExtOptional(),
                ext_strings.ExtStrings(STRINGS_VERSION),
                ext_bindings.ExtBindings(),
                cel_kubernetes.extension(),
            ],
            function_impls=cel_kubernetes.function_impls(),
        )
    return _ENV


_POSITION = re.compile(r"^ERROR: <input>:\d+:\d+: ")
_STATUS = re.compile(r"^(?:[A-Z_]+): | \[[A-Z_]+\]$")


def _clean(message: str, *, keep_position: bool) -> str:
    lines = [_STATUS.sub("", line) for line in str(message).strip().splitlines()]
    if not keep_position:
        lines = [_POSITION.sub("", line) for line in lines if not line.startswith(" |")]
    text = "\n".join(line for line in lines if line).strip()
    return text.replace(" (in container '')", "")


def check_syntax(text: str) -> None:
    """Parse ``text`` as written (no type check) so syntax errors point into it."""
    try:
        environment().compile(text, disable_check=True)
    except RuntimeError as e:
        raise CelCompileError(_clean(str(e), keep_position=True)) from e


def compile_program(text: str, *, expect: str | None = None) -> Any:
    """Compile (rewritten) text with type checking; ``expect`` ``"bool"``/``"string"``
    requires that result type (or ``dyn``).

    The C++ checker lacks the cross-type numeric comparisons Kubernetes enables
    (``int < double``); a text rejected only for an overload (not one of the Kubernetes
    library functions, whose overloads are Kubernetes' own) is compiled without the type
    check, and the runtime, which has those comparisons, decides.
    """
    env = environment()
    try:
        program = env.compile(text)
    except RuntimeError as e:
        message = _clean(str(e), keep_position=False)
        undeclared = re.findall(r"undeclared reference to '([^']+)'", message)
        if (unsupported := _unsupported_feature(text, message, undeclared)) is not None:
            raise CelCompileError(f"not supported: {unsupported}") from e
        if undeclared or "no matching overload" not in message or cel_kubernetes.rejected_call(message):
            raise CelCompileError(message) from e
        try:
            program = env.compile(text, disable_check=True)
        except RuntimeError as e2:  # pragma: no cover - parsed above already
            raise CelCompileError(_clean(str(e2), keep_position=False)) from e2
    else:
        if expect is not None:
            result = program.return_type()
            wanted = _cel.Type.BOOL if expect == "bool" else _cel.Type.STRING
            if result != wanted and result != _cel.Type.DYN:
                raise CelCompileError(f"expression must evaluate to {expect}, not {result.name()}")
    _check_pattern_literals(text)
    return program


def _unsupported_feature(text: str, message: str, undeclared: list[str]) -> str | None:
    """The CEL feature of the Kubernetes environment a compile error of ``text`` (naming the
    ``undeclared`` references) is due to."""
    if undeclared and _TWO_VARIABLE_COMPREHENSION.search(text):
        return "two-variable comprehensions"
    for name in undeclared:
        if name in KUBERNETES_LIBRARY or name.split(".")[-1] in KUBERNETES_LIBRARY:
            return f"CEL function or variable {name!r} (Kubernetes CEL library)"
    return cel_kubernetes.unsupported_overload(message)


def _check_pattern_literals(text: str) -> None:
    """Compile the string-literal patterns of ``find``/``findAll`` calls, as Kubernetes
    does when it creates the program."""
    for literal in cel_regex.pattern_literals(text):
        pattern = environment().compile(literal).eval().value()
        if isinstance(pattern, str) and (error := cel_regex.pattern_error(pattern)) is not None:
            raise CelCompileError(error)


def activation(data: dict[str, Any]) -> Any:
    """An activation binding the root variables (absent ones are null)."""
    bound = {name: data.get(name) for name in ROOT_VARIABLES}
    return environment().Activation(bound)


class CelUnsupportedError(EngineError):
    """An expression met, at run time, a value a Kubernetes CEL library function cannot
    handle exactly on this runtime (see ``cel_kubernetes``)."""


def run(program: Any, bound: Any) -> CelOutcome:
    """Evaluate a compiled program against an activation; errors become text.

    Raises ``CelUnsupportedError`` when a Kubernetes library function met a value it
    cannot handle exactly (durations and timestamps in list functions, regular
    expressions ``re2`` cannot bound), even if the expression absorbed the error."""
    cel_kubernetes.reset_unsupported()
    try:
        result = program.eval(bound)
    except RuntimeError as e:
        outcome = CelOutcome(error=error_text(str(e)))
    else:
        if result.type() == _cel.Type.ERROR:
            outcome = CelOutcome(error=error_text(str(result.value())))
        else:
            outcome = CelOutcome(value=result.plain_value())
    if (unsupported := cel_kubernetes.take_unsupported()) is not None:
        raise CelUnsupportedError(unsupported)
    return outcome


_KEY = re.compile(r'Key not found in map : "?(.*?)"?$')
_OVERLOAD = re.compile(r"No matching overloads found : (.*)$")


def error_text(message: str) -> str:
    """Runtime error text in the spelling of the Go runtime Kyverno uses where it differs
    (``no such key: x``, ``no such overload: ...``)."""
    text = _clean(message, keep_position=False)
    if m := _KEY.search(text):
        return f"no such key: {m.group(1)}"
    if m := _OVERLOAD.search(text):
        return f"no such overload: {m.group(1)}"
    if "Iteration budget exceeded" in text:
        return "operation cancelled: actual cost limit exceeded (comprehension iteration budget)"
    return text


def as_cel_data(value: Any) -> Any:
    """A resource as Kyverno's CLI hands it to CEL: every integer becomes a float64
    (spec 0.3), so ``object.spec.replicas`` is a double; CEL compares numbers across
    types, and arithmetic mixing double and int is an error there as here."""
    if isinstance(value, bool) or value is None or isinstance(value, (str, float)):
        return value
    if isinstance(value, int):
        return float(value)
    if isinstance(value, dict):
        return {key: as_cel_data(item) for key, item in value.items()}
    if isinstance(value, list):
        return [as_cel_data(item) for item in value]
    return value
