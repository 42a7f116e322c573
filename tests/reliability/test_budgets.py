"""Hostile policies against a real scan (issue items 1 and 10): a backtracking regular
expression, a string that doubles, a list that explodes and a loop that runs for long each
end in bounded time, as the regex's true answer or as an ``error`` result naming the limit,
and every other result of the scan is kept."""

from __future__ import annotations

import pathlib
import textwrap
import time

import pytest

from scanner.cli import main
from scanner.store.store import Store

pytestmark = pytest.mark.reliability

MATCH = "match: {any: [{resources: {kinds: [ConfigMap]}}]}"


def _policy(name: str, validate: str) -> str:
    return textwrap.dedent(f"""\
        apiVersion: kyverno.io/v1
        kind: ClusterPolicy
        metadata: {{name: {name}}}
        spec:
          validationFailureAction: Audit
          background: true
          rules:
          - name: {name}
            {MATCH}
            validate:
        """) + textwrap.indent(textwrap.dedent(validate), " " * 6)


POLICIES = {
    # item 1: exponential in a backtracking engine, linear in RE2
    "backtracking-regex": """\
        message: text is all a
        deny:
          conditions:
            any:
            - key: "{{ regex_match('^(a|a)*$', request.object.data.text) }}"
              operator: Equals
              value: true
        """,
    "polynomial-regex": """\
        message: text has a b after many a
        deny:
          conditions:
            any:
            - key: "{{ regex_match('a*a*a*a*a*a*b', request.object.data.text) }}"
              operator: Equals
              value: true
        """,
    # item 10: a string that grows 30,000 times per call
    "replace-bomb": """\
        message: never
        deny:
          conditions:
            any:
            - key: "{{ replace_all(replace_all(request.object.data.text, 'a', request.object.data.text), 'a', request.object.data.text) | length(@) }}"
              operator: Equals
              value: 0
        """,
    # item 10: a foreach over 10^7 elements
    "foreach-bomb": """\
        foreach:
        - list: "split(request.object.data.short, '') | HUNDREDFOLD | HUNDREDFOLD"
          deny:
            conditions:
              any:
              - key: "{{ element }}"
                operator: Equals
                value: b
        """,
    # item 10: a loop within the list limit that would run for minutes
    "long-loop": """\
        foreach:
        - list: "split(request.object.data.text, '') | [@,@,@,@,@,@,@,@,@,@][]"
          deny:
            conditions:
              any:
              - key: "{{ element }}"
                operator: Equals
                value: b
        """,
    "require-team": """\
        message: team label required
        pattern: {metadata: {labels: {team: "?*"}}}
        """,
}


HUNDREDFOLD = "[" + ",".join(["@"] * 100) + "][]"  # a list 100 times as long


def _config_map(name: str, text: str, team: str | None) -> str:
    labels = f"{{team: {team}}}" if team else "{}"
    return (f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: {name}, namespace: apps, labels: {labels}}}\n"
            f"data: {{text: '{text}', short: '{'a' * 1000}'}}\n")


def test_hostile_policies_end_in_bounded_error_results_and_the_scan_goes_on(
        tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "policies").mkdir()
    for name, validate in POLICIES.items():
        text = _policy(name, validate).replace("HUNDREDFOLD", HUNDREDFOLD)
        (tmp_path / "policies" / f"{name}.yaml").write_text(text)
    manifests = tmp_path / "manifests"
    manifests.mkdir()
    (manifests / "all-a.yaml").write_text(_config_map("all-a", "a" * 30_000, "x"))
    (manifests / "almost-a.yaml").write_text(_config_map("almost-a", "a" * 30_000 + "!", None))
    db = tmp_path / "scan.db"
    config = tmp_path / "scanner.yaml"
    config.write_text(
        f'database: {{url: "sqlite:///{db}"}}\n'
        "policies: [{path: policies}]\n"
        "sources: [{name: hostile, directory: {path: manifests}}]\n"
        "reports: {out: reports, formats: [json]}\n"
        "scan: {cache_dir: cache, fail_on: never}\n")
    start = time.monotonic()
    code = main(["scan", "--config", str(config), "-q"])
    took = time.monotonic() - start
    capsys.readouterr()
    assert code == 0
    assert took < 120, f"the scan took {took:.0f}s"
    store = Store(f"sqlite:///{db}")
    try:
        [run] = store.list_runs(limit=5)
        assert str(run.status) == "succeeded"
        results = {(r.rule, r.resource.name): (str(r.status), r.message)
                   for r in store.iter_run_results(run.run_id)}
    finally:
        store.close()
    statuses = {key: status for key, (status, _) in results.items()}
    assert statuses == {
        ("backtracking-regex", "all-a"): "fail", ("backtracking-regex", "almost-a"): "pass",
        ("polynomial-regex", "all-a"): "pass", ("polynomial-regex", "almost-a"): "pass",
        ("replace-bomb", "all-a"): "error", ("replace-bomb", "almost-a"): "error",
        ("foreach-bomb", "all-a"): "error", ("foreach-bomb", "almost-a"): "error",
        ("long-loop", "all-a"): "error", ("long-loop", "almost-a"): "error",
        ("require-team", "all-a"): "pass", ("require-team", "almost-a"): "fail",
    }
    limits = {"replace-bomb": ("replace_all() would build a string of",),
              "foreach-bomb": ("a flatten has 10,000,000 items (limit 1,000,000)",),
              # whichever comes first on a busy machine
              "long-loop": ("more than 2,000,000 evaluation steps in one rule", "took longer than 10s")}
    for (rule, _), (status, message) in results.items():
        if status == "error":
            assert message.startswith("limit exceeded: ") and any(m in message for m in limits[rule]), message
