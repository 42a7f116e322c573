"""match / exclude: kinds, names, namespaces, selectors, annotations, operations, user info (spec 2)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from scanner.engine import wildcard
from scanner.engine.api_versions import equivalent_versions
from scanner.engine.selector import LabelSelector, parse_selector

_VERSION = re.compile(r"v[0-9]+((alpha|beta)[0-9]+)?|\*")
_KIND_HITS_LIMIT = 4096


def is_version(segment: str) -> bool:
    """True if a kinds-entry segment is read as an API version (``v1``, ``v2beta1``) or ``*``."""
    return _VERSION.fullmatch(segment) is not None


@dataclass(frozen=True, slots=True)
class KindSelector:
    """One entry of a filter's ``kinds``: group, version, kind and subresource (wildcards allowed)."""

    group: str
    version: str
    kind: str
    subresource: str

    def matches(self, group: str, version: str, kind: str, subresource: str = "") -> bool:
        return (
            wildcard.match(self.group, group)
            and wildcard.match(self.version, version)
            and wildcard.match(self.kind, kind)
            and wildcard.match(self.subresource, subresource)
        )


def parse_kind(entry: str) -> KindSelector:
    """Split a kinds entry into group/version/kind/subresource (spec 2.3)."""
    parts = entry.split("/")
    parts = parts[:-1] + parts[-1].split(".")
    if len(parts) == 1:
        return KindSelector("*", "*", parts[0], "")
    if len(parts) == 2:
        first, second = parts
        if first == "*" and second == "*":
            return KindSelector("*", "*", "*", "*")
        if first == "*" and second.lower() == second:
            return KindSelector("*", "*", "*", second)
        if is_version(first):
            return KindSelector("*", first, second, "")
        return KindSelector("*", "*", first, second)
    if len(parts) == 3:
        if is_version(parts[0]):
            return KindSelector("*", parts[0], parts[1], parts[2])
        return KindSelector(parts[0], parts[1], parts[2], "")
    if len(parts) == 4:
        return KindSelector(*parts)
    return KindSelector("", "", "", "")


