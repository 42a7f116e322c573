"""Kubernetes' tests of the CEL lists and regex libraries, as table rows against this engine.

Sources (kubernetes/kubernetes):

* ``staging/src/k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/validation_test.go``
  (commit 0184d77f), ``TestValidationExpressions`` cases "stdlib list functions" and "stdlib
  regex functions": every ``valid`` rule (must be true) and ``errors`` entry.
* ``staging/src/k8s.io/apiserver/pkg/cel/library/cost_test.go``, ``TestListsCost``,
  ``TestIndexOfCost`` and the ``find``/``findAll`` rows of ``TestStringLibrary``: the expressions
  (the Go test only checks their cost; the expected values here follow ``lists.go``).
* the examples in the doc comments of ``staging/src/k8s.io/apiserver/pkg/cel/library/lists.go``
  and ``regex.go``.

Translation: ``self.<field>`` reads ``object.<field>`` of an activation holding the Go test's
object, so the lists reach the functions as ``dyn`` (cel-go's dynamic dispatch) as in Kyverno;
schema-typed values become what the schema makes of them (``intBackedDoubles`` are doubles),
durations and dates become ``duration()``/``timestamp()`` list literals.

Rows are adapted where this runtime cannot be exact (see ``cel_lists``): ``sum``/``min``/``max``
on ``list(uint)`` and every ordering, sum or result of durations and timestamps are "not
supported" (the Python binding reads ``uint`` as ``int`` and truncates durations and timestamps
to microseconds); Go's regexp error texts differ from the ones ``re2`` translates (the rows
check the common prefix); cel-cpp spells type-check errors ``'(list(string))'`` where cel-go
writes ``'list(string).()'``. Two doc-comment examples of ``regex.go`` do not hold in Go
(``'[0-9]*'`` matches the empty string first); the rows assert Go's result.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from scanner.engine.cel import expressions as cel_env


@dataclass(frozen=True)
class Error:
    """The evaluation fails with this text."""

    text: str


@dataclass(frozen=True)
class CompileError:
    """The expression does not compile; the message contains this text."""

    text: str


@dataclass(frozen=True)
class NotSupported:
    """The expression is "not supported" (at load or when evaluated); the message contains this text."""

    text: str


# validation_test.go "stdlib list functions": obj (schema types applied)
LIST_OBJECT = {
    "ints": [1, 2, 2, 3],
    "unsortedInts": [2, 1],
    "emptyInts": [],
    "doubles": [1.0, 2.0, 2.0, 3.0],
    "unsortedDoubles": [2.0, 1.0],
    "emptyDoubles": [],
    "intBackedDoubles": [1.0, 2.0, 2.0, 3.0],
    "unsortedIntBackedDDoubles": [2.0, 1.0],
    "emptyIntBackedDDoubles": [],
    "strings": ["a", "b", "b", "c"],
    "unsortedStrings": ["b", "a"],
    "emptyStrings": [],
    "objs": [{"f1": "a", "f2": "a"}, {"f1": "a", "f2": "b"}, {"f1": "a", "f2": "b"}, {"f1": "a", "f2": "c"}],
}
DURATIONS = "[duration('1s'), duration('1m'), duration('1m'), duration('1h')]"
UNSORTED_DURATIONS = "[duration('1m'), duration('1s')]"
EMPTY_DURATIONS = "[duration('1s')].filter(d, false)"
DATES = (
    "[timestamp('2000-01-01T00:00:00Z'), timestamp('2000-02-01T00:00:00Z'), "
    "timestamp('2000-02-01T00:00:00Z'), timestamp('2010-01-01T00:00:00Z')]"
)
UNSORTED_DATES = "[timestamp('2000-02-01T00:00:00Z'), timestamp('2000-01-01T00:00:00Z')]"
EMPTY_DATES = "[timestamp('2000-01-01T00:00:00Z')].filter(d, false)"

TIME_AT_LOAD = NotSupported("on list(duration)")
TIMESTAMPS_AT_LOAD = NotSupported("on list(timestamp)")
TIME_AT_RUN = NotSupported("on durations or timestamps")


def _list_rows() -> list[Any]:
    valid = [
        "object.ints.sum() == 8",
        "object.ints.min() == 1",
        "object.ints.max() == 3",
        "object.emptyInts.sum() == 0",
        "object.ints.isSorted()",
        "object.emptyInts.isSorted()",
        "object.unsortedInts.isSorted() == false",
        "object.ints.indexOf(2) == 1",
        "object.ints.lastIndexOf(2) == 2",
        "object.ints.indexOf(10) == -1",
        "object.ints.lastIndexOf(10) == -1",
        "object.doubles.sum() == 8.0",
        "object.doubles.min() == 1.0",
        "object.doubles.max() == 3.0",
        "object.emptyDoubles.sum() == 0.0",
        "object.doubles.isSorted()",
        "object.emptyDoubles.isSorted()",
        "object.unsortedDoubles.isSorted() == false",
        "object.doubles.indexOf(2.0) == 1",
        "object.doubles.lastIndexOf(2.0) == 2",
        "object.doubles.indexOf(10.0) == -1",
        "object.doubles.lastIndexOf(10.0) == -1",
        "object.intBackedDoubles.sum() == 8.0",
        "object.intBackedDoubles.min() == 1.0",
        "object.intBackedDoubles.max() == 3.0",
        "object.emptyIntBackedDDoubles.sum() == 0.0",
        "object.intBackedDoubles.isSorted()",
        "object.unsortedIntBackedDDoubles.isSorted() == false",
        "object.intBackedDoubles.indexOf(2.0) == 1",
        "object.intBackedDoubles.lastIndexOf(2.0) == 2",
        "object.intBackedDoubles.indexOf(10.0) == -1",
        "object.intBackedDoubles.lastIndexOf(10.0) == -1",
        "object.strings.min() == 'a'",
        "object.strings.max() == 'c'",
        "object.strings.isSorted()",
        "object.emptyStrings.isSorted()",
        "object.unsortedStrings.isSorted() == false",
        "object.strings.indexOf('b') == 1",
        "object.strings.lastIndexOf('b') == 2",
        "object.strings.indexOf('x') == -1",
        "object.strings.lastIndexOf('x') == -1",
        "[[1], [2]].indexOf([1]) == 0",
        "[{'a': 1}, {'b': 2}].lastIndexOf({'b': 2}) == 1",
        "object.objs.indexOf(object.objs[1]) == 1",
        "object.objs.lastIndexOf(object.objs[1]) == 2",
        "([0] + object.emptyInts).min() == 0",
        "dyn([]).sum() == 0",
        "dyn([1, 2]).sum() == 3",
        "dyn([1.0, 2.0]).sum() == 3.0",
    ]
    rows: list[Any] = [(expression, True) for expression in valid]
    rows += [
        # durations and dates: valid in Kubernetes, not supported here
        (f"{DURATIONS}.sum() == duration('1h2m1s')", TIME_AT_LOAD),
        (f"{DURATIONS}.min() == duration('1s')", TIME_AT_LOAD),
        (f"{DURATIONS}.max() == duration('1h')", TIME_AT_LOAD),
        (f"{EMPTY_DURATIONS}.sum() == duration('0')", TIME_AT_LOAD),
        (f"{DURATIONS}.isSorted()", TIME_AT_LOAD),
        (f"{EMPTY_DURATIONS}.isSorted()", TIME_AT_LOAD),
        (f"{UNSORTED_DURATIONS}.isSorted() == false", TIME_AT_LOAD),
        (f"{DURATIONS}.indexOf(duration('1m')) == 1", TIME_AT_RUN),
        (f"{DURATIONS}.lastIndexOf(duration('1m')) == 2", TIME_AT_RUN),
        (f"{DURATIONS}.indexOf(duration('2m')) == -1", TIME_AT_RUN),
        (f"{DURATIONS}.lastIndexOf(duration('2m')) == -1", TIME_AT_RUN),
        (f"{DATES}.min() == timestamp('2000-01-01T00:00:00.000Z')", TIMESTAMPS_AT_LOAD),
        (f"{DATES}.max() == timestamp('2010-01-01T00:00:00.000Z')", TIMESTAMPS_AT_LOAD),
        (f"{DATES}.isSorted()", TIMESTAMPS_AT_LOAD),
        (f"{EMPTY_DATES}.isSorted()", TIMESTAMPS_AT_LOAD),
        (f"{UNSORTED_DATES}.isSorted() == false", TIMESTAMPS_AT_LOAD),
        (f"{DATES}.indexOf(timestamp('2000-02-01T00:00:00.000Z')) == 1", TIME_AT_RUN),
        (f"{DATES}.lastIndexOf(timestamp('2000-02-01T00:00:00.000Z')) == 2", TIME_AT_RUN),
        (f"{DATES}.indexOf(timestamp('2005-02-01T00:00:00.000Z')) == -1", TIME_AT_RUN),
        (f"{DATES}.lastIndexOf(timestamp('2005-02-01T00:00:00.000Z')) == -1", TIME_AT_RUN),
        # errors
        ("object.emptyInts.min() == 1", Error("min called on empty list")),
        ("object.emptyInts.max() == 3", Error("max called on empty list")),
        ("object.emptyDoubles.min() == 1.0", Error("min called on empty list")),
        ("object.emptyDoubles.max() == 3.0", Error("max called on empty list")),
        ("object.emptyStrings.min() == 'a'", Error("min called on empty list")),
        ("object.emptyStrings.max() == 'c'", Error("max called on empty list")),
        ("['a', 'b'].sum() == 'c'", CompileError("found no matching overload for 'sum' applied to")),
        ("[[1], [2]].min() == [1]", CompileError("found no matching overload for 'min' applied to")),
        ("[{'a': 1}, {'b': 2}].max() == {'b': 2}", CompileError("found no matching overload for 'max' applied to")),
    ]
    return [pytest.param(e, want, LIST_OBJECT, id=f"validation/lists:{e}") for e, want in rows]


REGEX_OBJECT = {"str": "this is a 123 string 456"}
REGEX_ROWS = [
    ("object.str.find('[0-9]+') == '123'", True),
    ("object.str.find('[0-9]+') != '456'", True),
    ("object.str.find('xyz') == ''", True),
    ("object.str.findAll('[0-9]+') == ['123', '456']", True),
    ("object.str.findAll('[0-9]+', 0) == []", True),
    ("object.str.findAll('[0-9]+', 1) == ['123']", True),
    ("object.str.findAll('[0-9]+', 2) == ['123', '456']", True),
    ("object.str.findAll('[0-9]+', 3) == ['123', '456']", True),
    ("object.str.findAll('[0-9]+', -1) == ['123', '456']", True),
    ("object.str.findAll('xyz') == []", True),
    ("object.str.findAll('xyz', 1) == []", True),
    # Go: "compile error: program instantiation failed: error parsing regexp: unexpected ): `)`"
    ("object.str.find(')') == ''", CompileError("program instantiation failed: error parsing regexp:")),
    ("object.str.findAll(')') == []", CompileError("program instantiation failed: error parsing regexp:")),
    ("object.str.findAll(')', 1) == []", CompileError("program instantiation failed: error parsing regexp:")),
]

INT_LIST = "[1, 2, 3, 4, 5]"
UINT_LIST = "[uint(1), uint(2), uint(3), uint(4), uint(5)]"
DOUBLE_LIST = "[1.0, 2.0, 3.0, 4.0, 5.0]"
BOOL_LIST = "[false, true, false, true, false]"
STRING_LIST = "['012345678901', '012345678901', '012345678901', '012345678901', '012345678901']"
BYTES_LIST = (
    "[bytes('012345678901'), bytes('012345678901'), bytes('012345678901'), bytes('012345678901'), "
    "bytes('012345678901')]"
)
DURATION_LIST = "[duration('1s'), duration('2s'), duration('3s'), duration('4s'), duration('5s')]"
TIMESTAMP_LIST = (
    "[timestamp('2011-01-01T00:00:00.000+01:00'), timestamp('2011-01-02T00:00:00.000+01:00'), "
    "timestamp('2011-01-03T00:00:00.000+01:00'), timestamp('2011-01-04T00:00:00.000+01:00'), "
    "timestamp('2011-01-05T00:00:00.000+01:00')]"
)
STRING_LITERAL = "'01234567890123456789012345678901234567890123456789'"
UINT_AT_LOAD = NotSupported("on list(uint)")
TWELVE = "012345678901"

COST_ROWS = [
    # TestListsCost: .sum()
    (f"{INT_LIST}.sum()", 15),
    (f"{UINT_LIST}.sum()", UINT_AT_LOAD),
    (f"{DOUBLE_LIST}.sum()", 15.0),
    (f"{DURATION_LIST}.sum()", TIME_AT_LOAD),
    # TestListsCost: .isSorted(), .max(), .min()
    (f"{INT_LIST}.isSorted()", True),
    (f"{INT_LIST}.max()", 5),
    (f"{INT_LIST}.min()", 1),
    (f"{UINT_LIST}.isSorted()", True),
    (f"{UINT_LIST}.max()", UINT_AT_LOAD),
    (f"{UINT_LIST}.min()", UINT_AT_LOAD),
    (f"{DOUBLE_LIST}.isSorted()", True),
    (f"{DOUBLE_LIST}.max()", 5.0),
    (f"{DOUBLE_LIST}.min()", 1.0),
    (f"{BOOL_LIST}.isSorted()", False),
    (f"{BOOL_LIST}.max()", True),
    (f"{BOOL_LIST}.min()", False),
    (f"{STRING_LIST}.isSorted()", True),
    (f"{STRING_LIST}.max()", TWELVE),
    (f"{STRING_LIST}.min()", TWELVE),
    (f"{BYTES_LIST}.isSorted()", True),
    (f"{BYTES_LIST}.max()", bytearray(TWELVE.encode())),
    (f"{BYTES_LIST}.min()", bytearray(TWELVE.encode())),
    (f"{DURATION_LIST}.isSorted()", TIME_AT_LOAD),
    (f"{DURATION_LIST}.max()", TIME_AT_LOAD),
    (f"{DURATION_LIST}.min()", TIME_AT_LOAD),
    (f"{TIMESTAMP_LIST}.isSorted()", TIMESTAMPS_AT_LOAD),
    (f"{TIMESTAMP_LIST}.max()", TIMESTAMPS_AT_LOAD),
    (f"{TIMESTAMP_LIST}.min()", TIMESTAMPS_AT_LOAD),
    # TestIndexOfCost: .indexOf(%s), .lastIndexOf(%s)
    (f"{INT_LIST}.indexOf(3)", 2),
    (f"{INT_LIST}.lastIndexOf(3)", 2),
    (f"{UINT_LIST}.indexOf(uint(3))", 2),
    (f"{UINT_LIST}.lastIndexOf(uint(3))", 2),
    (f"{DOUBLE_LIST}.indexOf(3.0)", 2),
    (f"{DOUBLE_LIST}.lastIndexOf(3.0)", 2),
    (f"{BOOL_LIST}.indexOf(true)", 1),
    (f"{BOOL_LIST}.lastIndexOf(true)", 3),
    (f"{STRING_LIST}.indexOf('x')", -1),
    (f"{STRING_LIST}.lastIndexOf('x')", -1),
    (f"{BYTES_LIST}.indexOf(bytes('x'))", -1),
    (f"{BYTES_LIST}.lastIndexOf(bytes('x'))", -1),
    (f"{DURATION_LIST}.indexOf(duration('3s'))", TIME_AT_RUN),
    (f"{DURATION_LIST}.lastIndexOf(duration('3s'))", TIME_AT_RUN),
    (f"{TIMESTAMP_LIST}.indexOf(timestamp('2011-01-03T00:00:00.000+01:00'))", TIME_AT_RUN),
    (f"{TIMESTAMP_LIST}.lastIndexOf(timestamp('2011-01-03T00:00:00.000+01:00'))", TIME_AT_RUN),
    (f"{STRING_LITERAL}.indexOf('123')", 1),
    (f"{STRING_LITERAL}.lastIndexOf('123')", 41),
    # TestStringLibrary: find, findAll, findAll with limit
    ("'abc 123 def 123'.find('123')", "123"),
    ("'abc 123 def 123'.findAll('123')", ["123", "123"]),
    ("'abc 123 def 123'.findAll('123', 1)", ["123"]),
]

DOC_ROWS = [
    # lists.go
    ("[1, 2, 3].isSorted()", True),
    ("['a', 'b', 'b', 'c'].isSorted()", True),
    ("[2.0, 1.0].isSorted()", False),
    ("[1].isSorted()", True),
    ("[].isSorted()", True),
    ("[1, 3].sum()", 4),
    ("[1.0, 3.0].sum()", 4.0),
    ("[duration('1m'), duration('1s')].sum()", TIME_AT_LOAD),
    ("[1].filter(x, false).sum()", 0),
    ("[].sum()", 0),
    ("[1, 3].min()", 1),
    ("[1, 3].max()", 3),
    ("[].min()", Error("min called on empty list")),
    ("[1].min()", 1),
    ("([0] + []).min()", 0),
    ("[1, 2, 2, 3].indexOf(2)", 1),
    ("['a', 'b', 'b', 'c'].lastIndexOf('b')", 2),
    ("[1.0].indexOf(1.1)", -1),
    ("[].indexOf('string')", -1),
    # regex.go (the comment gives '123' and ['123', '456'] for '[0-9]*', which matches "" first in Go)
    ("'abc 123'.find('[0-9]*')", ""),
    ("'abc 123'.find('xyz')", ""),
    ("'123 abc 456'.findAll('[0-9]*')", ["123", "", "", "", "", "456"]),
    ("'123 abc 456'.findAll('[0-9]*', 1)", ["123"]),
    ("'123 abc 456'.findAll('xyz')", []),
]


def _evaluate(expression: str, obj: dict | None) -> Any:
    """The value, or an ``Error``/``CompileError``/``NotSupported`` outcome."""
    try:
        program = cel_env.compile_program(expression)
    except cel_env.CelCompileError as e:
        return NotSupported(e.message) if e.message.startswith("not supported") else CompileError(e.message)
    try:
        outcome = cel_env.run(program, cel_env.activation({"object": obj}))
    except cel_env.CelUnsupportedError as e:
        return NotSupported(str(e))
    return Error(outcome.error) if outcome.error is not None else outcome.value


def _check(expression: str, want: Any, obj: dict | None) -> None:
    got = _evaluate(expression, obj)
    if isinstance(want, (Error, CompileError, NotSupported)):
        assert type(got) is type(want) and want.text in got.text, got
    else:
        assert (got, type(got)) == (want, type(want))


@pytest.mark.parametrize(
    ("expression", "want", "obj"),
    [
        *_list_rows(),
        *[pytest.param(e, want, REGEX_OBJECT, id=f"validation/regex:{e}") for e, want in REGEX_ROWS],
        *[pytest.param(e, want, None, id=f"cost:{e}") for e, want in COST_ROWS],
        *[pytest.param(e, want, None, id=f"doc:{e}") for e, want in DOC_ROWS],
    ],
)
def test_kubernetes_library(expression: str, want: Any, obj: dict | None) -> None:
    _check(expression, want, obj)


# cel-go behaviour the Go tables do not cover (lists.go with cel-go's common/types Compare,
# Add and Equal and its dynamic dispatch; Go's Regexp.FindAllString)
SEMANTICS_ROWS = [
    ("dyn([1, 'a']).isSorted()", True),  # a Compare error is skipped
    ("dyn([2, 'a', 1]).isSorted()", True),
    ("[0.0/0.0, 1.0].isSorted()", True),  # NaN cannot be ordered: skipped too
    ("dyn([{}]).isSorted()", Error("no such overload: isSorted(list)")),  # no overload for the first element
    ("dyn([1, {}]).isSorted()", Error("no such overload")),
    ("dyn(['a']).sum()", Error("no such overload: sum(list)")),
    ("dyn([1, 2.5]).sum()", Error("no such overload")),  # int + double
    ("[9223372036854775807, 1].sum()", Error("integer overflow")),
    ("dyn([1, 0.5]).min()", 0.5),
    ("dyn([true, false]).max()", True),
    ("[1, 1.0].indexOf(1.0)", 0),  # numbers are equal across types
    ("[true].indexOf(1)", -1),
    ("[{1: 'a'}].indexOf({1u: 'a'})", 0),
    ("[{true: 'a'}].indexOf({1: 'a'})", -1),
    ("[duration('1s')].indexOf(1)", -1),  # no duration compared
    ("dyn([duration('1s')]).isSorted()", True),
    ("dyn([duration('1s')]).min()", TIME_AT_RUN),  # the result would be truncated
    ("dyn([duration('1s'), duration('2s')]).isSorted() || true", TIME_AT_RUN),  # reported though absorbed
    ("'a'.findAll('|a')", ["", ""]),  # an empty match right after a match is skipped
    ("'aaa'.findAll('a*')", ["aaa"]),
    ("'abc'.find('(' + '')", Error("Illegal regex: error parsing regexp")),  # not a literal: run time
    ("'abc'.find('(a+)+' + '')", "a"),  # RE2: nested repetition is linear, not refused
    ("'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!'.find('^(a|a)*$' + '')", ""),
    ("'h\u00e9\u00e9'.findAll('')", ["", "", "", ""]),  # empty matches step by rune
    ("'x'.find('\\\\C' + '')", Error("Illegal regex: error parsing regexp: invalid escape sequence")),
]


@pytest.mark.parametrize(("expression", "want"), [pytest.param(e, w, id=e) for e, w in SEMANTICS_ROWS])
def test_cel_go_semantics(expression: str, want: Any) -> None:
    _check(expression, want, None)
