"""Kyverno's JMESPath extensions checked against Kyverno's own Go unit tests.

Sources (kyverno/kyverno, ``pkg/engine/jmespath/``; ``functions_test.go`` is translated in
``test_jmespath_functions.py`` and not repeated here):

* ``arithmetic_test.go``: Test_Add, Test_Sum, Test_Subtract, Test_Multiply, Test_Divide,
  Test_Modulo, Test_Round, TestScalar_Multiply, TestParseArithemticOperands;
* ``time_test.go``: Test_TimeSince, Test_TimeToCron, Test_TimeAdd, Test_TimeParse,
  Test_TimeUtc, Test_TimeDiff, Test_getTimeArg, Test_getDurationArg, Test_jpTimeBefore,
  Test_jpTimeAfter, Test_jpTimeBetween;
* ``utils_test.go``: Test_intNumber, Test_intNumber_Error (read through ``lookup`` and
  ``round``, the functions calling ``intNumber``);
* ``typecheck_test.go``: TestArgumentTypeErrors, TestArgumentTypesAccepted;
* ``error_test.go``: TestFormatError (each message read through a function that emits it);
* ``precision_test.go``: Test_IfaceToStringPrecision, Test_NumericFunctionsPrecision,
  Fuzz_IfaceToStringFloat64RoundTrip (its seed corpus);
* ``functionentry_test.go``: TestFunctionEntry_String (what ``scanner jp function`` prints);
* ``interface_test.go``, ``new_test.go``: query compile/search results;
* ``interpreter_test.go``: the expressions, with the Go structs written as JSON objects.

Go tests that only assert "an error" get the exact message from the code beside them
(``arithmetic.go``, ``time.go``, ``functions.go``, ``utils.go``, ``typecheck.go``,
``error.go``) and from Go's ``time`` and ``strconv`` packages. Like the Go tests, every
query searches the empty string unless a row gives data.

Not translated: internals with no expression counterpart (the query cache identity,
concurrency and benchmarks of ``interface_test.go``, ``typeName(1)`` for a Go ``int``, an
argument index beyond the argument list, struct field capitalisation of
``interpreter_test.go``).
"""

from __future__ import annotations

import math
import struct
from typing import Any

import pytest

from scanner.engine.jmespath.dialect import Evaluator, compile_expression
from scanner.engine.jmespath.functions import build_functions, custom_specs
from scanner.engine.jmespath.interpreter import JMESPathError
from scanner.engine.jmespath.registry import FunctionSpec

EVALUATOR = Evaluator(build_functions())
RFC3339 = "2006-01-02T15:04:05Z07:00"

def run(expr: str, data: Any = "") -> Any:
    return EVALUATOR.search(compile_expression(expr), data)


def ok(go_test: str, expr: str, expected: Any, row_id: str, data: Any = "") -> Any:
    return pytest.param(expr, data, expected, id=f"{go_test}-{row_id}")


def err(go_test: str, expr: str, message: str, row_id: str, data: Any = "") -> Any:
    return pytest.param(expr, data, message, id=f"{go_test}-{row_id}")


def types_mismatch(go_test: str, name: str, expr: str, row_id: str) -> Any:
    return err(go_test, expr, f"JMESPath function '{name}': Types mismatch", row_id)


def not_of_type(go_test: str, name: str, expr: str, index: int, types: str, got: str,
                row_id: str, data: Any = "") -> Any:
    message = f"JMESPath function '{name}': argument #{index} is not of type {types} (got {got})"
    return err(go_test, expr, message, row_id, data)


T1, T2, T3 = "2021-01-02T15:04:05-07:00", "2021-01-02T16:04:05-07:00", "2021-01-02T17:04:05-07:00"
T4 = "2021-01-02T18:04:05-07:00"
TYPE_DATA = {"null": None, "string": "abc", "number": 1.0, "bool": True, "array": ["a"],
             "object": {"a": "b"}, "numbers": [1.0, 2.0]}
VALUE = {"value": 16777217.0}

