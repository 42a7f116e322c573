"""A scan with ``reports.keep`` and ``reports.findings_only``: the folder keeps the newest runs'
report files (and every file the scanner did not write); the policy report lists findings only."""

from __future__ import annotations

import yaml

from scanner.cli import main

from .conftest import Project, pod


def test_scans_keep_the_newest_runs_reports_and_list_findings_only(project: Project) -> None:
    project.commit({"apps/a.yaml": pod("a", "x"), "apps/b.yaml": pod("b", None)})
    config = project.config()
    config.write_text(config.read_text().replace(
        "reports: {out: reports, formats: [html, json]}",
        "reports: {out: reports, formats: [json, policy-report, junit], keep: 2, findings_only: true}"))
    reports = project.base / "reports"
    reports.mkdir()
    (reports / "notes.txt").write_text("mine")
    (reports / "scanner-run-1.pdf").write_text("mine too")
    for _ in range(3):
        assert main(["scan", "--config", str(config), "-q"]) == 1
    suffixes = (".json", ".policyreport.yaml", ".junit.xml")
    assert sorted(p.name for p in reports.iterdir()) == sorted(
        ["notes.txt", "scanner-run-1.pdf"] + [f"scanner-run-{run}{s}" for run in (2, 3) for s in suffixes])
    (document,) = yaml.safe_load_all((reports / "scanner-run-3.policyreport.yaml").read_text())
    assert [(r["resources"][0]["name"], r["result"]) for r in document["results"]] == [("b", "fail")]
    assert document["summary"] == {"pass": 0, "fail": 1, "warn": 0, "error": 0, "skip": 0}
