"""The policy validity checks of spec 1.7 that are not part of compiling match blocks."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from scanner.engine import wildcard
from scanner.engine.conditions import OPERATORS
from scanner.engine.jmespath.dialect import compile_expression
from scanner.engine.jmespath.interpreter import JMESPathError

_VARIABLE = re.compile(r"(?<!\\)\{\{(.*?)\}\}", re.DOTALL)
_RULE_TYPES = ("validate", "mutate", "generate", "verifyImages")
_RESERVED_CONTEXT = ("images", "request", "serviceAccountName", "serviceAccountNamespace",
                     "element", "elementIndex")
_CONTEXT_SOURCES = ("configMap", "apiCall", "variable", "imageRegistry", "globalReference")
_CONTEXT_TYPES = {"configMap": "ConfigMapReference", "apiCall": "ContextAPICall", "variable": "Variable",
                  "imageRegistry": "ImageRegistry", "globalReference": "GlobalContextEntryReference"}
_OPERATIONS = {"CREATE", "UPDATE", "DELETE", "CONNECT"}
_ELEMENTS = ("pattern", "anyPattern", "deny", "foreach", "podSecurity", "cel", "assert")
_CONDITION_FIELDS = ("key", "operator", "value", "message")
_AUTOGEN_ANNOTATION = "pod-policies.kyverno.io/autogen-controllers"
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


def check_policy_fields(meta: dict, spec: dict, problems: Problems) -> None:
    """Kyverno's ``ValidatePolicyName``, ``ValidateAutogenAnnotation`` and webhook timeout checks."""
    name = meta.get("name")
    if isinstance(name, str) and len(name.encode()) > 63:
        problems.append(("/metadata/name", "Too long: must have at most 63 bytes"))
    annotations = meta.get("annotations")
    if isinstance(annotations, dict) and annotations.get(_AUTOGEN_ANNOTATION) == "all":
        problems.append(("/metadata/annotations", "Forbidden: Autogen annotation does not support 'all' anymore, "
                         "remove the annotation or set it to a valid value"))
    timeout = spec.get("webhookTimeoutSeconds")
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, int) or not 1 <= timeout <= 30):
        problems.append(("/spec/webhookTimeoutSeconds", "the timeout value must be between 1 and 30 seconds"))


def check_conditions(raw: Any, problems: Problems, pointer: str, *, any_all_only: bool = False,
                     values: bool = True, strict: bool = True) -> None:
    """Check a condition block as Kyverno's policy validation does.

    ``values``: key, value and operator are required and ``{{request.operation}}`` values are checked
    (``validateConditions``, run on rule preconditions and ``validate.deny``; foreach blocks only have
    their operators checked). ``strict``: unknown condition fields fail to decode, as in Kyverno's
    ``ConditionsWrapper`` (preconditions and every ``deny``).
    """
    if raw is None:
        return
    if isinstance(raw, list):
        if any_all_only:
            problems.append((pointer, "preconditions must use any/all"))
            return
        blocks = [(pointer, raw)]
    elif isinstance(raw, dict):
        extra_fields = set(raw) - {"any", "all"}
        if extra_fields:
            problems.append((pointer, f"unknown condition block field {sorted(extra_fields)[0]!r}"))
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
            unknown = [k for k in cond if str(k).lower() not in _CONDITION_FIELDS]
            if strict and unknown:
                problems.append((cp, f'json: unknown field "{unknown[0]}"'))
            op = cond.get("operator")
            if values and (cond.get("key") is None or cond.get("value") is None or not op):
                problems.append((cp, "entered value of `key`, `value` or `operator` is missing or misspelled"))
                continue
            if not isinstance(op, str) or op not in OPERATORS:
                problems.append((cp + "/operator", f"unknown condition operator {op!r}"))
            if values:
                _check_operation_values(cond, cp, problems)


def _check_operation_values(cond: dict, pointer: str, problems: Problems) -> None:
    """With the key ``{{request.operation}}``, values must name admission operations (templates allowed
    only as a whole string value, as in Kyverno's ``validateConditionValuesKeyRequestOperation``)."""
    key = cond.get("key")
    if not isinstance(key, str) or key.replace(" ", "") != "{{request.operation}}":
        return
    value = cond.get("value")
    if isinstance(value, str):
        templated = len(value) >= 4 and value.startswith("{{") and value.endswith("}}")
        bad = [] if templated or value in _OPERATIONS else [("value", value)]
    elif isinstance(value, list):
        bad = [(f"value/{i}", v) for i, v in enumerate(value) if not (isinstance(v, str) and v in _OPERATIONS)]
    else:
        problems.append((pointer + "/value", f"'value' field found to be of the type {_go_kind(value)}. "
                         "The provided value/values are expected to be either in the form of a string or list"))
        return
    if bad:
        where, item = bad[0]
        problems.append((f"{pointer}/{where}", f"unknown value '{item}' found under the 'value' field. "
                         "Only the following values are allowed: [CREATE, UPDATE, DELETE, CONNECT]"))