VALUES = [
    # arithmetic_test.go
    ok("Test_Add", "add(`12`, `13`)", 25.0, "scalars"),
    ok("Test_Add", "add('12Ki', '13Ki')", "25Ki", "quantities"),
    ok("Test_Add", "add('12Ki', '13')", "12301", "binary-and-decimal-quantity"),
    ok("Test_Add", "add('12s', '13s')", "25s", "durations"),
    ok("Test_Sum", "sum([`12`])", 12.0, "one-scalar"),
    ok("Test_Sum", "sum([`12`, `13`, `1`, `4`])", 30.0, "four-scalars"),
    ok("Test_Sum", "sum([`12`, `13`])", 25.0, "two-scalars"),
    ok("Test_Sum", "sum(['12Ki'])", "12Ki", "one-quantity"),
    ok("Test_Sum", "sum(['12Ki', '13Ki', '1Ki', '4Ki'])", "30Ki", "four-quantities"),
    ok("Test_Sum", "sum(['12Ki', '13Ki'])", "25Ki", "two-quantities"),
    ok("Test_Sum", "sum(['12Ki', '13'])", "12301", "binary-and-decimal-quantity"),
    ok("Test_Sum", "sum(['12s'])", "12s", "one-duration"),
    ok("Test_Sum", "sum(['12s', '13s', '1s', '4s'])", "30s", "four-durations"),
    ok("Test_Sum", "sum(['12s', '13s'])", "25s", "two-durations"),
    ok("Test_Subtract", "subtract(`12`, `13`)", -1.0, "scalars"),
    ok("Test_Subtract", "subtract('12Ki', '13Ki')", "-1Ki", "quantities"),
    ok("Test_Subtract", "subtract('12Ki', '13')", "12275", "binary-and-decimal-quantity"),
    ok("Test_Subtract", "subtract('12s', '13s')", "-1s", "durations"),
    ok("Test_Multiply", "multiply('12Ki', `2`)", "24Ki", "quantity-scalar"),
    ok("Test_Multiply", "multiply('12s', `2`)", "24s", "duration-scalar"),
    ok("Test_Multiply", "multiply(`2.5`, `2.5`)", 6.25, "scalars"),
    ok("Test_Multiply", "multiply(`2.5`, '12Ki')", "30Ki", "scalar-binary-quantity"),
    ok("Test_Multiply", "multiply(`2.5`, '12')", "30", "scalar-decimal-quantity"),
    ok("Test_Multiply", "multiply(`2.5`, '40s')", "1m40s", "scalar-duration"),
    ok("Test_Divide", "divide('256M', '256M')", 1.0, "equal-quantities"),
    ok("Test_Divide", "divide('512M', '256M')", 2.0, "quantities"),
    ok("Test_Divide", "divide('8', '3')", 8.0 / 3.0, "decimal-quantities"),
    ok("Test_Divide", "divide('128M', '256M')", 0.5, "quantities-fraction"),
    ok("Test_Divide", "divide('12Ki', `3`)", "4Ki", "quantity-scalar"),
    ok("Test_Divide", "divide('12Ki', '2Ki')", 6.0, "binary-quantities"),
    ok("Test_Divide", "divide('12Ki', '200')", 61.44, "binary-and-decimal-quantity"),
    ok("Test_Divide", "divide('12s', `3`)", "4s", "duration-scalar"),
    ok("Test_Divide", "divide('12s', '5s')", 2.4, "durations"),
    ok("Test_Divide", "divide(`14`, `3`)", 4.666666666666667, "scalars"),
    ok("Test_Modulo", "modulo('12Ki', '5Ki')", "2Ki", "quantities"),
    ok("Test_Modulo", "modulo('13s', '2s')", "1s", "durations"),
    ok("Test_Modulo", "modulo(`13`, `5`)", 3.0, "scalars"),
    ok("Test_Round", "round(`9.414675`, `2`)", 9.41, "two-places"),
    ok("Test_Round", "round(`14.123`, `6`)", 14.123, "more-places-than-digits"),
    # time_test.go
    ok("Test_TimeSince", f"time_since('', '{T1}', '2021-01-10T03:14:05-07:00')", "180h10m0s",
       "rfc3339"),
    ok("Test_TimeSince", "time_since('Mon Jan _2 15:04:05 MST 2006', "
       "'Mon Jan 02 15:04:05 MST 2021', 'Mon Jan 10 03:14:16 MST 2021')", "180h10m11s",
       "unix-date-layout"),
    ok("Test_TimeToCron", "time_to_cron('2023-02-02T15:04:05Z')", "4 15 2 2 4", "utc"),
    ok("Test_TimeToCron", "time_to_cron(time_utc('2023-02-02T15:04:05-07:00'))", "4 22 2 2 4",
       "converted-to-utc"),
    ok("Test_TimeAdd", f"time_add('{T1}', '3h')", "2021-01-02T18:04:05-07:00", "keeps-offset"),
    ok("Test_TimeAdd", "time_add(time_parse('Mon Jan 02 15:04:05 MST 2006', "
       "'Sat Jan 02 15:04:05 MST 2021'), '5h30m40s')", "2021-01-02T20:34:45Z", "parsed-time"),
    ok("Test_TimeParse", f"time_parse('{RFC3339}', '{T1}')", T1, "rfc3339"),
    ok("Test_TimeParse", "time_parse('Mon Jan 02 15:04:05 MST 2006', "
       "'Sat Jan 02 15:04:05 MST 2021')", "2021-01-02T15:04:05Z", "unknown-zone-is-utc"),
    ok("Test_TimeUtc", "time_utc('2023-02-02T15:04:05Z')", "2023-02-02T15:04:05Z", "utc"),
    ok("Test_TimeUtc", "time_utc('2023-02-02T15:04:05-07:00')", "2023-02-02T22:04:05Z",
       "offset"),
    ok("Test_TimeDiff", f"time_diff('{T1}', '2021-01-10T03:14:05-07:00')", "180h10m0s", "diff"),
    ok("Test_getTimeArg", f"time_utc('{T1}')", "2021-01-02T22:04:05Z", "rfc3339"),
    ok("Test_getDurationArg", f"time_add('{T1}', '20s')", "2021-01-02T15:04:25-07:00",
       "seconds"),
    ok("Test_jpTimeBefore", f"time_before('{T1}', '{T2}')", True, "earlier"),
    ok("Test_jpTimeBefore", f"time_before('{T1}', '{T1}')", False, "equal"),
    ok("Test_jpTimeBefore", f"time_before('{T2}', '{T1}')", False, "later"),
    ok("Test_jpTimeAfter", f"time_after('{T1}', '{T2}')", False, "earlier"),
    ok("Test_jpTimeAfter", f"time_after('{T1}', '{T1}')", False, "equal"),
    ok("Test_jpTimeAfter", f"time_after('{T2}', '{T1}')", True, "later"),
    ok("Test_jpTimeBetween", f"time_between('{T3}', '{T1}', '{T4}')", True, "inside"),
    ok("Test_jpTimeBetween", f"time_between('{T1}', '{T1}', '{T4}')", False, "at-start"),
    ok("Test_jpTimeBetween", f"time_between('{T4}', '{T1}', '{T4}')", False, "at-end"),
    # time.go hands layouts to Go's time.Parse: its reading of layouts and values
    ok("jpTimeParse", "time_parse('15:04', '10:30')", "0000-01-01T10:30:00Z", "no-date-is-year-0"),
    ok("jpTimeParse", "time_parse('3:04', '0:30')", "0000-01-01T00:30:00Z", "12-hour-zero"),
    ok("jpTimeParse", "time_parse('3:04PM', '12:30AM')", "0000-01-01T00:30:00Z", "12-am"),
    ok("jpTimeParse", "time_parse('15:04PM', '13:30AM')", "0000-01-01T13:30:00Z",
       "am-keeps-24-hour"),
    ok("jpTimeParse", "time_parse('Jan 2 2006', 'Jan  2   2021')", "2021-01-02T00:00:00Z",
       "space-matches-spaces"),
    ok("jpTimeParse", "time_parse('2006__2', '2020  5')", "2020-01-05T00:00:00Z",
       "year-day-padded"),
    # a zone name Go does not know keeps the wall clock as UTC (a GMT offset is only shown)
    ok("jpTimeParse", "time_parse('Mon Jan _2 15:04:05 MST 2006', "
       "'Mon Jan  2 15:04:05 GMT+3 2021')", "2021-01-02T18:04:05+03:00", "gmt-offset"),
    # utils_test.go: intNumber accepts integral values (lookup out of range is null)
    ok("Test_intNumber", "lookup(`[10, 20]`, `0`)", 10, "zero"),
    ok("Test_intNumber", "lookup(`[10, 20]`, `1`)", 20, "one"),
    ok("Test_intNumber", "lookup(`[10, 20]`, `-1`)", None, "minus-one"),
    ok("Test_intNumber", "lookup(`[10, 20]`, `2147483647`)", None, "max-int32"),
    ok("Test_intNumber", "lookup(`[10, 20]`, `-2147483648`)", None, "min-int32"),
    # typecheck_test.go
    ok("TestArgumentTypesAccepted", "to_upper(string)", "ABC", "string", TYPE_DATA),
    ok("TestArgumentTypesAccepted", "round(number, `0`)", 1.0, "number", TYPE_DATA),
    ok("TestArgumentTypesAccepted", "sum(numbers)", 3.0, "array", TYPE_DATA),
    ok("TestArgumentTypesAccepted", "lookup(object, 'a')", "b", "object-in-union", TYPE_DATA),
    ok("TestArgumentTypesAccepted", "lookup(numbers, `1`)", 2.0, "array-in-union", TYPE_DATA),
    # precision_test.go: numbers are converted to text with full float64 precision
    ok("Test_NumericFunctionsPrecision", "regex_match('^16777217$', value)", True,
       "regex-match-exact", VALUE),
    ok("Test_NumericFunctionsPrecision", "regex_match('^16777216$', value)", False,
       "regex-match-float32-neighbour", VALUE),
    ok("Test_NumericFunctionsPrecision", "pattern_match('16777217', value)", True,
       "pattern-match-exact", VALUE),
    ok("Test_NumericFunctionsPrecision", "pattern_match('16777216', value)", False,
       "pattern-match-float32-neighbour", VALUE),
    ok("Test_NumericFunctionsPrecision", "regex_replace_all('^16777217$', value, 'matched')",
       "matched", "regex-replace-all", VALUE),
    ok("Test_NumericFunctionsPrecision", "object_from_lists([value], ['matched'])",
       {"16777217": "matched"}, "object-key", VALUE),
    # interface_test.go
    ok("TestQueryCacheDistinct", "a.value", 1, "a", {"a": {"value": 1}, "b": {"value": 2}}),
    ok("TestQueryCacheDistinct", "b.value", 2, "b", {"a": {"value": 1}, "b": {"value": 2}}),
    ok("TestSearch", "object.value", 3, "search", {"object": {"value": 3}}),
    ok("TestQueryCacheSameKeyDifferentData", "object.value", 1, "first", {"object": {"value": 1}}),
    ok("TestQueryCacheSameKeyDifferentData", "object.value", 2, "second", {"object": {"value": 2}}),
    ok("TestQueryCacheFunctionCall", "split(object.value, ',')", ["a", "b", "c"], "split",
       {"object": {"value": "a,b,c"}}),
    # interpreter_test.go (Go structs as JSON objects; nil pointers and slices as null)
    ok("TestCanSupportEmptyInterface", "foo", "bar", "field", {"foo": "bar"}),
    ok("TestCanSupportUserDefinedStructsValue", "Foo", "one", "field", {"Foo": "one", "Bar": "bar"}),
    ok("TestCanSupportStructWithSliceAll", "B[].Foo", ["f1", "correct"], "flatten",
       {"A": "foo", "B": [{"Foo": "f1", "Bar": "b1"}, {"Foo": "correct", "Bar": "b2"}]}),
    ok("TestCanSupportStructWithSlicingExpression", "B[:].Foo", ["f1", "correct"], "slice",
       {"A": "foo", "B": [{"Foo": "f1", "Bar": "b1"}, {"Foo": "correct", "Bar": "b2"}]}),
    ok("TestCanSupportStructWithFilterProjection", "B[? `true` ].Foo", ["f1", "correct"],
       "filter", {"A": "foo", "B": [{"Foo": "f1", "Bar": "b1"}, {"Foo": "correct", "Bar": "b2"}]}),
    ok("TestCanSupportStructWithSlice", "B[-1].Foo", "correct", "negative-index",
       {"A": "foo", "B": [{"Foo": "f1", "Bar": "b1"}, {"Foo": "correct", "Bar": "b2"}]}),
    ok("TestCanSupportStructWithOrExpressions", "C || A", "foo", "or-null",
       {"A": "foo", "B": None, "C": None}),
    ok("TestCanSupportStructWithSlicePointer", "C[-1].Foo", "correct", "negative-index",
       {"A": "foo", "B": None, "C": [{"Foo": "f1", "Bar": "b1"}, {"Foo": "correct", "Bar": "b2"}]}),
    ok("TestCanSupportStructWithNestedPointers", "A.B", None, "null-parent", {"A": None}),
    ok("TestCanSupportFlattenNestedSlice", "A[].B[].Foo", ["f1a", "f1b", "f2a", "f2b"], "nested",
       {"A": [{"B": [{"Foo": "f1a"}, {"Foo": "f1b"}]}, {"B": [{"Foo": "f2a"}, {"Foo": "f2b"}]}]}),
    ok("TestCanSupportFlattenNestedEmptySlice", "A[].B[].Foo", ["a"], "null-slice",
       {"A": [{"A": "", "B": None}, {"A": "", "B": [{"Foo": "a"}]}]}),
    ok("TestCanSupportProjectionsWithStructs", "A[*].A", ["first", "second", "third"],
       "projection", {"A": [{"A": "first"}, {"A": "second"}, {"A": "third"}]}),
    ok("TestCanSupportSliceOfStructsWithFunctions", "length(@)", 2.0, "length",
       [{"Foo": "a1", "Bar": "b1"}, {"Foo": "a2", "Bar": "b2"}]),
]


