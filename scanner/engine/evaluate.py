"""One policy x one resource -> the list of rule results (spec 3.2, 13.2).

Each rule evaluation starts the environment's budget afresh; going past a limit gives
that rule an ``error`` result naming the limit (``budget``), and the other rules go on."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import lru_cache
from typing import Protocol

from scanner.engine import wildcard
from scanner.engine.budget import THREAD, BudgetExceededError
from scanner.engine.conditions import BlockResult, ConditionBlock, evaluate_block
from scanner.engine.context import ContextLoader, VariableContext
from scanner.engine.environment import Environment, make_environment
from scanner.engine.exceptions import SKIP_MESSAGE, PolicyException
from scanner.engine.foreach import run_foreach
from scanner.engine.kinds import is_cluster_scoped
from scanner.engine.match import NamespaceLabels, Request, ResourceView, UserInfo, is_excluded
from scanner.engine.podsecurity.levels import evaluate_pod_security
from scanner.engine.policy import Policy
from scanner.engine.rule import ActionOverride, Rule
from scanner.engine.selector import parse_selector
from scanner.engine.types import FailureAction, RuleResult, RuleStatus
from scanner.engine.validate import SUBSTITUTION_FAILURES, Outcome, run_deny, run_pattern_rule

PRE_EXISTING = "skipping the rule evaluation as pre-existing violations are allowed"
_FAIL = RuleStatus.FAIL  # (an enum member read from its class costs more, once per result)


@lru_cache(maxsize=1)
def default_environment() -> Environment:
    """An environment without a clock or external data (time functions then fail)."""
    return make_environment()


def _override_matches(o: ActionOverride, namespace: str, request: Request) -> bool:
    if o.namespaces is not None and not any(wildcard.match(p, namespace) for p in o.namespaces):
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


class _Evaluation:
    """State shared by the rules of one (policy, resource) evaluation."""

    __slots__ = ("_ctx", "env", "policy", "request", "resource", "simulated_create", "view")

    def __init__(self, policy: Policy, resource: dict, request: Request, view: ResourceView,
                 env: Environment, *, simulated_create: bool = False) -> None:
        self.policy, self.resource, self.request, self.view, self.env = policy, resource, request, view, env
        self.simulated_create = simulated_create
        self._ctx: VariableContext | None = None

    def ctx(self) -> VariableContext:
        if self._ctx is None:
            values = self.env.values.for_resource(self.policy.name, self.view.name)
            if self.simulated_create:  # the old object is checked as a plain CREATE
                values.pop("request.operation", None)
            self._ctx = VariableContext.for_resource(
                self.resource, evaluator=self.env.evaluator, operation=self.request.operation,
                user=self.request.user, values=values,
                loader=self.env.loader, policy_namespace=self.policy.namespace, admission=self.env.admission,
            )
        return self._ctx

    def _exceptions(self, rule: Rule, ctx: VariableContext | None) -> list[PolicyException]:
        candidates = [e for e in self.env.exceptions if e.names_rule(self.policy.key, rule.name)]
        if not candidates:
            return []
        context = ctx or self.ctx()
        return [e for e in candidates if e.matches(self.view, self.request, context.substitute)]

    def _excepted(self, rule: Rule, ctx: VariableContext | None) -> tuple[Outcome, tuple[dict, ...], list[str]]:
        """A skip when exceptions apply; for podSecurity rules, their extra excludes instead."""
        found = self._exceptions(rule, ctx) if self.env.exceptions else []
        if not found:
            return None, (), []
        keys = [e.key for e in found]
        if rule.handler == "podSecurity" and all(e.pod_security for e in found):
            return None, tuple(x for e in found for x in e.pod_security), keys
        return (RuleStatus.SKIP, SKIP_MESSAGE + ", ".join(keys), ""), (), keys

    def run(self, rule: Rule) -> Outcome:
        if not rule.extra.get("uses_context"):
            if not self.env.exceptions:
                return self._handler(rule, self.ctx)
            skip, extra, keys = self._excepted(rule, None)
            return skip or self._handler(rule, self.ctx, extra, keys)
        ctx = self.ctx()
        state = ctx.checkpoint()
        values = self.env.values
        valued = values.sets_variables
        try:
            if valued:
                ctx.rule_values = values.for_rule(self.policy.name, rule.name)
                ctx.foreach_values = values.foreach_for_rule(self.policy.name, rule.name)
            ctx.add_entries(rule.raw.get("context"))
            block = rule.extra.get("preconditions")
            if block is not None:
                try:
                    result = self._preconditions(rule, block, ctx, valued)
                except SUBSTITUTION_FAILURES as exc:
                    return RuleStatus.ERROR, f"failed to evaluate preconditions: {exc}", ""
                if not result.value:
                    detail = f"; {result.message}" if result.messages else ""
                    return RuleStatus.SKIP, f"preconditions not met{detail}", ""
            skip, extra, keys = self._excepted(rule, ctx)
            return skip or self._handler(rule, lambda: ctx, extra, keys)
        finally:
            ctx.restore(state)

    def _preconditions(self, rule: Rule, block: ConditionBlock, ctx: VariableContext, valued: bool) -> BlockResult:
        """The rule's preconditions; without values, ``request.operation`` is the request's, so
        preconditions reading nothing else have one outcome per operation, kept on the rule."""
        known = None if valued else rule.extra.get("preconditions_by_operation")
        result = known.get(self.request.operation) if known is not None else None
        if result is None:
            result = evaluate_block(block, ctx.substitute)
            if known is not None:
                known[self.request.operation] = result
        return result

    def _handler(self, rule: Rule, ctx: Callable[[], VariableContext], exception_excludes: tuple[dict, ...] = (),
                 exception_keys: list[str] | None = None) -> Outcome:
        handler, operation = rule.handler, self.request.operation
        if handler in ("pattern", "anyPattern"):
            return None if operation == "DELETE" else run_pattern_rule(rule, self.resource, ctx)
        if handler == "deny" and rule.deny is not None:
            return run_deny(rule, rule.deny, ctx())
        if handler == "foreach":
            return run_foreach(rule, rule.foreach, ctx(), self.resource, 0, operation)
        if handler == "podSecurity":
            if operation == "DELETE":
                return None
            spec = rule.validate["podSecurity"]
            pss = evaluate_pod_security(self.resource, rule.name, str(spec.get("level") or ""),
                                        spec.get("version"), spec.get("exclude") or [],
                                        exception_excludes or None, exception_keys or (), self.view.derived)
            return pss.status, pss.message, ""
        if handler == "cel":  # validate_cel.go: no response when the policy's VAP was generated
            return None if self.policy.vap_generated else self._cel(rule)
        if handler == "manifests":
            from scanner.engine.manifests.verify import evaluate_manifests  # with cryptography: only when used

            result = evaluate_manifests(rule.extra["manifests"], self.resource, rule_name=rule.name,
                                        operation=operation, load_documents=self.env.load_documents)
            return None if result.status is None else (result.status, result.message, "")
        return RuleStatus.ERROR, f"not supported yet: {handler}", ""

    def _cel(self, rule: Rule) -> Outcome:
        from scanner.engine.cel.params import plan_param_lookup
        from scanner.engine.cel.subrule import evaluate_cel_rule  # the CEL runtime loads only when used

        compiled = rule.extra["cel"]
        view, operation = self.view, self.request.operation
        user = self.request.user
        request = {
            "kind": {"group": view.group, "version": view.version, "kind": view.kind},
            "name": view.name, "namespace": view.namespace, "operation": operation,
            "userInfo": {"username": user.username, "groups": list(user.groups)} if user else {},
            "dryRun": False,
        }
        ns_object = None
        if view.namespace and view.kind != "Namespace":
            known = self.env.namespaces
            ns_object = (known or {}).get(view.namespace) or {
                "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": view.namespace}}
        params = None
        if compiled.params is not None:
            scoped = self.env.cluster_scoped
            cluster_kind = (scoped(compiled.params.api_version, compiled.params.kind) if scoped is not None
                            else is_cluster_scoped(compiled.params.kind))
            lookup = plan_param_lookup(compiled.params, resource_namespace=view.namespace,
                                       param_kind_namespaced=not cluster_kind)
            if lookup.error:
                return RuleStatus.ERROR, lookup.error, ""
            params = [p for p in self.env.param_resources if _param_matches(p, lookup)]
        result = evaluate_cel_rule(
            compiled, rule_name=rule.name,
            object=None if operation == "DELETE" else self.resource,
            old_object=self.resource if operation in ("UPDATE", "DELETE") else None,
            request=request, namespace_object=ns_object, params=params,
        )
        return result.status, result.message, ""


def _param_matches(obj: dict, lookup: object) -> bool:
    meta = obj.get("metadata") or {}
    if obj.get("kind") != lookup.kind or obj.get("apiVersion") != lookup.api_version:  # type: ignore[attr-defined]
        return False
    if lookup.namespace and meta.get("namespace") != lookup.namespace:  # type: ignore[attr-defined]
        return False
    if lookup.name:  # type: ignore[attr-defined]
        return meta.get("name") == lookup.name  # type: ignore[attr-defined]
    if lookup.selector is not None:  # type: ignore[attr-defined]
        selector, problem = parse_selector(lookup.selector)  # type: ignore[attr-defined]
        return problem is None and selector is not None and selector.matches(meta.get("labels") or {})
    return True


def _engine_action(policy: Policy, rule: Rule) -> FailureAction:
    return rule.failure_action or policy.action


def evaluate_policy(
    policy: Policy,
    resource: dict,
    request: Request | None = None,
    view: ResourceView | None = None,
    env: Environment | None = None,
) -> list[RuleResult]:
    """Every rule result of ``policy`` for ``resource``; an empty list when nothing applies."""
    request = request or Request()
    view = view or ResourceView.of(resource)
    env = env or default_environment()
    previous = getattr(THREAD, "budget", None)  # ``budget.activate``, inline
    THREAD.budget = env.budget
    try:
        return _evaluate_policy(policy, resource, request, view, env)
    finally:
        THREAD.budget = previous


def _evaluate_policy(policy: Policy, resource: dict, request: Request, view: ResourceView,
                     env: Environment) -> list[RuleResult]:
    """``evaluate_policy`` with ``env``'s budget active already."""
    if policy.kind == "Policy" and view.namespace != policy.namespace:
        return []
    results: list[RuleResult] = []
    evaluation: _Evaluation | None = None
    budget = env.budget
    for rule in policy.rules_for(view.kind):
        if rule.handler is None:
            continue
        if not rule.match.matches(view, request) or is_excluded(rule.exclude, view, request):
            continue
        if evaluation is None:
            evaluation = _Evaluation(policy, resource, request, view, env)
        budget.start()
        try:
            outcome = evaluation.run(rule)
            if (outcome is not None and outcome[0] is _FAIL and request.operation == "UPDATE"
                    and _engine_action(policy, rule) is FailureAction.ENFORCE
                    and rule.validate.get("allowExistingViolations") is not False
                    and _fails_before_update(policy, rule, resource, request, view, env)):
                outcome = RuleStatus.SKIP, PRE_EXISTING, ""
        except BudgetExceededError as overrun:
            outcome = RuleStatus.ERROR, str(overrun), ""
        except Exception as defect:  # a defect costs this rule its result, not the scan the others'
            outcome = RuleStatus.ERROR, f"internal error: {type(defect).__name__}: {defect}", ""
        if budget.exceeded is not None:  # an overrun absorbed on the way still costs the result
            outcome = RuleStatus.ERROR, str(budget.exceeded), ""
        if outcome is None:
            continue
        status, message, path = outcome
        action = (resolve_action(policy, rule, view.namespace, request) if rule.overrides or policy.overrides
                  else _engine_action(policy, rule))  # without overrides, the namespace does not matter
        results.append(RuleResult(  # positional: a scan builds one per rule and resource
            policy.key, rule.name, status, message, path, action, rule.declared_name))
        if policy.apply_one and status in (RuleStatus.PASS, RuleStatus.FAIL):
            break
    return results


