"""One policy x one resource -> the list of rule results (spec 3.2)."""

from __future__ import annotations

from scanner.engine.match import Request, ResourceView, is_excluded
from scanner.engine.podsecurity import evaluate_pod_security
from scanner.engine.policy import ActionOverride, Policy, Rule
from scanner.engine.types import FailureAction, RuleResult, RuleStatus
from scanner.engine.validate import check_any_pattern, check_pattern


def _override_matches(o: ActionOverride, namespace: str, request: Request) -> bool:
    from scanner.engine import wildcard

    if o.namespaces is not None:
        if not any(wildcard.match(p, namespace) for p in o.namespaces):
            return False
    if o.namespace_selector is not None:
        return o.namespace_selector.matches(request.namespace_labels(namespace) or {})
    return True


def resolve_action(policy: Policy, rule: Rule, namespace: str, request: Request) -> FailureAction:
    """Rule overrides -> rule failureAction -> spec overrides -> spec action (spec 1.4)."""
    for o in rule.overrides:
        if _override_matches(o, namespace, request):
            return o.action
    if rule.failure_action is not None:
        return rule.failure_action
    for o in policy.overrides:
        if _override_matches(o, namespace, request):
            return o.action
    return policy.action


def unsupported_feature(rule: Rule) -> str | None:
    """The first rule feature this engine cannot evaluate yet, if any."""
    return rule.extra.get("unsupported")


def evaluate_policy(
    policy: Policy,
    resource: dict,
    request: Request | None = None,
    view: ResourceView | None = None,
) -> list[RuleResult]:
    """Every rule result of ``policy`` for ``resource``; an empty list when nothing applies."""
    request = request or Request()
    view = view or ResourceView.of(resource)
    if policy.kind == "Policy" and view.namespace != policy.namespace:
        return []
    results: list[RuleResult] = []
    for rule in policy.rules_for(view.kind):
        if not rule.validate or rule.handler is None:
            continue
        if not rule.match.matches(view, request):
            continue
        if is_excluded(rule.exclude, view, request):
            continue
        status, message, path = _run_rule(rule, resource, request)
        if status is None:
            continue
        results.append(
            RuleResult(
                policy=policy.key,
                rule=rule.name,
                status=status,
                message=message,
                path=path,
                action=resolve_action(policy, rule, view.namespace, request),
                declared_rule=rule.declared_name,
            )
        )
        if policy.apply_one and status in (RuleStatus.PASS, RuleStatus.FAIL):
            break
    return results


def _run_rule(rule: Rule, resource: dict, request: Request) -> tuple[RuleStatus | None, str, str]:
    feature = unsupported_feature(rule)
    if feature:
        return RuleStatus.ERROR, f"not supported yet: {feature}", ""
    if rule.handler == "pattern" and rule.pattern is not None:
        if request.operation == "DELETE":
            return None, "", ""
        return check_pattern(rule, rule.pattern, resource, rule.message)
    if rule.handler == "anyPattern":
        if request.operation == "DELETE":
            return None, "", ""
        if rule.any_patterns is None:
            return RuleStatus.ERROR, "failed to deserialize anyPattern, expected type array", ""
        return check_any_pattern(rule, rule.any_patterns, resource, rule.message)
    if rule.handler == "podSecurity":
        if request.operation == "DELETE":
            return None, "", ""
        spec = rule.validate["podSecurity"]
        pss = evaluate_pod_security(resource, rule.name, str(spec.get("level") or ""),
                                    spec.get("version"), spec.get("exclude") or [])
        return pss.status, pss.message, ""
    return RuleStatus.ERROR, f"not supported yet: {rule.handler}", ""