@pytest.mark.parametrize(("expr", "data", "expected"), VALUES)
def test_go_values(expr: str, data: Any, expected: Any) -> None:
    result = run(expr, data)
    assert result == expected
    assert isinstance(result, str) == isinstance(expected, str)  # Go: float64 vs string


ZERO = "Zero divisor passed"
NON_INT_MODULO = "Non-integer argument(s) passed for modulo"

ERRORS = [
    # arithmetic_test.go: every operand parses, so mixes are type mismatches
    types_mismatch("Test_Add", "add", "add('12', '13s')", "quantity-duration"),
    types_mismatch("Test_Add", "add", "add(`12`, '13Ki')", "scalar-binary-quantity"),
    types_mismatch("Test_Add", "add", "add(`12`, '13')", "scalar-decimal-quantity"),
    types_mismatch("Test_Add", "add", "add('12Ki', '13s')", "quantity-duration-2"),
    types_mismatch("Test_Add", "add", "add('12Ki', `13`)", "quantity-scalar"),
    types_mismatch("Test_Add", "add", "add('12s', `13`)", "duration-scalar"),
    types_mismatch("Test_Add", "add", "add('12s', '13Ki')", "duration-binary-quantity"),
    types_mismatch("Test_Add", "add", "add('12s', '13')", "duration-decimal-quantity"),
    not_of_type("Test_Sum", "sum", "sum([])", 1, "array", "null", "flatten-of-string-is-null"),
    types_mismatch("Test_Sum", "sum", "sum(['12', '13s'])", "quantity-duration"),
    types_mismatch("Test_Sum", "sum", "sum([`12`, '13Ki'])", "scalar-binary-quantity"),
    types_mismatch("Test_Sum", "sum", "sum([`12`, '13'])", "scalar-decimal-quantity"),
    types_mismatch("Test_Sum", "sum", "sum(['12Ki', '13s'])", "quantity-duration-2"),
    types_mismatch("Test_Sum", "sum", "sum(['12Ki', `13`])", "quantity-scalar"),
    types_mismatch("Test_Sum", "sum", "sum(['12s', `13`])", "duration-scalar"),
    types_mismatch("Test_Sum", "sum", "sum(['12s', '13Ki'])", "duration-binary-quantity"),
    types_mismatch("Test_Sum", "sum", "sum(['12s', '13'])", "duration-decimal-quantity"),
    types_mismatch("Test_Subtract", "subtract", "subtract('12', '13s')", "quantity-duration"),
    types_mismatch("Test_Subtract", "subtract", "subtract(`12`, '13Ki')", "scalar-quantity"),
    types_mismatch("Test_Subtract", "subtract", "subtract(`12`, '13')", "scalar-quantity-2"),
    types_mismatch("Test_Subtract", "subtract", "subtract('12Ki', '13s')", "quantity-duration-2"),
    types_mismatch("Test_Subtract", "subtract", "subtract('12Ki', `13`)", "quantity-scalar"),
    types_mismatch("Test_Subtract", "subtract", "subtract('12s', `13`)", "duration-scalar"),
    types_mismatch("Test_Subtract", "subtract", "subtract('12s', '13Ki')", "duration-quantity"),
    types_mismatch("Test_Subtract", "subtract", "subtract('12s', '13')", "duration-quantity-2"),
    types_mismatch("Test_Multiply", "multiply", "multiply('12Ki', '12Ki')", "quantities"),
    types_mismatch("Test_Multiply", "multiply", "multiply('12Ki', '12')", "quantities-2"),
    types_mismatch("Test_Multiply", "multiply", "multiply('12Ki', '12s')", "quantity-duration"),
    types_mismatch("Test_Multiply", "multiply", "multiply('12s', '12Ki')", "duration-quantity"),
    types_mismatch("Test_Multiply", "multiply", "multiply('12s', '12')", "duration-quantity-2"),
    types_mismatch("Test_Multiply", "multiply", "multiply('12s', '12s')", "durations"),
    types_mismatch("Test_Divide", "divide", "divide('12Ki', '2s')", "quantity-duration"),
    types_mismatch("Test_Divide", "divide", "divide('12s', '4Ki')", "duration-quantity"),
    types_mismatch("Test_Divide", "divide", "divide('12s', '4')", "duration-quantity-2"),
    types_mismatch("Test_Divide", "divide", "divide(`14`, '5s')", "scalar-duration"),
    types_mismatch("Test_Divide", "divide", "divide(`14`, '5Ki')", "scalar-quantity"),
    types_mismatch("Test_Divide", "divide", "divide(`14`, '5')", "scalar-quantity-2"),
    err("Test_Divide", "divide(`14`, `0`)", f"JMESPath function 'divide': {ZERO}", "scalar-zero"),
    err("Test_Divide", "divide('4Ki', `0`)", f"JMESPath function 'divide': {ZERO}",
        "quantity-scalar-zero"),
    err("Test_Divide", "divide('4Ki', '0Ki')", f"JMESPath function 'divide': {ZERO}",
        "quantity-zero-quantity"),
    err("Test_Divide", "divide('4', `0`)", f"JMESPath function 'divide': {ZERO}",
        "decimal-quantity-scalar-zero"),
    err("Test_Divide", "divide('4', '0')", f"JMESPath function 'divide': {ZERO}",
        "decimal-quantity-zero-quantity"),
    err("Test_Divide", "divide('4s', `0`)", f"JMESPath function 'divide': {ZERO}",
        "duration-scalar-zero"),
    err("Test_Divide", "divide('4s', '0s')", f"JMESPath function 'divide': {ZERO}",
        "duration-zero-duration"),
    types_mismatch("Test_Modulo", "modulo", "modulo('12', '13s')", "quantity-duration"),
    types_mismatch("Test_Modulo", "modulo", "modulo('12Ki', '13s')", "quantity-duration-2"),
    types_mismatch("Test_Modulo", "modulo", "modulo('12Ki', `13`)", "quantity-scalar"),
    types_mismatch("Test_Modulo", "modulo", "modulo('13s', '12')", "duration-quantity"),
    types_mismatch("Test_Modulo", "modulo", "modulo('13s', '12Ki')", "duration-quantity-2"),
    types_mismatch("Test_Modulo", "modulo", "modulo('13s', `2`)", "duration-scalar"),
    types_mismatch("Test_Modulo", "modulo", "modulo(`13`, '12')", "scalar-quantity"),
    types_mismatch("Test_Modulo", "modulo", "modulo(`13`, '12Ki')", "scalar-quantity-2"),
    types_mismatch("Test_Modulo", "modulo", "modulo(`13`, '5s')", "scalar-duration"),
    err("Test_Modulo", "modulo(`14`, `0`)", f"JMESPath function 'modulo': {ZERO}", "scalar-zero"),
    # a quantity or duration modulo a scalar is a mismatch before the zero check
    types_mismatch("Test_Modulo", "modulo", "modulo('4Ki', `0`)", "quantity-scalar-zero"),
    err("Test_Modulo", "modulo('4Ki', '0Ki')", f"JMESPath function 'modulo': {ZERO}",
        "quantity-zero-quantity"),
    types_mismatch("Test_Modulo", "modulo", "modulo('4', `0`)", "decimal-quantity-scalar-zero"),
    err("Test_Modulo", "modulo('4', '0')", f"JMESPath function 'modulo': {ZERO}",
        "decimal-quantity-zero-quantity"),
    types_mismatch("Test_Modulo", "modulo", "modulo('4s', `0`)", "duration-scalar-zero"),
    err("Test_Modulo", "modulo('4s', '0s')", f"JMESPath function 'modulo': {ZERO}",
        "duration-zero-duration"),
    err("Test_Modulo", "modulo('4', '1.5')", f"JMESPath function 'modulo': {NON_INT_MODULO}",
        "quantity-non-int-divisor"),
    err("Test_Modulo", "modulo('4.5', '1')", f"JMESPath function 'modulo': {NON_INT_MODULO}",
        "quantity-non-int-dividend"),
    err("Test_Modulo", "modulo(`14`, `1.5`)", f"JMESPath function 'modulo': {NON_INT_MODULO}",
        "scalar-non-int-divisor"),
    err("Test_Modulo", "modulo(`14.5`, `2`)", f"JMESPath function 'modulo': {NON_INT_MODULO}",
        "scalar-non-int-dividend"),
    not_of_type("Test_Round", "round", "round(`23`, '12Ki')", 2, "number", "string", "quantity"),
    not_of_type("Test_Round", "round", "round(`21`, '5s')", 2, "number", "string", "duration"),
    err("Test_Round", "round(`14`, `1.5`)",
        "JMESPath function 'round': Non-integer argument(s) passed for round off", "non-int"),
    # argOutOfBoundsError is formatted without its two %d values (Go prints %!d(MISSING))
    err("Test_Round", "round(`14`, `-2`)", "JMESPath function 'round': %!d(MISSING) argument "
        "is out of bounds (%!d(MISSING))", "negative"),
    err("TestScalar_Multiply", "multiply(`123`, `true`)",
        "JMESPath function 'multiply': invalid operands", "scalar-bool"),
    err("TestParseArithemticOperands", "add(`true`, `1`)",
        "JMESPath function 'add': invalid operands", "bool-first"),
    err("TestParseArithemticOperands", "add(`1`, `true`)",
        "JMESPath function 'add': invalid operands", "bool-second"),
    # time_test.go: time and duration errors are Go's own, without a function prefix
    not_of_type("Test_getTimeArg", "time_utc", "time_utc(`1`)", 1, "string", "number", "number"),
    err("Test_getTimeArg", "time_utc('')",
        f'parsing time "" as "{RFC3339}": cannot parse "" as "2006"', "empty"),
    not_of_type("Test_getDurationArg", "time_add", f"time_add('{T1}', `1`)", 2, "string",
                "number", "number"),
    err("Test_getDurationArg", f"time_add('{T1}', '')", 'time: invalid duration ""', "empty"),
    err("Test_getDurationArg", f"time_add('{T1}', '20')", 'time: missing unit in duration "20"',
        "missing-unit"),
    not_of_type("Test_jpTimeBefore", "time_before", f"time_before(`1`, '{T1}')", 1, "string",
                "number", "first-number"),
    not_of_type("Test_jpTimeBefore", "time_before", f"time_before('{T1}', `1`)", 2, "string",
                "number", "second-number"),
    not_of_type("Test_jpTimeAfter", "time_after", f"time_after(`1`, '{T1}')", 1, "string",
                "number", "first-number"),
    not_of_type("Test_jpTimeAfter", "time_after", f"time_after('{T1}', `1`)", 2, "string",
                "number", "second-number"),
    not_of_type("Test_jpTimeBetween", "time_between", f"time_between(`1`, '{T1}', '{T4}')", 1,
                "string", "number", "first-number"),
    not_of_type("Test_jpTimeBetween", "time_between", f"time_between('{T1}', `1`, '{T4}')", 2,
                "string", "number", "second-number"),
    not_of_type("Test_jpTimeBetween", "time_between", f"time_between('{T1}', '{T4}', `1`)", 3,
                "string", "number", "third-number"),
    err("jpTimeParse", "time_utc('2021-13-02T15:04:05Z')",
        'parsing time "2021-13-02T15:04:05Z": month out of range', "month-range"),
    err("jpTimeParse", "time_utc('2021-02-30T15:04:05Z')",
        'parsing time "2021-02-30T15:04:05Z": day out of range', "day-range"),
    err("jpTimeParse", "time_utc('2021-01-02T15:04:05Zjunk')",
        'parsing time "2021-01-02T15:04:05Zjunk": extra text: "junk"', "extra-text"),
    err("jpTimeParse", "time_utc('2021-01-02 15:04:05Z')", 'parsing time "2021-01-02 15:04:05Z"'
        f' as "{RFC3339}": cannot parse " 15:04:05Z" as "T"', "literal"),
    err("jpTimeParse", "time_utc('2021-01-02T15:04:05+25:00')",
        'parsing time "2021-01-02T15:04:05+25:00": time zone offset hour out of range',
        "zone-range"),
    err("jpTimeParse", "time_parse('MST 2006', 'ABCDEF 2021')", 'parsing time "ABCDEF 2021" as '
        '"MST 2006": cannot parse "ABCDEF 2021" as "MST"', "zone-name-too-long"),
    err("jpTimeParse", "time_parse('1', 'abc')", 'strconv.ParseInt: parsing "abc": invalid syntax',
        "epoch-syntax"),
    err("jpTimeParse", "time_parse('1', '99999999999999999999')",
        'strconv.ParseInt: parsing "99999999999999999999": value out of range', "epoch-range"),
    # utils_test.go: intNumber errors, as lookup reports them
    err("Test_intNumber_Error", "lookup(`[1]`, `1.5`)", "JMESPath function 'lookup': "
        "argument #2: expected an integer number but got: 1.5", "fraction"),
    err("Test_intNumber_Error", "lookup(`[1]`, subtract(multiply(`1e308`, `10`), "
        "multiply(`1e308`, `10`)))", "JMESPath function 'lookup': argument #2: expected an "
        "integer number but got: NaN", "nan"),
    err("Test_intNumber_Error", "lookup(`[1]`, multiply(`1e308`, `10`))", "JMESPath function "
        "'lookup': argument #2: expected an integer number but got: +Inf", "plus-inf"),
    err("Test_intNumber_Error", "lookup(`[1]`, multiply(`-1e308`, `10`))", "JMESPath function "
        "'lookup': argument #2: expected an integer number but got: -Inf", "minus-inf"),
    err("Test_intNumber_Error", "lookup(`[1]`, `1.7976931348623157e308`)", "JMESPath function "
        "'lookup': argument #2: number is outside the range of integer numbers: "
        "1.7976931348623157e+308", "max-float64"),
    err("Test_intNumber_Error", "round(`1`, `1e300`)",
        "JMESPath function 'round': Non-integer argument(s) passed for round off",
        "round-out-of-range"),
    # typecheck_test.go
    not_of_type("TestArgumentTypeErrors", "base64_decode", "base64_decode(null)", 1, "string",
                "null", "null", TYPE_DATA),
    not_of_type("TestArgumentTypeErrors", "sha256", "sha256(number)", 1, "string", "number",
                "number", TYPE_DATA),
    not_of_type("TestArgumentTypeErrors", "md5", "md5(bool)", 1, "string", "bool", "bool",
                TYPE_DATA),
    not_of_type("TestArgumentTypeErrors", "sha1", "sha1(array)", 1, "string", "array", "array",
                TYPE_DATA),
    not_of_type("TestArgumentTypeErrors", "is_external_url", "is_external_url(object)", 1,
                "string", "object", "object", TYPE_DATA),
    not_of_type("TestArgumentTypeErrors", "time_add", "time_add(string, null)", 2, "string",
                "null", "second-argument", TYPE_DATA),
    not_of_type("TestArgumentTypeErrors", "items", "items(string, string, string)", 1,
                "object or array", "string", "union", TYPE_DATA),
    not_of_type("TestArgumentTypeErrors", "pattern_match", "pattern_match(array, string)", 1,
                "string", "array", "wildcard-pattern", TYPE_DATA),
    # error_test.go: TestFormatError, each message as a function emits it
    err("TestFormatError", "to_boolean('maybe')", "JMESPath function 'to_boolean': lowercase "
        "argument must be 'true' or 'false' (provided: 'maybe')", "generic-error"),
    err("TestFormatError", "lookup(`{\"a\": 1}`, `1`)",
        "JMESPath function 'lookup': argument #2 is not of type String", "invalid-arg-type"),
    err("TestFormatError", "divide(`1`, `0`)", f"JMESPath function 'divide': {ZERO}",
        "zero-division"),
    err("TestFormatError", "modulo(`3`, `1.5`)", f"JMESPath function 'modulo': {NON_INT_MODULO}",
        "non-int-modulo"),
    types_mismatch("TestFormatError", "add", "add('1s', `1`)", "type-mismatch"),
    err("TestFormatError", "round(`1`, `0.5`)",
        "JMESPath function 'round': Non-integer argument(s) passed for round off", "non-int-round"),
    err("TestFormatError", "sum(`[]`)",
        "JMESPath function 'sum': at least one element in the array is required", "sum-empty"),
    # precision_test.go: ifaceToString refuses null ("undefined type cast")
    err("Test_IfaceToStringPrecision", "object_from_lists(`[null]`, `[1]`)",
        "JMESPath function 'object_from_lists': argument #1 is not of type StringArray",
        "unsupported"),
    # new_test.go and interface_test.go: invalid queries do not compile
]