def _fails_before_update(policy: Policy, rule: Rule, resource: dict, request: Request,
                         view: ResourceView, env: Environment) -> bool:
    """The old object (offline: the same object) evaluated as a CREATE also fails (spec 13.2)."""
    old_request = Request(operation="CREATE", user=None, namespace_labels=request.namespace_labels,
                          served_versions=request.served_versions)
    if not rule.match.matches(view, old_request) or is_excluded(rule.exclude, view, old_request):
        return False
    outcome = _Evaluation(policy, resource, old_request, view, env, simulated_create=True).run(rule)
    return outcome is not None and outcome[0] is RuleStatus.FAIL


class KindIndex(Protocol):
    """What ``evaluate_resource`` asks of its policies: those a resource of a kind meets."""

    def for_kind(self, kind: str) -> list[Policy]: ...


class PolicyIndex:
    """Policies indexed by resource kind, so a resource only meets policies that can match it."""

    def __init__(self, policies: Sequence[Policy]) -> None:
        self.policies = list(policies)
        self._by_kind: dict[str, list[Policy]] = {}

    def for_kind(self, kind: str) -> list[Policy]:
        found = self._by_kind.get(kind)
        if found is None:
            found = [p for p in self.policies if p.rules_for(kind)]
            self._by_kind[kind] = found
        return found


