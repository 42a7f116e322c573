"""The writer's rows: what the scan sends stores exactly what result records (the wrapper) store."""

from __future__ import annotations

from dataclasses import replace

import pytest

from scanner.engine.types import FailureAction, RuleStatus
from scanner.errors import StoreError
from scanner.store import ResultRecord, RunStart, SourceRecord, SourceType, Store
from scanner.store.records import ResultRow, result_rows, wire_rows
from tests.store.conftest import day
from tests.store.scan_helpers import pod, policy

RESULTS = [  # (resource, rule, status, message, action)
    ("a", "check-labels", RuleStatus.PASS, "", FailureAction.AUDIT),
    ("a", "autogen-check-labels", RuleStatus.FAIL, "labels missing", FailureAction.ENFORCE),
    ("b", "check-labels", RuleStatus.ERROR, "failed to substitute", FailureAction.AUDIT),
    ("c", "check-labels", RuleStatus.SKIP, "preconditions not met", FailureAction.AUDIT),
]


def _stored(store: Store, use_rows: bool) -> tuple[set, int]:
    run = store.begin_run(RunStart(started_at=day(0 if use_rows else 1)))
    run.add_source(SourceRecord(name="repo", type=SourceType.GIT))
    run.add_policies([policy("require-labels")])
    resources = [pod(n) for n in ("a", "b", "c", "d")]  # d: no rule applied, still seen
    if use_rows:  # two chunks: a and b, then c and d; indexes are per chunk
        chunks: list[tuple[list, list]] = [(resources[:2], []), (resources[2:], [])]
        for name, rule, status, message, action in RESULTS:
            index = ord(name) - ord("a")
            chunks[index // 2][1].append(ResultRow(index % 2, "require-labels", rule, status.value, message, "/spec",
                                          action.value, "check-labels"))
        assert run.add_result_rows(chunks) == len(RESULTS)
    else:
        run.add_resources(resources)
        run.add_results([ResultRecord(policy="require-labels", rule=rule, resource=resources[ord(name) - ord("a")],
                                      status=status, message=message, path="/spec", action=action,
                                      declared_rule="check-labels")
                         for name, rule, status, message, action in RESULTS])
    run.finish()
    stored = {(r.resource.name, r.rule, r.declared_rule, r.status, r.message, r.path, r.action, r.file)
              for r in store.iter_run_results(run.run_id)}
    return stored, store.get_run(run.run_id).run.resources


def test_writer_add_result_rows_matches_add_results(store: Store) -> None:
    rows_path, records_path = _stored(store, True), _stored(store, False)
    assert rows_path == records_path
    assert rows_path[1] == 4 and len(rows_path[0]) == len(RESULTS)


def test_writer_add_result_rows_unknown_policy_is_a_store_error(store: Store) -> None:
    run = store.begin_run(RunStart(started_at=day(0)))
    run.add_source(SourceRecord(name="repo", type=SourceType.GIT))
    run.add_policies([policy("require-labels")])
    with pytest.raises(StoreError, match="names policy 'nope'"):
        run.add_result_rows([([pod("a")], [ResultRow(0, "nope", "r", "pass", "", "", "Audit", "r")])])


_AGGREGATE = """
SELECT r.source_id, x.check_id, r.namespace, x.status, MIN(x.policy_id), COUNT(*)
FROM results x JOIN resources r ON r.resource_id = x.resource_id
WHERE x.run_id = :run GROUP BY r.source_id, x.check_id, r.namespace, x.status
"""
_POLICY_AGGREGATE = """
SELECT r.source_id, x.policy_id, x.status, COUNT(*)
FROM results x JOIN resources r ON r.resource_id = x.resource_id
WHERE x.run_id = :run GROUP BY r.source_id, x.policy_id, x.status
"""


