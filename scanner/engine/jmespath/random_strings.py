"""Kyverno's ``random(pattern)``: a random string the Go regular expression ``pattern``
matches (best effort, as Kyverno's ``regen`` generator).

The pattern is checked by RE2 (``re2.compile_re2``: Go's syntax) and then read with Python's
regular-expression parser, after a translation of the RE2 spellings it reads differently
(``\\z``, ``$``, ``\\d \\w \\s`` classes, ``(?<name>``, ``\\Q...\\E``, ``\\x{...}``, POSIX classes,
flags in the middle of a pattern). The parsed tree is only walked to generate text: nothing
is matched with Python's ``re``. Unbounded repetition is drawn from 0 to 10 more than its
minimum; bounded repetition is at most Go's 1000 per level.
"""

from __future__ import annotations

import random as _random
import re
from typing import Any

from scanner.engine.golang import regexp as re2

try:  # Python >= 3.11
    from re import _constants as _sre_constants  # type: ignore[attr-defined]
    from re import _parser as _sre_parser  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover
    import sre_constants as _sre_constants  # type: ignore[no-redef]
    import sre_parse as _sre_parser  # type: ignore[no-redef]

RegexError = re2.RegexError

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


def _generate(items: list, rng: _random.Random, out: list[str]) -> None:
    c = _sre_constants
    for op, av in items:
        if op == c.LITERAL:
            out.append(chr(av))
        elif op == c.ANY:
            out.append(chr(rng.randint(0x20, 0x7E)))
        elif op == c.IN:
            out.append(_pick_class(av, rng))
        elif op == c.NOT_LITERAL:
            choice = chr(rng.randint(0x21, 0x7E))
            out.append(choice if ord(choice) != av else "~" if av != ord("~") else "!")
        elif op in (c.MAX_REPEAT, c.MIN_REPEAT):
            lo, hi, body = av
            hi = lo + 10 if hi == c.MAXREPEAT else hi
            for _ in range(rng.randint(lo, max(lo, hi))):
                _generate(list(body), rng, out)
        elif op == c.SUBPATTERN:
            _generate(list(av[-1]), rng, out)
        elif op == c.BRANCH:
            _generate(list(rng.choice(av[1])), rng, out)


def _pick_class(items: list, rng: _random.Random) -> str:
    c = _sre_constants
    ranges: list[tuple[int, int]] = []
    for op, av in items:
        if op == c.LITERAL:
            ranges.append((av, av))
        elif op == c.RANGE:
            ranges.append(av)
        elif op == c.CATEGORY:
            ranges.extend({c.CATEGORY_DIGIT: [(48, 57)], c.CATEGORY_SPACE: [(32, 32)]}.get(
                av, [(97, 122)]))
        elif op == c.NEGATE:
            return chr(rng.randint(0x21, 0x7E))  # best effort for negated classes
    lo, hi = rng.choice(ranges) if ranges else (97, 122)
    return chr(rng.randint(lo, hi))


def random_string(pattern: str, rng: _random.Random) -> str:
    """A random string ``pattern`` matches; ``RegexError`` if Go rejects the pattern."""
    re2.compile_re2(pattern)
    try:
        parsed: Any = _sre_parser.parse(translate(pattern))
    except (re.error, OverflowError, RecursionError) as exc:
        raise RegexError(f"not supported: cannot generate text for `{pattern}`: {exc}") from exc
    out: list[str] = []
    _generate(list(parsed), rng, out)
    return "".join(out)