def _go_kind(value: Any) -> str:
    return "map" if isinstance(value, dict) else "bool" if isinstance(value, bool) else "float64"


def check_context(entries: Any, problems: Problems, pointer: str, *, nested: bool = False) -> None:
    """Check context entries (what they declare: ``policy_variables.declared_variables``).

    Kyverno validates the rule's own entries (``validateRuleContext``); the entries of a foreach
    (``nested``) are only decoded, so for them only the shape is checked.
    """
    if entries is None:
        return
    if not isinstance(entries, list):
        problems.append((pointer, "context must be a list"))
        return
    for i, entry in enumerate(entries):
        ep = f"{pointer}/{i}"
        if not isinstance(entry, dict):
            problems.append((ep, "context entry must be an object"))
            continue
        name = entry.get("name")
        sources = [s for s in _CONTEXT_SOURCES if entry.get(s) is not None]
        shape = [s for s in sources if not isinstance(entry[s], dict)]
        for source in shape:
            problems.append((f"{ep}/{source}", f"json: cannot unmarshal {json_kind(entry[source])} into Go struct "
                                               f"field ContextEntry.spec.rules.context.{source} of type "
                                               f"v1.{_CONTEXT_TYPES[source]}"))
        if nested:
            continue
        if not isinstance(name, str) or not name:
            problems.append((ep + "/name", "context entry name is required"))
            continue
        reserved = next((r for r in _RESERVED_CONTEXT if name == r or name.startswith(r + ".")), None)
        if reserved:
            problems.append((ep + "/name", f"entry name {name} is invalid as it conflicts with a "
                             f"pre-defined variable {reserved}"))
        if len(sources) != 1:
            problems.append((ep, "a context entry needs exactly one of " + ", ".join(_CONTEXT_SOURCES)))
            continue
        if not shape:
            _check_source(sources[0], entry[sources[0]], problems, f"{ep}/{sources[0]}")


def _check_source(source: str, body: dict, problems: Problems, pointer: str) -> None:
    """The per-source checks of Kyverno's ``validateRuleContext``."""
    if source == "variable":
        if body.get("value") is None and not body.get("jmesPath"):
            problems.append((pointer, "a variable needs value or jmesPath"))
        if body.get("default") is not None and not body.get("jmesPath"):
            problems.append((pointer + "/default", "default is allowed only with jmesPath"))
    if source == "configMap" and (not body.get("name") or not body.get("namespace")):
        problems.append((pointer, "configMap needs name and namespace"))
    if source == "apiCall" and body.get("urlPath") and body.get("service") is not None:
        problems.append((pointer, "a URLPath cannot be used for service API calls"))
    if source == "imageRegistry":
        _check_image_reference(body.get("reference"), problems, pointer + "/reference")
    expr = body.get("jmesPath")
    if isinstance(expr, str) and expr and not _VARIABLE.search(expr):
        problem = jmespath_syntax_problem(expr)
        if problem:
            problems.append((pointer + "/jmesPath", f"invalid JMESPath {expr!r}: {problem}"))


def jmespath_syntax_problem(expr: str) -> str | None:
    """Why ``expr`` does not parse as JMESPath, or None. Kyverno's validator only parses (go-jmespath's
    Compile): a call of a function it does not know is an error when the rule is evaluated, not when
    the policy is loaded."""
    import jmespath
    from jmespath import exceptions as jp_exceptions

    try:
        compile_expression(expr)
    except JMESPathError as exc:
        try:
            jmespath.compile(expr)
        except (jp_exceptions.JMESPathError, RecursionError, ValueError):
            return str(exc)  # it does not parse: the dialect's message says why
    return None


def _check_image_reference(reference: Any, problems: Problems, pointer: str) -> None:
    # imageref's reference.Parse (no default registry is added for a context entry)
    from scanner.engine.imageref import ImageReferenceError, parse_reference

    if not reference:
        problems.append((pointer, "a ref is required for imageRegistry context entry"))
    elif isinstance(reference, str) and not _VARIABLE.search(reference):
        try:
            parse_reference(reference)
        except ImageReferenceError as exc:
            problems.append((pointer, f"bad image: {reference}: {exc}"))


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


# what each rule part decodes into (Kyverno's Rule type): any other JSON kind fails to decode
_RULE_PART_SHAPES: dict[str, tuple[type, str]] = {
    "validate": (dict, "v1.Validation"), "mutate": (dict, "v1.Mutation"), "generate": (dict, "v1.Generation"),
    "verifyImages": (list, "[]v1.ImageVerification"),
}


