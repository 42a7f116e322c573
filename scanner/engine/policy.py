"""Policy documents -> compiled ``Policy`` objects, with the validity checks of spec 1.7."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from scanner.engine.match import KindSelector
from scanner.engine.policy_checks import FAILURE_ACTIONS
from scanner.engine.rule import ActionOverride, Rule, action_of, compile_rule, parse_overrides
from scanner.engine.types import FailureAction
from scanner.errors import Location, PolicyError

POLICY_API_VERSIONS = ("kyverno.io/v1", "kyverno.io/v2beta1")
POLICY_KINDS = ("ClusterPolicy", "Policy")
AUTOGEN_ANNOTATION = "pod-policies.kyverno.io/autogen-controllers"


class InvalidPolicyError(PolicyError):
    """A policy that fails the validity checks; ``problems`` holds (pointer, message) pairs."""

    def __init__(self, name: str, problems: list[tuple[str, str]]) -> None:
        self.policy_name = name
        self.problems = problems
        first = problems[0]
        text = "; ".join(f"{p or '/'}: {m}" for p, m in problems)
        super().__init__(f"invalid policy {name}: {text}", Location(pointer=first[0] or None))


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


def parse_policy(doc: Any) -> Policy:
    """Validate and compile one policy document; raises ``InvalidPolicyError``."""
    from scanner.engine import autogen, match_checks, policy_checks, policy_variables
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
            match_checks.check_namespaced_filters(raw, problems, rp)
        else:
            policy_checks.check_override_namespaces(validate.get("failureActionOverrides"), problems,
                                                    rp + "/validate/failureActionOverrides")
        if background:
            for part in ("match", "exclude"):
                for fptr, f in match_checks.match_filters(raw.get(part), f"{rp}/{part}"):
                    for key in ("roles", "clusterRoles", "subjects"):
                        if f.get(key):
                            problems.append((f"{fptr}/{key}", f"{key} are not allowed when background is true"))
        match_checks.check_wildcard_kinds(raw, background, problems, rp)
        match_checks.check_match_exclude_conflict(raw, problems, rp)
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
