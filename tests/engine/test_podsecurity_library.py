"""The policy library's podSecurity suites: every expected pass/fail is reproduced."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from scanner.engine.podsecurity.levels import evaluate_pod_security
from scanner.yamldoc import load_documents

SUITES = Path("/work/shared/conformance/kyverno-policies")


def _suites() -> list[Path]:
    if not SUITES.is_dir():
        return []
    return sorted(
        p for p in SUITES.iterdir()
        if any("podSecurity:" in f.read_text() for f in (p / "_parent").glob("*.yaml"))
    )


def _cases() -> list[Any]:
    cases = []
    for suite in _suites():
        test = yaml.safe_load((suite / "kyverno-test.yaml").read_text())
        rules: dict[tuple[str, str], dict[str, Any]] = {}
        for policy_file in test["policies"]:
            for doc in load_documents((suite / policy_file).read_text(), str(policy_file)):
                for rule in doc.data["spec"]["rules"]:
                    if "podSecurity" in (rule.get("validate") or {}):
                        rules[(doc.data["metadata"]["name"], rule["name"])] = rule
        resources: dict[str, dict[str, Any]] = {}
        for resource_file in test["resources"]:
            for doc in load_documents((suite / resource_file).read_text(), str(resource_file)):
                resources[doc.data["metadata"]["name"]] = doc.data
        for expected in test["results"]:
            rule = rules.get((expected["policy"], expected["rule"].removeprefix("autogen-")))
            if rule is None:
                continue
            for name in expected["resources"]:
                cases.append(pytest.param(
                    rule, resources[name], expected["result"],
                    id=f"{suite.name.split('__')[2]}-{name}-{expected['result']}"))
    return cases


CASES = _cases()


def test_podsecurity_library_suites_found() -> None:
    assert len(_suites()) == 2 and len(CASES) == 4


@pytest.mark.parametrize(("rule", "resource", "expected"), CASES)
def test_podsecurity_library_expectation(rule: dict[str, Any], resource: dict[str, Any],
                                         expected: str) -> None:
    ps = rule["validate"]["podSecurity"]
    result = evaluate_pod_security(resource, rule["name"], ps["level"], ps.get("version"),
                                   ps.get("exclude") or [])
    assert result.status.value == expected, result.message
