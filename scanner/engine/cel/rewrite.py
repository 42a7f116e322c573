"""Source-level rewrites of CEL text: Kyverno's autogen rewrite, ``variables.<name>``
bindings, and Kyverno's ``orValue`` compatibility rule (spec 10.3, 12.2).

The rewrites work on a token stream of the expression and splice replacement text into
the original by character span, so comments, spacing and string literals are left as
they were. They need no parser: each one only looks at a postfix chain
(``a.b[c].d(...)``) and the tokens around it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from scanner.errors import EngineError

# prefixes of identifiers the rewrites introduce; policy text may not use them
VARIABLE_PREFIX = "__kyverno_var_"
ORVALUE_PREFIX = "__kyverno_or_"

_TOKEN = re.compile(
    r"""
    (?P<space>\s+|//[^\n]*)
  | (?P<string>(?:[rR][bB]?|[bB][rR]?)?(?:'''(?:\\.|[^\\])*?'''|\"\"\"(?:\\.|[^\\])*?\"\"\"
                 |'(?:\\.|[^'\\\n])*'|"(?:\\.|[^"\\\n])*"))
  | (?P<number>0[xX][0-9a-fA-F]+[uU]?|(?:\d+\.\d*|\.\d+|\d+)(?:[eE][+-]?\d+)?[uU]?)
  | (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<op>==|!=|<=|>=|&&|\|\||[-+*/%!<>?:.,()\[\]{}])
    """,
    re.VERBOSE | re.DOTALL,
)


class CelSyntaxError(EngineError, ValueError):
    """The text has a character sequence that is no CEL token."""


@dataclass(frozen=True, slots=True)
class Token:
    kind: str  # string, number, ident, op
    text: str
    start: int
    end: int


def tokenize(text: str) -> list[Token]:
    """CEL tokens of ``text`` without spaces and comments."""
    tokens: list[Token] = []
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            raise CelSyntaxError(f"unexpected character {text[pos]!r} at offset {pos}")
        kind = m.lastgroup or "op"
        if kind != "space":
            tokens.append(Token(kind, m.group(), m.start(), m.end()))
        pos = m.end()
    return tokens


def _splice(text: str, edits: list[tuple[int, int, str]]) -> str:
    out, last = [], 0
    for start, end, new in sorted(edits):
        out.append(text[last:start])
        out.append(new)
        last = end
    out.append(text[last:])
    return "".join(out)


# ---------------------------------------------------------------------------- autogen

_AUTOGEN_TARGET = {
    "controller": "spec.template.",
    "cronjob": "spec.jobTemplate.spec.template.",
}
_AUTOGEN_PATTERN = re.compile(r"(oldObject|object)\.(spec|metadata)")


def rewrite_cel_for_autogen(text: str, controller: str) -> str:
    """Kyverno's plain-text autogen rewrite of CEL text (spec 10.3).

    ``object.spec`` -> ``object.spec.template.spec`` and ``object.metadata`` ->
    ``object.spec.template.metadata``, the same for ``oldObject``. For ``CronJob`` the
    inserted prefix is ``spec.jobTemplate.spec.template``; every other controller kind
    (Deployment, DaemonSet, Job, ...) gets ``spec.template``. Like Kyverno's, this is a
    substring replacement: ``object.?spec`` and ``request."object"`` are left alone.
    """
    prefix = _AUTOGEN_TARGET["cronjob" if controller == "CronJob" else "controller"]
    return _AUTOGEN_PATTERN.sub(lambda m: f"{m.group(1)}.{prefix}{m.group(2)}", text)


# --------------------------------------------------------------------------- variables


def variable_references(text: str) -> list[str]:
    """Names used as ``variables.<name>`` in ``text``, in order of first use."""
    tokens = tokenize(text)
    names: list[str] = []
    for i in range(len(tokens)):
        if _is_variables_ref(tokens, i) and tokens[i + 2].text not in names:
            names.append(tokens[i + 2].text)
    return names


def _is_variables_ref(tokens: list[Token], i: int) -> bool:
    tok = tokens[i]
    if tok.kind != "ident" or tok.text != "variables":
        return False
    if i > 0 and tokens[i - 1].text == ".":
        return False  # a field called "variables" of something else
    return i + 2 < len(tokens) and tokens[i + 1].text == "." and tokens[i + 2].kind == "ident"


def bind_variables(body: str, definitions: list[tuple[str, str]]) -> str:
    """Wrap ``body`` (text after ``replace_variable_refs``) in ``cel.bind`` for every
    variable it needs, directly or through other variables, outermost first.

    ``cel.bind`` evaluates a variable lazily and at most once, which is the semantics of
    admission-policy ``variables`` (an unused failing variable is no error).
    ``definitions`` are (name, bound text) in declaration order, the bound text being a
    variable's own expression after ``replace_variable_refs`` (and any other rewrite).
    """
    needed = _bound_names(body)
    for name, expr in reversed(definitions):  # a variable may use earlier ones
        if name in needed:
            needed.update(_bound_names(expr))
    for name, expr in reversed(definitions):
        if name in needed:
            body = f"cel.bind({VARIABLE_PREFIX}{name}, {expr}, {body})"
    return body


def _bound_names(bound_text: str) -> set[str]:
    return {
        tok.text[len(VARIABLE_PREFIX) :]
        for tok in tokenize(bound_text)
        if tok.kind == "ident" and tok.text.startswith(VARIABLE_PREFIX)
    }


def replace_variable_refs(text: str) -> str:
    tokens = tokenize(text)
    edits = [
        (tok.start, tokens[i + 2].end, VARIABLE_PREFIX + tokens[i + 2].text)
        for i, tok in enumerate(tokens)
        if _is_variables_ref(tokens, i)
    ]
    return _splice(text, edits)


def reserved_identifier(text: str) -> str | None:
    """The first identifier of ``text`` that uses a prefix reserved for the rewrites."""
    for tok in tokenize(text):
        if tok.kind == "ident" and tok.text.startswith((VARIABLE_PREFIX, ORVALUE_PREFIX)):
            return tok.text
    return None


# ----------------------------------------------------------------------------- orValue

_CLOSERS = {")": "(", "]": "[", "}": "{"}
_OPENERS = {"(": ")", "[": "]", "{": "}"}


def _match_backward(tokens: list[Token], k: int) -> int:
    closer, opener, depth = tokens[k].text, _CLOSERS[tokens[k].text], 0
    for i in range(k, -1, -1):
        if tokens[i].text == closer:
            depth += 1
        elif tokens[i].text == opener:
            depth -= 1
            if depth == 0:
                return i
    raise CelSyntaxError(f"unbalanced {closer!r} at offset {tokens[k].start}")


def _match_forward(tokens: list[Token], k: int) -> int:
    opener, closer, depth = tokens[k].text, _OPENERS[tokens[k].text], 0
    for i in range(k, len(tokens)):
        if tokens[i].text == opener:
            depth += 1
        elif tokens[i].text == closer:
            depth -= 1
            if depth == 0:
                return i
    raise CelSyntaxError(f"unbalanced {opener!r} at offset {tokens[k].start}")


def _is_postfix_end(tok: Token) -> bool:
    return tok.kind in ("ident", "string", "number") or tok.text in (")", "]", "}")


def _receiver(tokens: list[Token], dot: int) -> tuple[int, list[int], bool]:
    """Walk the postfix chain that ends before ``tokens[dot]`` (the ``.`` of ``.orValue``).

    Returns the index of the chain's first token, the offsets where a ``?`` turns a plain
    select or index of the trailing segment (after the last call) into an optional one,
    and whether that trailing segment is optional (already, or after those insertions).
    """
    inserts: list[int] = []
    optional = False
    trailing = True
    k = dot - 1
    while k >= 0:
        tok = tokens[k]
        if tok.kind == "ident":
            if k >= 2 and tokens[k - 1].text == "?" and tokens[k - 2].text == ".":
                optional = optional or trailing
                k -= 3
                continue
            if k >= 1 and tokens[k - 1].text == ".":
                if trailing:
                    inserts.append(tokens[k - 1].end)
                    optional = True
                k -= 2
                continue
            return k, inserts, optional
        if tok.text == "]":
            opening = _match_backward(tokens, k)
            if opening == 0 or not _is_postfix_end(tokens[opening - 1]):
                return opening, inserts, optional  # a list literal
            if tokens[opening + 1].text == "?":
                optional = optional or trailing
            elif trailing:
                inserts.append(tokens[opening].end)
                optional = True
            k = opening - 1
            continue
        if tok.text == ")":
            opening = _match_backward(tokens, k)
            if opening == 0 or tokens[opening - 1].kind != "ident":
                return opening, inserts, optional  # a parenthesised expression
            trailing = False
            name = opening - 1
            if name >= 1 and tokens[name - 1].text == ".":
                k = name - 2
                continue
            return name, inserts, optional
        if tok.text == "}":
            opening = _match_backward(tokens, k)
            if opening >= 1 and tokens[opening - 1].kind == "ident":
                return opening - 1, inserts, optional
            return opening, inserts, optional
        if tok.kind in ("string", "number"):
            return k, inserts, optional
        raise CelSyntaxError(f"orValue() without a receiver at offset {tokens[dot].start}")
    raise CelSyntaxError("orValue() without a receiver")


def _orvalue_calls(tokens: list[Token]) -> list[int]:
    return [
        i
        for i in range(len(tokens) - 2)
        if tokens[i].text == "." and tokens[i + 1].text == "orValue" and tokens[i + 2].text == "("
    ]


def apply_orvalue_compat(text: str) -> str:
    """Kyverno's ``x.orValue(y)`` rule: ``y`` when ``x`` fails or is an empty optional,
    the contained value of a full optional, and ``x`` itself when it is a plain value.

    Standard CEL accepts only an optional receiver, so each call is rewritten:
    * the plain selects and indexes of the receiver's trailing chain (after its last call)
      become optional ones (``a.b[0].c`` -> ``a.?b[?0].?c``): a missing key or index, the
      usual failure, then yields an empty optional and so ``y``; a present value yields
      an optional holding it, and so ``x``;
    * a receiver without such a chain (a variable, a call result) is bound once and
      tested: ``cel.bind(t, x, type(t) == optional_type ? t.orValue(y) : t)``.
    """
    count = 0
    index = 0
    while True:
        tokens = tokenize(text)
        calls = _orvalue_calls(tokens)
        if index >= len(calls):
            return text
        dot = calls[index]
        index += 1
        start, inserts, optional = _receiver(tokens, dot)
        if tokens[start].text.startswith(ORVALUE_PREFIX):
            continue
        if optional:
            text = _splice(text, [(offset, offset, "?") for offset in inserts])
            continue
        close = _match_forward(tokens, dot + 2)
        count += 1
        name = f"{ORVALUE_PREFIX}{count}"
        receiver = text[tokens[start].start : tokens[dot].start]
        default = text[tokens[dot + 2].end : tokens[close].start]
        wrapped = (
            f"cel.bind({name}, {receiver}, type({name}) == optional_type"
            f" ? {name}.orValue({default}) : {name})"
        )
        text = _splice(text, [(tokens[start].start, tokens[close].end, wrapped)])
