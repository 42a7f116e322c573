"""Go (RE2) regular expressions evaluated with Python's ``re`` (spec 7.7).

Patterns are translated once (cached): ``\\z`` -> ``\\Z``, ``$`` -> end of text unless
multi-line, ``\\d \\w \\s`` -> their ASCII classes, ``(?<name>`` -> ``(?P<name>``, ``\\Q...\\E``
-> escaped text, ``\\x{...}`` -> code point, POSIX ``[:alpha:]`` classes -> ranges, flags in
the middle of a pattern -> scoped groups. Perl features RE2 rejects (look-around, back
references, possessive quantifiers) are rejected here too.

Bounded evaluation: RE2 matches in linear time, Python backtracks. A pattern with nested
unbounded repetition (``(a+)+``, ``(x*y*)*``) can take exponential time on Python, so such
patterns are refused with a "not supported" error instead of being run. Every other pattern
has polynomial worst-case cost.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache

try:  # Python >= 3.11
    from re import _constants as _sre_constants  # type: ignore[attr-defined]
    from re import _parser as _sre_parser  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover
    import sre_constants as _sre_constants  # type: ignore[no-redef]
    import sre_parse as _sre_parser  # type: ignore[no-redef]


class RegexError(ValueError):
    """A pattern Go's regexp package rejects, or one we cannot evaluate safely."""


_ASCII_CLASS = {"d": "0-9", "w": "0-9A-Za-z_", "s": "\\t\\n\\f\\r "}
_POSIX = {
    "alnum": "0-9A-Za-z", "alpha": "A-Za-z", "ascii": "\\x00-\\x7f", "blank": "\\t ",
    "cntrl": "\\x00-\\x1f\\x7f", "digit": "0-9", "graph": "!-~", "lower": "a-z",
    "print": " -~", "punct": "!-/:-@\\[-`{-~", "space": "\\t\\n\\v\\f\\r ", "upper": "A-Z",
    "word": "0-9A-Za-z_", "xdigit": "0-9A-Fa-f",
}
_UNSUPPORTED_GROUPS = ("(?=", "(?!", "(?<=", "(?<!", "(?#", "(?>", "(?(")
_FLAGS = re.compile(r"\(\?([imsU-]*)(\)|:)")


def _escape_hex(p: str, i: int) -> tuple[str, int]:
    if i < len(p) and p[i] == "{":
        end = p.find("}", i)
        if end < 0:
            raise RegexError("invalid escape sequence: \\x{")
        return f"\\U{int(p[i + 1:end] or 'x', 16):08x}", end + 1
    return "\\x" + p[i:i + 2], i + 2


def _escape(p: str, i: int, in_class: bool) -> tuple[str, int]:
    """Translate the escape starting at ``p[i] == '\\'``; return text and next index."""
    if i + 1 >= len(p):
        raise RegexError("trailing backslash at end of expression")
    c = p[i + 1]
    if c == "Q":
        end = p.find("\\E", i + 2)
        literal = p[i + 2:] if end < 0 else p[i + 2:end]
        return re.escape(literal), len(p) if end < 0 else end + 2
    if c in "dws":
        return (_ASCII_CLASS[c] if in_class else f"[{_ASCII_CLASS[c]}]"), i + 2
    if c in "DWS" and not in_class:
        return f"[^{_ASCII_CLASS[c.lower()]}]", i + 2
    if c == "z" and not in_class:
        return "\\Z", i + 2
    if c in "pP":
        raise RegexError(f"not supported: Unicode character class \\{c}")
    if c in "123456789" or c in "CZ":
        raise RegexError(f"invalid escape sequence: \\{c}")
    if c == "x":
        return _escape_hex(p, i + 2)
    return p[i:i + 2], i + 2


def _char_class(p: str, i: int) -> tuple[str, int]:
    """Translate the class starting at ``p[i] == '['``."""
    out = ["["]
    i += 1
    if i < len(p) and p[i] == "^":
        out.append("^")
        i += 1
    first = True
    while i < len(p):
        c = p[i]
        if c == "]" and not first:
            out.append("]")
            return "".join(out), i + 1
        first = False
        if c == "\\":
            text, i = _escape(p, i, in_class=True)
            out.append(text)
            continue
        if c == "[" and p.startswith("[:", i):
            end = p.find(":]", i + 2)
            name = p[i + 2:end] if end > 0 else ""
            if name in _POSIX:
                out.append(_POSIX[name])
                i = end + 2
                continue
            raise RegexError(f"invalid character class range: {p[i:end + 2]}")
        out.append("\\" + c if c in "[&~|" else c)
        i += 1
    raise RegexError("missing closing ]")


