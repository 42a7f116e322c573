"""``scanner scan`` end to end: real Git repositories, the SQLite store, reports, exit codes."""

from __future__ import annotations

import json
import os
import pathlib
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from scanner.cli import main
from scanner.store.store import Store

from .conftest import Project, git, pod


def scan(capsys: pytest.CaptureFixture[str], config: pathlib.Path, *args: str) -> tuple[int, str]:
    code = main(["scan", "--config", str(config), "-q", *args])
    return code, capsys.readouterr().out


def test_scan_stores_results_and_tracks_findings_across_runs(project: Project, capsys) -> None:
    project.commit({"apps/a.yaml": pod("a", "x"), "apps/b.yaml": pod("b", None)})
    config = project.config()
    code, out = scan(capsys, config)
    assert code == 1  # an Enforce-mode failure
    assert "resources: 2 distinct" in out and "pass 1, fail 1" in out and "findings:  1, no previous run" in out
    code, out = scan(capsys, config)
    assert "0 new, 0 resolved since run 1" in out
    project.commit({"apps/b.yaml": pod("b", "y")}, "fix b")
    code, out = scan(capsys, config)
    assert code == 0 and "0 new, 1 resolved" in out
    store = Store(f"sqlite:///{project.db}")
    try:
        runs = store.list_runs(limit=10)
        assert [str(r.status) for r in runs] == ["succeeded"] * 3
        detail = store.get_run(runs[0].run_id)
        [source] = detail.sources
        assert source.name == "gitops" and len(source.commit_sha) == 40
        results = {(r.resource.name, r.rule): (str(r.status), r.file, r.line)
                   for r in store.iter_run_results(runs[-1].run_id)}
        assert results == {("a", "team"): ("pass", "apps/a.yaml", 1), ("b", "team"): ("fail", "apps/b.yaml", 1)}
    finally:
        store.close()
    reports = sorted(p.name for p in (project.base / "reports").iterdir())
    assert "scanner-run-3.html" in reports and "scanner-run-3.json" in reports
    doc = json.loads((project.base / "reports" / "scanner-run-3.json").read_text())
    assert doc["run"]["id"] == 3


def test_scan_failed_source_exits_3_and_other_sources_still_scan(project: Project, capsys) -> None:
    project.commit({"apps/a.yaml": pod("a", "x")})
    config = project.config(extra_sources="- name: broken\n  git: {url: does-not-exist, ref: main}")
    code = main(["scan", "--config", str(config), "-q"])
    out, err = capsys.readouterr()
    assert code == 3
    assert "resources: 1 distinct" in out and "failed sources: broken" in out
    missing = project.base / "does-not-exist"  # a relative path is the config file's
    assert err == f"error: source broken: clone/fetch failed for {missing}: fatal: repository '{missing}' does not exist\n"


def test_scan_missing_source_paths_fail_their_sources(project: Project, capsys) -> None:
    project.commit({"apps/a.yaml": pod("a", "x")})
    (project.base / "exports").mkdir()
    (project.base / "exports" / "live.yaml").write_text(pod("live", "x"))
    config = project.config(extra_sources="""\
        - name: mounted
          directory: {path: no-such-folder}
        - name: cluster
          export: {paths: [exports/live.yaml, exports/gone.yaml]}
        """)
    code = main(["scan", "--config", str(config), "-q"])
    out, err = capsys.readouterr()
    assert code == 3
    assert "resources: 2 distinct" in out and "failed sources: mounted, cluster" in out
    assert err.splitlines() == [f"error: source mounted: source path not found: {project.base / 'no-such-folder'}",
                                f"error: source cluster: source path not found: {project.base / 'exports' / 'gone.yaml'}"]
    with Store(f"sqlite:///{project.db}") as store:
        errors = {(e.source, e.message) for e in store.run_errors(store.list_runs(limit=1)[0].run_id)}
    assert errors == {("mounted", f"source path not found: {project.base / 'no-such-folder'}"),
                      ("cluster", f"source path not found: {project.base / 'exports' / 'gone.yaml'}")}


def test_scan_without_policies_names_where_it_looked(project: Project, capsys) -> None:
    project.commit({"apps/a.yaml": pod("a", "x")})
    (project.base / "policies" / "require-team.yaml").unlink()
    (project.base / "policies" / "notes.yaml").write_text("kind: ConfigMap\n")
    code = main(["scan", "--config", str(project.config())])
    assert code == 2
    assert f"error: no policies found in {project.base / 'policies'}: a policy is" in capsys.readouterr().err