def json_kind(value: Any) -> str:
    """The JSON kind of a value, as Go's decoder names it in an unmarshal error."""
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "bool"
    return "number" if isinstance(value, (int, float)) else "null"


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
        problems.append((pointer + "/name", f"Duplicate rule name: '{name}'"))
    names.add(name)
    for key, (shape, go_type) in _RULE_PART_SHAPES.items():
        value = rule.get(key)
        if value is not None and not isinstance(value, shape):
            problems.append((f"{pointer}/{key}", f"json: cannot unmarshal {json_kind(value)} into Go struct field "
                                                 f"Rule.spec.rules.{key} of type {go_type}"))
    types = [t for t in _RULE_TYPES if rule.get(t)]
    if len(types) != 1:
        operations = "mutate,validate,generate,verifyImages"
        problems.append((pointer, f"No operation defined in the rule '{name}'.(supported operations: {operations})"
                         if not types else f"Multiple operations defined in the rule '{name}', only one operation "
                         f"({operations}) is allowed per rule (found {', '.join(types)})"))
    validate = rule.get("validate")
    if isinstance(validate, dict):
        action = validate.get("failureAction")
        if action is not None and action not in ("Audit", "Enforce"):
            problems.append((pointer + "/validate/failureAction", "failureAction must be Audit or Enforce"))
        message = validate.get("message")
        if message is not None and not isinstance(message, str):
            problems.append((pointer + "/validate/message", f"json: cannot unmarshal {json_kind(message)} into Go "
                                                            "struct field Validation.spec.rules.validate.message "
                                                            "of type string"))
        elements = [k for k in _ELEMENTS if validate.get(k) is not None]
        manifests = validate.get("manifests")
        if isinstance(manifests, dict) and manifests.get("attestors"):
            elements.append("manifests")
        if len(elements) > 1:
            problems.append((pointer + "/validate",
                             "only one of pattern, anyPattern, deny, foreach, cel can be specified"
                             f" (found {', '.join(elements)})"))
        elif not elements and rule.get("validate"):
            problems.append((pointer + "/validate", "one of pattern, anyPattern, deny, foreach, cel must be specified"))
        if validate.get("anyPattern") is not None and not isinstance(validate["anyPattern"], list):
            problems.append((pointer + "/validate/anyPattern", "failed to deserialize anyPattern, expect array"))
        if validate.get("cel") and rule.get("context"):
            problems.append((pointer + "/context", "CEL rules cannot have context entries"))
        if rule.get("celPreconditions") is not None and validate.get("cel") is None:
            problems.append((pointer + "/celPreconditions", "celPrecondition can only be used with validate.cel"))
        if isinstance(validate.get("cel"), dict):
            _check_cel_shape(validate["cel"], problems, pointer + "/validate/cel")
        foreach = validate.get("foreach")
        for i, entry in enumerate(foreach if isinstance(foreach, list) else []):
            if isinstance(entry, dict):
                _check_foreach_entry(entry, problems, f"{pointer}/validate/foreach/{i}")
    if rule.get("imageExtractors") is not None and not rule.get("verifyImages"):
        problems.append((pointer + "/imageExtractors", "imageExtractors can only be defined for verifyImages rule"))
    return True


def _check_foreach_entry(entry: dict, problems: Problems, pointer: str) -> None:
    """A rule's own foreach entries need a list and one validation (``validateForEach``)."""
    if not entry.get("list"):
        problems.append((pointer + "/list", "foreach.list is required"))
    nested = entry.get("foreach")
    found = [k for k in ("pattern", "anyPattern", "deny") if entry.get(k) is not None]
    found += ["foreach"] if isinstance(nested, list) and nested else []
    if not found:
        problems.append((pointer, "one of pattern, anyPattern, deny, or a nested foreach must be specified"))
    elif len(found) > 1:
        problems.append((pointer, "only one of pattern, anyPattern, deny, or a nested foreach can be specified"))


def _check_cel_shape(cel: dict, problems: Problems, pointer: str) -> None:
    """The required fields of a CEL sub-rule's parameters and audit annotations (Kyverno's validate factory)."""
    kind, ref = cel.get("paramKind"), cel.get("paramRef")
    if isinstance(kind, dict):
        for key in ("apiVersion", "kind"):
            if not kind.get(key):
                problems.append((f"{pointer}/paramKind/{key}", f"cel.paramKind.{key} is required"))
        if ref is None:
            problems.append((pointer + "/paramRef", "cel.paramRef is required"))
    if isinstance(ref, dict):
        if bool(ref.get("name")) == (ref.get("selector") is not None):
            problems.append((pointer + "/paramRef", "one of cel.paramRef.name or cel.paramRef.selector must be set"))
        if ref.get("parameterNotFoundAction") is None:
            problems.append((pointer + "/paramRef/parameterNotFoundAction",
                             "cel.paramRef.parameterNotFoundAction is required"))
        if kind is None:
            problems.append((pointer + "/paramKind", "cel.paramKind is required"))
    annotations = cel.get("auditAnnotations")
    for i, annotation in enumerate(annotations if isinstance(annotations, list) else []):
        for key in ("key", "valueExpression"):
            if isinstance(annotation, dict) and not annotation.get(key):
                problems.append((f"{pointer}/auditAnnotations/{i}/{key}", f"cel.auditAnnotation.{key} is required"))


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