@pytest.mark.parametrize(("expr", "data", "message"), ERRORS)
def test_go_errors(expr: str, data: Any, message: str) -> None:
    with pytest.raises(JMESPathError) as info:
        run(expr, data)
    assert info.value.message == message


@pytest.mark.parametrize(
    ("query", "valid"),
    [
        pytest.param("", False, id="TestNew-empty"),
        pytest.param("object.something", True, id="TestNew-field"),
        pytest.param("object.", False, id="TestQueryCacheInvalid-trailing-dot"),
    ],
)
def test_go_compile(query: str, valid: bool) -> None:
    if valid:
        compile_expression(query)
    else:
        with pytest.raises(JMESPathError):
            compile_expression(query)


@pytest.mark.parametrize(
    ("value", "text"),
    [
        pytest.param(16777217.0, "16777217", id="float64-boundary"),
        pytest.param(1000000007.0, "1000000007", id="float64-large"),
        pytest.param(-16777217.0, "-16777217", id="float64-negative"),
        pytest.param(1.0000000000000002, "1.0000000000000002", id="float64-fraction"),
        pytest.param(0.0, "0", id="float64-zero"),
        pytest.param(42, "42", id="integer"),
        pytest.param("value", "value", id="string"),
        pytest.param(True, "true", id="boolean"),
    ],
)
def test_go_iface_to_string_precision(value: Any, text: str) -> None:
    """Test_IfaceToStringPrecision, read through object_from_lists keys."""
    assert run("object_from_lists([@], [`1`])", value) == {text: 1}


