"""Report data read from the store: the findings-only reading agrees with reading every result."""

from __future__ import annotations

import pytest

from scanner.cli import main
from scanner.config import load_config
from scanner.errors import ReportError
from scanner.report.data import FINDING_STATUSES
from scanner.report.render import render_report
from scanner.scan import forked
from scanner.scan.report_data import build_report_data
from scanner.store.store import Store

from .conftest import Project, pod

start = forked.start

NAMESPACE_POLICY = """\
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: namespace-owner
  annotations: {policies.kyverno.io/severity: medium}
spec:
  validationFailureAction: Audit
  rules:
  - name: owner
    match: {any: [{resources: {kinds: [Namespace]}}]}
    validate:
      message: owner label required
      pattern: {metadata: {labels: {owner: "?*"}}}
"""


def namespace(name: str, owner: str | None) -> str:
    labels = f"{{owner: {owner}}}" if owner else "{}"
    return f"apiVersion: v1\nkind: Namespace\nmetadata: {{name: {name}, labels: {labels}}}\n"


def test_build_report_data_findings_only_agrees_with_every_result(project: Project, capsys, tmp_path) -> None:
    (project.base / "policies" / "namespace-owner.yaml").write_text(NAMESPACE_POLICY)
    project.commit({"apps/a.yaml": pod("a", "x"), "apps/b.yaml": pod("b", None),
                    "apps/c.yaml": pod("c", None) + "---\n" + pod("d", "y"),
                    "ns.yaml": namespace("apps", None) + "---\n" + namespace("web", "me"),
                    # no policy matches it: observed, but no resource of the counts
                    "apps/settings.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: s, namespace: apps}\n"})
    export = tmp_path / "export.yaml"
    export.write_text("apiVersion: v1\nkind: List\nitems:\n"
                      "- {apiVersion: v1, kind: Pod, metadata: {name: e, namespace: web}, spec: {containers: []}}\n"
                      "- {apiVersion: v1, kind: Pod, metadata: {name: f, namespace: web, labels: {team: t}}}\n")
    config = project.config(extra_sources=f"- name: cluster\n  export: {{path: {export}}}")
    assert main(["scan", "--config", str(config), "-q"]) == 1
    project.commit({"apps/b.yaml": pod("b", "fixed")}, "fix b")
    assert main(["scan", "--config", str(config), "-q"]) == 1
    capsys.readouterr()
    store = Store(load_config(str(config)).database_url)
    try:
        run_id = store.latest_run_id(None)
        full = build_report_data(store, run_id)
        lean = build_report_data(store, run_id, findings_only=True)
    finally:
        store.close()
    assert lean.findings_only and not full.findings_only
    assert lean.summary == full.summary and lean.summary.by_status["fail"] == 3
    assert lean.by_namespace == full.by_namespace and lean.by_source == full.by_source
    assert {g.key for g in lean.by_namespace} == {"apps", "web", "(cluster)"}
    assert lean.failures_by_policy == full.failures_by_policy
    assert lean.results == tuple(r for r in full.results if r.status in FINDING_STATUSES)
    assert (lean.new_findings, lean.resolved_findings) == (full.new_findings, full.resolved_findings)
    assert [c.name for c in lean.resolved_findings] == ["b"]
    for fmt in ("html", "json", "sarif"):
        assert render_report(lean, fmt, tmp_path / "lean").read_text() == \
            render_report(full, fmt, tmp_path / "full").read_text()
    with pytest.raises(ReportError, match="junit report lists every result"):
        render_report(lean, "junit", tmp_path / "lean")


def test_report_lists_the_exceptions_that_skipped_results(project: Project, capsys) -> None:
    project.commit({"apps/a.yaml": pod("a", None), "apps/b.yaml": pod("b", None), "apps/c.yaml": pod("c", None)})
    (project.base / "exception.yaml").write_text(
        "apiVersion: kyverno.io/v2\nkind: PolicyException\nmetadata: {name: legacy, namespace: kyverno}\n"
        "spec:\n  exceptions: [{policyName: require-team, ruleNames: [team]}]\n"
        "  match: {any: [{resources: {kinds: [Pod], names: [a, b]}}]}\n")
    config = project.config(extra="exceptions: [exception.yaml]")
    assert main(["scan", "--config", str(config), "-q"]) == 1  # c still fails
    capsys.readouterr()
    with Store(load_config(str(config)).database_url) as store:
        run_id = store.latest_run_id(None)
        for findings_only in (False, True):
            data = build_report_data(store, run_id, findings_only=findings_only)
            assert [(x.namespace, x.name, x.policy, x.rule, x.resources) for x in data.exceptions] == [
                ("kyverno", "legacy", "require-team", "team", 2)]
        every = build_report_data(store, run_id)
    skipped = sorted((r.resource.name, r.exception) for r in every.results if r.status.value == "skip")
    assert skipped == [("a", "kyverno/legacy"), ("b", "kyverno/legacy")]


def test_report_policies_name_the_rules_that_gave_results(project: Project, capsys) -> None:
    project.commit({"apps/a.yaml": pod("a", None)})
    (project.base / "policies" / "namespace-owner.yaml").write_text(NAMESPACE_POLICY)  # no Namespace scanned
    config = project.config()
    main(["scan", "--config", str(config), "-q"])
    capsys.readouterr()
    with Store(load_config(str(config)).database_url) as store:
        run_id = store.latest_run_id(None)
        for findings_only in (False, True):
            rules = {p.name: p.rules for p in build_report_data(store, run_id, findings_only=findings_only).policies}
            assert rules == {"require-team": ("team",), "namespace-owner": ()}


@pytest.mark.parametrize("threads", [1, 2], ids=["finished-in-a-forked-process", "finished-in-process"])
def test_scan_reports_equal_the_reports_of_the_stored_run(project: Project, capsys, tmp_path,
                                                          monkeypatch: pytest.MonkeyPatch, threads: int) -> None:
    """The scan reads its reports' data while the run finishes (in a forked process where no other
    thread runs): what it writes is what ``scanner report`` renders of the stored run later."""
    monkeypatch.setattr(forked.threading, "active_count", lambda: threads)
    started = []
    monkeypatch.setattr(forked, "start", lambda call, lost: started.append(call) or start(call, lost))
    project.commit({"apps/a.yaml": pod("a", "x"), "apps/b.yaml": pod("b", None), "apps/c.yaml": pod("c", None)})
    config = project.config()
    assert main(["scan", "--config", str(config), "-q"]) == 1
    project.commit({"apps/b.yaml": pod("b", "fixed"), "apps/d.yaml": pod("d", None)}, "fix b, add d")
    assert main(["scan", "--config", str(config), "-q"]) == 1
    assert "findings:  1 new, 1 resolved" in capsys.readouterr().out
    # finishing each run, then rendering the json report beside the html one
    assert len(started) == (4 if threads == 1 else 0)
    with Store(load_config(str(config)).database_url) as store:
        run_id = store.latest_run_id(None)
        data = build_report_data(store, run_id, findings_only=True)
    assert [c.name for c in data.new_findings] == ["d"] and [c.name for c in data.resolved_findings] == ["b"]
    assert [t.run_id for t in data.trend] == [run_id - 1, run_id]
    for fmt, suffix in (("html", ".html"), ("json", ".json")):
        written = project.base / "reports" / f"scanner-run-{run_id}{suffix}"
        assert written.read_text() == render_report(data, fmt, tmp_path).read_text()
