"""Kubernetes label selectors with Kyverno's wildcard rewriting of matchLabels (spec 2.5)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from scanner.engine import wildcard

_NAME = r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?"
_KEY = re.compile(rf"([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?{_NAME}")
_VALUE = re.compile(rf"({_NAME})?")
_OPERATORS = {"In", "NotIn", "Exists", "DoesNotExist"}


def _valid_key(key: str) -> bool:
    prefix, _, _ = key.rpartition("/")
    return bool(_KEY.fullmatch(key)) and len(prefix) <= 253


@dataclass(frozen=True, slots=True)
class LabelSelector:
    """A Kubernetes label selector, parsed: ``matchLabels`` and ``matchExpressions``."""

    match_labels: tuple[tuple[str, str], ...]
    expressions: tuple[tuple[str, str, tuple[str, ...]], ...]

    def matches(self, labels: dict[str, Any] | None) -> bool:
        labels = labels or {}
        for key, value in self.match_labels:
            if wildcard.has_wildcard(key) or wildcard.has_wildcard(value):
                key, value = _rewrite(key, value, labels)
                if not _valid_key(key) or not _VALUE.fullmatch(value):
                    return False  # the rewritten selector does not parse
            if key not in labels or str(labels[key]) != value:
                return False
        for key, op, values in self.expressions:
            present = key in labels
            if op == "In":
                if not present or str(labels[key]) not in values:
                    return False
            elif op == "NotIn":
                if present and str(labels[key]) in values:
                    return False
            elif op == "Exists":
                if not present:
                    return False
            elif present:  # DoesNotExist
                return False
        return True


def _rewrite(key: str, value: str, labels: dict[str, Any]) -> tuple[str, str]:
    for k, v in labels.items():
        if wildcard.match(key, k) and wildcard.match(value, str(v)):
            return k, str(v)
    return key.replace("*", "0").replace("?", "0"), value.replace("*", "0").replace("?", "0")


def parse_selector(raw: Any) -> tuple[LabelSelector | None, str | None]:
    """Compile a selector; returns (selector, None) or (None, problem)."""
    if raw is None:
        return LabelSelector((), ()), None
    if not isinstance(raw, dict):
        return None, "selector must be an object"
    unknown = set(raw) - {"matchLabels", "matchExpressions"}
    if unknown:
        return None, f"unknown selector field {sorted(unknown)[0]!r}"
    labels = raw.get("matchLabels") or {}
    if not isinstance(labels, dict):
        return None, "matchLabels must be an object"
    pairs = []
    for k, v in labels.items():
        v = "" if v is None else v
        if not isinstance(v, str):
            return None, f"matchLabels value of {k!r} must be a string"
        if not wildcard.has_wildcard(k) and not _valid_key(k):
            return None, f"invalid label key {k!r}"
        if not wildcard.has_wildcard(v) and not _VALUE.fullmatch(v):
            return None, f"invalid label value {v!r} for key {k!r}"
        pairs.append((k, v))
    exprs = []
    for expr in raw.get("matchExpressions") or []:
        if not isinstance(expr, dict):
            return None, "matchExpressions entries must be objects"
        key, op, values = expr.get("key"), expr.get("operator"), expr.get("values") or []
        if not isinstance(key, str) or not _valid_key(key):
            return None, f"invalid label key {key!r} in matchExpressions"
        if op not in _OPERATORS:
            return None, f"invalid selector operator {op!r}"
        if op in ("In", "NotIn") and not values:
            return None, f"values must be non-empty for operator {op}"
        if op in ("Exists", "DoesNotExist") and values:
            return None, f"values must be empty for operator {op}"
        exprs.append((key, op, tuple(str(v) for v in values)))
    return LabelSelector(tuple(pairs), tuple(exprs)), None
