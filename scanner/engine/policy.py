"""Policy documents -> compiled ``Policy`` objects, with the validity checks of spec 1.7."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from scanner.engine.anchor import Anchor, parse_key, unknown_anchor
from scanner.engine.match import KindSelector, MatchBlock, parse_match_block
from scanner.engine.pattern import CompiledPattern
from scanner.engine.policy_checks import FAILURE_ACTIONS, walk_strings
from scanner.engine.rule_parts import Conditions, ForeachEntry, compile_deny, compile_foreach
from scanner.engine.selector import LabelSelector, parse_selector
from scanner.engine.types import FailureAction
from scanner.errors import Location, PolicyError

POLICY_API_VERSIONS = ("kyverno.io/v1", "kyverno.io/v2beta1")
POLICY_KINDS = ("ClusterPolicy", "Policy")
AUTOGEN_ANNOTATION = "pod-policies.kyverno.io/autogen-controllers"
_HANDLERS = ("manifests", "podSecurity", "cel")


class InvalidPolicyError(PolicyError):
    """A policy that fails the validity checks; ``problems`` holds (pointer, message) pairs."""

    def __init__(self, name: str, problems: list[tuple[str, str]]) -> None:
        self.policy_name = name
        self.problems = problems
        first = problems[0]
        text = "; ".join(f"{p or '/'}: {m}" for p, m in problems)
        super().__init__(f"invalid policy {name}: {text}", Location(pointer=first[0] or None))


def action_of(value: Any) -> FailureAction:
    return FailureAction.ENFORCE if value in ("Enforce", "enforce") else FailureAction.AUDIT


@dataclass(frozen=True, slots=True)
class ActionOverride:
    """One ``validationFailureActionOverrides`` entry: the action for some namespaces."""

    action: FailureAction
    namespaces: tuple[str, ...] | None
    namespace_selector: LabelSelector | None


@dataclass(slots=True)
class Rule:
    """One validate rule, compiled. Generated autogen rules are Rules too."""

    name: str
    declared_name: str
    raw: dict
    match: MatchBlock
    exclude: MatchBlock | None
    validate: dict
    handler: str | None
    message: str
    failure_action: FailureAction | None
    overrides: tuple[ActionOverride, ...]
    pattern: CompiledPattern | None = None
    any_patterns: tuple[CompiledPattern, ...] | None = None
    dynamic_pattern: bool = False
    controller: str | None = None  # "Pod" rules; "controllers"/"CronJob" for autogen rules
    deny: Conditions | None = None  # the ``deny`` handler's conditions
    foreach: tuple[ForeachEntry, ...] = ()  # the ``foreach`` handler's entries
    extra: dict[str, Any] = field(default_factory=dict)
    # worked out once (each is wanted per resource): whether the message has variables or
    # references to substitute, and Kyverno's message for a pass
    message_substituted: bool = field(init=False, default=False)
    pass_message: str = field(init=False, default="")

    def __post_init__(self) -> None:
        self.message_substituted = "{{" in self.message or "$(" in self.message
        self.pass_message = f"validation rule '{self.name}' passed."

    def kind_selectors(self) -> list[KindSelector]:
        return self.match.kind_selectors()


@dataclass(slots=True)
class Policy:
    """A Kyverno policy, compiled: its validate rules (autogen rules included) and settings."""

    kind: str
    name: str
    namespace: str
    raw: dict
    rules: list[Rule]
    action: FailureAction
    overrides: tuple[ActionOverride, ...]
    background: bool
    apply_one: bool
    annotations: dict[str, str]
    autogen_rules: dict[str, list[Rule]] = field(default_factory=dict)
    autogen_controllers: frozenset[str] = frozenset()
    digest: str = ""
    _by_kind: dict[str, list[Rule]] = field(default_factory=dict)

    @property
    def key(self) -> str:
        """``name`` for a ClusterPolicy, ``namespace/name`` for a Policy (as reports name it)."""
        return f"{self.namespace}/{self.name}" if self.kind == "Policy" else self.name

    @property
    def title(self) -> str:
        return self.annotations.get("policies.kyverno.io/title", "")

    @property
    def category(self) -> str:
        return self.annotations.get("policies.kyverno.io/category", "")

    @property
    def severity(self) -> str:
        return self.annotations.get("policies.kyverno.io/severity", "")

    @property
    def scored(self) -> bool:
        return self.annotations.get("policies.kyverno.io/scored", "true") != "false"

    @property
    def vap_generated(self) -> bool:
        """Whether the policy's status says a ValidatingAdmissionPolicy was generated from it (a
        policy exported from a cluster): the API server then runs its CEL rules, not Kyverno."""
        status = self.raw.get("status")
        vap = status.get("validatingadmissionpolicy") if isinstance(status, dict) else None
        return isinstance(vap, dict) and vap.get("generated") is True

    def rules_for(self, kind: str) -> list[Rule]:
        """The rules evaluated for a resource of ``kind``, in Kyverno's order (spec 10.2)."""
        cached = self._by_kind.get(kind)
        if cached is None:
            if kind in self.autogen_controllers:
                rules = [r for r in self.rules if not r.name.startswith("autogen-")]
                rules += self.autogen_rules.get(kind, [])
            else:
                rules = list(self.rules)
            cached = [r for r in rules if _may_match_kind(r, kind)]
            self._by_kind[kind] = cached
        return cached


