"""Rule parts compiled with the policy: deny conditions and foreach entries."""

from __future__ import annotations

import pytest

from scanner.engine.pattern import CompiledPattern, MapNode
from scanner.engine.policy import parse_policy
from scanner.engine.rule_parts import compile_conditions, compile_foreach
from scanner.errors import PolicyError

from .conftest import policy, y


def _rule(validate: str):
    return parse_policy(policy(f"[{{name: r, match: {{any: [{{resources: {{kinds: [Pod]}}}}]}}, validate: {validate}}}]")).rules[0]


def test_deny_conditions_are_parsed_with_the_policy() -> None:
    rule = _rule("{deny: {conditions: {any: [{key: a, operator: Equals, value: a}]}}}")
    assert rule.deny is not None and rule.deny.block is not None
    assert [c.key for c in rule.deny.parsed().any or ()] == ["a"]


def test_foreach_entries_are_compiled_with_the_policy() -> None:
    rule = _rule("""{foreach: [
        {list: request.object.spec.containers, preconditions: {all: [{key: x, operator: Equals, value: x}]},
         pattern: {image: '!*:latest'}},
        {list: request.object.spec.volumes, anyPattern: [{name: a}, {name: b}]},
        {list: request.object.spec.containers, pattern: {name: '{{ element.name }}'}},
        {list: request.object.spec.containers, foreach: [{list: element.ports, deny: {}}]}]}""")
    static, any_pattern, dynamic, nested = rule.foreach
    assert static.list == "request.object.spec.containers"
    assert static.preconditions is not None and static.preconditions.parsed().all
    assert isinstance(static.pattern, CompiledPattern)
    assert any_pattern.any_pattern is not None and len(any_pattern.any_pattern) == 2
    assert dynamic.pattern is None  # substituted per element
    assert nested.nested is not None and nested.nested[0].deny is not None


CONDITIONS = [
    pytest.param([{"key": "a", "operator": "Equals", "value": "a"}], False, True, id="legacy-list-parses"),
    pytest.param([{"key": "a", "operator": "Equals", "value": "a"}], True, False, id="foreach-refuses-a-list"),
    pytest.param("text", False, False, id="not-a-block-refused"),
    pytest.param(None, True, True, id="no-conditions-always-true"),
]


@pytest.mark.parametrize(("raw", "foreach", "parses"), CONDITIONS)
def test_conditions_that_do_not_parse_fail_when_evaluated(raw: object, foreach: bool, parses: bool) -> None:
    compiled = compile_conditions(raw, foreach=foreach)
    if parses:
        assert compiled.parsed() is compiled.block
    else:
        with pytest.raises(PolicyError):
            compiled.parsed()


def test_foreach_entries_keep_their_positions() -> None:
    entries = compile_foreach(y("[{list: a, deny: {}}, {list: b, pattern: {x: 1}}]"))
    assert [e.list for e in entries] == ["a", "b"]
    assert entries[0].deny is not None and entries[1].pattern is not None


def test_metadata_expansions_are_kept_by_the_pattern_map() -> None:
    pattern = CompiledPattern(y("{metadata: {labels: {'app.*': 'web'}}}"))
    resource = {"metadata": {"labels": {"app.kubernetes.io/name": "web"}}}
    assert pattern.match(resource).status == "pass"
    root = pattern.node
    assert isinstance(root, MapNode) and root.expansions is not None and len(root.expansions) == 1
    assert pattern.match({"metadata": {"labels": {"app.kubernetes.io/name": "db"}}}).status == "fail"
    assert len(root.expansions) == 1  # the same keys: the same expansion
    assert pattern.match({"metadata": {"labels": {"app.example/tier": "web"}}}).status == "pass"
    assert len(root.expansions) == 2