def test_scan_unwritable_reports_folder_is_an_error_after_the_run_is_stored(project: Project, capsys) -> None:
    project.commit({"apps/a.yaml": pod("a", "x")})
    (project.base / "reports").write_text("a file where the reports folder should be")
    code = main(["scan", "--config", str(project.config())])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert (f"error: run 1 is stored, but its reports were not written: {project.base / 'reports'}: cannot "
            "create the reports folder: File exists; render them later with `scanner report --run 1`") in err
    with Store(f"sqlite:///{project.db}") as store:
        assert [str(r.status) for r in store.list_runs()] == ["succeeded"]


def test_scan_bad_values_and_exception_files_are_located(project: Project, capsys) -> None:
    project.commit({"apps/a.yaml": pod("a", "x")})
    (project.base / "values.yaml").write_text("policies:\n- name: p\n  rules: r\n")
    (project.base / "exception.yaml").write_text(
        "apiVersion: kyverno.io/v2\nkind: PolicyException\nmetadata: {name: e}\nspec:\n  exceptions: [{ruleNames: [r]}]\n"
        "  match: {any: [{resources: {kinds: [Pod]}}]}\n")
    code = main(["scan", "--config", str(project.config(extra="values: values.yaml"))])
    assert code == 2
    assert (f"error: {project.base / 'values.yaml'}:3:10: values file: policies[0].rules must be a list"
            in capsys.readouterr().err)
    code = main(["scan", "--config", str(project.config(extra="exceptions: [exception.yaml]"))])
    assert code == 2
    assert (f"error: 1 invalid policy exception:\n  {project.base / 'exception.yaml'}:5:16 "
            "(/spec/exceptions/0/policyName): invalid PolicyException e: An exception requires a policy name"
            ) in capsys.readouterr().err
    assert not project.db.exists()


def test_scan_names_what_it_skipped_and_sources_without_resources(project: Project, capsys) -> None:
    project.commit({"apps/a.yaml": pod("a", "x"), "apps/values.yaml": "replicas: 3\n",
                    "apps/settings.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: s}\n"})
    (project.base / "workflows").mkdir()
    (project.base / "workflows" / "ci.yaml").write_text("on: push\njobs: {}\n")
    config = project.config(extra_sources="- name: ci\n  directory: {path: workflows}")
    code = main(["scan", "--config", str(config)])
    out, err = capsys.readouterr()
    assert code == 0
    assert "  skipped:   gitops: 1 not-kubernetes\n  skipped:   ci: 1 not-kubernetes\n" in out
    assert "  resources: 2 distinct (2 documents read, 1 with results)\n" in out  # no policy matches the ConfigMap
    assert "warning: source ci: no Kubernetes resources found; check its path and include/exclude" in err
    assert "warning: source gitops" not in err


def test_scan_counts_submodules_it_does_not_check_out(project: Project, capsys, tmp_path: pathlib.Path) -> None:
    vendor = tmp_path / "vendor"
    vendor.mkdir()
    git(vendor, "init", "-q", "-b", "main")
    (vendor / "pod.yaml").write_text(pod("v", None))
    git(vendor, "add", "-A")
    git(vendor, "commit", "-q", "-m", "vendor")
    git(project.repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(vendor), "vendor")
    project.commit({"apps/a.yaml": pod("a", "x")})
    code, out = scan(capsys, project.config())
    assert code == 0 and "  resources: 1 distinct (1 documents read, 1 with results)\n" in out
    assert "  skipped:   gitops: 1 submodule\n" in out


def test_scan_broken_manifest_is_recorded_and_the_rest_scanned(project: Project, capsys) -> None:
    project.commit({"apps/a.yaml": pod("a", None), "apps/broken.yaml": "kind: Pod\nmetadata: {name: [\n"})
    code, out = scan(capsys, project.config(fail_on="never"))
    assert code == 0 and "resources: 1 distinct" in out and "errors:    1" in out
    for fail_on in ("enforce", "fail", "error"):  # a broken manifest fails every CI gate
        assert scan(capsys, project.config(fail_on=fail_on))[0] == 1
    store = Store(f"sqlite:///{project.db}")
    try:
        [error] = store.run_errors(store.latest_run_id())
        assert (error.path, error.line) == ("apps/broken.yaml", 3)
    finally:
        store.close()


