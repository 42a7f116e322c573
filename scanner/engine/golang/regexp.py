"""Go regular expressions, matched by the RE2 library (spec 7.7).

Go's ``regexp`` package implements RE2's syntax and semantics, so every policy-supplied
pattern is compiled and matched by RE2 itself (``google-re2``): leftmost-first matching in
time linear in the text, whatever the pattern (``^(a|a)*$``, ``a*a*a*a*b`` and ``(a+)+`` are
no slower than ``a``). Matching runs on the UTF-8 bytes of the text, as Go's does; an
unpaired surrogate (which Go's JSON decoder would have made U+FFFD) is matched as U+FFFD.

Compile errors are worded as Go's (``error parsing regexp: <code>: `<expr>```). The one
escape RE2 accepts and Go refuses, ``\\C`` (any byte), is refused; a pattern whose program
exceeds RE2's memory budget is "not supported".

``GoRegexp`` offers Go's ``MatchString``, ``FindString``, ``FindAllString`` and
``ReplaceAllString``/``ReplaceAllLiteralString`` with Go's handling of empty matches.
"""

from __future__ import annotations

import re
from functools import lru_cache

import re2 as _google_re2
from re2 import _re2 as _native

from scanner.errors import EngineError

_UNANCHORED = _google_re2._Anchor.UNANCHORED
_NO_MATCH = (-1, -1)
_OPTIONS = _google_re2.Options()
_OPTIONS.log_errors = False
_BOOL_OPTIONS = _google_re2.Options()
_BOOL_OPTIONS.log_errors = False
_BOOL_OPTIONS.never_capture = True


class RegexError(EngineError, ValueError):
    """A pattern Go's regexp package rejects, or one RE2 cannot hold ("not supported")."""


# RE2's error codes in Go's words (regexp/syntax ErrorCode)
_GO_CODES = {
    "invalid escape sequence": "invalid escape sequence",
    "invalid character class range": "invalid character class range",
    "invalid character class": "invalid character class",
    "missing ]": "missing closing ]",
    "missing )": "missing closing )",
    "unexpected )": "unexpected )",
    "trailing \\": "trailing backslash at end of expression",
    "no argument for repetition operator": "missing argument to repetition operator",
    "invalid repetition size": "invalid repeat count",
    "bad repetition operator": "invalid nested repetition operator",
    "invalid perl operator": "invalid or unsupported Perl syntax",
    "invalid UTF-8": "invalid UTF-8",
    "invalid named capture group": "invalid named capture",
}
_BYTE_ESCAPE = re.compile(r"\\(?:\\|(C))")


def _go_error(pattern: str, detail: object) -> RegexError:
    text = detail.decode("utf-8", "replace") if isinstance(detail, bytes) else str(detail)
    if text.startswith("pattern too large"):
        return RegexError(f"not supported: regular expression too large for RE2 ({text}): `{pattern}`")
    code, _, expr = text.partition(": ")
    go_code = _GO_CODES.get(code)
    if go_code is None:
        return RegexError(f"error parsing regexp: {text}: `{pattern}`")
    return RegexError(f"error parsing regexp: {go_code}: `{expr}`")


def _utf8(text: str) -> bytes:
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:  # unpaired surrogates: U+FFFD, as Go's decoders give
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace").encode("utf-8")


def _rune_width(data: bytes, pos: int) -> int:
    """Width in bytes of the UTF-8 sequence starting at ``pos`` (1 at the end, as Go steps)."""
    if pos >= len(data):
        return 1
    lead = data[pos]
    width = 1 if lead < 0xC0 else 2 if lead < 0xE0 else 3 if lead < 0xF0 else 4
    return min(width, len(data) - pos)


_TEMPLATE = re.compile(rb"\$(?:\$|\{([A-Za-z0-9_]+)\}|([A-Za-z0-9_]+))")
Piece = bytes | int  # literal bytes, or the number of the group to insert


