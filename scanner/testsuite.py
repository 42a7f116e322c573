"""``kyverno test`` suites: load a kyverno-test.yaml, evaluate, compare expectations (spec 13.5, 14)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from scanner.engine.environment import make_environment
from scanner.engine.evaluate import evaluate_policy
from scanner.engine.exceptions import PolicyException
from scanner.engine.match import Request, ResourceView, UserInfo
from scanner.engine.normalize import normalize_resource
from scanner.engine.policy import Policy
from scanner.engine.types import RuleResult
from scanner.engine.values import Values, ValuesError, parse_userinfo, parse_values
from scanner.errors import ManifestError, ScannerError
from scanner.policies import PolicySet, load_exceptions, load_policies
from scanner.yamldoc import iter_documents, load_yaml_value

TEST_FILE = "kyverno-test.yaml"
_TEST_FIELDS = {
    "apiVersion", "kind", "metadata", "policies", "resources", "results", "variables", "values",
    "userinfo", "exceptions", "paramResources", "targetResources", "clusterResources", "context",
    "jsonPayloads", "apiCallResponses", "globalContextEntries", "checks",
}
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


class SuiteError(ScannerError):
    """A test suite that cannot be loaded."""


def _load_yaml(path: Path) -> list[Any]:
    try:
        text = path.read_bytes()
    except OSError as exc:
        raise SuiteError(f"cannot read {path}: {exc.strerror}") from exc
    return [d.data for d in iter_documents(text, str(path))]


def _load_resources(base: Path, files: list[str]) -> list[dict]:
    resources: list[dict] = []
    seen: set[tuple] = set()
    for rel in files:
        for doc in _load_yaml(base / rel):
            if not isinstance(doc, dict):
                continue
            resource = normalize_resource(doc)
            meta = resource.get("metadata") or {}
            key = (resource.get("apiVersion"), resource.get("kind"), meta.get("namespace"), meta.get("name"))
            if key in seen:
                continue
            seen.add(key)
            resources.append(resource)
    return resources


@dataclass(slots=True)
class Suite:
    path: Path
    test: dict
    policies: PolicySet
    resources: list[dict]
    values: Values
    user: UserInfo | None
    exceptions: list[PolicyException] = field(default_factory=list)


def load_suite(path: Path, test: dict) -> Suite:
    base = path.parent
    unknown = set(test) - _TEST_FIELDS
    if unknown:
        raise SuiteError(f"unknown field {sorted(unknown)[0]!r} in {path}")
    if not test.get("apiVersion") or not test.get("kind"):
        raise SuiteError(f"{path}: deprecated schema: apiVersion and kind are required")
    policy_files = [str(base / p) for p in dict.fromkeys(test.get("policies") or [])]
    policies = load_policies(policy_files)
    resources = _load_resources(base, list(dict.fromkeys(test.get("resources") or [])))
    values = Values()
    try:
        if test.get("variables"):
            docs = _load_yaml(base / test["variables"])
            values = parse_values(docs[0] if docs else {})
        elif test.get("values"):
            values = parse_values(test["values"])
        user = None
        if test.get("userinfo"):
            docs = _load_yaml(base / test["userinfo"])
            user = parse_userinfo(docs[0] if docs else {})
    except ValuesError as exc:
        raise SuiteError(f"{path}: {exc}") from exc
    exceptions, exception_errors = load_exceptions([str(base / p) for p in test.get("exceptions") or []])
    if exception_errors:
        raise SuiteError("; ".join(str(e) for e in exception_errors))
    return Suite(path, test, policies, resources, values, user, exceptions)


def _request(suite: Suite, policy: Policy, resource: dict, operation: str | None) -> Request:
    name = str((resource.get("metadata") or {}).get("name") or "")
    op = operation or suite.values.operation(policy.name, name)
    return Request(operation=op, user=suite.user, namespace_labels=suite.values.labels_of)


def _candidates(resources: list[dict], wanted: list[str]) -> list[dict]:
    if not wanted:
        return resources
    out = []
    for resource in resources:
        meta = resource.get("metadata") or {}
        name, ns = str(meta.get("name") or ""), str(meta.get("namespace") or "")
        for w in wanted:
            if "/" in w:
                wns, _, wname = w.partition("/")
                if wns == ns and wname == name:
                    out.append(resource)
                    break
            elif w == name:
                out.append(resource)
                break
    return out or resources


def _expected_entries(test: dict) -> Iterator[tuple[dict, list[str]]]:
    for entry in test.get("results") or []:
        if not isinstance(entry, dict):
            continue
        wanted = [str(r) for r in entry.get("resources") or []]
        for spec in entry.get("resourceSpecs") or []:
            if isinstance(spec, dict):
                ns = spec.get("namespace") or ""
                wanted.append(f"{ns}/{spec.get('name')}" if ns else str(spec.get("name")))
        yield entry, wanted


def run_suite(path: Path) -> list[SuiteResult]:
    """Run every Test document of one kyverno-test.yaml."""
    try:
        docs = _load_yaml(path)
    except (SuiteError, ManifestError) as exc:
        return [SuiteResult(str(path), path.parent.name, error=str(exc))]
    out = []
    for test in docs:
        if not isinstance(test, dict):
            continue
        name = str((test.get("metadata") or {}).get("name") or test.get("name") or path.parent.name)
        try:
            suite = load_suite(path, test)
        except (SuiteError, ManifestError) as exc:
            out.append(SuiteResult(str(path), name, error=str(exc)))
            continue
        result = SuiteResult(str(path), name)
        result.warnings = [str(e) for e in suite.policies.errors]
        result.rows = _compare(suite)
        out.append(result)
    return out


def _compare(suite: Suite) -> list[TestRow]:
    policies = {p.name: p for p in suite.policies.policies}
    env = make_environment(now=lambda: now, load_yaml=load_yaml_value, values=suite.values,
                           exceptions=tuple(suite.exceptions))
    now = datetime.now(UTC)
    cache: dict[tuple[int, str, str | None], list[RuleResult]] = {}
    views = {id(r): ResourceView.of(r) for r in suite.resources}

    def results_for(policy: Policy, resource: dict, operation: str | None) -> list[RuleResult]:
        key = (id(resource), policy.key, operation)
        if key not in cache:
            request = _request(suite, policy, resource, operation)
            cache[key] = evaluate_policy(policy, resource, request, views[id(resource)], env)
        return cache[key]

    rows: list[TestRow] = []
    for entry, wanted in _expected_entries(suite.test):
        policy_name = str(entry.get("policy") or "").rsplit("/", 1)[-1]
        rule = str(entry.get("rule") or "")
        expected = str(entry.get("result") or "")
        operation = entry.get("operation")
        policy = policies.get(policy_name)
        if policy is None:
            invalid = policy_name in suite.policies.invalid_names
            reason = "invalid policy" if invalid else "policy not found"
            rows.append(TestRow(policy_name, rule, str(entry.get("kind") or ""), "",
                                ",".join(wanted), expected, "skip" if invalid else "notfound",
                                invalid, reason))
            continue
        accepted = {rule, f"autogen-{rule}", f"autogen-cronjob-{rule}"} if rule else None
        for resource in _candidates(suite.resources, wanted):
            view = views[id(resource)]
            selected = [r for r in results_for(policy, resource, operation)
                        if accepted is None or r.rule in accepted]
            if not selected:
                rows.append(TestRow(policy.key, rule, view.kind, view.namespace, view.name,
                                    expected, EXCLUDED, True, "Excluded"))
                continue
            for r in selected:
                ok = str(r.status) == expected
                rows.append(TestRow(policy.key, r.rule, view.kind, view.namespace, view.name,
                                    expected, str(r.status), ok,
                                    "Ok" if ok else f"Want {expected}, got {r.status}: {r.message}"))
    return rows
