"""Kyverno's ExpandInMetadata: wildcard keys of a pattern's ``metadata.labels`` and
``metadata.annotations`` rewritten to the resource keys they match (spec 4.7)."""

from __future__ import annotations

from typing import Any

from scanner.engine import wildcard
from scanner.engine.anchor import Anchor, parse_key

_TAGS = ("labels", "annotations")
_ANCHOR_PREFIX = {
    Anchor.CONDITIONAL: "", Anchor.GLOBAL: "<", Anchor.EQUALITY: "=",
    Anchor.NEGATION: "X", Anchor.EXISTENCE: "^", Anchor.ADD_IF_NOT_PRESENT: "+",
}


def _find_key(mapping: dict, bare: str) -> str | None:
    for k in mapping:
        if parse_key(k)[1] == bare:
            return k
    return None


def has_metadata_tags(raw: dict) -> bool:
    meta_key = _find_key(raw, "metadata")
    meta = raw.get(meta_key) if meta_key is not None else None
    return isinstance(meta, dict) and any(isinstance(meta.get(_find_key(meta, t) or ""), dict) for t in _TAGS)


def _string_map(mapping: dict, tag: str) -> tuple[str | None, dict[str, str] | None]:
    """Kyverno's getValueAsStringMap: the key of ``tag`` and its string-valued entries (None: no map)."""
    key = _find_key(mapping, tag)
    value = mapping.get(key) if key is not None else None
    if not isinstance(value, dict):
        return None, None
    return key, {k: v for k, v in value.items() if isinstance(v, str)}


def _expand_keys(pattern_tags: dict[str, str], resource_keys: list[str]) -> dict[str, str]:
    """replaceWildcardsInMapKeys: each wildcard key becomes the first resource key it matches
    (anchors kept, rebuilt as anchor.String writes them); unmatched keys stay as written."""
    out: dict[str, str] = {}
    for key, value in pattern_tags.items():
        if wildcard.has_wildcard(key):
            anchor, bare = parse_key(key)
            found = next((rk for rk in resource_keys if wildcard.match(bare, rk)), None)
            if anchor is Anchor.PLAIN:
                key = key if found is None else found
            else:
                key = f"{_ANCHOR_PREFIX[anchor]}({bare if found is None else found})"
        out[key] = value
    return out


def expand(pattern: dict, resource: Any) -> tuple[dict, tuple] | None:
    """The rebuilt pattern and a signature of its rebuilt tags; None when nothing changes."""
    meta_key = _find_key(pattern, "metadata")
    pattern_meta = pattern.get(meta_key) if meta_key is not None else None
    resource_meta = resource.get("metadata") if isinstance(resource, dict) else None
    if not isinstance(pattern_meta, dict) or not isinstance(resource_meta, dict):
        return None
    new_meta: dict | None = None
    signature = []
    for tag in _TAGS:
        p_key, p_tags = _string_map(pattern_meta, tag)
        if p_key is None or p_tags is None:
            continue
        _, r_tags = _string_map(resource_meta, tag)
        if r_tags is None:
            continue
        # Go's map order picks the matching resource key at random; sorted order is deterministic
        rebuilt = _expand_keys(p_tags, sorted(r_tags))
        if rebuilt == pattern_meta[p_key]:
            continue
        if new_meta is None:
            new_meta = dict(pattern_meta)
        new_meta[p_key] = rebuilt
        signature.append((tag, tuple(rebuilt)))
    if new_meta is None:
        return None
    out = dict(pattern)
    out[meta_key] = new_meta  # type: ignore[index]
    return out, tuple(signature)


def expand_in_metadata(pattern: dict, resource: Any) -> dict:
    """Kyverno's ExpandInMetadata for one pattern map: wildcard keys under ``metadata.labels`` /
    ``metadata.annotations`` become the resource keys they match; entries whose value is not a
    string are dropped. Returns ``pattern`` itself when nothing changes."""
    expanded = expand(pattern, resource)
    return pattern if expanded is None else expanded[0]


