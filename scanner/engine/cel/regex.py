"""Kubernetes' CEL regex library (k8s.io/apiserver ``pkg/cel/library/regex.go``):
``<string>.find(<string>)`` and ``<string>.findAll(<string>[, <int>])`` with Go's regexp
semantics (RE2, ``re2``).

A pattern Go rejects is the error ``Illegal regex: ...``; a pattern written as a string
literal is compiled when the program is created (Kubernetes' regex optimisation), so there
it is a compile error (``pattern_literals``). A pattern RE2 cannot hold (too large) raises
``NotImplementedError`` (``not supported``).
"""

from __future__ import annotations

from scanner.engine.cel.rewrite import Token, tokenize
from scanner.engine.golang.regexp import GoRegexp, RegexError, compile_re2

FUNCTIONS = ("find", "findAll")


def compiled(pattern: str) -> GoRegexp:
    """The compiled pattern; ``ValueError`` (``Illegal regex``) or ``NotImplementedError``."""
    try:
        return compile_re2(pattern)
    except RegexError as e:
        if str(e).startswith("not supported"):
            raise NotImplementedError(str(e)) from e
        raise ValueError(f"Illegal regex: {e}") from e


def find(text: str, pattern: str) -> str:
    """Go ``Regexp.FindString``: the leftmost match, or "" when there is none."""
    return compiled(pattern).find(text)


def find_all(text: str, pattern: str, limit: int = -1) -> list[str]:
    """Go ``Regexp.FindAllString``: successive non-overlapping matches, at most ``limit``
    when it is not negative; an empty match right after the previous match is skipped."""
    return compiled(pattern).find_all(text, limit)


def pattern_error(pattern: str) -> str | None:
    """Why creating a program fails for a literal ``pattern``: "not supported: ..." or
    "program instantiation failed: ..."; None when the pattern compiles."""
    try:
        compile_re2(pattern)
    except RegexError as e:
        message = str(e)
        return message if message.startswith("not supported") else f"program instantiation failed: {message}"
    return None


def pattern_literals(text: str) -> list[str]:
    """The string literals (source text) that are the whole pattern argument of a
    ``find``/``findAll`` call in ``text``, parentheses around them allowed."""
    tokens = tokenize(text)
    literals = []
    for i, token in enumerate(tokens[:-2]):
        if token.text == "." and tokens[i + 1].text in FUNCTIONS and tokens[i + 2].text == "(":
            literal = _literal_argument(tokens, i + 3)
            if literal is not None:
                literals.append(literal)
    return literals


def _literal_argument(tokens: list[Token], start: int) -> str | None:
    depth = 0
    while start + depth < len(tokens) and tokens[start + depth].text == "(":
        depth += 1
    at = start + depth
    if at >= len(tokens) or tokens[at].kind != "string":
        return None
    closing = tokens[at + 1 : at + 1 + depth]
    after = tokens[at + 1 + depth] if at + 1 + depth < len(tokens) else None
    if all(t.text == ")" for t in closing) and len(closing) == depth and after and after.text in ",)":
        return tokens[at].text
    return None
