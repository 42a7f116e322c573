"""The variable context of one rule evaluation (spec 3.3, 7.5, 7.6, 8).

The context is a JSON tree (request, images, values, context entries, foreach elements)
kept as a persistent structure: every change copies the path it touches, so a checkpoint
is just a reference and restoring is an assignment. Context entries are loaded lazily, the
first time an evaluated expression mentions their name, as Kyverno's deferred loaders are
(``pkg/engine/context/deferred.go``), and their JSON counts against Kyverno's context size
limit. External data (ConfigMaps, API calls, registries, global context) comes through a
``ContextLoader``; the engine does no I/O.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Protocol

from scanner.engine.api_paths import namespace_problem
from scanner.engine.context_images import compute_images
from scanner.engine.dotted import set_path, split_dotted
from scanner.engine.golang.fmt import sprint, to_json, type_name
from scanner.engine.imageref import ImageReferenceError
from scanner.engine.jmespath.dialect import Evaluator, compile_expression
from scanner.engine.jmespath.interpreter import JMESPathError
from scanner.engine.kinds import plural
from scanner.engine.match import UserInfo
from scanner.engine.values import ForeachValues, foreach_element_values
from scanner.engine.variables import SubstitutionError, resolve_references, substitute_all
from scanner.errors import EngineError

_SERVICE_ACCOUNT_PREFIX = "system:serviceaccount:"


class ContextError(EngineError):
    """A context entry could not be loaded; the message names the entry."""


class NotServed(ContextError):
    """No offline source answers this look-up: the entry is skipped, as the CLI skips entries it
    registers no loader for (spec 8.3, 8.4), leaving values-file data visible."""


class ContextLoader(Protocol):
    """Serves external context data offline (from scanned resources or files)."""

    def config_map(self, name: str, namespace: str) -> dict | None:
        """The ConfigMap, or None when it is not known; raises ``NotServed`` when no ConfigMap
        source is configured."""

    def api_call(self, url_path: str, method: str, data: Any) -> Any:
        """The JSON answer of a Kubernetes API GET/POST; raises ``ContextError`` if unknown and
        ``NotServed`` when no source answers such calls."""


_OPTIONS = {"CREATE": "CreateOptions", "UPDATE": "UpdateOptions", "DELETE": "DeleteOptions"}


def admission_fields(resource: dict, operation: str) -> dict[str, Any]:
    """The fields of an admission request (``admission/v1`` ``AdmissionRequest``) that Kyverno's
    webhook puts under ``request`` beside the object, namespace, operation and user, as the API
    server fills them for ``resource`` (empty fields are left out, as Go's ``omitempty`` does).
    The ``kyverno`` CLI sets none of them. (The caller copies them; they are not to be changed:
    the last resource's are kept for the next policy evaluating it.)"""
    global _last_admission
    last = _last_admission
    if last is not None and last[0] is resource and last[1] == operation:
        return last[2]
    fields = _admission_fields(resource, operation)
    _last_admission = (resource, operation, fields)
    return fields


_last_admission: tuple[dict, str, dict[str, Any]] | None = None


def _admission_fields(resource: dict, operation: str) -> dict[str, Any]:
    meta = found if isinstance(found := resource.get("metadata"), dict) else {}
    api_version, kind = str(resource.get("apiVersion") or ""), str(resource.get("kind") or "")
    group, _, version = api_version.rpartition("/")
    gvk = {"group": group, "version": version, "kind": kind}
    gvr = {"group": group, "version": version, "resource": plural(kind) if kind else ""}
    fields: dict[str, Any] = {"kind": gvk, "resource": gvr, "requestKind": gvk, "requestResource": gvr,
                              "dryRun": False}
    name = meta.get("name")
    if isinstance(name, str) and name:
        fields["name"] = name
    options = _OPTIONS.get(operation)
    if options:
        fields["options"] = {"apiVersion": "meta.k8s.io/v1", "kind": options}
    return fields


def _service_account(username: str) -> tuple[str, str]:
    """Namespace and name of a ``system:serviceaccount:<ns>:<name>`` user, as Kyverno's
    ``AddServiceAccount`` reads them: the first two ``:`` fields after the prefix's length (the
    prefix itself is not checked), else empty strings."""
    rest = username.encode()[len(_SERVICE_ACCOUNT_PREFIX):].decode(errors="replace")
    fields = rest.split(":")
    return (fields[0], fields[1]) if len(fields) >= 2 else ("", "")


@lru_cache(maxsize=1024)
def _mention(name: str) -> re.Pattern[str]:
    """Kyverno's deferred-loader matcher (``deferred.go``): the name at the start or after a character
    that is not an ASCII letter, digit or ``.``, then an ASCII word boundary."""
    return re.compile(rf"(?:^|[^.0-9A-Za-z]){re.escape(name)}\b", re.ASCII)


_IMAGES = _mention("images")  # Kyverno's images loader, registered before every context entry
MAX_CONTEXT_SIZE = 2 * 1024 * 1024  # context.go DefaultMaxContextSize


def _raw_json(value: Any) -> str:
    """Go's ``%v`` of a policy's raw JSON field (``*apiextensionsv1.JSON``): the bytes of its JSON."""
    return "&{[" + " ".join(str(b) for b in to_json(value).encode()) + "]}"


@dataclass(slots=True)
class _Pending:
    """A context entry registered but not loaded yet (entries load when first used)."""

    name: str
    entry: dict
    pattern: re.Pattern[str]
    order: int  # registration order: an entry that is loading may load only earlier ones


@dataclass(slots=True)
class VariableContext:
    """Variables of one (policy, resource) evaluation; scoped per rule and foreach element."""

    tree: dict
    evaluator: Evaluator
    loader: ContextLoader | None = None
    rule_values: dict[str, Any] = field(default_factory=dict)
    foreach_values: ForeachValues | None = None  # the rule's foreachValues
    foreach_position: tuple[int, int] | None = None  # (foreach position, element index) being evaluated
    delete: bool = False
    policy_namespace: str = ""
    _pending: list[_Pending] = field(default_factory=list)  # registered and not loaded
    _matched: set[int] = field(default_factory=set)  # tried since the last restore (Kyverno's "matched")
    _registered: int = 0
    _bound: int | None = None  # while an entry loads: only entries registered before it may load
    _size: int = 0  # JSON bytes of the loaded entries; never given back (context.go contextSize)
    _resource: dict | None = None
    _images: dict | ImageReferenceError | None = None  # computed once per resource
    _images_done: bool = False  # merged into the tree since the last restore

    @classmethod
    def for_resource(
        cls,
        resource: dict,
        *,
        evaluator: Evaluator,
        operation: str = "CREATE",
        user: UserInfo | None = None,
        values: dict[str, Any] | None = None,
        loader: ContextLoader | None = None,
        policy_namespace: str = "",
        admission: bool = False,
    ) -> VariableContext:
        meta = found if isinstance(found := resource.get("metadata"), dict) else {}
        request: dict[str, Any] = {"operation": operation, "namespace": meta.get("namespace") or ""}
        if admission:
            request.update(admission_fields(resource, operation))
        if operation == "DELETE":
            request["oldObject"] = resource
        else:
            request["object"] = resource
            if operation == "UPDATE":
                request["oldObject"] = resource
        sa_name = sa_ns = ""
        if user is not None:
            request["userInfo"] = {"username": user.username, "uid": user.uid,
                                   "groups": list(user.groups), "extra": user.extra}
            request["roles"] = list(user.roles)
            request["clusterRoles"] = list(user.cluster_roles)
            sa_ns, sa_name = _service_account(user.username)
        tree: dict[str, Any] = {"request": request, "serviceAccountName": sa_name,
                                "serviceAccountNamespace": sa_ns}
        ctx = cls(tree, evaluator, loader, delete=operation == "DELETE", policy_namespace=policy_namespace)
        ctx._resource = resource
        for key, value in (values or {}).items():
            if key == "request.operation" and value == "":
                continue  # an empty operation means the default one (the CLI's NormalizeOperation)
            ctx.tree = set_path(ctx.tree, split_dotted(key), value)
        return ctx

    # -- scoping -------------------------------------------------------------------------

    def checkpoint(self) -> tuple:
        return self.tree, list(self._pending), self.rule_values, self.foreach_values, self.foreach_position

    def restore(self, state: tuple) -> None:
        """Back to a checkpoint: entries pending then may load again (Kyverno reloads loaded entries
        and clears every loader's "matched" mark), and so may the images."""
        self.tree, pending, self.rule_values, self.foreach_values, self.foreach_position = state
        self._pending = list(pending)
        self._matched.clear()
        self._images_done = False

    def set_all(self, values: dict[str, Any]) -> None:
        """Set top-level variables (a foreach element's), replacing what they held."""
        self.tree = {**self.tree, **values}

    def apply_rule_values(self) -> None:
        """The rule's values, then, inside a foreach, its ``foreachValues`` for the element (the
        CLI's context initializer, run at every context load)."""
        values = self.rule_values
        if self.foreach_values is not None and self.foreach_position is not None:
            values = {**values, **foreach_element_values(self.foreach_values, *self.foreach_position)}
        for key, value in values.items():
            self.tree = set_path(self.tree, split_dotted(key), value)

    def add_entries(self, entries: list[dict] | None) -> None:
        """Register context entries (lazily loaded); per-rule values are written first."""
        self.apply_rule_values()
        for entry in entries or []:
            name = str(entry.get("name"))
            self._registered += 1
            self._pending.append(_Pending(name, entry, _mention(name), self._registered))

    # -- evaluation ----------------------------------------------------------------------

    def _prepare(self, text: str) -> None:
        """Load what ``text`` mentions, as Kyverno's ``LoadMatching``: the images first, then the
        pending entries in registration order, each tried once until the next restore. While an
        entry loads, only entries registered before it may load; the bound in force when this call
        started holds for the whole call, and any finished load lifts it for later calls
        (``deferred.go``: ``setLevelAndIndex(-1, -1)``)."""
        bound = self._bound
        if (not self._images_done and self._resource is not None and "images" in text
                and _IMAGES.search(text)):
            self._images_done = True
            self._bound = None
            images = self._image_variables()
            if images:
                self.tree = set_path(self.tree, ["images"], images)
        while self._pending:
            hit = next((p for p in self._pending if p.order not in self._matched
                        and (bound is None or p.order < bound) and p.pattern.search(text)), None)
            if hit is None:
                return
            self._matched.add(hit.order)
            self._load(hit)
            self._pending.remove(hit)

    def _image_variables(self) -> dict:
        if self._images is None:
            try:
                self._images = compute_images(self._resource or {}) or {}
            except ImageReferenceError as exc:
                self._images = exc
        if isinstance(self._images, ImageReferenceError):
            raise ContextError(str(self._images))  # the loader's error, as Query returns it
        return self._images

    def _ready(self, text: str) -> str:
        """``text`` as evaluated (``request.object`` is the old object on DELETE), with the
        context entries and images it mentions loaded."""
        if self.delete:
            text = text.replace("request.object", "request.oldObject")
        self._prepare(text)
        return text

    def search(self, text: str) -> Any:
        """Evaluate a JMESPath expression against the context (spec 7.3)."""
        return self.evaluator.search(compile_expression(self._ready(text)), self.tree)

    def query(self, text: str) -> Any:
        """``search`` with the error wording of Kyverno's context ``Query``, which variable
        substitution reports: ``invalid query (nil)``, ``incorrect query <q>: <err>`` for an
        expression that does not compile, ``JMESPath query failed: <err>`` for one that fails.
        Errors of lazily loaded context entries pass through unchanged."""
        text = self._ready(text).strip()
        if not text:
            raise JMESPathError("invalid query (nil)")
        try:
            expression = compile_expression(text)
        except JMESPathError as exc:
            raise JMESPathError(f"incorrect query {text}: {exc}") from exc
        try:
            return self.evaluator.search(expression, self.tree)
        except JMESPathError as exc:
            raise JMESPathError(f"JMESPath query failed: {exc}") from exc

    def substitute(self, document: Any) -> Any:
        """``$( )`` references then ``{{ }}`` variables, as Kyverno's ``SubstituteAll`` does for
        every document it substitutes (patterns, conditions, messages, context entries);
        raises ``SubstitutionError``."""
        return substitute_all(resolve_references(document), self.query, delete=self.delete)

    # -- context entries (spec 8) ------------------------------------------------------

    def _load(self, pending: _Pending) -> None:
        entry, name = pending.entry, pending.name
        self._bound = pending.order
        try:
            if entry.get("variable") is not None:
                self._store(name, self._variable(name, entry["variable"]), replace=True)
            elif entry.get("configMap") is not None:
                self._config_map(name, entry["configMap"])
            elif entry.get("apiCall") is not None:
                self._api_call(name, entry["apiCall"])
            elif entry.get("imageRegistry") is not None or entry.get("globalReference") is not None:
                kind = "imageRegistry" if entry.get("imageRegistry") is not None else "globalReference"
                if name not in self.tree:
                    raise ContextError(
                        f"context entry {name!r} ({kind}) cannot be resolved offline: "
                        "give its value in a values file"
                    )
        except (SubstitutionError, JMESPathError) as exc:
            raise ContextError(f"failed to load context entry {name!r}: {exc}") from exc
        finally:
            self._bound = None

    def _store(self, name: str, value: Any, *, replace: bool = False) -> None:
        """Kyverno's ``AddContextEntry`` (maps merge) or ``ReplaceContextEntry``: the entries' JSON
        sizes add up to at most ``MAX_CONTEXT_SIZE`` bytes."""
        size = self._size + len(to_json(value).encode())
        if size > MAX_CONTEXT_SIZE:
            raise ContextError(f"context size limit exceeded: {size} bytes exceeds limit of {MAX_CONTEXT_SIZE} bytes")
        self._size = size
        self.tree = set_path(self.tree, [name], value, merge=not replace)

    def _variable(self, name: str, spec: dict) -> Any:
        """``loaders/variable.go``: ``jmesPath``, ``default`` and ``value`` are substituted in that
        order; a value with a path is searched (an error gives the default), else the path is
        queried (an error or null gives the default); a null result is an error."""
        path: Any = ""  # (what substitution gives, checked below)
        if spec.get("jmesPath"):
            raw = spec["jmesPath"]
            try:
                path = self.substitute(raw)
            except SubstitutionError as unsubstituted:
                raise ContextError(f"failed to substitute variables in context entry {name} {raw}: "
                                   f"{unsubstituted}") from unsubstituted
            if not isinstance(path, str):
                raise ContextError(f"jmespath value must be a string {name} {raw}: <nil>")
        default = self._entry_field(name, spec.get("default"))
        output = default
        if spec.get("value") is not None:
            value = self._entry_field(name, spec["value"])
            if not path:
                output = value
            else:
                try:
                    output = self._apply(path, value)
                except JMESPathError as failed:
                    if default is None:
                        message = f"failed to apply jmespath {path} to variable {sprint(value)}: {failed}"
                        raise ContextError(message) from failed
        elif path:
            try:
                result = self.query(path)
            except (JMESPathError, ContextError) as exc:
                if default is None:
                    raise ContextError(f"failed to apply jmespath {path} to variable <nil>: {exc}") from exc
            else:
                if result is not None:
                    output = result
        if output is None:
            raise ContextError(f"failed to add context entry for variable {name} since it evaluated to nil")
        return output

    def _entry_field(self, name: str, raw: Any) -> Any:
        """A substituted ``value`` or ``default`` (None when absent)."""
        if raw is None:
            return None
        try:
            return self.substitute(raw)
        except SubstitutionError as exc:
            message = f"failed to substitute variables in context entry {name} {_raw_json(raw)}: {exc}"
            raise ContextError(message) from exc

    def _apply(self, path: str, value: Any) -> Any:
        try:
            expression = compile_expression(path)
        except JMESPathError as exc:
            raise JMESPathError(f"failed to compile JMESPath: {path}, error: {exc}") from exc
        return self.evaluator.search(expression, value)

    def _config_map(self, name: str, spec: dict) -> None:
        """``loaders/configmap.go``; a namespaced policy reads only its own namespace. Offline the
        source is asked before that check: asking has no side effect, and a missing source means
        the entry is skipped, as the CLI registers no loader then."""
        if self.loader is None:
            return  # offline without a ConfigMap source: values-file data stays visible
        try:
            cm_name = self._config_map_field(name, spec, "name")
            namespace = self._config_map_field(name, spec, "namespace") or self.policy_namespace or "default"
            try:
                found = self.loader.config_map(cm_name, namespace)
            except NotServed:
                return
            if self.policy_namespace and namespace != self.policy_namespace:
                raise ContextError(f'context entry {name}: configMap namespace "{namespace}" is different '
                                   f'from policy namespace "{self.policy_namespace}"')
            if found is None:
                raise ContextError(f'failed to get configmap {namespace}/{cm_name} : configmaps "{cm_name}" not found')
        except ContextError as exc:
            raise ContextError(f"failed to retrieve config map for context entry {name}: {exc}") from exc
        try:
            self._store(name, {"data": found.get("data"), "metadata": found.get("metadata") or {}})
        except ContextError as exc:
            raise ContextError(f"failed to add config map for context entry {name}: {exc}") from exc

    def _config_map_field(self, name: str, spec: dict, key: str) -> str:
        raw = spec.get(key) or ""
        failed = f"failed to substitute variables in context {name} configMap.{key} {raw}"
        try:
            value = self.substitute(raw)
        except SubstitutionError as exc:
            raise ContextError(f"{failed}: {exc}") from exc
        if not isinstance(value, str):
            raise ContextError(f"{failed}: expected string, got {type_name(value)}")
        return value

    def _api_call(self, name: str, spec: dict) -> None:
        if self.loader is None:
            return
        service = spec.get("service")
        target = service.get("url") if isinstance(service, dict) else spec.get("urlPath")
        method = str(spec.get("method") or "GET")
        try:  # a failed substitution is a failed fetch: the default (stored as written) replaces both
            url = str(self.substitute(target or ""))
            data = self.substitute(spec.get("data")) if spec.get("data") is not None else None
            failure = None
            try:  # asked before the namespace check, as for a ConfigMap: whether it is served decides
                response = self.loader.api_call(url, method, data)
            except ContextError as exc:
                failure = exc
            if self.policy_namespace and not isinstance(service, dict):
                problem = namespace_problem(url, self.policy_namespace)
                if problem:
                    raise ContextError(problem)
            if failure is not None:
                raise failure
        except NotServed:
            return
        except (ContextError, SubstitutionError):
            if spec.get("default") is None:
                raise
            self._store(name, spec["default"])
            return
        expr = spec.get("jmesPath")
        if expr:
            response = self.evaluator.search(compile_expression(self.substitute(expr)), response)
        self._store(name, response)