class RequestContext:
    """What comes with a resource's admission request besides the resource: the environment
    its policies see, the user, the Namespace labels, and how look-ups see the resource.

    ``operation`` forces the request's operation (a test result's); without it, the values
    give it per policy (CREATE by default). ``admitting(resource, operation)`` gives the
    look-ups of one request (on CREATE a cluster does not hold the object yet); without it,
    the environment's loader serves every request. ``served_versions``: see ``Request``.
    """

    __slots__ = ("_requests", "admitting", "env", "namespace_labels", "operation", "served_versions", "user")

    def __init__(self, env: Environment | None = None, *, user: UserInfo | None = None,
                 namespace_labels: NamespaceLabels | None = None, operation: str | None = None,
                 served_versions: bool = True,
                 admitting: Callable[[dict, str], ContextLoader] | None = None) -> None:
        self.env = env or default_environment()
        self.user = user
        self.namespace_labels = namespace_labels
        self.operation = operation
        self.served_versions = served_versions
        self.admitting = admitting
        self._requests: dict[str, Request] = {}

    def with_operation(self, operation: str | None) -> RequestContext:
        """The same context with every request's operation forced to ``operation`` (None: the values')."""
        return RequestContext(self.env, user=self.user, namespace_labels=self.namespace_labels, operation=operation,
                              served_versions=self.served_versions, admitting=self.admitting)

    def request(self, operation: str) -> Request:
        """The request of ``operation`` (one object per operation: requests differ by it alone)."""
        found = self._requests.get(operation)
        if found is None:
            labels = self.namespace_labels
            found = self._requests[operation] = (
                Request(operation, self.user, labels, self.served_versions) if labels is not None
                else Request(operation, self.user, served_versions=self.served_versions))
        return found


