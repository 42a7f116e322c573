"""``scanner jp query`` and ``scanner jp function``."""

from __future__ import annotations

import pathlib

import pytest
from click.testing import CliRunner

from scanner.cli import cli, main


def invoke(args: list[str], stdin: str | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, args, input=stdin, catch_exceptions=True)
    return result.exit_code, result.stdout, result.stderr if result.stderr_bytes else ""


@pytest.mark.parametrize(
    ("args", "stdin", "expected"),
    [
        pytest.param(["jp", "query", "to_lower(foo)"], '{"foo": "BAR"}', '# to_lower(foo)\n"bar"\n',
                     id="stdin-json"),
        pytest.param(["jp", "query", "a.b"], "a:\n  b: [1, 2.5]\n", "# a.b\n[\n  1,\n  2.5\n]\n",
                     id="stdin-yaml-indented"),
        pytest.param(["jp", "query", "-c", "a"], "a: {z: 1, x: 2}\n", '# a\n{"x":2,"z":1}\n',
                     id="compact"),
        pytest.param(["jp", "query", "-u", "name"], "name: web\n", "# name\nweb\n",
                     id="unquoted-string"),
        pytest.param(["jp", "query", "add('1Gi', '512Mi')"], "{}",
                     '# add(\'1Gi\', \'512Mi\')\n"1536Mi"\n', id="kyverno-function"),
    ],
)
def test_jp_query_prints_result(args: list[str], stdin: str, expected: str) -> None:
    code, out, _ = invoke(args, stdin)
    assert code == 0
    assert out == expected


def test_jp_query_reads_input_and_query_files(tmp_path: pathlib.Path) -> None:
    doc = tmp_path / "pod.yaml"
    doc.write_text("metadata:\n  name: a-very-long-name\n")
    query = tmp_path / "q.jmespath"
    query.write_text("metadata.name | truncate(@, `6`)\n")
    code, out, _ = invoke(["jp", "query", "-i", str(doc), "-q", str(query)])
    assert code == 0
    assert out == '# metadata.name | truncate(@, `6`)\n"a-very"\n'


@pytest.mark.parametrize(
    ("args", "stdin", "message"),
    [
        pytest.param(["jp", "query", "x.y"], "a: 1\n", 'x.y: Unknown key "x" in path',
                     id="unknown-key"),
        pytest.param(["jp", "query", "nope(@)"], "{}", "Unknown function: nope()",
                     id="unknown-function"),
        pytest.param(["jp", "query", "-i", "/nonexistent/in.yaml", "a"], None,
                     "/nonexistent/in.yaml: cannot read input", id="missing-input-file"),
        pytest.param(["jp", "query", "a"], "a: [\n", "invalid YAML", id="bad-yaml-input"),
        pytest.param(["jp", "query", "round(`2`, `400`)"], "{}", "json: unsupported value: NaN",
                     id="result-without-json-form"),
        pytest.param(["jp", "query", "lookup(`[1]`, `1e20`)"], "{}",
                     "argument #2: number is outside the range of integer numbers: 1e+20",
                     id="index-beyond-int64"),
    ],
)
def test_jp_query_errors_exit_2(
    args: list[str], stdin: str | None, message: str, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import io
    import sys

    monkeypatch.setattr(sys, "stdin", io.StringIO(stdin or ""))
    assert main(args) == 2
    assert message in capsys.readouterr().err


def test_jp_function_lists_all_custom_functions() -> None:
    code, out, _ = invoke(["jp", "function"])
    assert code == 0
    assert "Name: add\n  Signature: add(any, any) any\n" in out
    assert "Name: truncate\n  Signature: truncate(string, number) string\n" in out
    assert out.count("Name: ") == 51


def test_jp_function_shows_one_and_rejects_unknown() -> None:
    code, out, _ = invoke(["jp", "function", "compare"])
    assert code == 0
    assert out == ("Name: compare\n  Signature: compare(string, string) number\n"
                   "  Note:      compares two strings lexicographically\n\n")
    code, _, _ = invoke(["jp", "function", "nope"])
    assert code == 2