def _may_match_kind(rule: Rule, kind: str) -> bool:
    selectors = rule.kind_selectors()
    if rule.match.mode == "all":
        # every filter must match: a filter with kinds must accept this kind
        return all(
            not f.kinds or any(_kind_ok(k, kind) for k in f.kinds) for f in rule.match.filters
        )
    return any(_kind_ok(k, kind) for k in selectors)


def _kind_ok(selector: KindSelector, kind: str) -> bool:
    from scanner.engine import wildcard

    return wildcard.match(selector.kind, kind)


def parse_overrides(raw: Any, problems: list[tuple[str, str]], pointer: str) -> tuple[ActionOverride, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        problems.append((pointer, "must be a list"))
        return ()
    out = []
    for i, entry in enumerate(raw):
        if not isinstance(entry, dict):
            problems.append((f"{pointer}/{i}", "must be an object"))
            continue
        action = entry.get("action")
        if action not in FAILURE_ACTIONS:
            continue  # Kyverno ignores overrides with an unknown action
        selector = None
        if entry.get("namespaceSelector") is not None:
            selector, problem = parse_selector(entry.get("namespaceSelector"))
            if problem:
                problems.append((f"{pointer}/{i}/namespaceSelector", problem))
        namespaces = entry.get("namespaces")
        out.append(
            ActionOverride(
                action_of(action),
                tuple(str(n) for n in namespaces) if isinstance(namespaces, list) else None,
                selector,
            )
        )
    return tuple(out)


def _handler_of(validate: dict) -> str | None:
    manifests = validate.get("manifests")
    if manifests and (manifests.get("attestors") if isinstance(manifests, dict) else True):
        return "manifests"
    if validate.get("podSecurity"):
        return "podSecurity"
    if validate.get("cel"):
        return "cel"
    if "deny" in validate and validate.get("deny") is not None:
        return "deny"
    if validate.get("pattern") is not None:
        return "pattern"
    if validate.get("anyPattern") is not None:
        return "anyPattern"
    if validate.get("foreach") is not None:
        return "foreach"
    return None


def _has_template(value: Any) -> bool:
    return "{{" in json.dumps(value) if value is not None else False


def _has_reference(value: Any) -> bool:
    return "$(" in json.dumps(value) if value is not None else False


def compile_rule(
    raw: dict,
    problems: list[tuple[str, str]],
    pointer: str,
    *,
    declared_name: str | None = None,
    controller: str | None = None,
) -> Rule:
    """Compile one rule dict (declared or generated by autogen)."""
    name = raw.get("name")
    match = parse_match_block(raw.get("match"), problems, pointer + "/match", require_kinds=True)
    exclude = None
    if raw.get("exclude") is not None:
        exclude = parse_match_block(raw.get("exclude"), problems, pointer + "/exclude", require_kinds=False)
    validate = given if isinstance(given := raw.get("validate"), dict) else {}
    handler = _handler_of(validate) if validate else None
    message = validate.get("message")
    rule = Rule(
        name=str(name),
        declared_name=declared_name or str(name),
        raw=raw,
        match=match,
        exclude=exclude,
        validate=validate,
        handler=handler,
        message=message if isinstance(message, str) else "",
        failure_action=action_of(validate["failureAction"]) if validate.get("failureAction") else None,
        overrides=parse_overrides(validate.get("failureActionOverrides"), problems,
                                  pointer + "/validate/failureActionOverrides"),
        controller=controller,
    )
    if handler == "manifests":
        from scanner.engine.manifests.verify import compile_manifests_rule, validate_manifests_spec

        spec = validate["manifests"]
        found = validate_manifests_spec(spec) if isinstance(spec, dict) else [("", "manifests must be an object")]
        for field, text in found:
            problems.append((f"{pointer}/validate/manifests{field}", text))
        if not found:
            try:
                rule.extra["manifests"] = compile_manifests_rule(spec)
            except PolicyError as exc:
                sub = exc.location.pointer if exc.location and exc.location.pointer else ""
                problems.append((f"{pointer}/validate/manifests{sub}", exc.message))
    if handler == "podSecurity":
        from scanner.engine.podsecurity.levels import validate_pod_security_spec

        spec = validate["podSecurity"]
        if not isinstance(spec, dict):
            problems.append((pointer + "/validate/podSecurity", "podSecurity must be an object"))
        else:
            for problem in validate_pod_security_spec(spec):
                field, _, text = problem.partition(": ")
                problems.append((f"{pointer}/validate/podSecurity/{field}", text))
    if handler == "pattern":
        _check_pattern(validate["pattern"], problems, pointer + "/validate/pattern")
        if _has_template(validate["pattern"]) or _has_reference(validate["pattern"]):
            rule.dynamic_pattern = True
        else:
            rule.pattern = CompiledPattern(validate["pattern"])
    elif handler == "deny":
        rule.deny = compile_deny(validate["deny"])
    elif handler == "foreach":
        rule.foreach = compile_foreach(validate["foreach"])
    elif handler == "anyPattern":
        any_pattern = validate["anyPattern"]
        if isinstance(any_pattern, list):
            for i, p in enumerate(any_pattern):
                _check_pattern(p, problems, f"{pointer}/validate/anyPattern/{i}")
            if _has_template(any_pattern) or _has_reference(any_pattern):
                rule.dynamic_pattern = True
            else:
                rule.any_patterns = tuple(CompiledPattern(p) for p in any_pattern)
    _compile_dynamic_parts(rule, raw, validate, problems, pointer)
    return rule


def _compile_dynamic_parts(rule: Rule, raw: dict, validate: dict,
                           problems: list[tuple[str, str]], pointer: str) -> None:
    """Conditions, CEL programs and JMESPath expressions, compiled once at load."""
    from scanner.engine.conditions import parse_conditions
    from scanner.engine.policy_checks import jmespath_syntax_problem
    from scanner.engine.policy_variables import checked_body
    from scanner.engine.variables import find_variables

    if raw.get("preconditions") is not None:
        try:
            rule.extra["preconditions"] = parse_conditions(raw["preconditions"], pointer=pointer + "/preconditions")
        except PolicyError as exc:
            where = exc.location.pointer if exc.location and exc.location.pointer else pointer + "/preconditions"
            problems.append((where, exc.message))
        else:
            if not raw.get("context") and _reads_only_operation(raw["preconditions"]):
                # the same outcome for every resource of one operation: kept per operation
                rule.extra["preconditions_by_operation"] = {}
    if rule.handler == "cel":
        from scanner.engine.cel.expressions import CelCompileError
        from scanner.engine.cel.rule import compile_cel_rule

        try:
            rule.extra["cel"] = compile_cel_rule(validate["cel"], validate_message=rule.message,
                                                 preconditions=raw.get("celPreconditions"))
        except CelCompileError as exc:
            problems.append((pointer + exc.pointer, exc.message))
    # Kyverno parses each variable (attestation conditions left out); a function it does not know
    # fails when the rule is evaluated
    for ptr, text in walk_strings(checked_body(raw), pointer):
        if "{{" not in text:
            continue
        for expr in find_variables(text):
            if "{{" in expr or expr == "@":
                continue
            problem = jmespath_syntax_problem(expr)
            if problem:
                problems.append((ptr, f"invalid variable {{{{{expr}}}}}: {problem}"))
    # Kyverno does not parse foreach lists when validating a policy: a bad list is a runtime error (spec 9.2)
    _check_foreach_shape(validate.get("foreach"), pointer + "/validate/foreach", problems)
    rule.extra["uses_context"] = bool(
        raw.get("context") or raw.get("preconditions") is not None
        or rule.handler in ("deny", "foreach") or rule.dynamic_pattern or "{{" in rule.message
    )


# ``request.operation`` alone, or with a quoted fallback (``request.operation || 'BACKGROUND'``)
_OPERATION_ONLY = re.compile(r"\s*request\.operation(\s*\|\|\s*'[^'\\]*')?\s*")


def _reads_only_operation(raw: Any) -> bool:
    """Whether the only variable ``raw`` (a rule's preconditions) reads is ``request.operation``."""
    from scanner.engine.variables import find_variables

    for _, text in walk_strings(raw, ""):
        if "$(" in text:
            return False
        if "{{" in text and not all(_OPERATION_ONLY.fullmatch(e) for e in find_variables(text)):
            return False
    return True


def _check_foreach_shape(raw: Any, pointer: str, problems: list[tuple[str, str]]) -> None:
    """A foreach (at any nesting level) that is not a list of objects is a problem (Kyverno cannot decode it)."""
    if raw is None:
        return
    if not isinstance(raw, list) or not all(isinstance(fe, dict) for fe in raw):
        problems.append((pointer, "foreach must be a list of objects"))
        return
    for i, fe in enumerate(raw):
        _check_foreach_shape(fe.get("foreach"), f"{pointer}/{i}/foreach", problems)


def _check_pattern(pattern: Any, problems: list[tuple[str, str]], pointer: str) -> None:
    """Anchor checks of Kyverno's ``ValidatePattern``: validate anchors only (no ``+()``), and an existence
    anchor needs a non-empty list; keys that only look like anchors are refused too."""
    if isinstance(pattern, dict):
        for key, value in pattern.items():
            child = f"{pointer}/{key.replace('~', '~0').replace('/', '~1')}"
            prefix = unknown_anchor(key)
            if prefix is not None:
                problems.append((child, f"unknown anchor {prefix!r} in key {key!r}"))
            anchor, _ = parse_key(key)
            if anchor is Anchor.ADD_IF_NOT_PRESENT:
                problems.append((child, f"unsupported anchor {key}"))
            elif anchor is Anchor.EXISTENCE and not isinstance(value, list):
                problems.append((child, "existence anchor should have value of type list"))
            elif anchor is Anchor.EXISTENCE and not value:
                problems.append((child, "existence anchor: should have atleast one value"))
            _check_pattern(value, problems, child)
    elif isinstance(pattern, list):
        for i, value in enumerate(pattern):
            _check_pattern(value, problems, f"{pointer}/{i}")


def parse_policy(doc: Any) -> Policy:
    """Validate and compile one policy document; raises ``InvalidPolicyError``."""
    from scanner.engine import autogen, policy_checks, policy_variables
    from scanner.engine.digest import content_digest

    problems: list[tuple[str, str]] = []
    if not isinstance(doc, dict):
        raise InvalidPolicyError("<unnamed>", [("", "a policy must be an object")])
    meta = found if isinstance(found := doc.get("metadata"), dict) else {}
    name = meta.get("name")
    display = name if isinstance(name, str) and name else "<unnamed>"
    if doc.get("apiVersion") not in POLICY_API_VERSIONS:
        problems.append(("/apiVersion", f"unsupported apiVersion {doc.get('apiVersion')!r} "
                                        "(want kyverno.io/v1 or kyverno.io/v2beta1)"))
    kind = doc.get("kind")
    if kind not in POLICY_KINDS:
        problems.append(("/kind", f"unsupported kind {kind!r} (want ClusterPolicy or Policy)"))
    if not isinstance(name, str) or not name:
        problems.append(("/metadata/name", "metadata.name is required"))
    namespace = meta.get("namespace") or ""
    if kind == "ClusterPolicy" and namespace:
        problems.append(("/metadata/namespace", "a ClusterPolicy must not have a namespace"))
    if kind == "Policy" and not namespace:
        namespace = "default"
    spec = doc.get("spec")
    if not isinstance(spec, dict):
        problems.append(("/spec", "spec is required"))
        raise InvalidPolicyError(display, problems)
    action_raw = spec.get("validationFailureAction")
    if action_raw is not None and action_raw not in FAILURE_ACTIONS:
        problems.append(("/spec/validationFailureAction", f"invalid validationFailureAction {action_raw!r}"))
    background = spec.get("background", True) is not False
    if spec.get("admission") is False and not background:
        problems.append(("/spec", "admission and background cannot both be false"))
    if kind == "Policy" and spec.get("validationFailureActionOverrides"):
        problems.append(("/spec/validationFailureActionOverrides",
                         "a namespaced Policy cannot have validationFailureActionOverrides"))
    policy_checks.check_policy_fields(meta, spec, problems)
    apply_rules = spec.get("applyRules")
    if apply_rules is not None and apply_rules not in ("One", "All"):
        problems.append(("/spec/applyRules", "applyRules must be One or All"))
    overrides = parse_overrides(spec.get("validationFailureActionOverrides"), problems,
                                "/spec/validationFailureActionOverrides")
    if kind == "ClusterPolicy":
        policy_checks.check_override_namespaces(spec.get("validationFailureActionOverrides"), problems,
                                                "/spec/validationFailureActionOverrides")
    raw_rules = spec.get("rules")
    if not isinstance(raw_rules, list):
        problems.append(("/spec/rules", "rules must be a list"))
        raw_rules = []
    rules: list[Rule] = []
    seen_names: set[str] = set()
    for i, raw in enumerate(raw_rules):
        rp = f"/spec/rules/{i}"
        if not policy_checks.check_rule_shape(raw, problems, rp, seen_names):
            continue
        policy_checks.check_context(raw.get("context"), problems, rp + "/context")
        validate = found if isinstance(found := raw.get("validate"), dict) else {}
        for where, entries in _nested_context_holders(raw):  # only decoded by Kyverno: their shape
            for path, fe in entries:
                policy_checks.check_context(fe.get("context"), problems, f"{rp}/{where}/{path}/context",
                                            nested=True)
        policy_variables.check_rule_variables(raw, problems, rp, background)
        policy_checks.check_conditions(raw.get("preconditions"), problems, rp + "/preconditions")
        if isinstance(validate.get("deny"), dict):
            policy_checks.check_conditions(validate["deny"].get("conditions"), problems,
                                           rp + "/validate/deny/conditions")
        # Kyverno checks only the operators of foreach conditions
        for path, fe in _foreach_entries(validate.get("foreach")):
            fp = f"{rp}/validate/foreach/{path}"
            policy_checks.check_conditions(fe.get("preconditions"), problems, fp + "/preconditions",
                                           any_all_only=True, values=False, strict=False)
            if isinstance(fe.get("deny"), dict):
                policy_checks.check_conditions(fe["deny"].get("conditions"), problems, fp + "/deny/conditions",
                                               values=False)
        policy_checks.check_label_values(validate, problems, rp + "/validate")
        if kind == "Policy":
            policy_checks.check_namespaced_filters(raw, problems, rp)
        else:
            policy_checks.check_override_namespaces(validate.get("failureActionOverrides"), problems,
                                                    rp + "/validate/failureActionOverrides")
        if background:
            for part in ("match", "exclude"):
                for fptr, f in policy_checks.match_filters(raw.get(part), f"{rp}/{part}"):
                    for key in ("roles", "clusterRoles", "subjects"):
                        if f.get(key):
                            problems.append((f"{fptr}/{key}", f"{key} are not allowed when background is true"))
        policy_checks.check_wildcard_kinds(raw, background, problems, rp)
        policy_checks.check_match_exclude_conflict(raw, problems, rp)
        rules.append(compile_rule(raw, problems, rp))
    if problems:
        raise InvalidPolicyError(display, problems)
    policy = Policy(
        kind=str(kind),
        name=str(name),
        namespace=namespace if kind == "Policy" else "",
        raw=doc,
        rules=rules,
        action=action_of(action_raw),
        overrides=overrides,
        background=background,
        apply_one=apply_rules == "One",
        annotations={str(k): str(v) for k, v in (meta.get("annotations") or {}).items()},
        digest=content_digest(doc),
    )
    controllers = autogen.autogen_controllers(doc)
    if controllers:
        policy.autogen_controllers = controllers
        generated: dict[str, list[Rule]] = {}
        for i, raw in enumerate(raw_rules):
            if not autogen.can_generate(raw):
                continue
            for target in ("controllers", "CronJob"):
                new = autogen.generate_rule(raw, controllers, target)
                if new is None:
                    continue
                gen_problems: list[tuple[str, str]] = []
                rule = compile_rule(new, gen_problems, f"/spec/rules/{i}",
                                    declared_name=raw["name"], controller=target)
                if gen_problems:
                    raise InvalidPolicyError(display, gen_problems)
                kinds = [k for k in controllers if k != "CronJob"] if target == "controllers" else ["CronJob"]
                for k in kinds:
                    generated.setdefault(k, []).append(rule)
        policy.autogen_rules = generated
    return policy


def _nested_context_holders(rule: dict) -> list[tuple[str, list[tuple[str, dict]]]]:
    """The foreach entries (nested ones included) and mutate targets of a rule, which may hold context
    entries, by the part of the rule they are in."""
    validate, mutate, generate = (found if isinstance(found := rule.get(k), dict) else {}
                                  for k in ("validate", "mutate", "generate"))
    targets = mutate.get("targets")
    return [
        ("validate/foreach", _foreach_entries(validate.get("foreach"))),
        ("mutate/foreach", _foreach_entries(mutate.get("foreach"))),
        ("mutate/targets", [(str(i), t) for i, t in enumerate(targets if isinstance(targets, list) else [])
                            if isinstance(t, dict)]),
        ("generate/foreach", _foreach_entries(generate.get("foreach"))),
    ]


def _foreach_entries(raw: Any, prefix: str = "") -> list[tuple[str, dict]]:
    out: list[tuple[str, dict]] = []
    if not isinstance(raw, list):
        return out
    for i, fe in enumerate(raw):
        if isinstance(fe, dict):
            path = f"{prefix}{i}"
            out.append((path, fe))
            out += _foreach_entries(fe.get("foreach"), f"{path}/foreach/")
    return out
