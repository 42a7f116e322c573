"""``scanner jp``: evaluate Kyverno-dialect JMESPath and list Kyverno's custom functions."""

from __future__ import annotations

import json
import sys
from datetime import datetime
from typing import Any

import click

from scanner.engine.golang import fmt as gofmt
from scanner.engine.jmespath.dialect import Evaluator, compile_expression
from scanner.engine.jmespath.functions import build_functions, custom_specs
from scanner.engine.jmespath.interpreter import JMESPathError
from scanner.errors import Location, ManifestError, ScannerError
from scanner.yamldoc import load_documents, load_yaml_value


def _safe_load_yaml(text: str) -> Any:
    try:
        return load_yaml_value(text)
    except ManifestError as exc:
        raise ValueError(exc.message) from None


def _read_input(path: str | None) -> Any:
    if path is None:
        text, name = sys.stdin.read(), "<stdin>"
    else:
        try:
            with open(path, encoding="utf-8") as handle:
                text, name = handle.read(), path
        except OSError as exc:
            raise ScannerError(f"cannot read input: {exc.strerror}", Location(path)) from exc
    docs = load_documents(text, name)
    return docs[0].data if docs else None


def _plain(value: Any) -> Any:
    """Go JSON round trip: numbers keep their Go text when printed."""
    return json.loads(gofmt.to_json(value))


@click.group("jp")
def jp() -> None:
    """JMESPath with Kyverno's dialect and custom functions."""


@jp.command("query")
@click.argument("expressions", nargs=-1)
@click.option("-i", "--input", "input_path", type=click.Path(dir_okay=False),
              help="Read input from a JSON or YAML file instead of stdin.")
@click.option("-q", "--query", "query_files", multiple=True, type=click.Path(dir_okay=False),
              help="Read a JMESPath expression from this file (repeatable).")
@click.option("-c", "--compact", is_flag=True, help="Compact JSON output.")
@click.option("-u", "--unquoted", is_flag=True, help="Print a string result without quotes.")
def query(expressions: tuple[str, ...], input_path: str | None, query_files: tuple[str, ...],
          compact: bool, unquoted: bool) -> None:
    """Evaluate EXPRESSIONS against the input document (stdin when no -i)."""
    queries = list(expressions)
    for path in query_files:
        try:
            with open(path, encoding="utf-8") as handle:
                queries.append(handle.read().strip())
        except OSError as exc:
            raise ScannerError(f"cannot read query: {exc.strerror}", Location(path)) from exc
    if not queries:
        raise click.UsageError("no JMESPath expression given")
    data = _read_input(input_path)
    evaluator = Evaluator(build_functions(now=lambda: datetime.now().astimezone(),
                                          load_yaml=_safe_load_yaml))
    for text in queries:
        try:
            result = evaluator.search(compile_expression(text), data)
        except JMESPathError as exc:
            raise ScannerError(f"{text}: {exc.message}") from exc
        click.echo(f"# {text}\n{_shown(text, result, unquoted=unquoted, compact=compact)}")


def _shown(text: str, result: Any, *, unquoted: bool, compact: bool) -> str:
    """A query's result as printed: JSON (NaN and infinities have none: an error), or a bare string."""
    if unquoted and isinstance(result, str):
        return result
    try:
        if compact:
            return gofmt.to_json(result)
        return json.dumps(_plain(result), indent=2, ensure_ascii=False, sort_keys=True)
    except ValueError as exc:
        raise ScannerError(f"{text}: json: {exc}") from exc


@jp.command("function")
@click.argument("names", nargs=-1)
def function(names: tuple[str, ...]) -> None:
    """List Kyverno's custom JMESPath functions (all, or those NAMES)."""
    specs = {spec.name: spec for spec in custom_specs()}
    unknown = [n for n in names if n not in specs]
    if unknown:
        raise click.UsageError(f"unknown function: {', '.join(unknown)}")
    for name in names or sorted(specs):
        spec = specs[name]
        click.echo(f"Name: {spec.name}")
        click.echo(f"  Signature: {spec.signature}")
        click.echo(f"  Note:      {spec.note}")
        click.echo("")
