"""`scanner db` and `scanner runs` through the command line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scanner.cli import main
from scanner.engine.types import RuleStatus
from scanner.store import Store
from scanner.store.schema import head_revision
from tests.store.conftest import day
from tests.store.scan_helpers import pod, scan


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_commands_db_upgrade_current_downgrade(database_url: str,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    if database_url.startswith("sqlite:///"):
        Path(database_url.removeprefix("sqlite:///")).touch()  # an empty SQLite database
    shown = Store(database_url, check_schema=False).describe()
    head = head_revision()
    assert _run(capsys, "db", "current", "--database", database_url)[1] == (
        f"{shown}: revision none, head {head}: empty: run `scanner db upgrade`\n")
    assert _run(capsys, "db", "upgrade", "0001", "--database", database_url)[1] == (
        f"{shown}: at revision 0001 (head {head})\n")
    code, _, err = _run(capsys, "runs", "list", "--database", database_url)
    assert code == 2 and "run `scanner db upgrade" in err
    assert _run(capsys, "db", "upgrade", "--database", database_url)[1] == (
        f"{shown}: at revision {head} (head {head})\n")
    assert "up to date" in _run(capsys, "db", "current", "--database", database_url)[1]
    assert _run(capsys, "db", "downgrade", "base", "--database", database_url)[1] == (
        f"{shown}: at revision base (head {head})\n")


def test_commands_runs_list_and_show(store: Store, database_url: str,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    first = scan(store, day(0), {pod("web"): {("require-labels", "check"): RuleStatus.FAIL}})
    second = scan(store, day(1), {pod("web"): {("require-labels", "check"): RuleStatus.PASS}})
    code, out, _ = _run(capsys, "runs", "list", "--database", database_url)
    lines = out.splitlines()
    assert code == 0 and lines[0].split()[:3] == ["RUN", "STARTED", "(UTC)"]
    assert [line.split()[0] for line in lines[1:]] == [str(second), str(first)]
    code, out, _ = _run(capsys, "runs", "list", "--output", "json", "--database", database_url)
    listed = json.loads(out)
    assert [(r["run_id"], r["status"], r["counts"]["fail"]) for r in listed] == [
        (second, "succeeded", 0), (first, "succeeded", 1)]
    code, out, _ = _run(capsys, "runs", "show", str(first), "--database", database_url)
    assert code == 0 and out.startswith(f"run {first}: succeeded (cli)\n")
    assert "repo (git) https://git.example/repo.git commit c0ffee: ok" in out
    assert "tasks" not in out  # a database without the queue: no task section (tests/distributed shows one)
    code, out, _ = _run(capsys, "runs", "show", "latest", "--output", "json",
                        "--database", database_url)
    shown = json.loads(out)
    assert (shown["run_id"], shown["by_source"]["repo"]["pass"]) == (second, 1)
    assert "tasks" not in shown
    code, _, err = _run(capsys, "runs", "show", "42", "--database", database_url)
    assert code == 2 and f"run 42 does not exist; the latest runs are: {second}, {first}" in err


def test_commands_db_prune(store: Store, database_url: str,
                           capsys: pytest.CaptureFixture[str]) -> None:
    scan(store, day(0), {pod("web"): {("require-labels", "check"): RuleStatus.FAIL}})
    code, out, _ = _run(capsys, "db", "prune", "--keep-days", "1", "--database", database_url)
    assert code == 0 and "deleted 1 runs started before" in out
    assert store.list_runs() == []


def test_commands_need_a_database(capsys: pytest.CaptureFixture[str],
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SCANNER_DATABASE_URL", raising=False)
    code, _, err = _run(capsys, "runs", "list")
    assert code == 2 and "no database given: pass --database URL" in err


@pytest.mark.parametrize("argv", [
    ("runs", "list"), ("runs", "show", "latest"), ("report", "--format", "json"), ("db", "current"),
    ("db", "prune", "--keep-days", "1"), ("db", "downgrade", "base"),
])
def test_commands_refuse_a_missing_sqlite_file(argv: tuple[str, ...], tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    url = f"sqlite:///{tmp_path}/mistyped.db"
    code, _, err = _run(capsys, *argv, "--database", url)
    assert code == 2 and f"error: database {url} does not exist: check --database" in err
    assert not (tmp_path / "mistyped.db").exists()


def test_commands_db_upgrade_creates_a_missing_sqlite_file(tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    url = f"sqlite:///{tmp_path}/new.db"
    assert _run(capsys, "db", "upgrade", "--database", url)[0] == 0
    assert "up to date" in _run(capsys, "db", "current", "--database", url)[1]


def test_commands_runs_list_filter_without_matches(store: Store, database_url: str,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(capsys, "runs", "list", "--database", database_url)[1] == "no runs stored yet\n"
    scan(store, day(0), {pod("web"): {("require-labels", "check"): RuleStatus.FAIL}})
    assert _run(capsys, "runs", "list", "--status", "running", "--database", database_url)[1] == "no runs match\n"


def test_commands_report_of_an_incomplete_run_warns(store: Store, database_url: str, tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    from scanner.store import RunStatus

    complete = scan(store, day(0), {pod("web"): {("require-labels", "check"): RuleStatus.FAIL}})
    failed = scan(store, day(1), {}, status=RunStatus.FAILED)
    for run_id, warned in ((complete, False), (failed, True)):
        code, _, err = _run(capsys, "report", "--database", database_url, "--run", str(run_id), "--format", "json",
                            "--out", str(tmp_path / f"{run_id}.json"))
        assert code == 0 and (f"warning: run {run_id} is failed: its results are incomplete" in err) is warned
