"""``kyverno test`` suites: load a kyverno-test.yaml, evaluate, compare expectations (spec 13.5, 14)."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from scanner.engine.environment import make_environment
from scanner.engine.evaluate import PolicyIndex, RequestContext, evaluate_resource
from scanner.engine.exceptions import PolicyException
from scanner.engine.match import UserInfo
from scanner.engine.normalize import normalize_resource, object_problem
from scanner.engine.policy import Policy
from scanner.engine.types import RuleResult, reported_status
from scanner.engine.values import Values, ValuesError, parse_userinfo, parse_values
from scanner.errors import ManifestError, SuiteError
from scanner.kyvernocli.suite_cluster import TestCluster, load_cluster
from scanner.policies import PolicySet, load_exceptions, load_policies
from scanner.yamldoc import iter_documents, load_yaml_value, load_yaml_values

TEST_FILE = "kyverno-test.yaml"
_TEST_FIELDS = {
    "apiVersion", "kind", "metadata", "policies", "resources", "results", "variables", "values",
    "userinfo", "exceptions", "paramResources", "targetResources", "clusterResources", "context",
    "jsonPayloads", "apiCallResponses", "globalContextEntries", "checks",
}
_RESULT_FIELDS = {
    "policy", "rule", "kind", "resources", "resourceSpecs", "result", "operation",
    "status", "resource", "namespace",  # deprecated forms of result, resources and a namespace filter
    "isValidatingAdmissionPolicy", "isMutatingAdmissionPolicy", "isValidatingPolicy", "isMutatingPolicy",
    "isGeneratingPolicy", "isImageValidatingPolicy", "isDeletingPolicy",
    "patchedResources", "generatedResource", "generatedResources", "cloneSourceResource",
}
_FILE_LISTS = ("policies", "resources", "exceptions")
_RESULT_OPERATIONS = (None, "", "CREATE", "UPDATE", "DELETE")
_VALUES_OPERATIONS = ("", "CREATE", "UPDATE", "DELETE", "CONNECT")
EXCLUDED = "excluded"


@dataclass(frozen=True, slots=True)
class TestRow:
    policy: str
    rule: str
    kind: str
    namespace: str
    resource: str
    expected: str
    actual: str
    ok: bool
    reason: str

    def as_dict(self) -> dict[str, Any]:
        return {
            "policy": self.policy, "rule": self.rule, "kind": self.kind,
            "namespace": self.namespace, "resource": self.resource, "expected": self.expected,
            "actual": self.actual, "ok": self.ok, "reason": self.reason,
        }


@dataclass(slots=True)
class SuiteResult:
    path: str
    name: str
    error: str | None = None
    rows: list[TestRow] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {"path": self.path, "name": self.name, "error": self.error,
                "results": [r.as_dict() for r in self.rows]}


def find_test_files(paths: list[str], file_name: str = TEST_FILE) -> list[Path]:
    found: set[Path] = set()
    for raw in paths:
        path = Path(raw)
        if path.is_file():
            found.add(path)
            continue
        for dirpath, dirnames, filenames in os.walk(path):
            dirnames.sort()
            if file_name in filenames:
                found.add(Path(dirpath) / file_name)
    return sorted(found)


def _load_yaml(path: Path) -> list[Any]:
    try:
        text = path.read_bytes()
    except OSError as exc:
        raise SuiteError(f"cannot read {path}: {exc.strerror}") from exc
    return [d.data for d in iter_documents(text, str(path))]


def _load_resources(base: Path, files: list[str], warnings: list[str]) -> list[dict]:
    """The resources of ``files``; of duplicates (same apiVersion, kind, namespace and name) the
    first is kept and the others are named in ``warnings``, like ``kyverno test`` does."""
    resources: list[dict] = []
    seen: set[tuple] = set()
    for rel in files:
        for doc in _load_yaml(base / rel):
            if not isinstance(doc, dict):
                continue
            problem = object_problem(doc) if doc.get("apiVersion") is not None and doc.get("kind") is not None else None
            if problem is not None:
                raise SuiteError(f"{base / rel}: {problem}")
            resource = normalize_resource(doc)
            meta = resource.get("metadata") or {}
            key = (resource.get("apiVersion"), resource.get("kind"), meta.get("namespace"), meta.get("name"))
            if key in seen:
                warnings.append(f"duplicated resource {key[1]} {key[3]} in namespace {key[2] or '-'} "
                                f"({rel}): the first one is kept")
                continue
            seen.add(key)
            resources.append(resource)
    return resources


def _check_test(path: Path, test: dict) -> None:
    """Refuse a Test document whose fields have the wrong shape (``kyverno test`` decodes strictly)."""
    def fail(field: str, problem: str) -> SuiteError:
        return SuiteError(f"{path}: {field}: {problem}")

    if test.get("metadata") is not None and not isinstance(test["metadata"], dict):
        raise fail("metadata", "must be a mapping")
    for name in _FILE_LISTS:
        value = test.get(name)
        if value is not None and not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
            raise fail(name, "must be a list of file names")
    for name in ("variables", "userinfo"):
        if test.get(name) is not None and not isinstance(test[name], str):
            raise fail(name, "must be a file name")
    if test.get("values") is not None and not isinstance(test["values"], dict):
        raise fail("values", "must be a mapping")
    if test.get("checks"):
        raise fail("checks", "not supported: checks (compare expectations with results instead)")
    if test.get("globalContextEntries"):
        raise fail("globalContextEntries", "not supported: globalContextEntries (give the globalReference "
                                           "context entries' values in a values file instead)")
    results = test.get("results")
    if results is not None and not isinstance(results, list):
        raise fail("results", "must be a list")
    for i, entry in enumerate(results or []):
        where = f"results[{i}]"
        if not isinstance(entry, dict):
            raise fail(where, "must be a mapping")
        unknown = sorted(set(entry) - _RESULT_FIELDS)
        if unknown:
            raise fail(f"{where}.{unknown[0]}", "unknown field")
        resources = entry.get("resources")
        if resources is not None and not (isinstance(resources, list) and all(isinstance(r, str) for r in resources)):
            raise fail(f"{where}.resources", "must be a list of resource names")
        specs = entry.get("resourceSpecs")
        if specs is not None and not (isinstance(specs, list) and all(isinstance(r, dict) for r in specs)):
            raise fail(f"{where}.resourceSpecs", "must be a list of mappings")
        if not (entry.get("result") or entry.get("status")):
            raise fail(f"{where}.result", "is required (pass, fail, warn, error or skip)")
        if entry.get("operation") not in _RESULT_OPERATIONS:
            raise fail(f"{where}.operation", f"invalid operation {entry['operation']!r}, must be one of "
                                             "CREATE, UPDATE, DELETE")


def _check_global_operation(path: Path, values: Values) -> None:
    """Refuse a ``request.operation`` global value ``kyverno test`` cannot simulate."""
    operation = values.global_values.get("request.operation")
    if isinstance(operation, str) and operation not in _VALUES_OPERATIONS:
        raise SuiteError(f"{path}: globalValues: invalid request.operation value {operation!r}, must be one of "
                         "CREATE, UPDATE, DELETE, CONNECT")


@dataclass(slots=True)
class Suite:
    path: Path
    test: dict
    policies: PolicySet
    resources: list[dict]
    values: Values
    user: UserInfo | None
    exceptions: list[PolicyException] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    cluster: TestCluster | None = None  # clusterResources and apiCallResponses


def load_suite(path: Path, test: dict) -> Suite:
    base = path.parent
    if not test.get("apiVersion") or not test.get("kind"):
        raise SuiteError(f"{path}: deprecated schema: apiVersion and kind are required")
    unknown = set(test) - _TEST_FIELDS
    if unknown:
        raise SuiteError(f"unknown field {sorted(unknown)[0]!r} in {path}")
    _check_test(path, test)
    policy_files = [str(base / p) for p in dict.fromkeys(test.get("policies") or [])]
    policies = load_policies(policy_files)
    warnings: list[str] = []
    resources = _load_resources(base, list(dict.fromkeys(test.get("resources") or [])), warnings)
    values = Values()
    try:
        if test.get("values") is not None:  # inline values win over a variables file
            values = parse_values(test["values"])
        elif test.get("variables"):
            docs = _load_yaml(base / test["variables"])
            values = parse_values(docs[0] if docs else {})
        user = None
        if test.get("userinfo"):
            docs = _load_yaml(base / test["userinfo"])
            user = parse_userinfo(docs[0] if docs else {})
    except ValuesError as exc:
        raise SuiteError(f"{path}: {exc}") from exc
    _check_global_operation(path, values)
    exceptions, exception_errors = load_exceptions([str(base / p) for p in test.get("exceptions") or []])
    if exception_errors:
        raise SuiteError("; ".join(str(e) for e in exception_errors))
    cluster = load_cluster(base, test, resources, path, _load_yaml)
    return Suite(path, test, policies, resources, values, user, exceptions, warnings, cluster)


def _has_name(resource: dict, wanted: str) -> bool:
    """``wanted`` is ``name`` (any kind, any namespace) or ``namespace/name``."""
    meta = resource.get("metadata") or {}
    parts = wanted.split("/")
    if len(parts) == 1:
        return str(meta.get("name") or "") == wanted
    return len(parts) == 2 and parts == [str(meta.get("namespace") or ""), str(meta.get("name") or "")]


def _has_spec(resource: dict, spec: dict) -> bool:
    """A ``resourceSpecs`` entry: group/version, namespace (empty for cluster-scoped) and name must match."""
    meta = resource.get("metadata") or {}
    group, version = spec.get("group") or "", spec.get("version") or ""
    return (resource.get("apiVersion") == (f"{group}/{version}" if group else version)
            and str(meta.get("namespace") or "") == (spec.get("namespace") or "")
            and str(meta.get("name") or "") == spec.get("name"))


def _candidates(resources: list[dict], entry: dict, names: list[str]) -> list[dict]:
    """The resources an expectation is checked against, in the order it names them (a resource named
    twice is checked twice). ``resourceSpecs`` count only next to a ``resources`` list. When nothing
    is named or nothing named exists, every resource is a candidate."""
    selected = [r for name in names for r in resources if _has_name(r, name)]
    if entry.get("resources") is not None:
        selected += [r for spec in entry.get("resourceSpecs") or [] for r in resources if _has_spec(r, spec)]
    return selected or resources


def _expected_entries(test: dict) -> Iterator[tuple[dict, list[str]]]:
    """Each expectation with the resource names it lists; without ``resources``, the deprecated
    ``resource`` (one name, optionally qualified by ``namespace``) is used instead."""
    for entry in test.get("results") or []:
        if entry.get("resources") is not None:
            names = list(entry["resources"])
        elif entry.get("resource"):
            ns = entry.get("namespace") or ""
            names = [f"{ns}/{entry['resource']}" if ns else str(entry["resource"])]
        else:
            names = []
        yield entry, names


def run_suite(path: Path) -> list[SuiteResult]:
    """Run every Test document of one kyverno-test.yaml."""
    try:
        docs = _load_yaml(path)
    except (SuiteError, ManifestError) as exc:
        return [SuiteResult(str(path), path.resolve().parent.name, error=str(exc))]
    out = []
    for test in docs:
        if not isinstance(test, dict):
            continue
        meta = test.get("metadata")
        if not isinstance(meta, dict):
            meta = {}
        name = str(meta.get("name") or test.get("name") or path.resolve().parent.name)
        try:
            suite = load_suite(path, test)
        except (SuiteError, ManifestError) as exc:
            out.append(SuiteResult(str(path), name, error=str(exc)))
            continue
        result = SuiteResult(str(path), name)
        result.warnings = [str(e) for e in suite.policies.errors] + suite.warnings
        try:
            result.rows = _compare(suite)
        except SuiteError as exc:
            result.error = f"{path}: {exc}"
        out.append(result)
    if not out:
        return [SuiteResult(str(path), path.resolve().parent.name,
                            error=f"{path}: no Test document (apiVersion: cli.kyverno.io/v1alpha1, kind: Test)")]
    return out


def _compare(suite: Suite) -> list[TestRow]:
    policies = {p.name: p for p in suite.policies.policies}
    cluster = suite.cluster
    labels: Callable[[str], dict | None] = suite.values.labels_of
    if cluster is not None:  # the CLI applies no policy to a test whose resource's Namespace is unknown
        problem = next(filter(None, (cluster.missing_namespace(r, labels) for r in suite.resources)), None)
        if problem:
            raise SuiteError(problem)
        labels = cluster.namespace_labels(labels)
    env = make_environment(now=lambda: now, load_yaml=load_yaml_value, load_documents=load_yaml_values,
                           values=suite.values, exceptions=tuple(suite.exceptions), loader=cluster,
                           namespaces=cluster.cluster.namespaces if cluster and cluster.cluster else None,
                           monotonic=time.monotonic)
    now = datetime.now(UTC)
    # as the Kyverno CLI: kinds compared as written (no API server converts older versions)
    context = RequestContext(env, user=suite.user, namespace_labels=labels, served_versions=False)
    cache: dict[tuple[int, str, str | None], list[RuleResult]] = {}
    views = {id(r): suite.values.resource_view(r) for r in suite.resources}
    alone: dict[str, PolicyIndex] = {}

    def results_for(policy: Policy, resource: dict, operation: str | None) -> list[RuleResult]:
        key = (id(resource), policy.key, operation)
        if key not in cache:
            index = alone.get(policy.key)
            if index is None or index.policies[0] is not policy:
                index = alone[policy.key] = PolicyIndex([policy])
            found = evaluate_resource(index, resource, context.with_operation(operation or None))
            cache[key] = found[0][1] if found else []
        return cache[key]

    rows: list[TestRow] = []
    for entry, names in _expected_entries(suite.test):
        policy_name = str(entry.get("policy") or "").rsplit("/", 1)[-1]
        rule = str(entry.get("rule") or "")
        expected = str(entry.get("result") or entry.get("status") or "")
        operation = entry.get("operation")
        policy = policies.get(policy_name)
        if policy is None:  # refused, of a kind not evaluated, or absent: never a pass
            invalid = policy_name in suite.policies.invalid_names
            unsupported = next((u for u in suite.policies.unsupported if u.name == policy_name), None)
            reason = (f"invalid policy {policy_name}: refused when loading (see its errors)" if invalid
                      else unsupported.message if unsupported is not None else "policy not found")
            actual = "invalid" if invalid else "notsupported" if unsupported is not None else "notfound"
            rows.append(TestRow(policy_name, rule, str(entry.get("kind") or ""), "",
                                ",".join(names), expected, actual, False, reason))
            continue
        accepted = {rule, f"autogen-{rule}", f"autogen-cronjob-{rule}"} if rule else None
        for resource in _candidates(suite.resources, entry, names):
            view = views[id(resource)]
            kind = str(resource.get("kind") or view.kind)  # its own: a Scale, not the Deployment it matched as
            selected = [r for r in results_for(policy, resource, operation)
                        if accepted is None or r.rule in accepted]
            if not selected:
                rows.append(TestRow(policy.key, rule, kind, view.namespace, view.name,
                                    expected, EXCLUDED, True, "Excluded"))
                continue
            for r in selected:
                got = reported_status(r.status, policy.scored)
                ok = str(got) == expected
                rows.append(TestRow(policy.key, r.rule, kind, view.namespace, view.name,
                                    expected, str(got), ok,
                                    "Ok" if ok else f"Want {expected}, got {got}: {r.message}"))
    return rows