def test_scan_object_with_ill_typed_metadata_is_recorded_and_the_rest_scanned(project: Project, capsys) -> None:
    bad = "apiVersion: v1\nkind: Pod\nmetadata: {name: b, namespace: {team: x}}\nspec: {}\n"
    project.commit({"apps/a.yaml": pod("a", None) + "---\n" + bad})
    code, out = scan(capsys, project.config(fail_on="never"))
    assert code == 0 and "resources: 1 distinct" in out and "errors:    1" in out
    store = Store(f"sqlite:///{project.db}")
    try:
        [error] = store.run_errors(store.latest_run_id())
        assert (error.path, error.line, error.message) == (
            "apps/a.yaml", 6, "metadata.namespace must be a string, not a mapping")
    finally:
        store.close()


def test_scan_killed_mid_run_is_marked_interrupted_by_the_next(project: Project, tmp_path: pathlib.Path) -> None:
    many = "---\n".join(pod(f"p{i}", None) for i in range(4000))
    project.commit({"apps/many.yaml": many})
    config = project.config()
    proc = subprocess.Popen([sys.executable, "-m", "scanner.cli", "scan", "--config", str(config), "-q", "-j", "1"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if project.db.exists():
            try:
                store = Store(f"sqlite:///{project.db}", check_schema=False)
                running = [r for r in store.list_runs(limit=5) if str(r.status) == "running"]
                store.close()
            except Exception:
                running = []
            if running:
                break
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    store = Store(f"sqlite:///{project.db}")  # opening marks the dead run interrupted
    try:
        runs = store.list_runs(limit=5)
        assert [str(r.status) for r in runs] == ["interrupted"]
        assert store.latest_run_id() is None  # an interrupted run never counts as a finished scan
    finally:
        store.close()


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_scan_export_source_honours_include_and_exclude(project: Project, capsys, jobs: str) -> None:
    from scanner.config import load_config
    from scanner.scan.plan import build_source

    project.commit({"apps/a.yaml": pod("a", "x")})
    exports = project.base / "exports"
    (exports / "dump" / "sub").mkdir(parents=True)
    (exports / "dump" / "kept.yaml").write_text(pod("kept", "x"))
    (exports / "dump" / "sub" / "skipme.yaml").write_text(pod("skipme", "x"))
    (exports / "one.yaml").write_text(pod("one", "x"))
    (exports / "two.yaml").write_text(pod("two", "x"))
    config = project.config(extra_sources="""\
        - name: cluster
          export: {paths: [exports/dump, exports/one.yaml, exports/two.yaml]}
          exclude: ["**/skipme.yaml", "./two.yaml"]
        """)
    code, out = scan(capsys, config, "-j", jobs)
    assert code == 0 and "resources: 3 distinct" in out
    with Store(f"sqlite:///{project.db}") as store:
        files = {(r.resource.source, r.file) for r in store.iter_run_results(store.latest_run_id())}
    assert files == {("gitops", "apps/a.yaml"), ("cluster", "dump/kept.yaml"), ("cluster", "one.yaml")}
    loaded = load_config(str(config))
    [cfg] = [s for s in loaded.sources if s.name == "cluster"]
    items = build_source(cfg, loaded).iter_items()  # as read for cluster look-ups
    assert sorted(item.provenance.path for item in items) == ["dump/kept.yaml", "one.yaml"]


@pytest.mark.parametrize(("path", "error"), [
    pytest.param("/rules", None, id="leading-slash-is-inside-the-clone"),
    pytest.param("rules", None, id="relative"),
    pytest.param("../..", "path '../..' leaves the repository", id="escaping"),
    pytest.param("nope", "path 'nope' is not in the repository at ", id="missing"),
])
def test_scan_policies_from_a_git_folder(project: Project, capsys, path: str, error: str | None) -> None:
    project.commit({"rules/require-team.yaml": (project.base / "policies" / "require-team.yaml").read_text(),
                    "apps/a.yaml": pod("a", None)})
    config = project.config()
    config.write_text(config.read_text().replace("policies: [{path: policies}]",
                                                 f"policies: [{{git: {{url: repo, path: '{path}'}}}}]"))
    code = main(["scan", "--config", str(config), "-q"])
    out, err = capsys.readouterr()
    if error is None:
        assert code == 1 and "results:   pass 0, fail 1" in out
    else:
        assert code == 2 and error in err


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_scan_workers_end_when_the_scan_is_killed(project: Project) -> None:
    project.commit({"apps/many.yaml": "---\n".join(pod(f"p{i}", None) for i in range(6000))})
    config = project.config()
    proc = subprocess.Popen([sys.executable, "-m", "scanner.cli", "scan", "--config", str(config), "-q", "-j", "2"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    children = pathlib.Path(f"/proc/{proc.pid}/task/{proc.pid}/children")
    deadline = time.monotonic() + 60
    workers: list[int] = []
    while time.monotonic() < deadline and len(workers) < 2:  # forked first thing
        workers = [int(p) for p in children.read_text().split() if _alive(int(p))] if children.exists() else []
        time.sleep(0.01)
    time.sleep(0.5)  # into the reading and evaluating
    assert len(workers) >= 2 and proc.poll() is None
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and any(_alive(p) for p in workers):
        time.sleep(0.1)
    assert not any(_alive(p) for p in workers)


def test_scan_whose_every_source_failed_is_a_failed_run(project: Project, capsys) -> None:
    config = project.config()
    config.write_text(config.read_text().replace("    git: {url: repo, ref: main}", "    git: {url: no-such-repo}"))
    code, out = scan(capsys, config)
    assert code == 3 and out.startswith("run 1: failed in ")
    with Store(f"sqlite:///{project.db}") as store:
        assert store.latest_run_id() is None  # never the latest finished scan


def test_scan_records_policies_of_kinds_not_supported_as_errors(project: Project, capsys) -> None:
    """A ValidatingPolicy next to the ClusterPolicies is not evaluated: the run says so, located."""
    project.commit({"apps/a.yaml": pod("a", "x")})
    (project.base / "policies" / "vpol.yaml").write_text(
        "apiVersion: policies.kyverno.io/v1\nkind: ValidatingPolicy\nmetadata: {name: vpol}\n"
        "spec: {validations: [{expression: 'true'}]}\n")
    code = main(["scan", "--config", str(project.config(fail_on="never")), "-q"])
    out, err = capsys.readouterr()
    assert code == 0 and "errors:    1" in out
    where = project.base / "policies" / "vpol.yaml"
    assert (f"error: {where}:1:1: not supported: ValidatingPolicy 'vpol' (policies.kyverno.io/v1) is not "
            "evaluated; only kyverno.io ClusterPolicy and Policy documents are") in err
    assert main(["scan", "--config", str(project.config(fail_on="enforce")), "-q"]) == 1  # a CI gate sees it
    capsys.readouterr()
    with Store(f"sqlite:///{project.db}") as store:
        [error] = store.run_errors(store.latest_run_id())
        assert (error.kind, error.path, error.line) == ("unsupported", str(where), 1)
        assert error.message.startswith("not supported: ValidatingPolicy 'vpol'")
    (project.base / "policies" / "require-team.yaml").unlink()
    assert main(["scan", "--config", str(project.config())]) == 2
    assert "no policies found in" in capsys.readouterr().err


def test_scan_without_policies_names_the_kinds_it_found_but_does_not_support(project: Project, capsys) -> None:
    project.commit({"apps/a.yaml": pod("a", "x")})
    (project.base / "policies" / "require-team.yaml").write_text(
        "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\nmetadata: {name: vap}\n")
    assert main(["scan", "--config", str(project.config())]) == 2
    assert " (found only kinds not supported: ValidatingAdmissionPolicy): a policy is" in capsys.readouterr().err


def test_source_whose_every_shard_fails_the_same_way_is_one_error(project: Project, capsys) -> None:
    """A commit with a symbolic link is read from a checkout; with a blob missing from the
    repository every shard's checkout fails alike: the source failed once, for that reason."""
    project.commit({f"apps/p{i}.yaml": pod(f"p{i}", "x") for i in range(8)} | {"docs/big.bin": "payload"})
    (project.repo / "apps" / "link.yaml").symlink_to("p0.yaml")
    git(project.repo, "add", "-A")
    git(project.repo, "commit", "-q", "-m", "link")
    blob = subprocess.run(["git", "-C", str(project.repo), "rev-parse", "HEAD:docs/big.bin"],
                          capture_output=True, text=True, check=True).stdout.strip()
    (project.repo / ".git" / "objects" / blob[:2] / blob[2:]).unlink()
    code = main(["scan", "--config", str(project.config()), "-q", "--jobs", "2"])
    out, err = capsys.readouterr()
    assert code == 3 and "errors:    1 (failed sources: gitops)" in out
    (message,) = err.splitlines()
    assert message.startswith("error: source gitops: source failed: GitError: ") and "checkout failed" in message
    assert message.count("checkout failed") == 1
    with sqlite3.connect(project.db) as db:
        assert db.execute("SELECT COUNT(*) FROM scan_errors WHERE kind = 'source'").fetchone() == (1,)
