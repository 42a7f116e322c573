"""What ``scanner enqueue``, ``scanner worker`` and ``scanner schedule --distributed`` refuse, without a PostgreSQL server."""

from __future__ import annotations

import pathlib

import pytest

from scanner.cli import main
from scanner.distributed.queue import conninfo
from scanner.errors import ConfigError


@pytest.mark.parametrize(("url", "expected"), [
    ("postgresql+psycopg://scan:secret@db.example:5433/reports", "postgresql://scan:secret@db.example:5433/reports"),
    ("postgresql://db/reports?options=-csearch_path%3Dx", "postgresql://db/reports?options=-csearch_path%3Dx"),
])
def test_conninfo_of_a_postgresql_url(url: str, expected: str) -> None:
    assert conninfo(url) == expected


@pytest.mark.parametrize("url", ["sqlite:///scan.db", "sqlite://"])
def test_other_databases_are_refused(url: str) -> None:
    with pytest.raises(ConfigError, match="share a PostgreSQL database; database_url is sqlite"):
        conninfo(url)


@pytest.mark.parametrize("command", [["enqueue"], ["worker"], ["schedule", "--distributed", "--run-now"]])
def test_the_commands_refuse_an_sqlite_config(tmp_path: pathlib.Path, command: list[str],
                                              capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "policies").mkdir()
    (tmp_path / "src").mkdir()
    config = tmp_path / "scanner.yaml"
    config.write_text(f"database: {{url: 'sqlite:///{tmp_path}/scan.db'}}\npolicies: [{{path: {tmp_path}/policies}}]\n"
                      f"sources:\n  - name: s\n    directory: {{path: {tmp_path}/src}}\n")
    assert main([*command, "--config", str(config)]) == 2
    assert "share a PostgreSQL database; database_url is sqlite" in capsys.readouterr().err
    assert not (tmp_path / "scan.db").exists()  # refused before anything was written
