"""Parameter resources of a ``validate.cel`` rule (``paramKind`` + ``paramRef``, spec 12.3
step 3): what to look up, and the outcome when nothing is found. The lookup itself is
the caller's job (the engine does no I/O)."""

from __future__ import annotations

from dataclasses import dataclass

from scanner.engine.cel.expressions import CelCompileError, CelResult
from scanner.engine.kinds import not_found, plural
from scanner.engine.types import RuleStatus

NOT_FOUND_ACTIONS = ("Allow", "Deny")


@dataclass(frozen=True, slots=True)
class CelParamSpec:
    """``paramKind`` and ``paramRef`` of a rule."""

    api_version: str
    kind: str
    name: str = ""
    namespace: str = ""
    selector: dict | None = None
    not_found_action: str = "Allow"


@dataclass(frozen=True, slots=True)
class ParamLookup:
    """Which parameter objects to fetch; ``error`` set when the lookup is impossible."""

    api_version: str
    kind: str
    namespace: str | None = None
    name: str | None = None
    selector: dict | None = None
    error: str = ""


def parse_param_spec(cel: dict, base: str) -> CelParamSpec | None:
    """The parameter spec of ``cel``; None unless both ``paramKind`` and ``paramRef`` are set."""
    kind, ref = cel.get("paramKind"), cel.get("paramRef")
    if kind is None or ref is None:
        return None
    if not isinstance(kind, dict) or not isinstance(kind.get("kind"), str):
        raise CelCompileError("paramKind needs apiVersion and kind", f"{base}/paramKind")
    if not isinstance(ref, dict):
        raise CelCompileError("paramRef must be a mapping", f"{base}/paramRef")
    action = ref.get("parameterNotFoundAction") or "Allow"
    if action not in NOT_FOUND_ACTIONS:
        raise CelCompileError(
            f"parameterNotFoundAction must be Allow or Deny, not {action!r}",
            f"{base}/paramRef/parameterNotFoundAction",
        )
    name, selector = ref.get("name") or "", ref.get("selector")
    if bool(name) == (selector is not None):
        raise CelCompileError("paramRef needs exactly one of name and selector", f"{base}/paramRef")
    return CelParamSpec(
        api_version=str(kind.get("apiVersion") or ""),
        kind=kind["kind"],
        name=str(name),
        namespace=str(ref.get("namespace") or ""),
        selector=selector if isinstance(selector, dict) else None,
        not_found_action=action,
    )


def plan_param_lookup(
    spec: CelParamSpec, *, resource_namespace: str, param_kind_namespaced: bool
) -> ParamLookup:
    """Where to look for the parameter objects of a resource.

    A namespaced ``paramKind`` is looked up in ``paramRef.namespace`` or else the
    resource's namespace (a cluster-scoped resource then has nowhere to look); a
    cluster-scoped ``paramKind`` must not name a namespace.
    """
    lookup = ParamLookup(
        spec.api_version, spec.kind, name=spec.name or None, selector=spec.selector
    )
    if param_kind_namespaced:
        namespace = spec.namespace or resource_namespace
        if not namespace:
            return _with_error(lookup, "can't use namespaced paramRef to match cluster-scoped resources")
        return ParamLookup(lookup.api_version, lookup.kind, namespace, lookup.name, lookup.selector)
    if spec.namespace:
        return _with_error(lookup, "paramRef.namespace must not be provided for a cluster-scoped `paramKind`")
    return lookup


PARAM_ERROR = "error in parameterized resource: "  # the handler's words before CollectParams' error


def _with_error(lookup: ParamLookup, error: str) -> ParamLookup:
    return ParamLookup(lookup.api_version, lookup.kind, lookup.namespace, lookup.name, lookup.selector,
                       error=PARAM_ERROR + error)


def missing_params_result(spec: CelParamSpec, rule_name: str) -> CelResult:
    """No parameter object found: ``error`` when one was named (the API server's not-found) or
    under ``Deny``, otherwise ``pass`` with nothing evaluated."""
    if spec.name:
        missing = not_found(spec.api_version, plural(spec.kind), spec.name)
        return CelResult(RuleStatus.ERROR, PARAM_ERROR + missing)
    if spec.not_found_action == "Deny":
        return CelResult(RuleStatus.ERROR, PARAM_ERROR + "no params found")
    return CelResult(RuleStatus.PASS, f"Validation rule '{rule_name}' passed.")
