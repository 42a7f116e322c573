"""Evaluating leaves no reference cycles behind, failures handled inside the engine included.

A scan runs with the cyclic collector set to run rarely: an exception that is raised and kept
by a frame of its own traceback (a local, a memo) would hold every frame of the call and the
resource they read until a collection, so each evaluation would leave garbage only the
collector can free.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from typing import Any

import pytest

from scanner.engine.evaluate import evaluate_policy
from scanner.engine.policy import parse_policy
from scanner.engine.types import RuleStatus


def _policy(rule: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "kyverno.io/v1", "kind": "ClusterPolicy", "metadata": {"name": "p"},
            "spec": {"rules": [{"name": "r", "match": {"any": [{"resources": {"kinds": ["Pod"]}}]},
                                "validate": rule}]}}


DURATION_DENY = {"message": "m", "deny": {"conditions": {"any": [
    {"key": "{{ request.object.metadata.annotations.timeout }}", "operator": "Equals", "value": "5s"}]}}}
POD_SECURITY = {"podSecurity": {"level": "baseline", "version": "latest"}}

CASES = [
    # an annotation that is no Go duration: parsing it fails inside the Equals operator
    ("invalid duration", DURATION_DENY, {"annotations": {"timeout": "five seconds"}}, {}, RuleStatus.PASS),
    # a pod spec of the wrong shape: decoding it fails inside podSecurity, and the error is kept
    ("undecodable pod", POD_SECURITY, {}, {"containers": "not a list"}, RuleStatus.ERROR),
]


@pytest.fixture
def no_collections() -> Iterator[None]:
    enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    yield
    if enabled:
        gc.enable()


@pytest.mark.parametrize(("rule", "metadata", "spec", "status"),
                         [case[1:] for case in CASES], ids=[case[0] for case in CASES])
def test_evaluation_leaves_no_cyclic_garbage(no_collections: None, rule: dict[str, Any],
                                             metadata: dict[str, Any], spec: dict[str, Any],
                                             status: RuleStatus) -> None:
    policy = parse_policy(_policy(rule))
    resource = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x", **metadata}, "spec": spec}
    results = evaluate_policy(policy, resource)
    assert [r.status for r in results] == [status]
    del results, resource, policy
    assert gc.collect() == 0