@pytest.mark.parametrize(
    "value",
    [0.0, -0.0, 16777217.0, -16777217.0, 1000000007.0, 1.0000000000000002, 5e-324,
     1.7976931348623157e308],
)
def test_go_iface_to_string_round_trips(value: float) -> None:
    """Fuzz_IfaceToStringFloat64RoundTrip seeds: the text parses back to the same bits."""
    (text,) = run("keys(object_from_lists([@], [`1`]))", value)
    assert struct.pack("<d", float(text)) == struct.pack("<d", value)
    assert "e" not in text.lower() and (math.copysign(1.0, value) > 0 or text.startswith("-"))


def _spec(name: str) -> FunctionSpec:
    return next(spec for spec in custom_specs() if spec.name == name)


def test_go_function_entry_string() -> None:
    """TestFunctionEntry_String: ``name(args) returns (note)``, nothing without a name."""
    compare = _spec("compare")
    assert str(compare) == "compare(string, string) number (compares two strings lexicographically)"
    assert str(FunctionSpec("compare", compare.args, "number", "", compare.handler)) == (
        "compare(string, string) number")
    assert str(FunctionSpec("", (), "", "compares two strings lexicographically",
                            compare.handler)) == ""
    assert str(_spec("lookup")).startswith("lookup(object|array, string|number) any (")
