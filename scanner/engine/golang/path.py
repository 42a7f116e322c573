"""Go's ``path`` and ``net/url`` path helpers, for the places Kyverno uses them."""

from __future__ import annotations

_HEX = frozenset("0123456789abcdefABCDEF")


def clean(path: str) -> str:
    """Go ``path.Clean``: the shortest lexically equivalent path ("." for an empty one)."""
    if not path:
        return "."
    rooted = path.startswith("/")
    parts: list[str] = []
    for part in path.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if parts and parts[-1] != "..":
                parts.pop()
            elif not rooted:
                parts.append("..")
            continue
        parts.append(part)
    joined = "/".join(parts)
    if rooted:
        return "/" + joined
    return joined or "."


def join(*elements: str) -> str:
    """Go ``path.Join``: the non-empty elements joined and cleaned; "" when there are none."""
    kept = [e for e in elements if e]
    return clean("/".join(kept)) if kept else ""


def path_unescape(text: str) -> str:
    """Go ``url.PathUnescape``: every ``%XX`` decoded as a byte; a malformed escape raises
    ``ValueError`` with Go's words."""
    if "%" not in text:
        return text
    out = bytearray()
    i = 0
    while i < len(text):
        c = text[i]
        if c == "%":
            code = text[i + 1:i + 3]
            if len(code) < 2 or not set(code) <= _HEX:
                raise ValueError(f"invalid URL escape {text[i:i + 3]!r}".replace("'", '"'))
            out.append(int(code, 16))
            i += 3
        else:
            out += c.encode()
            i += 1
    return out.decode("utf-8", "surrogateescape")
