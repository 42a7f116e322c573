"""The policy validity checks of spec 1.7 that are not part of compiling match blocks."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from scanner.engine import wildcard
from scanner.engine.conditions import OPERATORS

_VARIABLE = re.compile(r"(?<!\\)\{\{(.*?)\}\}", re.DOTALL)
_RULE_TYPES = ("validate", "mutate", "generate", "verifyImages")
_RESERVED_CONTEXT = ("images", "request", "serviceAccountName", "serviceAccountNamespace",
                     "element", "elementIndex")
_CONTEXT_SOURCES = ("configMap", "apiCall", "variable", "imageRegistry", "globalReference")
_USER_INFO_VAR = re.compile(
    r"[^.](serviceAccountName|serviceAccountNamespace|request\.userInfo|request\.roles|request\.clusterRoles)\b")
_BUILTIN_ROOT = re.compile(
    r"(request\.|request$|serviceAccountName|serviceAccountNamespace|element|@|images|image\.|"
    r"[A-Za-z_][A-Za-z0-9_]*\s*\()"
)
_OPERATIONS = {"CREATE", "UPDATE", "DELETE", "CONNECT"}
FAILURE_ACTIONS = ("Audit", "Enforce", "audit", "enforce")

Problems = list[tuple[str, str]]


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def walk_strings(value: Any, pointer: str) -> Iterator[tuple[str, str]]:
    """Every string (map keys included) in ``value`` with its JSON pointer."""
    if isinstance(value, str):
        yield pointer, value
    elif isinstance(value, dict):
        for k, v in value.items():
            child = f"{pointer}/{_escape(str(k))}"
            yield child, str(k)
            yield from walk_strings(v, child)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from walk_strings(v, f"{pointer}/{i}")


def variables_in(value: Any, pointer: str) -> Iterator[tuple[str, str]]:
    for ptr, text in walk_strings(value, pointer):
        if "{{" in text:
            for m in _VARIABLE.finditer(text):
                expr = m.group(1).replace("{{", "").strip()
                yield ptr, expr[1:].strip() if expr.startswith("-") else expr


def check_conditions(raw: Any, problems: Problems, pointer: str, *, any_all_only: bool = False) -> None:
    if raw is None:
        return
    if isinstance(raw, list):
        if any_all_only:
            problems.append((pointer, "preconditions must use any/all"))
            return
        blocks = [(pointer, raw)]
    elif isinstance(raw, dict):
        unknown = set(raw) - {"any", "all"}
        if unknown:
            problems.append((pointer, f"unknown condition block field {sorted(unknown)[0]!r}"))
        blocks = [(f"{pointer}/{k}", raw[k]) for k in ("any", "all") if raw.get(k) is not None]
    else:
        problems.append((pointer, "conditions must be a list or an object with any/all"))
        return
    for bp, conditions in blocks:
        if not isinstance(conditions, list):
            problems.append((bp, "must be a list of conditions"))
            continue
        for i, cond in enumerate(conditions):
            cp = f"{bp}/{i}"
            if not isinstance(cond, dict):
                problems.append((cp, "condition must be an object"))
                continue
            if "key" not in cond:
                problems.append((cp, "condition key is required"))
            op = cond.get("operator")
            if op is None:
                problems.append((cp, "condition operator is required"))
            elif op not in OPERATORS:
                problems.append((cp + "/operator", f"unknown condition operator {op!r}"))
            key = cond.get("key")
            if isinstance(key, str) and key.replace(" ", "") == "{{request.operation}}":
                values = cond.get("value")
                values = values if isinstance(values, list) else [values]
                bad = [v for v in values if isinstance(v, str) and "{{" not in v and v not in _OPERATIONS]
                if bad:
                    problems.append((cp + "/value", f"invalid operation {bad[0]!r}: "
                                     "must be one of CREATE, UPDATE, DELETE, CONNECT"))


def check_context(entries: Any, problems: Problems, pointer: str, names: list[tuple[str, str]]) -> None:
    """Check context entries; appends (name, source type) of valid ones to ``names``."""
    if entries is None:
        return
    if not isinstance(entries, list):
        problems.append((pointer, "context must be a list"))
        return
    import jmespath

    for i, entry in enumerate(entries):
        ep = f"{pointer}/{i}"
        if not isinstance(entry, dict):
            problems.append((ep, "context entry must be an object"))
            continue
        name = entry.get("name")
        if not isinstance(name, str) or not name:
            problems.append((ep + "/name", "context entry name is required"))
            continue
        if any(name == r or name.startswith(r) for r in _RESERVED_CONTEXT):
            problems.append((ep + "/name", f"context entry name {name!r} is reserved"))
        sources = [s for s in _CONTEXT_SOURCES if entry.get(s) is not None]
        if len(sources) != 1:
            problems.append((ep, "a context entry needs exactly one of " + ", ".join(_CONTEXT_SOURCES)))
            continue
        source = sources[0]
        body = entry[source]
        if not isinstance(body, dict):
            problems.append((f"{ep}/{source}", "must be an object"))
            continue
        if source == "variable":
            if body.get("value") is None and not body.get("jmesPath"):
                problems.append((f"{ep}/variable", "a variable needs value or jmesPath"))
            if body.get("default") is not None and not body.get("jmesPath"):
                problems.append((f"{ep}/variable/default", "default is allowed only with jmesPath"))
        if source == "configMap" and (not body.get("name") or not body.get("namespace")):
            problems.append((f"{ep}/configMap", "configMap needs name and namespace"))
        expr = body.get("jmesPath")
        if isinstance(expr, str) and expr and "{{" not in expr:
            try:
                jmespath.compile(expr)
            except jmespath.exceptions.JMESPathError as exc:
                problems.append((f"{ep}/{source}/jmesPath", f"invalid JMESPath {expr!r}: {exc}"))
        names.append((name, source))


def _root_allowed(expr: str, contexts: list[tuple[str, str]]) -> bool:
    expr = expr.lstrip("(! \t")
    if not expr or not (expr[0].isalpha() or expr[0] in "_@"):
        return True  # literals, multiselects and sub-expressions start elsewhere
    if _BUILTIN_ROOT.match(expr):
        return True
    for name, source in contexts:
        if source == "configMap":
            if expr == name or expr.startswith((f"{name}.data", f"{name}.metadata")):
                return True
        elif expr.startswith(name):
            return True
    return False


def check_rule_variables(rule: dict, problems: Problems, pointer: str, background: bool,
                         contexts: list[tuple[str, str]]) -> None:
    for part in ("match", "exclude"):
        for ptr, _expr in variables_in(rule.get(part), f"{pointer}/{part}"):
            problems.append((ptr, f"variables are not allowed in {part}"))
    body = {k: v for k, v in rule.items() if k not in ("match", "exclude", "name")}
    for ptr, expr in variables_in(body, pointer):
        in_rule = ptr[len(pointer):]  # Kyverno's path within the rule
        if expr.startswith("element") and "/foreach/" not in in_rule:
            problems.append((ptr, f"variable '{expr}' present outside of foreach at path {in_rule}"))
        if background and _USER_INFO_VAR.search("{" + expr):
            problems.append((ptr, f"variable {expr!r} is not allowed when background is true"))
        if not _root_allowed(expr, contexts):
            problems.append((ptr, f"variable {expr!r} is not defined (not a built-in variable nor a context entry)"))


def check_label_values(validate: dict, problems: Problems, pointer: str) -> None:
    """Label and annotation values in patterns must be strings (plain keys only)."""
    patterns: list[tuple[str, Any]] = []
    if validate.get("pattern") is not None:
        patterns.append((f"{pointer}/pattern", validate["pattern"]))
    if isinstance(validate.get("anyPattern"), list):
        patterns += [(f"{pointer}/anyPattern/{i}", p) for i, p in enumerate(validate["anyPattern"])]
    foreach = validate.get("foreach")
    if isinstance(foreach, list):
        patterns = [(f"{pointer}/foreach/{i}/pattern", fe["pattern"]) for i, fe in enumerate(foreach)
                    if isinstance(fe, dict) and isinstance(fe.get("pattern"), dict)][:1]
    for ptr, pattern in patterns:
        if not isinstance(pattern, dict):
            continue
        candidates = [(f"{ptr}/metadata", pattern.get("metadata"))]
        spec = pattern.get("spec")
        if isinstance(spec, dict) and isinstance(spec.get("template"), dict):
            candidates.append((f"{ptr}/spec/template/metadata", spec["template"].get("metadata")))
        for mp, meta in candidates:
            if not isinstance(meta, dict):
                continue
            for tag in ("labels", "annotations"):
                values = meta.get(tag)
                if isinstance(values, dict):
                    for k, v in values.items():
                        if not isinstance(v, str):
                            problems.append((f"{mp}/{tag}/{_escape(k)}", f"{tag} values must be strings"))


def check_rule_shape(rule: Any, problems: Problems, pointer: str, names: set[str]) -> bool:
    if not isinstance(rule, dict):
        problems.append((pointer, "rule must be an object"))
        return False
    name = rule.get("name")
    if not isinstance(name, str) or not name:
        problems.append((pointer + "/name", "rule name is required"))
        return False
    if len(name) > 63:
        problems.append((pointer + "/name", "rule name must be at most 63 characters"))
    if name in names:
        problems.append((pointer + "/name", f"duplicate rule name {name!r}"))
    names.add(name)
    types = [t for t in _RULE_TYPES if rule.get(t)]
    if len(types) != 1:
        problems.append((pointer, "a rule must have exactly one of validate, mutate, generate, verifyImages"
                         + (f" (found {', '.join(types)})" if types else "")))
    validate = rule.get("validate")
    if isinstance(validate, dict):
        action = validate.get("failureAction")
        if action is not None and action not in ("Audit", "Enforce"):
            problems.append((pointer + "/validate/failureAction", "failureAction must be Audit or Enforce"))
        elements = [k for k in ("pattern", "anyPattern", "deny", "foreach", "podSecurity", "cel", "assert")
                    if (validate.get(k) is not None and validate.get(k) != {}) or (k == "deny" and "deny" in validate)]
        manifests = validate.get("manifests")
        if isinstance(manifests, dict) and manifests.get("attestors"):
            elements.append("manifests")
        if len(elements) > 1:
            problems.append((pointer + "/validate",
                             "only one of pattern, anyPattern, deny, foreach, cel can be specified"
                             f" (found {', '.join(elements)})"))
        elif not elements and rule.get("validate"):
            problems.append((pointer + "/validate", "one of pattern, anyPattern, deny, foreach, cel must be specified"))
        if validate.get("cel") and rule.get("context"):
            problems.append((pointer + "/context", "CEL rules cannot have context entries"))
    return True


def _override_conflict(names: dict[str, set[str]], patterns: dict[str, set[str]]) -> str | None:
    """Kyverno's checks between the Enforce and the Audit override namespaces (wildcards included)."""
    pairs = ((patterns["audit"], names["enforce"], "matches with namespace"),
             (patterns["enforce"], names["audit"], "matches with namespace"),
             (patterns["audit"], patterns["enforce"], "conflicts with the pattern"),
             (patterns["enforce"], patterns["audit"], "conflicts with the pattern"))
    for pattern_set, others, relation in pairs:
        for pattern in sorted(pattern_set):
            for other in sorted(others):
                if wildcard.match(pattern, other):
                    return f"wildcard pattern '{pattern}' {relation} '{other}'"
    return None