PolicyResults = tuple[Policy, list[RuleResult]]


def evaluate_resource(compiled: KindIndex, resource: dict, context: RequestContext) -> list[PolicyResults]:
    """Each policy of ``compiled`` that gives ``resource`` results, with them, in policy order.

    A resource meets the policies indexed under its kind (as the values' subresources make
    it seen); values that set variables may change the object each policy sees and the
    request's operation."""
    env = context.env
    values = env.values
    view = values.resource_view(resource)
    policies = compiled.for_kind(view.kind)
    if not policies:
        return []
    varied = bool(values.global_values or values.resource_values)
    forced = context.operation
    admitting = context.admitting
    admitted: dict[str, Environment] = {}
    out: list[PolicyResults] = []
    request = context.request(forced or "CREATE")  # (the request of every policy, unless values vary it)
    previous = getattr(THREAD, "budget", None)  # ``budget.activate``, inline: once per resource
    THREAD.budget = env.budget  # (every environment of this resource's policies shares it)
    try:
        if not varied and admitting is None:  # (most scans: every policy sees the same request)
            for policy in policies:
                results = _evaluate_policy(policy, resource, request, view, env)
                if results:
                    out.append((policy, results))
            return out
        for policy in policies:
            seen, seen_view = resource, view
            if varied:
                seen, seen_view = values.seen_by(policy.name, resource, view)
                request = context.request(forced or values.operation(policy.name, view.name))
            if admitting is None:
                policy_env = env
            else:
                operation = request.operation
                found = admitted.get(operation)
                if found is None:
                    found = admitted[operation] = replace(env, loader=admitting(resource, operation))
                policy_env = found
            results = _evaluate_policy(policy, seen, request, seen_view, policy_env)
            if results:
                out.append((policy, results))
    finally:
        THREAD.budget = previous
    return out
