"""Every ``validate.cel`` expectation of the policy-library suites is reproduced.

Pod rules are evaluated for Pod controllers through the CEL autogen rewrite; only the
resources a rule matches are evaluated (rough matching, see ``cel_corpus``).
"""

from __future__ import annotations

from collections import Counter
from functools import cache

import pytest

from scanner.engine.cel.subrule import (
    CompiledCelRule,
    compile_cel_rule,
    evaluate_cel_rule,
    rewrite_cel_for_autogen,
)
from tests.engine.cel_corpus import CORPUS, CelCase, iter_cases

CASES = list(iter_cases(rewrite_cel_for_autogen)) if CORPUS.is_dir() else []


def _ids(cases: list[CelCase]) -> list[str]:
    seen: Counter[str] = Counter()
    ids = []
    for case in cases:
        seen[case.case_id] += 1
        n = seen[case.case_id]
        ids.append(case.case_id if n == 1 else f"{case.case_id}#{n}")
    return ids


@cache
def _compiled(suite: str, rule: str, controller: str | None) -> CompiledCelRule:
    case = next(c for c in CASES if (c.suite, c.rule, c.controller) == (suite, rule, controller))
    return compile_cel_rule(
        case.cel, validate_message=case.message, preconditions=case.preconditions
    )


def test_cel_library_corpus_is_present() -> None:
    assert CORPUS.is_dir(), f"conformance corpus missing at {CORPUS}"
    assert len(CASES) >= 800
    assert {c.expected for c in CASES} == {"pass", "fail", "skip"}
    assert {c.controller for c in CASES} == {None, "Deployment", "CronJob"}


@pytest.mark.parametrize("case", CASES, ids=_ids(CASES))
def test_cel_library_expectation_is_reproduced(case: CelCase) -> None:
    rule = _compiled(case.suite, case.rule, case.controller)
    result = evaluate_cel_rule(
        rule,
        rule_name=case.rule,
        object=case.resource,
        old_object=None,
        request=case.request(),
        namespace_object=case.namespace_object(),
        params=None,
    )
    assert result.status.value == case.expected, result.message
