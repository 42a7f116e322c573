"""The per-rule evaluation budget: steps, string and list sizes, time, and how an overrun
becomes a rule's ``error`` result while the other rules go on."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
import yaml

from scanner.engine.budget import CHECK_EVERY, Budget, BudgetExceededError, Limits, activate, active, text_size
from scanner.engine.environment import make_environment
from scanner.engine.evaluate import evaluate_policy
from scanner.engine.exceptions import parse_exception
from scanner.engine.jmespath.dialect import Evaluator
from scanner.engine.jmespath.functions import build_functions
from scanner.engine.policy import parse_policy
from scanner.engine.types import RuleStatus

TIGHT = Limits(steps=5_000, string_length=10_000, list_length=1_000, seconds=60.0)


@pytest.fixture
def tight() -> Iterator[Budget]:
    budget = Budget(TIGHT)
    previous = activate(budget)
    budget.start()
    yield budget
    activate(previous)


def _dag(levels: int) -> str:
    """An expression doubling its input ``levels`` times by shared reference."""
    return " | ".join(["@"] + ["[@, @]"] * levels)


OVERRUNS = [
    pytest.param("replace_all(replace_all(@, 'a', @), 'a', @)", "a" * 200, "string length",
                 id="nested-replace-all-refused-before-building"),
    pytest.param("replace(@, 'a', @, `-1`)", "a" * 200, "string length", id="replace-all-counts-refused"),
    pytest.param("join('', [@, @, @, @, @, @, @, @, @, @, @, @])", "a" * 1000, "string length",
                 id="join-refused-before-building"),
    pytest.param(f"to_string({_dag(40)})", "x", "string length", id="to-string-of-shared-parts-refused"),
    pytest.param("regex_replace_all('a', @, '$0$0$0')", "a" * 5000, "string length",
                 id="regex-replace-stops-while-building"),
    pytest.param("split(@, '')", "a" * 2000, "list length", id="split-into-too-many-parts"),
    pytest.param("[@, @, @, @, @, @, @, @, @, @][] | [@, @, @, @, @, @, @, @, @, @][]", [1] * 50, "list length",
                 id="flatten-too-long-refused-before-building"),
    pytest.param("length(@[?@ > `0`])", list(range(1, 6000)), "steps", id="filter-counts-its-elements"),
    pytest.param("length([*].a)", [{"a": 1}] * 6000, "steps", id="projection-counts-its-elements"),
    pytest.param("@ == @", [[1]] * 6000, "steps", id="deep-equality-counts-items"),
    pytest.param("sort(@)", list(range(6000)), "steps", id="function-arguments-count-their-items"),
]


@pytest.mark.parametrize(("expression", "data", "limit"), OVERRUNS)
def test_jmespath_overrun_raises_naming_the_limit(tight: Budget, expression: str, data: Any, limit: str) -> None:
    with pytest.raises(BudgetExceededError) as info:
        Evaluator(build_functions()).search(expression, data)
    assert info.value.limit == limit
    assert str(info.value).startswith("limit exceeded: ")


WITHIN = [
    pytest.param("replace_all(replace_all(@, 'a', @), 'a', 'b')", "aa", "bbbb", id="small-nested-replace"),
    pytest.param("join('-', [@, @])", "ab", "ab-ab", id="small-join"),
    pytest.param(f"length(to_string({_dag(5)}))", 1, 125, id="small-shared-parts"),
    pytest.param("length(split(@, ''))", "a" * 1000, 1000, id="split-at-the-limit"),
    pytest.param("regex_replace_all('a', @, 'bb')", "a" * 4000, "b" * 8000, id="regex-replace-within-limit"),
]


@pytest.mark.parametrize(("expression", "data", "expected"), WITHIN)
def test_jmespath_within_limits_is_unchanged(tight: Budget, expression: str, data: Any, expected: Any) -> None:
    assert Evaluator(build_functions()).search(expression, data) == expected


def test_budget_steps_limit_is_sticky_until_the_next_rule() -> None:
    budget = Budget(Limits(steps=10))
    budget.start()
    budget.charge(10)
    with pytest.raises(BudgetExceededError, match="more than 10 evaluation steps"):
        budget.charge()
    with pytest.raises(BudgetExceededError):
        budget.charge(0)
    assert budget.exceeded is not None and budget.exceeded.limit == "steps"
    budget.start()
    budget.charge(10)
    assert budget.exceeded is None


def test_budget_time_limit_reads_the_given_timer() -> None:
    ticks = iter([0.0, 0.5, 3.0])
    budget = Budget(Limits(seconds=2.0), clock=lambda: next(ticks))
    budget.start()  # no look at the clock yet
    budget.charge(CHECK_EVERY)  # 0.0: the first check sets the deadline, 2.0
    budget.charge(CHECK_EVERY)  # 0.5: in time
    with pytest.raises(BudgetExceededError, match="longer than 2s") as info:
        budget.charge(CHECK_EVERY)  # 3.0: past the deadline
    assert info.value.limit == "time"


def test_budget_of_a_short_rule_never_reads_the_timer() -> None:
    def timer() -> float:
        raise AssertionError("the clock was read")

    budget = Budget(Limits(seconds=2.0), clock=timer)
    for _ in range(3):
        budget.start()
        budget.charge(CHECK_EVERY - 1)


def test_budget_outside_a_rule_checks_sizes_but_counts_no_steps() -> None:
    budget = Budget(TIGHT, counting=False)
    budget.start()
    budget.charge(10**9)
    with pytest.raises(BudgetExceededError, match="would build a string of 1,000,000 characters"):
        budget.check_string(10**6, "x()")
    budget.charge(1)  # a size overrun outside a rule is not sticky


def test_text_size_stops_at_the_limit_on_shared_parts() -> None:
    value: Any = "x"
    for _ in range(200):
        value = [value, value]
    assert 1000 < text_size(value, 1000) < 2000
    small = {"ab": ["c", 1, None]}
    assert len(json.dumps(small, separators=(",", ":"))) <= text_size(small, 10**6) < 40


def _policy(rules: str) -> Any:
    return parse_policy(yaml.safe_load(
        "apiVersion: kyverno.io/v1\nkind: ClusterPolicy\nmetadata: {name: budgets}\n"
        f"spec:\n  validationFailureAction: Audit\n  background: true\n  rules:\n{rules}"))


MATCH = "match: {any: [{resources: {kinds: [ConfigMap]}}]}"
PLAIN = f"  - name: plain\n    {MATCH}\n    validate: {{message: m, pattern: {{metadata: {{name: '?*'}}}}}}\n"
CONFIG_MAP = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm", "namespace": "apps"},
              "data": {"text": "a" * 400, "list": ",".join(["x"] * 120)}}

RULES = [
    pytest.param(
        f"  - name: hostile\n    {MATCH}\n    validate:\n      foreach:\n"
        "      - list: \"split(request.object.data.text, '')\"\n"
        "        deny: {conditions: {any: [{key: '{{element}}', operator: Equals, value: b}]}}\n",
        "more than 5,000 evaluation steps", id="foreach-over-many-elements"),
    pytest.param(
        f"  - name: hostile\n    {MATCH}\n    validate:\n      foreach:\n"
        "      - list: \"split(request.object.data.text, '') | [@, @, @, @, @][]\"\n"
        "        deny: {conditions: {any: [{key: '{{element}}', operator: Equals, value: b}]}}\n",
        "a flatten has 2,000 items (limit 1,000)", id="foreach-list-too-long"),
    pytest.param(
        f"  - name: hostile\n    {MATCH}\n    validate:\n      message: m\n      deny:\n        conditions:\n"
        "          any:\n          - key: \"{{ split(request.object.data.list, ',') }}\"\n"
        "            operator: AnyNotIn\n            value: \"{{ split(request.object.data.list, ',') }}\"\n",
        "more than 5,000 evaluation steps", id="any-not-in-pairs-are-counted"),
    pytest.param(
        f"  - name: hostile\n    {MATCH}\n    validate:\n      message: m\n      deny:\n        conditions:\n"
        "          any:\n          - key: \"{{ replace_all(replace_all(request.object.data.text, 'a', "
        "request.object.data.text), 'a', request.object.data.text) }}\"\n            operator: Equals\n"
        "            value: x\n",
        "would build a string of", id="nested-replace-all-in-a-condition"),
]


@pytest.mark.parametrize(("rule", "message"), RULES)
def test_overrun_is_an_error_result_and_the_other_rules_go_on(rule: str, message: str) -> None:
    env = make_environment(limits=TIGHT)
    results = evaluate_policy(_policy(rule + PLAIN), CONFIG_MAP, env=env)
    got = {r.rule: (r.status, r.message) for r in results}
    assert got["hostile"][0] is RuleStatus.ERROR and message in got["hostile"][1]
    assert got["hostile"][1].startswith("limit exceeded: ")
    assert got["plain"][0] is RuleStatus.PASS
    assert active() is not env.budget  # the evaluation's budget is not left active


def test_time_limit_gives_an_error_result() -> None:
    clock = iter(float(n) for n in range(10**6))
    env = make_environment(limits=Limits(seconds=3.0), monotonic=lambda: next(clock))
    rule = (f"  - name: slow\n    {MATCH}\n    validate:\n      foreach:\n"
            "      - list: \"split(request.object.data.text, '')\"\n"
            "        deny: {conditions: {any: [{key: '{{element}}', operator: Equals, value: b}]}}\n")
    [result] = evaluate_policy(_policy(rule), CONFIG_MAP, env=env)
    assert result.status is RuleStatus.ERROR
    assert result.message == "limit exceeded: rule evaluation took longer than 3s"


def test_overrun_absorbed_by_an_exception_still_errors_the_rule() -> None:
    exception = parse_exception(yaml.safe_load(
        "apiVersion: kyverno.io/v2\nkind: PolicyException\nmetadata: {name: ex, namespace: apps}\n"
        "spec:\n  exceptions: [{policyName: budgets, ruleNames: [plain]}]\n"
        "  match: {any: [{resources: {kinds: [ConfigMap]}}]}\n"
        "  conditions:\n    any:\n    - key: \"{{ split(request.object.data.text, '') | [@, @, @, @, @][] "
        "| [@, @, @, @, @][] | length(@) }}\"\n      operator: Equals\n      value: 1\n"))
    env = make_environment(limits=TIGHT, exceptions=(exception,))
    [result] = evaluate_policy(_policy(PLAIN), CONFIG_MAP, env=env)
    assert result.status is RuleStatus.ERROR
    assert result.message.startswith("limit exceeded: ")