def translate(pattern: str) -> str:
    """The Python ``re`` pattern equivalent to the RE2 ``pattern``."""
    out: list[str] = []
    closers: list[int] = [0]  # per open group: scoped-flag groups to close with it
    multiline = False
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\":
            text, i = _escape(pattern, i, in_class=False)
            out.append(text)
        elif c == "[":
            text, i = _char_class(pattern, i)
            out.append(text)
        elif c == "(":
            if pattern.startswith(_UNSUPPORTED_GROUPS, i):
                raise RegexError(f"invalid or unsupported Perl syntax: `{pattern[i:i + 3]}`")
            m = _FLAGS.match(pattern, i)
            if m and "U" in m.group(1):
                raise RegexError("not supported: ungreedy flag (?U)")
            if m and m.group(2) == ")":  # (?i) applies to the rest of the enclosing group
                if not out and "m" in m.group(1).split("-")[0]:
                    multiline = True
                out.append(f"(?{m.group(1)}:")
                closers[-1] += 1
                i = m.end()
                continue
            if pattern.startswith("(?<", i) and not pattern.startswith("(?<=", i):
                out.append("(?P<")
                i += 3
            else:
                out.append("(")
                i += 1
            closers.append(0)
        elif c == ")":
            out.append(")" * (closers.pop() if len(closers) > 1 else 0) + ")")
            i += 1
        elif c in "*+?" and i + 1 < n and pattern[i + 1] == "+":
            raise RegexError(f"invalid nested repetition operator: `{pattern[i:i + 2]}`")
        elif c == "{" and pattern.startswith("{,", i):
            out.append("\\{")
            i += 1
        elif c == "$":
            out.append("$" if multiline else "\\Z")
            i += 1
        else:
            out.append(c)
            i += 1
    out.append(")" * closers[0])
    return "".join(out)


def _repeat_height(items: list, depth: int = 0) -> int:
    """Nesting depth of unbounded repetition in a parsed pattern."""
    worst = depth
    for op, av in items:
        if op in (_sre_constants.MAX_REPEAT, _sre_constants.MIN_REPEAT):
            _, hi, body = av
            unbounded = hi == _sre_constants.MAXREPEAT or hi > 64
            worst = max(worst, _repeat_height(list(body), depth + (1 if unbounded else 0)))
        elif op == _sre_constants.SUBPATTERN:
            worst = max(worst, _repeat_height(list(av[-1]), depth))
        elif op == _sre_constants.BRANCH:
            for branch in av[1]:
                worst = max(worst, _repeat_height(list(branch), depth))
    return worst


@lru_cache(maxsize=1024)
def compile_re2(pattern: str) -> re.Pattern[str]:
    """Compile a Go regular expression; ``RegexError`` if Go or our safety rule rejects it."""
    translated = translate(pattern)
    try:
        compiled = re.compile(translated)
        parsed = _sre_parser.parse(translated)
    except (re.error, OverflowError, RecursionError) as exc:
        raise RegexError(f"error parsing regexp: {exc}: `{pattern}`") from exc
    if _repeat_height(list(parsed)) > 1:
        raise RegexError(
            f"not supported: nested unbounded repetition in `{pattern}` "
            "(cannot be evaluated in bounded time)"
        )
    return compiled


_TEMPLATE = re.compile(r"\$(?:\$|\{([A-Za-z0-9_]+)\}|([A-Za-z0-9_]+))")


def _expander(regex: re.Pattern[str], template: str) -> Callable[[re.Match[str]], str]:
    """Go ``Regexp.Expand``: ``$1``, ``${1}``, ``$name``, ``${name}``, ``$$``; unknown -> empty."""

    def expand(m: re.Match[str]) -> str:
        def one(t: re.Match[str]) -> str:
            name = t.group(1) or t.group(2)
            if name is None:
                return "$"
            if name.isdigit():
                index = int(name)
                return (m.group(index) or "") if index <= regex.groups else ""
            return (m.group(name) or "") if name in regex.groupindex else ""

        return _TEMPLATE.sub(one, template)

    return expand


def replace_all(regex: re.Pattern[str], src: str, repl: str, literal: bool) -> str:
    """Go ``ReplaceAllString``/``ReplaceAllLiteralString`` (skips empty matches abutting one)."""
    expand = None if literal else _expander(regex, repl)
    out: list[str] = []
    last = 0
    previous_end = -1
    for m in regex.finditer(src):
        if m.start() == m.end() == previous_end:
            continue
        out.append(src[last:m.start()])
        out.append(repl if expand is None else expand(m))
        last = previous_end = m.end()
    out.append(src[last:])
    return "".join(out)
