"""The numbers of a run agree: what ``scanner scan`` prints, what ``scanner runs list/show`` show
and what the JSON and HTML reports say (resources, documents, findings, duration)."""

from __future__ import annotations

import json
import re

import pytest

from scanner.cli import main

from .conftest import POLICY, Project, pod


def numbers(project: Project, capsys: pytest.CaptureFixture[str], run_id: int) -> dict[str, object]:
    out = capsys.readouterr().out
    summary = dict(re.findall(r"^  (\w+): +(.*)$", out, re.M))
    duration = re.search(r"^run \d+: \w+ in ([\d.]+)s", out, re.M).group(1)  # type: ignore[union-attr]
    db = ["--database", f"sqlite:///{project.db}"]
    assert main(["runs", "show", str(run_id), *db]) == 0
    shown = capsys.readouterr().out
    assert main(["runs", "list", *db, "--output", "json"]) == 0
    listed = {r["run_id"]: r for r in json.loads(capsys.readouterr().out)}[run_id]
    report = json.loads((project.base / "reports" / f"scanner-run-{run_id}.json").read_text())
    html = (project.base / "reports" / f"scanner-run-{run_id}.html").read_text()
    return {"summary": summary, "duration": duration, "shown": shown, "listed": listed, "report": report,
            "html": html}


@pytest.mark.parametrize("copies", [
    pytest.param({}, id="one-file-per-object"),
    pytest.param({"overlays/b.yaml": pod("b", None)}, id="one-object-in-two-files"),
])
def test_scan_numbers_agree_in_summary_runs_and_reports(project: Project, capsys, copies: dict[str, str]) -> None:
    project.commit({"apps/a.yaml": pod("a", "x"), "apps/b.yaml": pod("b", None), "apps/c.yaml": pod("c", None),
                    **copies})
    documents = 3 + len(copies)
    assert main(["scan", "--config", str(project.config(fail_on="never")), "-q"]) == 0
    first = numbers(project, capsys, 1)
    failing = 2 + len(copies)
    assert first["summary"]["resources"] == f"3 distinct ({documents} documents read, {documents} with results)"
    assert first["summary"]["findings"] == f"{failing}, no previous run to compare"
    assert f"{failing} findings, no previous run to compare." in first["html"]
    assert f"resources 3 distinct ({documents} documents read)" in first["shown"]
    assert first["listed"]["resources"] == first["report"]["run"]["resources"] == 3
    assert first["report"]["run"]["documents"] == documents
    assert first["report"]["summary"]["resources"] == documents  # the documents with results
    assert first["report"]["summary"]["findings"] == failing and first["report"]["changes"]["previous_run_id"] is None
    # the duration: the stored run's everywhere
    assert f"duration {first['duration']}s" in first["shown"]
    assert f"{first['listed']['duration_seconds']:.1f}" == first["duration"]
    assert f"{first['report']['run']['duration_seconds']:.1f}" == first["duration"]

    project.commit({"apps/b.yaml": pod("b", "fixed"), "apps/d.yaml": pod("d", None)}, "fix b, add d")
    assert main(["scan", "--config", str(project.config(fail_on="never")), "-q"]) == 0
    second = numbers(project, capsys, 2)
    report = second["report"]
    new, resolved = len(report["changes"]["new"]), len(report["changes"]["resolved"])
    assert (new, resolved) == (1, 0 if copies else 1)  # b fails on in its other file
    assert second["summary"]["findings"] == f"{new} new, {resolved} resolved since run 1"
    assert second["listed"]["resources"] == report["run"]["resources"] == 4


def test_scan_severity_is_lower_cased_in_reports(project: Project, capsys) -> None:
    (project.base / "policies" / "require-team.yaml").write_text(
        POLICY.replace("policies.kyverno.io/severity: high", "policies.kyverno.io/severity: High"))
    project.commit({"apps/a.yaml": pod("a", None)})
    assert main(["scan", "--config", str(project.config(fail_on="never")), "-q"]) == 0
    capsys.readouterr()
    report = json.loads((project.base / "reports" / "scanner-run-1.json").read_text())
    assert report["summary"]["failures_by_severity"]["high"] == 1
    assert [g["severity"] for g in report["failures_by_policy"]] == ["high"]
    assert main(["runs", "show", "1", "--database", f"sqlite:///{project.db}", "--output", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["by_severity"] == {"high": {"pass": 0, "fail": 1, "warn": 0,
                                                                          "error": 0, "skip": 0}}
