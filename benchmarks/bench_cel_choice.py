"""Compare Python CEL libraries for Kyverno ``validate.cel`` rules: correctness on the
conformance corpus and evaluation speed.

Run with an interpreter that has the candidates installed (each is optional):

    python -m venv /tmp/venv-bench
    /tmp/venv-bench/bin/pip install cel-python common-expression-language cel-expr-python pyyaml
    /tmp/venv-bench/bin/python benchmarks/bench_cel_choice.py [--seconds 2]

Candidates, each used as the library offers it, with no Kyverno-specific help:
``celpy`` (cel-python), ``cel`` (common-expression-language, cel-rust bindings) and
``cel-expr-python`` (the CEL C++ runtime with its optional and strings extensions).
Variables are evaluated eagerly and handed over as a ``variables`` map; a failing
variable is left out. The ``scanner`` row is ``scanner.engine.cel.subrule`` (cel-expr-python plus
the lazy ``cel.bind`` variables and the Kyverno ``orValue`` rewrite).
Resources are given with integers as floats, as Kyverno's CLI does.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scanner.engine.cel.rewrite import rewrite_cel_for_autogen
from tests.engine.cel_corpus import CelCase, iter_cases

TYPICAL = "object.spec.containers.all(c, has(c.image) && !c.image.endsWith(':latest'))"
POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "web", "namespace": "default", "labels": {"app": "web"}},
    "spec": {
        "containers": [
            {"name": f"c{i}", "image": f"registry.example.com/app{i}:1.{i}",
             "ports": [{"containerPort": 8080 + i}],
             "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}
            for i in range(3)
        ]
    },
}  # fmt: skip


class Failed(Exception):
    """An expression did not compile or evaluate."""


def _floats(value: Any) -> Any:
    if isinstance(value, bool) or not isinstance(value, (int, dict, list)):
        return value
    if isinstance(value, int):
        return float(value)
    if isinstance(value, dict):
        return {k: _floats(v) for k, v in value.items()}
    return [_floats(v) for v in value]


class Adapter:
    """compile(text) -> program; run(program, bindings) -> value (raise Failed)."""

    name = ""
    dist = ""

    def compile(self, text: str) -> Any:
        raise NotImplementedError

    def run(self, program: Any, bindings: dict) -> Any:
        raise NotImplementedError


class CelPy(Adapter):
    name, dist = "celpy", "cel-python"

    def __init__(self) -> None:
        import celpy

        self.celpy = celpy
        self.env = celpy.Environment()

    def compile(self, text: str) -> Any:
        try:
            return self.env.program(self.env.compile(text))
        except Exception as e:
            raise Failed(str(e).splitlines()[0]) from e

    def run(self, program: Any, bindings: dict) -> Any:
        act = {k: self.celpy.json_to_cel(v) for k, v in bindings.items()}
        try:
            result = program.evaluate(act)
        except Exception as e:
            raise Failed(str(e)[:80]) from e
        if isinstance(result, Exception):
            raise Failed(str(result)[:80])
        if isinstance(result, self.celpy.celtypes.BoolType):
            return bool(result)
        return result


class CelRust(Adapter):
    name, dist = "cel", "common-expression-language"

    def __init__(self) -> None:
        import cel

        self.cel = cel

    def compile(self, text: str) -> Any:
        try:
            return self.cel.compile(text)
        except Exception as e:
            raise Failed(str(e).splitlines()[0]) from e

    def run(self, program: Any, bindings: dict) -> Any:
        try:
            return program.execute(bindings)
        except Exception as e:
            raise Failed(str(e)[:80]) from e


class CelCpp(Adapter):
    name, dist = "cel_expr_python", "cel-expr-python"

    def __init__(self) -> None:
        from cel_expr_python import cel
        from cel_expr_python.ext import ext_optional, ext_strings

        self.cel = cel
        names = ("object", "oldObject", "request", "namespaceObject", "params", "variables")
        self.env = cel.NewEnv(
            variables={n: cel.Type.DYN for n in names},
            extensions=[ext_optional.ExtOptional(), ext_strings.ExtStrings()],
        )

    def compile(self, text: str) -> Any:
        try:
            return self.env.compile(text)
        except RuntimeError as e:
            try:
                return self.env.compile(text, disable_check=True)
            except RuntimeError:
                raise Failed(str(e).splitlines()[0]) from e

    def run(self, program: Any, bindings: dict) -> Any:
        try:
            result = program.eval(data=bindings)
        except RuntimeError as e:
            raise Failed(str(e)[:80]) from e
        if result.type() == self.cel.Type.ERROR:
            raise Failed(str(result.value())[:80])
        return result.plain_value()


def _raw_status(adapter: Adapter, case: CelCase) -> str:
    """Evaluate a case the plain way: eager variables, then preconditions, expressions."""
    bindings = {
        "object": _floats(case.resource),
        "oldObject": None,
        "request": case.request(),
        "namespaceObject": case.namespace_object(),
        "params": None,
    }
    try:
        variables: dict[str, Any] = {}
        for var in case.cel.get("variables") or []:
            program = adapter.compile(var["expression"])
            with contextlib.suppress(Failed):
                variables[var["name"]] = adapter.run(program, {**bindings, "variables": variables})
        bindings["variables"] = variables
        for pre in case.preconditions or []:
            program = adapter.compile(pre["expression"])
            try:
                if adapter.run(program, bindings) is not True:
                    return "skip"
            except Failed:
                return "fail"
        for item in case.cel["expressions"]:
            program = adapter.compile(item["expression"])
            try:
                if adapter.run(program, bindings) is not True:
                    return "fail"
            except Failed:
                return "fail"
        return "pass"
    except Failed:
        return "compile-error"


def _scanner_status(case: CelCase) -> str:
    from scanner.engine.cel.subrule import CelCompileError, compile_cel_rule, evaluate_cel_rule

    try:
        rule = compile_cel_rule(
            case.cel, validate_message=case.message, preconditions=case.preconditions
        )
    except CelCompileError:
        return "compile-error"
    return evaluate_cel_rule(
        rule, rule_name=case.rule, object=case.resource, old_object=None,
        request=case.request(), namespace_object=case.namespace_object(), params=None,
    ).status.value  # fmt: skip


def _compile_rate(adapter: Adapter, texts: set[str]) -> tuple[int, list[str]]:
    ok, gaps = 0, []
    for text in sorted(texts):
        try:
            adapter.compile(text)
            ok += 1
        except Failed as e:
            gaps.append(f"{text[:60]!r}: {e}")
    return ok, gaps


def _rate(fn: Callable[[], Any], seconds: float) -> float:
    count, start = 0, time.perf_counter()
    while (elapsed := time.perf_counter() - start) < seconds:
        for _ in range(100):
            fn()
        count += 100
    return count / elapsed


def _speed(adapter: Adapter | None, seconds: float) -> float:
    if adapter is None:
        from scanner.engine.cel.subrule import compile_cel_rule, evaluate_cel_rule

        rule = compile_cel_rule(
            {"expressions": [{"expression": TYPICAL}]}, validate_message="", preconditions=None
        )
        request = {"operation": "CREATE"}
        return _rate(lambda: evaluate_cel_rule(
            rule, rule_name="r", object=POD, old_object=None, request=request,
            namespace_object={"metadata": {"name": "default"}}, params=None,
        ), seconds)  # fmt: skip
    program = adapter.compile(TYPICAL)
    assert adapter.run(program, {"object": _floats(POD)}) is True
    return _rate(lambda: adapter.run(program, {"object": _floats(POD)}), seconds)


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "?"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="time per speed run")
    parser.add_argument("--gaps", type=int, default=5, help="compile gaps to list per library")
    args = parser.parse_args()
    cases = list(iter_cases(rewrite_cel_for_autogen))
    texts = {t for c in cases for t in c.texts}
    print(f"corpus: {len(cases)} expectations, {len(texts)} distinct CEL texts")
    print(f"typical expression: {TYPICAL}\n")
    header = (
        f"{'library':<28}{'version':<10}{'texts compiled':<16}{'expectations met':<20}"
        f"{'eval/s':>10}"
    )
    print(header)
    print("-" * len(header))
    gaps_by_lib: dict[str, list[str]] = {}
    misses_by_lib: dict[str, list[str]] = {}
    for cls in (CelPy, CelRust, CelCpp):
        try:
            adapter = cls()
        except ImportError:
            print(f"{cls.dist:<28}not installed")
            continue
        compiled, gaps = _compile_rate(adapter, texts)
        missed = [c for c in cases if _raw_status(adapter, c) != c.expected]
        met = len(cases) - len(missed)
        misses_by_lib[cls.dist] = sorted({c.case_id.rsplit(":", 1)[0] for c in missed})
        speed = _speed(adapter, args.seconds)
        gaps_by_lib[cls.dist] = gaps
        print(f"{cls.dist:<28}{_version(cls.dist):<10}{compiled:>4}/{len(texts):<11}"
              f"{met:>4}/{len(cases)} {100 * met / len(cases):5.1f}%{speed:>14,.0f}")  # fmt: skip
    met = sum(_scanner_status(c) == c.expected for c in cases)
    speed = _speed(None, args.seconds)
    print(f"{'scanner.engine.cel.subrule':<28}{_version('cel-expr-python'):<10}{'':<16}"
          f"{met:>4}/{len(cases)} {100 * met / len(cases):5.1f}%{speed:>14,.0f}")  # fmt: skip
    for dist, gaps in gaps_by_lib.items():
        print(f"\n{dist}: {len(gaps)} texts do not compile; first {args.gaps}:")
        for gap in gaps[: args.gaps]:
            print(f"  {gap}")
        rules = misses_by_lib[dist]
        print(f"{dist}: rules with unmet expectations ({len(rules)}): {', '.join(rules[:8])}")


if __name__ == "__main__":
    main()
