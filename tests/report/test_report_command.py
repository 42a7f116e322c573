"""`scanner report` through the command line: where the report goes, which runs the trend shows."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scanner.cli import main
from scanner.engine.types import RuleStatus
from scanner.store import Store
from tests.store.conftest import day
from tests.store.scan_helpers import pod, scan


@pytest.fixture
def database(tmp_path: Path) -> str:
    """A database of three runs."""
    url = f"sqlite:///{tmp_path / 'reports.db'}"
    with Store(url) as store:
        for i in range(3):
            scan(store, day(i), {pod("web"): {("require-labels", "check"): RuleStatus.FAIL}})
    return url


def _config(tmp_path: Path, url: str, history: int) -> Path:
    path = tmp_path / "scanner.yaml"
    path.write_text(f'database: {{url: "{url}"}}\npolicies: [{{path: policies}}]\n'
                    "sources: [{name: repo, directory: {path: repo}}]\n"
                    f"reports: {{out: configured, history: {history}}}\n")
    return path


def test_report_out_dash_writes_to_standard_output(database: str, tmp_path: Path, monkeypatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    before = sorted(tmp_path.iterdir())
    assert main(["report", "--database", database, "--format", "json", "--out", "-"]) == 0
    assert json.loads(capsys.readouterr().out)["run"]["id"] == 3
    assert sorted(tmp_path.iterdir()) == before  # no folder named -


@pytest.mark.parametrize("argv", [
    pytest.param(["--database", "{database}", "--run", "99"], id="unknown-run"),
    pytest.param(["--database", "sqlite:///{tmp}/missing.db"], id="missing-database"),
])
@pytest.mark.parametrize("out", [pytest.param("newdir", id="out-folder"),
                                 pytest.param("newdir/deeper/report.json", id="out-file")])
def test_report_failing_creates_no_output_folder(argv: list[str], out: str, database: str, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    argv = [a.format(tmp=tmp_path, database=database) for a in argv]
    code = main(["report", "--format", "json", "--out", str(tmp_path / out), *argv])
    assert code == 2 and "error:" in capsys.readouterr().err
    assert not (tmp_path / "newdir").exists()


@pytest.mark.parametrize(("option", "config_history", "trend"), [
    pytest.param([], 2, [2, 3], id="config-history"),
    pytest.param(["--history", "1"], 2, [3], id="option-over-config"),
])
def test_report_history_from_the_config(option: list[str], config_history: int, trend: list[int],
                                        database: str, tmp_path: Path) -> None:
    config = _config(tmp_path, database, config_history)
    assert main(["report", "--config", str(config), "--format", "json", *option]) == 0
    document = json.loads((tmp_path / "configured" / "scanner-run-3.json").read_text())
    assert [p["run_id"] for p in document["trend"]] == trend