def check_override_namespaces(raw: Any, problems: Problems, pointer: str) -> None:
    """ClusterPolicy overrides: a valid action each, and no namespace both enforced and audited."""
    if not isinstance(raw, list):
        return
    names: dict[str, set[str]] = {"enforce": set(), "audit": set()}
    patterns: dict[str, set[str]] = {"enforce": set(), "audit": set()}
    for i, entry in enumerate(raw):
        if not isinstance(entry, dict):
            continue
        action = entry.get("action")
        if action not in FAILURE_ACTIONS:
            problems.append((f"{pointer}/{i}/action", "invalid action"))
            return
        side = str(action).lower()
        other = "audit" if side == "enforce" else "enforce"
        listed = [str(n) for n in entry.get("namespaces") or []]
        plain = [n for n in listed if not wildcard.has_wildcard(n)]
        ns_pointer = f"{pointer}/{i}/namespaces"
        clash = sorted(names[other].intersection(plain))
        if clash:
            problems.append((ns_pointer, "conflicting namespaces found: " + ", ".join(clash)))
            return
        names[side].update(plain)
        patterns[side].update(n for n in listed if wildcard.has_wildcard(n))
        conflict = _override_conflict(names, patterns)
        if conflict:
            problems.append((ns_pointer, conflict))
            return


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
    validate = rule.get("validate") if isinstance(rule.get("validate"), dict) else {}
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
    """A rule whose exclude.any repeats one of its match.any filters matches an empty set."""
    match, exclude = rule.get("match"), rule.get("exclude")
    if not isinstance(match, dict) or not isinstance(exclude, dict) or match.get("all") or exclude.get("all"):
        return
    matched, excluded = match.get("any"), exclude.get("any")
    if isinstance(matched, list) and isinstance(excluded, list) and any(f in excluded for f in matched):
        problems.append((pointer, "rule is matching an empty set"))