class GoRegexp:
    """A compiled Go regular expression (immutable; share freely)."""

    __slots__ = ("_bool", "_program", "group_names", "groups", "pattern")

    def __init__(self, pattern: str) -> None:
        if any(m.group(1) for m in _BYTE_ESCAPE.finditer(pattern)):
            raise RegexError("error parsing regexp: invalid escape sequence: `\\C`")
        encoded = _utf8(pattern)
        program = _native.RE2(encoded, _OPTIONS)
        if not program.ok():
            raise _go_error(pattern, program.error())
        self.pattern = pattern
        self._program = program
        self._bool: _native.RE2 | None = None
        self.groups: int = program.NumberOfCapturingGroups()
        self.group_names: dict[str, int] = {
            (k.decode() if isinstance(k, bytes) else k): v for k, v in program.NamedCapturingGroups()}

    def _matcher(self) -> _native.RE2:
        if self._bool is None:
            program = _native.RE2(_utf8(self.pattern), _BOOL_OPTIONS)
            self._bool = program if program.ok() else self._program
        return self._bool

    def search(self, text: str) -> tuple[int, int] | None:
        """The byte span of the leftmost match in ``text`` (UTF-8), or None: Go's ``FindIndex``."""
        data = _utf8(text)
        span = self._matcher().Match(_UNANCHORED, data, 0, len(data))[0]
        return None if span == _NO_MATCH else span

    def matches(self, text: str) -> bool:
        """Go ``MatchString``."""
        return self.search(text) is not None

    def find(self, text: str) -> str:
        """Go ``FindString``: the leftmost match, or "" when there is none."""
        data = _utf8(text)
        start, end = self._matcher().Match(_UNANCHORED, data, 0, len(data))[0]
        return "" if start < 0 else data[start:end].decode("utf-8", "replace")

    def find_all(self, text: str, limit: int = -1) -> list[str]:
        """Go ``FindAllString``: successive non-overlapping matches, at most ``limit`` when it
        is not negative; an empty match right after the previous match is skipped."""
        data = _utf8(text)
        end_of_text = len(data)
        if limit < 0:
            limit = end_of_text + 1
        program = self._matcher()
        found: list[str] = []
        pos, previous_end = 0, -1
        while len(found) < limit and pos <= end_of_text:
            start, end = program.Match(_UNANCHORED, data, pos, end_of_text)[0]
            if start < 0:
                break
            accept = True
            if end == pos:  # an empty match at pos
                accept = start != previous_end
                pos += _rune_width(data, pos)
            else:
                pos = end
            previous_end = end
            if accept:
                found.append(data[start:end].decode("utf-8", "replace"))
        return found

    def replace_all(self, src: str, repl: str, literal: bool, limit: int | None = None) -> str:
        """Go ``ReplaceAllString`` (``$1``, ``${name}``, ``$$`` expanded) or, with ``literal``,
        ``ReplaceAllLiteralString``. ``limit`` bounds the result's length in bytes: past it
        ``OverflowError`` is raised before the text is built."""
        data = _utf8(src)
        pieces = [_utf8(repl)] if literal else self._template(_utf8(repl))
        captures = 1 + max((p for p in pieces if isinstance(p, int)), default=-1)
        program = self._program if captures > 1 else self._matcher()
        out: list[bytes] = []
        size = 0
        last_end, pos, end_of_text = 0, 0, len(data)
        while pos <= end_of_text:
            spans = program.Match(_UNANCHORED, data, pos, end_of_text)
            start, end = spans[0]
            if start < 0:
                break
            out.append(data[last_end:start])
            size += start - last_end
            if end > last_end or start == 0:
                for piece in pieces:
                    if isinstance(piece, bytes):
                        out.append(piece)
                        size += len(piece)
                    elif piece < len(spans) and spans[piece][0] >= 0:
                        s, e = spans[piece]
                        out.append(data[s:e])
                        size += e - s
            if limit is not None and size > limit:
                raise OverflowError(size)
            last_end = end
            width = _rune_width(data, pos)
            if pos + width > end:
                pos += width
            elif pos + 1 > end:
                pos += 1
            else:
                pos = end
        out.append(data[last_end:])
        if limit is not None and size + end_of_text - last_end > limit:
            raise OverflowError(size + end_of_text - last_end)
        return b"".join(out).decode("utf-8", "replace")

    def _template(self, template: bytes) -> list[Piece]:
        """Go ``Regexp.Expand``'s template as pieces: ``$1``, ``${1}``, ``$name``, ``${name}``,
        ``$$``; an unknown name or out-of-range number inserts nothing."""
        pieces: list[Piece] = []
        last = 0
        for m in _TEMPLATE.finditer(template):
            pieces.append(template[last:m.start()])
            last = m.end()
            raw = m.group(1) or m.group(2)
            if raw is None:
                pieces.append(b"$")
                continue
            name = raw.decode()
            if name.isdigit():
                index = int(name)
                if index <= self.groups:
                    pieces.append(index)
            elif name in self.group_names:
                pieces.append(self.group_names[name])
        pieces.append(template[last:])
        return [p for p in pieces if p != b""]


@lru_cache(maxsize=1024)
def compile_re2(pattern: str) -> GoRegexp:
    """Compile a Go regular expression; ``RegexError`` if Go rejects it (or RE2 cannot hold it)."""
    return GoRegexp(pattern)


def replace_all(regex: GoRegexp, src: str, repl: str, literal: bool, limit: int | None = None) -> str:
    """Go ``ReplaceAllString``/``ReplaceAllLiteralString`` (see ``GoRegexp.replace_all``)."""
    return regex.replace_all(src, repl, literal, limit)

