"""The validity checks of a rule's match and exclude blocks that need the whole rule (spec 1.7):
wildcard kinds, namespaced filters, and an exclude that covers the match."""

from __future__ import annotations

import json
import re
from typing import Any

from scanner.engine import wildcard
from scanner.engine.policy_checks import Problems

_SUBJECT_KEYS = ("kind", "apiGroup", "name", "namespace")
_REQUIREMENT_KEYS = ("key", "operator", "values")

_WILDCARD_DENY_KEY = re.compile(r"\{\{\s*(request\.|serviceAccountName|serviceAccountNamespace)[^{}]*\}\}")
_METADATA_ONLY = "policy can only deal with the metadata field of the resource if the rule does not match any kind"


def match_filters(block: Any, pointer: str) -> list[tuple[str, dict]]:
    """The legacy block and each any/all filter of a match/exclude block, with pointers."""
    if not isinstance(block, dict):
        return []
    found = [(pointer, block)]
    for mode in ("any", "all"):
        if isinstance(block.get(mode), list):
            found += [(f"{pointer}/{mode}/{i}", f) for i, f in enumerate(block[mode]) if isinstance(f, dict)]
    return found


def _resources(fltr: dict) -> dict:
    return fltr["resources"] if isinstance(fltr.get("resources"), dict) else {}


def _only_metadata(pattern: Any) -> bool:
    return not isinstance(pattern, dict) or all(k == "metadata" for k in pattern)


def _wildcard_rule_problem(rule: dict) -> str | None:
    """Why a rule matching every kind (``*``) is not allowed, if it is not."""
    validate = found if isinstance(found := rule.get("validate"), dict) else {}
    if rule.get("generate") or rule.get("verifyImages") or validate.get("foreach") is not None:
        return "wildcard policy does not support rule type"
    any_pattern = validate.get("anyPattern")
    patterns = [validate.get("pattern"), *(any_pattern if isinstance(any_pattern, list) else [])]
    if not all(_only_metadata(p) for p in patterns):
        return _METADATA_ONLY
    deny = validate.get("deny")
    conditions = deny.get("conditions") if isinstance(deny, dict) else None
    for cond in conditions if isinstance(conditions, list) else []:
        key = cond.get("key") if isinstance(cond, dict) else None
        if isinstance(key, str) and "request.object.metadata." not in key and (
                not _WILDCARD_DENY_KEY.search(key) or "request.object.spec" in key):
            return _METADATA_ONLY
    return None


def check_wildcard_kinds(rule: dict, background: bool, problems: Problems, pointer: str) -> None:
    """The kind ``*`` (in match or exclude): not in background mode, alone, and metadata-only rules."""
    for part in ("match", "exclude"):
        for fp, fltr in match_filters(rule.get(part), f"{pointer}/{part}"):
            kinds = _resources(fltr).get("kinds")
            if not isinstance(kinds, list) or "*" not in kinds:
                continue
            if background:
                problem: str | None = ("wildcard policy not allowed in background mode; "
                                       "set spec.background=false to disable background mode for this policy rule")
            elif len(kinds) > 1:
                problem = "wildcard policy can not deal with more than one kind"
            else:
                problem = _wildcard_rule_problem(rule)
            if problem:
                problems.append((fp + "/resources/kinds", problem))


def check_namespaced_filters(rule: dict, problems: Problems, pointer: str) -> None:
    """A namespaced Policy may not filter by namespace, in match or in exclude."""
    for part in ("match", "exclude"):
        for fp, fltr in match_filters(rule.get(part), f"{pointer}/{part}"):
            if _resources(fltr).get("namespaces"):
                problems.append((fp + "/resources/namespaces",
                                 "filtering namespaces not allowed in namespaced policies"))


def check_match_exclude_conflict(rule: dict, problems: Problems, pointer: str) -> None:
    """A rule whose exclude block covers all its match block selects nothing (``ValidateMatchExcludeConflict``):
    an ``exclude.any`` filter repeating a ``match.any`` filter, or a legacy exclude block at least as wide
    as the legacy match block."""
    match, exclude = rule.get("match"), rule.get("exclude")
    if not isinstance(match, dict) or not isinstance(exclude, dict) or match.get("all") or exclude.get("all"):
        return
    matched, excluded = match.get("any"), exclude.get("any")
    if matched and excluded:
        if isinstance(matched, list) and isinstance(excluded, list) and any(f in excluded for f in matched):
            problems.append((pointer, "rule is matching an empty set"))
        return
    if not _unset(exclude) and _legacy_exclude_covers(match, exclude):
        problems.append((pointer, "rule is matching an empty set"))


def _unset(block: dict) -> bool:
    """Go's zero ``MatchResources``: no field set (a ``resources`` block counts when one of its fields is)."""
    resources = block.get("resources")
    fields = {**block, **resources} if isinstance(resources, dict) else block
    return all(v in (None, "") for k, v in fields.items() if k != "resources" or not isinstance(v, dict))


def _strings(value: Any) -> list[str]:
    return [str(v) for v in value] if isinstance(value, list) else []


def _canonical(items: Any, keys: tuple[str, ...]) -> list[str]:
    """JSON forms of subjects or selector requirements, compared as Kyverno compares their encodings."""
    return [json.dumps({k: i[k] for k in keys if i.get(k)}, sort_keys=True)
            for i in (items if isinstance(items, list) else []) if isinstance(i, dict)]


def _covers(excluded: list[str], matched: list[str]) -> bool:
    """An exclude list restricts nothing it does not repeat: empty, or holding every matched value."""
    return not excluded or (bool(matched) and set(matched) <= set(excluded))


def _legacy_exclude_covers(match: dict, exclude: dict) -> bool:
    mr, er = _resources(match), _resources(exclude)
    for key in ("roles", "clusterRoles"):
        if not _covers(_strings(exclude.get(key)), _strings(match.get(key))):
            return False
    subjects = [_canonical(block.get("subjects"), _SUBJECT_KEYS) for block in (exclude, match)]
    if not _covers(*subjects):
        return False
    if er.get("name") and not wildcard.match(str(er["name"]), str(mr.get("name") or "")):
        return False
    if _strings(er.get("names")):
        return any(wildcard.match(e, m) for m in _strings(mr.get("names")) for e in _strings(er["names"]))
    for key in ("namespaces", "kinds"):
        if not _covers(_strings(er.get(key)), _strings(mr.get(key))):
            return False
    for key in ("selector", "namespaceSelector"):
        ms, es = mr.get(key), er.get(key)
        if (ms is None) != (es is None):
            return False
        if isinstance(ms, dict) and isinstance(es, dict) and not _selector_covers(ms, es):
            return False
    return mr.get("annotations") == er.get("annotations")


def _selector_covers(matched: dict, excluded: dict) -> bool:
    if not _covers(_canonical(excluded.get("matchExpressions"), _REQUIREMENT_KEYS),
                   _canonical(matched.get("matchExpressions"), _REQUIREMENT_KEYS)):
        return False
    excluded_labels, matched_labels = excluded.get("matchLabels") or {}, matched.get("matchLabels") or {}
    return not excluded_labels or (bool(matched_labels) and all(
        excluded_labels.get(k) == v for k, v in matched_labels.items()))