@pytest.mark.parametrize("use_rows", [True, False], ids=["rows", "records"])
def test_writer_tallies_are_the_aggregate_of_the_stored_results(store: Store, use_rows: bool) -> None:
    from sqlalchemy import text

    run = store.begin_run(RunStart(started_at=day(0)))
    for name in ("repo", "export"):
        run.add_source(SourceRecord(name=name, type=SourceType.GIT))
    run.add_policies([policy("require-labels"), policy("disallow-latest")])
    resources = [pod(f"p{i}", namespace=("default", "data", "")[i % 3], source=("repo", "export")[i % 2])
                 for i in range(24)]  # p{i} and p{i + 12} fall in the same tallies
    statuses = [RuleStatus.PASS, RuleStatus.FAIL, RuleStatus.SKIP, RuleStatus.ERROR]
    results = [(i, name, rule, statuses[(i + j) % 4])
               for i in range(24) for j, (name, rule) in enumerate(
                   [("require-labels", "check-labels"), ("disallow-latest", "check-tag"),
                    ("disallow-latest", "autogen-check-tag")])]
    if use_rows:  # three transactions of two chunks each
        for part in range(3):
            chunks = []
            for first in (part * 8, part * 8 + 4):
                chunk = resources[first:first + 4]
                rows = [ResultRow(i - first, name, rule, status.value, "", "", "Audit", rule)
                        for i, name, rule, status in results if first <= i < first + 4]
                chunks.append((chunk, rows))
            run.add_result_rows(chunks)
    else:  # batches of seven records (the store fixture's batch size)
        run.add_results(ResultRecord(policy=name, rule=rule, resource=resources[i], status=status, message="",
                                     path="", action=FailureAction.AUDIT, declared_rule=rule)
                        for i, name, rule, status in results)
    run.finish()
    with store.engine.connect() as connection:
        expected = sorted(tuple(row) for row in connection.execute(text(_AGGREGATE), {"run": run.run_id}))
        stored = sorted(tuple(row) for row in connection.execute(text(
            "SELECT source_id, check_id, namespace, status, policy_id, count FROM run_tallies "
            "WHERE run_id = :run"), {"run": run.run_id}))
        by_policy = sorted(tuple(row) for row in connection.execute(text(_POLICY_AGGREGATE), {"run": run.run_id}))
        stored_by_policy = sorted(tuple(row) for row in connection.execute(text(
            "SELECT source_id, policy_id, status, count FROM run_policy_tallies WHERE run_id = :run"),
            {"run": run.run_id}))
    assert len(expected) > 12 and any(row[-1] > 1 for row in expected) and stored == expected
    assert len(by_policy) > 8 and stored_by_policy == by_policy
    counts = {"pass": 18, "fail": 18, "warn": 0, "error": 18, "skip": 18}
    assert store.summarize_run(run.run_id).by_status.as_dict() == counts
    assert store.get_run(run.run_id).run.counts.as_dict() == counts


def test_writer_stores_names_longer_than_kubernetes_allows(store: Store) -> None:
    """Manifests and policies in Git can break Kubernetes' length limits; the store keeps them."""
    name, namespace, rule = "n" * 300, "s" * 300, "r" * 300
    record = replace(policy("p" * 300), digest="sha256:0", severity="a severity written as a sentence, not a level")
    run = store.begin_run(RunStart(started_at=day(0)))
    run.add_source(SourceRecord(name="source-" + "x" * 300, type=SourceType.GIT, ref="refs/heads/" + "b" * 300))
    run.add_policies([record])
    resource = pod(name, namespace=namespace, source="source-" + "x" * 300)
    assert run.add_result_rows([([resource], [ResultRow(0, record.name, rule, "fail", "m", "", "Audit", rule)])]) == 1
    run.finish()
    [stored] = list(store.iter_run_results(run.run_id))
    assert (stored.resource.name, stored.resource.namespace, stored.rule, stored.policy.name,
            stored.policy.severity) == (name, namespace, rule, record.name, record.severity)


@pytest.mark.parametrize("count", [1, 111, 112, 250])
def test_writer_add_result_rows_stores_every_row_of_a_large_batch(store: Store, count: int) -> None:
    """SQLite takes the rows in multi-row statements of at most 999 parameters: full ones and
    a shorter last one."""
    run = store.begin_run(RunStart(started_at=day(0)))
    run.add_source(SourceRecord(name="repo", type=SourceType.GIT))
    run.add_policies([policy("require-labels")])
    resources = [pod(f"p{i}") for i in range(count)]
    rows = [ResultRow(i, "require-labels", "check-labels", "fail" if i % 3 else "pass", f"message {i}", f"/spec/{i}",
             "Audit", "check-labels") for i in range(count)]
    assert run.add_result_rows([(resources, rows)]) == count
    run.finish()
    stored = {(r.resource.name, r.status.value, r.message, r.path) for r in store.iter_run_results(run.run_id)}
    assert stored == {(f"p{i}", "fail" if i % 3 else "pass", f"message {i}", f"/spec/{i}") for i in range(count)}


def test_result_rows_index_each_distinct_resource_once() -> None:
    a, b = pod("a"), pod("b")
    records = [ResultRecord(policy="p", rule=rule, resource=resource, status=RuleStatus.FAIL)
               for rule, resource in [("r1", a), ("r2", a), ("r1", b), ("r3", pod("a"))]]  # an equal record again
    resources, rows = result_rows(records)
    assert resources == [a, b]
    assert [(row.resource_index, row.rule, row.status, row.action) for row in rows] == [
        (0, "r1", "fail", "Audit"), (0, "r2", "fail", "Audit"), (1, "r1", "fail", "Audit"), (0, "r3", "fail", "Audit")]


def test_wire_rows_name_the_plain_tuples_sent_between_processes() -> None:
    row = ResultRow(3, "p", "r", "pass", "m", "/spec", "Enforce", "declared")
    [named] = wire_rows([tuple(row)])
    assert type(named) is ResultRow and named == row and named.declared_rule == "declared"