@dataclass(frozen=True, slots=True)
class UserInfo:
    """Admission user information from a userinfo file."""

    username: str = ""
    groups: tuple[str, ...] = ()
    roles: tuple[str, ...] = ()
    cluster_roles: tuple[str, ...] = ()
    uid: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class ResourceView:
    """What matching needs to know about a resource, computed once per resource."""

    kind: str
    group: str
    version: str
    name: str
    namespace: str
    labels: dict[str, Any]
    annotations: dict[str, Any]
    subresource: str = ""  # "scale" when a Scale object stands for its Deployment's subresource
    # what rules work out from the resource and share (the podSecurity rules its decoded pod)
    derived: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)
    # (group, version, kind, subresource): what a match by kinds alone looks at, for every rule
    kind_key: tuple[str, str, str, str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.kind_key = (self.group, self.version, self.kind, self.subresource)

    @classmethod
    def of(cls, resource: dict) -> ResourceView:
        api_version = resource.get("apiVersion") or ""
        group, _, version = api_version.rpartition("/")
        meta = resource.get("metadata") or {}
        if not isinstance(meta, dict):
            meta = {}
        name = _text(meta.get("name")) or _text(meta.get("generateName"))
        return cls(
            str(resource.get("kind") or ""), group, version, name,
            _text(meta.get("namespace")), string_map(meta.get("labels")), string_map(meta.get("annotations")),
        )


def _text(value: Any) -> str:
    """A metadata string field as Kubernetes reads it: anything but a string counts as unset."""
    return value if isinstance(value, str) else ""


def string_map(value: Any) -> dict[str, Any]:
    """Labels or annotations as Kubernetes reads them: one non-string value drops the whole map."""
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        return {}
    return value


NamespaceLabels = Callable[[str], "dict[str, Any] | None"]


@dataclass(frozen=True, slots=True)
class Request:
    """The admission request as seen offline."""

    operation: str = "CREATE"
    user: UserInfo | None = None
    namespace_labels: NamespaceLabels = lambda _ns: None
    # the request comes through an API server, which converts a resource written in an older
    # group/version to one it serves today before Kyverno's webhook sees it (matchPolicy:
    # Equivalent); False: kinds are compared as written, as the Kyverno CLI compares them
    served_versions: bool = True


@dataclass(frozen=True, slots=True)
class ResourceFilter:
    """One ``resources`` filter of a match or exclude block, parsed."""

    kinds: tuple[KindSelector, ...] = ()
    name: str | None = None
    names: tuple[str, ...] | None = None
    namespaces: tuple[str, ...] | None = None
    annotations: tuple[tuple[str, str], ...] | None = None
    selector: LabelSelector | None = None
    namespace_selector: LabelSelector | None = None
    operations: tuple[str, ...] | None = None
    roles: tuple[str, ...] = ()
    cluster_roles: tuple[str, ...] = ()
    subjects: tuple[dict, ...] = ()
    # Kyverno decides whether a match filter is empty with reflect.DeepEqual, so a list written
    # empty (``namespaces: []``) makes it non-empty although it sets no condition; an exclude
    # filter of lists written empty excludes nothing (kyverno/kyverno#13772)
    written_empty: bool = field(default=False, compare=False)
    written_empty_user_info: bool = field(default=False, compare=False)
    has_resources: bool = field(init=False, compare=False, repr=False)
    has_user_info: bool = field(init=False, compare=False, repr=False)
    # ResourceDescription.IsEmpty, which PolicyException filters use: operations do not count
    has_exception_resources: bool = field(init=False, compare=False, repr=False)
    # kinds and nothing else (no names, namespaces, selectors, operations or user info): the
    # filter matches by the resource's kind alone, whether it matches, excludes or excepts
    kinds_only: bool = field(init=False, compare=False, repr=False)
    # whether the kinds match, by (group, version, kind, subresource, served versions): resources
    # repeat a few kinds
    _kind_hits: dict[tuple[str, str, str, str, bool], bool] = field(
        init=False, compare=False, repr=False, default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "has_resources", bool(
            self.kinds or self.name is not None or self.names or self.namespaces
            or self.annotations or self.selector is not None
            or self.namespace_selector is not None or self.operations
        ))
        object.__setattr__(self, "has_user_info", bool(self.roles or self.cluster_roles or self.subjects))
        object.__setattr__(self, "has_exception_resources", bool(
            self.kinds or self.name is not None or self.names or self.namespaces
            or self.annotations or self.selector is not None or self.namespace_selector is not None
        ))
        object.__setattr__(self, "kinds_only", bool(self.kinds) and not self.has_user_info and (
            self.name is None and self.names is None and self.namespaces is None and self.annotations is None
            and self.selector is None and self.namespace_selector is None and self.operations is None))

    def matches(self, res: ResourceView, request: Request, *, exclude: bool, exception: bool = False) -> bool:
        """``exception``: a PolicyException filter (Kyverno's pkg/engine/utils/exceptions.go)."""
        # offline, a match filter's user info is dropped unless the request has some
        user_info_counts = exclude or request.user is not None
        use_user_info = self.has_user_info and user_info_counts
        if exception and not self.has_exception_resources and not self.has_user_info:
            return False  # ResourceFilter.IsEmpty
        written = not exclude  # lists written empty make only a match filter non-empty
        if not (self.has_resources or (written and self.written_empty)) and not (
                user_info_counts and (self.has_user_info or (written and self.written_empty_user_info))):
            return False  # an empty filter never matches
        # list conditions apply only when non-empty (len(...) > 0 in Kyverno)
        if self.operations and request.operation not in self.operations:
            return False
        if self.kinds and not self._kinds_match(res.group, res.version, res.kind, res.subresource,
                                                request.served_versions):
            return False
        if self.name is not None and not wildcard.match(self.name, res.name):
            return False
        if self.names and not any(wildcard.match(n, res.name) for n in self.names):
            return False
        if self.namespaces:
            ns = res.name if res.kind == "Namespace" else res.namespace
            if not any(wildcard.match(p, ns) for p in self.namespaces):
                return False
        if self.annotations is not None:
            for key, value in self.annotations:
                if not any(
                    wildcard.match(key, k) and wildcard.match(value, str(v))
                    for k, v in res.annotations.items()
                ):
                    return False
        if self.selector is not None and not self.selector.matches(res.labels):
            return False
        if self.namespace_selector is not None:
            if res.kind == "Namespace" or not res.kind:
                if not exception:  # exceptions leave the selector out for these instead of failing
                    return False
            elif not self.namespace_selector.matches(request.namespace_labels(res.namespace) or {}):
                return False
        return not use_user_info or self._user_matches(request.user)

    def _kinds_match(self, group: str, version: str, kind: str, subresource: str, served: bool) -> bool:
        """Whether a kinds entry names the resource; with ``served``, in its own group/version or in
        one the API server serves it at today (an ``extensions/v1beta1`` DaemonSet as ``apps/v1``)."""
        key = (group, version, kind, subresource, served)
        hit = self._kind_hits.get(key)
        if hit is None:
            if len(self._kind_hits) >= _KIND_HITS_LIMIT:
                self._kind_hits.clear()
            versions = equivalent_versions(group, version, kind) if served else ((group, version),)
            hit = self._kind_hits[key] = any(
                k.matches(g, v, kind, subresource) for g, v in versions for k in self.kinds)
        return hit

    def _user_matches(self, user: UserInfo | None) -> bool:
        if user is None:
            return False
        if self.roles and not any(r in user.roles for r in self.roles):
            return False
        if self.cluster_roles and not any(r in user.cluster_roles for r in self.cluster_roles):
            return False
        return not self.subjects or any(_subject_matches(s, user) for s in self.subjects)


def _subject_matches(subject: dict, user: UserInfo) -> bool:
    kind, name = subject.get("kind"), str(subject.get("name") or "")
    if kind == "ServiceAccount":
        full = f"system:serviceaccount:{subject.get('namespace') or ''}:{name}"
        return wildcard.match(full, user.username)
    if kind == "User":
        return wildcard.match(name, user.username)
    if kind == "Group":
        return any(wildcard.match(name, g) for g in user.groups)
    return False


@dataclass(frozen=True, slots=True)
class MatchBlock:
    """A match or exclude block: ``legacy`` (one filter), ``any`` or ``all``."""

    mode: str
    filters: tuple[ResourceFilter, ...]
    # whether the block matches, by (group, version, kind, subresource), when its filters
    # name kinds and nothing else: the answer then depends on the kind alone (and on whether
    # the API server's served versions count: one table each way)
    _kind_hits: dict[tuple[str, str, str, str], bool] | None = field(
        init=False, compare=False, repr=False, default=None)
    _literal_kind_hits: dict[tuple[str, str, str, str], bool] | None = field(
        init=False, compare=False, repr=False, default=None)

    def __post_init__(self) -> None:
        if self.filters and all(f.kinds_only for f in self.filters):
            object.__setattr__(self, "_kind_hits", {})
            object.__setattr__(self, "_literal_kind_hits", {})

    def matches(self, res: ResourceView, request: Request, *, exclude: bool = False,
                exception: bool = False) -> bool:
        hits = self._kind_hits if request.served_versions else self._literal_kind_hits
        if hits is not None:
            key = res.kind_key
            hit = hits.get(key)
            if hit is None:
                if len(hits) >= _KIND_HITS_LIMIT:
                    hits.clear()
                hit = hits[key] = self._matches(res, request, exclude=exclude, exception=exception)
            return hit
        return self._matches(res, request, exclude=exclude, exception=exception)

    def _matches(self, res: ResourceView, request: Request, *, exclude: bool, exception: bool) -> bool:
        if self.mode == "any":
            return any(f.matches(res, request, exclude=exclude, exception=exception) for f in self.filters)
        if self.mode == "all":
            if not self.filters:
                return False
            return all(f.matches(res, request, exclude=exclude, exception=exception) for f in self.filters)
        return bool(self.filters) and self.filters[0].matches(res, request, exclude=exclude, exception=exception)

    def is_empty(self) -> bool:
        return not self.filters

    def kind_selectors(self) -> list[KindSelector]:
        return [k for f in self.filters for k in f.kinds]


def is_excluded(block: MatchBlock | None, res: ResourceView, request: Request) -> bool:
    """An empty filter excludes nothing, so an ``all`` block holding one excludes nothing."""
    if block is None or block.is_empty():
        return False
    return block.matches(res, request, exclude=True)


def parse_filter(raw: dict, problems: list[tuple[str, str]], pointer: str) -> ResourceFilter:
    """Compile one resource filter; problems found are appended as (pointer, message)."""
    res = raw.get("resources") or {}
    if not isinstance(res, dict):
        problems.append((pointer + "/resources", "resources must be an object"))
        res = {}
    rp = pointer + "/resources"
    kinds_raw = res.get("kinds") or []
    if not isinstance(kinds_raw, list) or not all(isinstance(k, str) for k in kinds_raw):
        problems.append((rp + "/kinds", "kinds must be a list of strings"))
        kinds_raw = []
    if res.get("name") and res.get("names"):
        problems.append((rp, "name and names are mutually exclusive"))

    def strings(key: str) -> tuple[str, ...] | None:
        value = res.get(key)
        if value is None:
            return None
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            problems.append((f"{rp}/{key}", f"{key} must be a list of strings"))
            return None
        return tuple(value)

    def selector(key: str) -> LabelSelector | None:
        if res.get(key) is None:
            return None
        sel, problem = parse_selector(res.get(key))
        if sel is not None and key == "selector" and not (sel.match_labels or sel.expressions):
            problem = "The requirements are not specified in selector"
        if problem:
            problems.append((f"{rp}/{key}", problem))
        return sel

    annotations = res.get("annotations")
    if annotations is not None and not isinstance(annotations, dict):
        problems.append((rp + "/annotations", "annotations must be an object"))
        annotations = None
    def user_list(key: str) -> list:
        value = raw.get(key) or []
        if not isinstance(value, list):
            problems.append((f"{pointer}/{key}", f"{key} must be a list"))
            return []
        return value

    roles, cluster_roles, subjects = user_list("roles"), user_list("clusterRoles"), user_list("subjects")
    for i, role in enumerate(cluster_roles):
        if not isinstance(role, str):
            problems.append((f"{pointer}/clusterRoles/{i}", "cluster role must be a string"))
    for i, role in enumerate(roles):
        if not isinstance(role, str) or role.count(":") != 1:
            problems.append((f"{pointer}/roles/{i}", "role must look like namespace:name"))
    for i, subj in enumerate(subjects):
        if not isinstance(subj, dict) or subj.get("kind") not in ("User", "Group", "ServiceAccount"):
            problems.append((f"{pointer}/subjects/{i}", "subject kind must be User, Group or ServiceAccount"))
        elif not subj.get("name"):
            problems.append((f"{pointer}/subjects/{i}", "subject name is required"))
        elif subj.get("kind") == "ServiceAccount" and not subj.get("namespace"):
            problems.append((f"{pointer}/subjects/{i}", "ServiceAccount subject needs a namespace"))
    name = res.get("name")
    if name is not None and not isinstance(name, str):
        problems.append((rp + "/name", "name must be a string"))
    written_empty = any(res.get(key) in ([], {}) for key in _LIST_CONDITIONS)
    written_empty_user_info = any(raw.get(key) == [] for key in ("roles", "clusterRoles", "subjects"))
    return ResourceFilter(
        kinds=tuple(parse_kind(k) for k in kinds_raw),
        name=name if isinstance(name, str) and name else None,
        names=strings("names"),
        namespaces=strings("namespaces"),
        annotations=tuple((str(k), str(v)) for k, v in annotations.items()) if annotations is not None else None,
        selector=selector("selector"),
        namespace_selector=selector("namespaceSelector"),
        operations=strings("operations"),
        roles=tuple(r for r in roles if isinstance(r, str)),
        cluster_roles=tuple(r for r in cluster_roles if isinstance(r, str)),
        subjects=tuple(s for s in subjects if isinstance(s, dict)),
        written_empty=written_empty,
        written_empty_user_info=written_empty_user_info,
    )


_LIST_CONDITIONS = ("kinds", "names", "namespaces", "annotations", "operations")


def parse_match_block(
    raw: Any, problems: list[tuple[str, str]], pointer: str, *, require_kinds: bool
) -> MatchBlock:
    """Compile a match/exclude block with the validity checks of spec 1.7."""
    if raw is None:
        return MatchBlock("any", ())
    if not isinstance(raw, dict):
        problems.append((pointer, "must be an object"))
        return MatchBlock("any", ())
    has_any, has_all = raw.get("any") is not None, raw.get("all") is not None
    has_legacy = bool(raw.get("resources")) or any(raw.get(k) for k in ("roles", "clusterRoles", "subjects"))
    if has_any and has_all:
        problems.append((pointer, "any and all cannot be used together"))
    if (has_any or has_all) and has_legacy:
        problems.append((pointer, "any/all cannot be used together with resources"))
    if has_any or has_all:
        mode = "any" if has_any else "all"
        entries = raw.get(mode)
        if not isinstance(entries, list):
            problems.append((f"{pointer}/{mode}", f"{mode} must be a list"))
            entries = []
        filters = []
        for i, entry in enumerate(entries):
            fp = f"{pointer}/{mode}/{i}"
            if not isinstance(entry, dict):
                problems.append((fp, "filter must be an object"))
                continue
            f = parse_filter(entry, problems, fp)
            if require_kinds and not f.kinds:
                problems.append((fp + "/resources/kinds", "at least one kind is required"))
            filters.append(f)
        return MatchBlock(mode, tuple(filters))
    if not has_legacy:
        if require_kinds:
            problems.append((pointer + "/resources/kinds", "at least one kind is required"))
        return MatchBlock("legacy", ())
    f = parse_filter(raw, problems, pointer)
    if require_kinds and not f.kinds:
        problems.append((pointer + "/resources/kinds", "at least one kind is required"))
    return MatchBlock("legacy", (f,))
