"""Kyverno's JMESPath dialect (spec 7.3): compiled expressions and the evaluator.

Expressions are compiled once (bounded cache); unknown function names are rejected at
compile time. Evaluation goes through an ``Evaluator`` that holds one interpreter
(``interpreter``) and one function registry (``functions``), and runs each expression as
closures built from its AST once (``compiler``, same semantics as the interpreter).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Any

import jmespath
from jmespath import exceptions as jp_exceptions
from jmespath import visitor

from scanner.engine.golang import fmt as gofmt
from scanner.engine.jmespath.compiler import compile_closure
from scanner.engine.jmespath.functions import FUNCTION_NAMES, build_functions
from scanner.engine.jmespath.interpreter import JMESPathError, KyvernoInterpreter


class Expression:
    """A compiled JMESPath expression (immutable; share freely)."""

    __slots__ = ("ast", "text")

    def __init__(self, text: str, ast: dict) -> None:
        self.text = text
        self.ast = ast

    def search(self, data: Any, evaluator: Evaluator | None = None) -> Any:
        """Evaluate against ``data`` (no clock unless ``evaluator`` brings one)."""
        return (evaluator or default_evaluator()).search(self, data)

    def __repr__(self) -> str:
        return f"Expression({self.text!r})"


class Evaluator:
    """Evaluates compiled expressions with one function registry and one interpreter."""

    def __init__(self, functions: jmespath.functions.Functions) -> None:
        self.functions = functions
        self._interpreter = KyvernoInterpreter(visitor.Options(custom_functions=functions))
        self._compile = compile_closure
        self._compiled: dict[Expression, Callable[[Any], Any]] = {}

    def search(self, expression: Expression | str, data: Any) -> Any:
        if isinstance(expression, str):
            expression = compile_expression(expression)
        try:
            run = self._compiled.get(expression)
            if run is None:
                if len(self._compiled) >= _COMPILED_LIMIT:
                    self._compiled.clear()
                run = self._compiled[expression] = self._compile(expression.ast, self._interpreter)
            return run(data)
        except JMESPathError:
            raise
        except jp_exceptions.JMESPathError as exc:
            raise JMESPathError(str(exc)) from exc
        except RecursionError as exc:
            raise JMESPathError("expression nested too deeply") from exc


_COMPILED_LIMIT = 8192  # closures kept per evaluator, as many as compile_expression keeps ASTs
_DEFAULT: list[Evaluator] = []


def default_evaluator() -> Evaluator:
    """The shared evaluator without a clock (time functions needing "now" fail)."""
    if not _DEFAULT:
        _DEFAULT.append(Evaluator(build_functions()))
    return _DEFAULT[0]


def _function_names(ast: dict) -> list[str]:
    names, stack = [], [ast]
    while stack:
        node = stack.pop()
        if node.get("type") == "function_expression":
            names.append(node["value"])
        stack.extend(c for c in node.get("children", ()) if isinstance(c, dict))
    return names


@lru_cache(maxsize=8192)
def compile_expression(text: str) -> Expression:
    """Parse ``text``; raise ``JMESPathError`` if it is invalid or calls an unknown function."""
    if not isinstance(text, str):
        raise JMESPathError(f"expression must be a string, not {gofmt.to_json(text)}")
    try:
        ast = jmespath.compile(text).parsed
    except jp_exceptions.JMESPathError as exc:
        raise JMESPathError(_parse_message(text, exc)) from exc
    except (RecursionError, ValueError) as exc:
        raise JMESPathError(f"invalid JMESPath expression {text!r}: {exc}") from exc
    for name in _function_names(ast):
        if name not in FUNCTION_NAMES:
            raise JMESPathError(f"Unknown function: {name}()")
    return Expression(text, ast)


def _parse_message(text: str, exc: Exception) -> str:
    detail = getattr(exc, "msg", None) or str(exc).splitlines()[0]
    pos = getattr(exc, "lex_position", None)
    where = f" at position {pos}" if isinstance(pos, int) else ""
    return f"invalid JMESPath expression {text!r}{where}: {detail}"
