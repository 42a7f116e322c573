"""PolicyExceptions (``kyverno.io/v2`` and ``v2beta1``): which rule results they turn into skips (spec 15)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from scanner.engine import wildcard
from scanner.engine.conditions import ConditionBlock, evaluate_block, parse_conditions
from scanner.engine.match import MatchBlock, Request, ResourceView, parse_match_block
from scanner.engine.policy import InvalidPolicyError
from scanner.errors import EngineError, PolicyError

EXCEPTION_API_VERSIONS = ("kyverno.io/v2", "kyverno.io/v2beta1", "kyverno.io/v2alpha1")
SKIP_MESSAGE = "rule is skipped due to policy exceptions"


def skipping_exceptions(message: str) -> tuple[str, ...]:
    """The ``namespace/name`` keys of the exceptions a skip message names (none for any other)."""
    if not message.startswith(SKIP_MESSAGE):
        return ()
    return tuple(k.strip() for k in message.removeprefix(SKIP_MESSAGE).split(",") if k.strip())


def exception_names(keys: Iterable[str]) -> str:
    """Kyverno's report property for exceptions: their names, without namespaces, joined by commas."""
    return ",".join(key.rpartition("/")[2] for key in keys)


@dataclass(frozen=True, slots=True)
class PolicyException:
    """A Kyverno PolicyException, parsed: the rules it names, its match and conditions."""

    name: str
    namespace: str
    entries: tuple[tuple[str, tuple[str, ...]], ...]
    match: MatchBlock
    conditions: ConditionBlock | None
    pod_security: tuple[dict, ...]
    raw: dict = field(default_factory=dict, compare=False)

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}" if self.namespace else self.name

    def names_rule(self, policy_key: str, rule: str) -> bool:
        """Whether an entry names the policy and the rule; both are glob patterns (``Contains``)."""
        return any(wildcard.match(policy, policy_key) and any(wildcard.match(r, rule) for r in rules)
                   for policy, rules in self.entries)

    def matches(self, view: ResourceView, request: Request, substitute: Callable[[Any], Any] | None) -> bool:
        if self.match.is_empty() or not self.match.matches(view, request, exclude=True, exception=True):
            return False
        if self.conditions is None:
            return True
        if substitute is None:
            return False
        try:
            return evaluate_block(self.conditions, substitute).value
        except EngineError:  # conditions that cannot be evaluated do not except the resource
            return False


def is_exception_document(doc: Any) -> bool:
    return isinstance(doc, dict) and doc.get("kind") == "PolicyException" and str(
        doc.get("apiVersion", "")).startswith("kyverno.io/")


def parse_exception(doc: dict) -> PolicyException:
    """Validate and compile one PolicyException; raises ``InvalidPolicyError`` with located problems."""
    problems: list[tuple[str, str]] = []
    meta = found if isinstance(found := doc.get("metadata"), dict) else {}
    name = str(meta.get("name") or "")
    if doc.get("apiVersion") not in EXCEPTION_API_VERSIONS:
        problems.append(("/apiVersion", f"unsupported apiVersion {doc.get('apiVersion')!r} for a PolicyException"))
    if not name:
        problems.append(("/metadata/name", "metadata.name is required"))
    spec = found if isinstance(found := doc.get("spec"), dict) else {}
    entries = []
    raw_entries = spec.get("exceptions")
    if not isinstance(raw_entries, list):
        problems.append(("/spec/exceptions", "exceptions must be a list"))
        raw_entries = []
    for i, entry in enumerate(raw_entries):
        if not isinstance(entry, dict) or not entry.get("policyName"):
            problems.append((f"/spec/exceptions/{i}/policyName", "An exception requires a policy name"))
            continue
        rules = entry.get("ruleNames")
        if not isinstance(rules, list) or not all(isinstance(r, str) for r in rules):
            problems.append((f"/spec/exceptions/{i}/ruleNames", "ruleNames must be a list of strings"))
            continue
        entries.append((str(entry["policyName"]), tuple(rules)))
    match_raw = spec.get("match")
    if isinstance(match_raw, dict) and match_raw.get("resources") is not None:
        problems.append(("/spec/match/resources", "exceptions use match.any or match.all"))
    match = parse_match_block(match_raw, problems, "/spec/match", require_kinds=False)
    if spec.get("background") is not False and any(f.has_user_info for f in match.filters):
        problems.append(("/spec/match", "usage of user info is forbidden when background processing is enabled"))
    conditions = None
    if spec.get("conditions") is not None:
        try:
            conditions = parse_conditions(spec["conditions"], pointer="/spec/conditions")
        except PolicyError as exc:
            problems.append(((exc.location.pointer if exc.location else None) or "/spec/conditions", exc.message))
    pod_security = spec.get("podSecurity") or []
    if not isinstance(pod_security, list):
        problems.append(("/spec/podSecurity", "podSecurity must be a list"))
        pod_security = []
    if pod_security:
        from scanner.engine.podsecurity.levels import exclude_type_problems

        problems.extend((f"/spec/podSecurity/{i}", problem)
                        for i, entry in enumerate(pod_security) for problem in exclude_type_problems(entry))
    if problems:
        raise InvalidPolicyError(name or "<unnamed>", problems)
    return PolicyException(name, str(meta.get("namespace") or ""), tuple(entries), match, conditions,
                           tuple(pod_security), doc)
