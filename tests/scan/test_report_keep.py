"""A scan with ``reports.keep``, ``reports.keep_days`` and ``reports.findings_only``: the folder
keeps the newest runs' report files and those written in the last days (and every file the
scanner did not write); the policy report lists findings only."""

from __future__ import annotations

import os
import time

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


def test_scans_remove_the_reports_written_more_than_keep_days_ago(project: Project) -> None:
    project.commit({"apps/a.yaml": pod("a", "x")})
    config = project.config()
    config.write_text(config.read_text().replace(
        "reports: {out: reports, formats: [html, json]}", "reports: {out: reports, formats: [json], keep_days: 30}"))
    reports = project.base / "reports"
    reports.mkdir()
    now = time.time()
    for name, days in (("scanner-run-50.json", 31), ("scanner-run-50.html", 400), ("scanner-run-40.json", 29),
                       ("notes.txt", 400)):
        (reports / name).write_text(name)
        os.utime(reports / name, (now - days * 86_400, now - days * 86_400))
    assert main(["scan", "--config", str(config), "-q"]) == 0
    assert sorted(p.name for p in reports.iterdir()) == ["notes.txt", "scanner-run-1.json", "scanner-run-40.json"]
