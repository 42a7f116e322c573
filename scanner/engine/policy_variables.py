"""Which variables a rule may use: Kyverno's ``hasInvalidVariables`` (pkg/validation/policy).

Kyverno substitutes every ``{{ }}`` of a rule against a mock context that knows the built-in
variables (a regular expression) and the names the rule declares (``buildContext``): the rule's
own context entries, those of its top-level ``validate.foreach``, ``mutate.foreach``,
``mutate.targets`` and ``generate.foreach`` entries, and the names of its image attestations.
Attestation conditions are left out of the check (their variables come from the attestation),
and a rule with mutate targets may also read ``target.``. Each target is checked once more on its
own (its apiVersion, kind, namespace, name and uid, with the rule's context and preconditions)
against the variables allowed outside targets.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterator
from typing import Any

from scanner.engine import wildcard
from scanner.engine.policy_checks import walk_strings

Problems = list[tuple[str, str]]
Declared = list[tuple[str, str]]  # (name, source): what a context entry declares

_VARIABLE = re.compile(r"(?<!\\)\{\{(.*?)\}\}", re.DOTALL)
_USER_INFO_VAR = re.compile(
    r"[^.](serviceAccountName|serviceAccountNamespace|request\.userInfo|request\.roles|request\.clusterRoles)\b")
# the variables Kyverno allows without a context entry, searched anywhere in the expression
# (enginecontext.ReservedKeys and the allowedVariables* expressions of pkg/validation/policy)
_ALLOWED = re.compile(
    r"request|serviceAccountName|serviceAccountNamespace|element|elementIndex|@|images|image|([a-z_0-9]+\()[^{}]")
_ALLOWED_BACKGROUND = re.compile(r"request\.|element|elementIndex|@|images|images\.|image\.|([a-z_0-9]+\()[^{}]")
_ALLOWED_IN_TARGET = re.compile(
    r"request\.|serviceAccountName|serviceAccountNamespace|element|elementIndex|@|images|images\.|image\.|target\."
    r"|([a-z_0-9]+\()[^{}]")
_ALLOWED_BACKGROUND_IN_TARGET = re.compile(
    r"request\.|element|elementIndex|@|images|images\.|image\.|target\.|([a-z_0-9]+\()[^{}]")
_MULTI_SELECT = re.compile(r"^\s*\[\s*([^\[\]]+)\]\s*")
_CONTEXT_SOURCES = ("configMap", "apiCall", "variable", "imageRegistry", "globalReference")
_TARGET_SPEC = ("apiVersion", "kind", "namespace", "name", "uid")


def variables_in(value: Any, pointer: str) -> Iterator[tuple[str, str]]:
    """Every ``{{ }}`` variable in ``value`` (the expression inside, ``-`` of a shallow one dropped)."""
    for ptr, text in walk_strings(value, pointer):
        if "{{" in text:
            for m in _VARIABLE.finditer(text):
                expr = m.group(1).replace("{{", "").strip()
                yield ptr, expr[1:].strip() if expr.startswith("-") else expr


def _entries(value: Any) -> list[dict]:
    return [e for e in value if isinstance(e, dict)] if isinstance(value, list) else []


def _declared_by(entries: Any) -> Declared:
    """``addContextVariables``: what each context entry (whatever its other checks say) declares."""
    out: Declared = []
    for entry in _entries(entries):
        name = str(entry.get("name") or "")
        out += [(name, source) for source in _CONTEXT_SOURCES if entry.get(source) is not None]
    return out


def declared_variables(rule: dict) -> Declared:
    """The names ``buildContext`` adds for ``rule`` (nested foreach entries are not looked at)."""
    declared = _declared_by(rule.get("context"))
    validate, mutate, generate = (found if isinstance(found := rule.get(k), dict) else {}
                                  for k in ("validate", "mutate", "generate"))
    for entry in (*_entries(validate.get("foreach")), *_entries(mutate.get("foreach")),
                  *_entries(mutate.get("targets")), *_entries(generate.get("foreach"))):
        declared += _declared_by(entry.get("context"))
    images = _entries(rule.get("verifyImages"))
    if any(isinstance(i.get("validate"), dict) and i["validate"] for i in images):
        for image in images:
            declared += [(str(a.get("name") or ""), "attestation") for a in _entries(image.get("attestations"))]
    return declared


def _patterns(declared: Declared) -> list[str]:
    """The wildcard patterns the declared names make valid."""
    patterns = []
    for name, source in declared:
        if source == "configMap":
            patterns += [f"{name}.data", f"{name}.metadata", f"{name}.data.*", f"{name}.metadata.*"]
        else:
            patterns.append(f"{name}*")
    return patterns


def _variable_allowed(expr: str, allowed: re.Pattern[str], patterns: list[str]) -> bool:
    """Kyverno's mock context: the variable (quotes removed) must contain an allowed root anywhere, or
    match a context pattern; a leading multi-select list is allowed when each of its identifiers is."""
    def known(text: str) -> bool:
        return bool(allowed.search(text)) or any(wildcard.match(p, text) for p in patterns)

    query = expr.replace('"', "")
    if known(query) or query.lstrip("(! \t").startswith(("'", "`")):
        return True  # Kyverno refuses a literal-led expression too; it is kept valid here (a safe difference)
    multi = _MULTI_SELECT.match(query)
    return multi is not None and all(known(i.strip()) for i in multi.group(1).split(",") if i.strip())


def checked_body(rule: dict) -> dict:
    """The parts of a rule whose variables Kyverno checks: all but match, exclude and name, with the
    attestation conditions of verifyImages left out (the keys removed, so pointers stay right)."""
    body = {k: v for k, v in rule.items() if k not in ("match", "exclude", "name")}
    images = body.get("verifyImages")
    if isinstance(images, list) and any(isinstance(i, dict) and i.get("attestations") for i in images):
        body["verifyImages"] = images = copy.deepcopy(images)
        for image in _entries(images):
            for attestation in _entries(image.get("attestations")):
                attestation.pop("conditions", None)
    return body


def _has_targets(rule: dict) -> bool:
    mutate = rule.get("mutate")
    return isinstance(mutate, dict) and mutate.get("targets") is not None


def _allowed(background: bool, target: bool) -> re.Pattern[str]:
    if target:
        return _ALLOWED_BACKGROUND_IN_TARGET if background else _ALLOWED_IN_TARGET
    return _ALLOWED_BACKGROUND if background else _ALLOWED


def check_rule_variables(rule: dict, problems: Problems, pointer: str, background: bool) -> None:
    """Variables in match/exclude, element variables outside foreach, user variables in background
    mode, and variables neither built in nor declared (Kyverno's ``ValidateVariables``)."""
    for part in ("match", "exclude"):
        for ptr, _expr in variables_in(rule.get(part), f"{pointer}/{part}"):
            problems.append((ptr, f"variables are not allowed in {part}"))
    _check_forbidden_sections(rule, problems, pointer)
    targets = _has_targets(rule)
    allowed = _allowed(background, targets)
    patterns = _patterns(declared_variables(rule))
    for ptr, expr in variables_in(checked_body(rule), pointer):
        in_rule = ptr[len(pointer):]  # Kyverno's path within the rule
        if expr.startswith("element") and "/foreach/" not in in_rule:
            problems.append((ptr, f"variable '{expr}' present outside of foreach at path {in_rule}"))
        if background and _USER_INFO_VAR.search("{" + expr):
            problems.append((ptr, f"variable {expr!r} is not allowed when background is true"))
        if not _variable_allowed(expr, allowed, patterns):
            problems.append((ptr, f"variable {expr!r} is not defined (not a built-in variable nor a context entry)"))
    if targets:
        _check_targets(rule, problems, pointer, background)


def _check_targets(rule: dict, problems: Problems, pointer: str, background: bool) -> None:
    """Each mutate target's resource fields, with the rule's context and preconditions, may use only
    the variables allowed outside targets and the rule's own context entries."""
    allowed = _allowed(background, False)
    patterns = _patterns(_declared_by(rule.get("context")))
    shared = {k: rule[k] for k in ("context", "preconditions") if k in rule}
    targets = rule["mutate"]["targets"]
    for i, target in enumerate(targets if isinstance(targets, list) else []):
        if not isinstance(target, dict):
            continue
        spec = {k: target[k] for k in _TARGET_SPEC if k in target}
        found = [*variables_in(shared, pointer), *variables_in(spec, f"{pointer}/mutate/targets/{i}")]
        for ptr, expr in found:
            if not _variable_allowed(expr, allowed, patterns):
                problems.append((ptr, f"invalid variables defined at mutate.targets[{i}]: variable {expr!r} "
                                      "is not defined (not a built-in variable nor a context entry)"))
                return


def _check_forbidden_sections(rule: dict, problems: Problems, pointer: str) -> None:
    """``ruleForbiddenSectionsHaveVariables``: no variables in a JSON patch path or an image reference."""
    mutate = found if isinstance(found := rule.get("mutate"), dict) else {}
    patch = mutate.get("patchesJson6902")
    if isinstance(patch, str) and "{{" in patch and _patch_path_has_variables(patch):
        problems.append((f"{pointer}/mutate/patchesJson6902",
                         f'rule "{rule.get("name")}" should not have variables in patchesJSON6902 path section'))
    for i, image in enumerate(found if isinstance(found := rule.get("verifyImages"), list) else []):
        if not isinstance(image, dict):
            continue
        refs = image.get("imageReferences")
        refs = refs if isinstance(refs, list) else []
        if image.get("image") is not None:
            refs = [image["image"], *refs]  # the deprecated single reference (ImageVerification.Convert)
        if any(isinstance(r, str) and _VARIABLE_ANY.search(r) for r in refs):
            problems.append((f"{pointer}/verifyImages/{i}/imageReferences",
                             f'rule "{rule.get("name")}" should not have variables in image reference section'))


_VARIABLE_ANY = re.compile(r"\{\{[^{}]*\}\}")  # regex.RegexVariables' shape, escapes included


_PATCH_PATH = re.compile(  # a ``path`` key (YAML or JSON) and its value: quoted, or the rest of the line
    r"""(?:^|[{,\s])-?\s*"?path"?\s*:\s*("(?:[^"\\]|\\.)*"|'[^']*'|[^\n]*)""", re.MULTILINE)


def _patch_path_has_variables(patch: str) -> bool:
    """Whether an operation of a JSON 6902 patch (YAML or JSON text) has a variable in its ``path``."""
    return any(_VARIABLE_ANY.search(m.group(1)) for m in _PATCH_PATH.finditer(patch))
