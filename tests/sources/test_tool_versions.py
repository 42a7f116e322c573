"""A tool's version probe runs once per binary file and process, ahead of the workers when started."""

from __future__ import annotations

import os
from pathlib import Path

from scanner.sources.tool_versions import probe_output, start_probes


def _tool(tmp_path: Path, name: str, version: str) -> tuple[Path, Path]:
    """A stand-in tool printing ``version`` and counting its runs in a file beside it."""
    runs = tmp_path / f"{name}.runs"
    tool = tmp_path / name
    tool.write_text(f"#!/bin/sh\necho run >> {runs}\necho {version}\n")
    tool.chmod(0o755)
    return tool, runs


def _runs(runs: Path) -> int:
    return len(runs.read_text().splitlines()) if runs.exists() else 0


def test_a_probe_runs_once_per_binary_and_again_when_the_binary_changes(tmp_path: Path) -> None:
    tool, runs = _tool(tmp_path, "tool", "v1.0.0")
    assert probe_output((str(tool), "version")) == (0, "v1.0.0\n")
    assert probe_output((str(tool), "version")) == (0, "v1.0.0\n")
    assert _runs(runs) == 1
    replaced = tmp_path / "tool.new"
    replaced.write_text(tool.read_text().replace("v1.0.0", "v2.0.0") + "exit 3\n")
    replaced.chmod(0o755)
    os.replace(replaced, tool)
    assert probe_output((str(tool), "version")) == (3, "v2.0.0\n")
    assert _runs(runs) == 2


def test_started_probes_answer_later_calls_without_running_the_tool_again(tmp_path: Path) -> None:
    first, first_runs = _tool(tmp_path, "first", "v5.5.0")
    second, second_runs = _tool(tmp_path, "second", "v3.17.3")
    missing = tmp_path / "missing"
    done = start_probes([((str(first), "version"), None), ((str(second), "version"), {"PATH": "/usr/bin:/bin"}),
                         ((str(missing), "version"), None)])
    done()
    assert (_runs(first_runs), _runs(second_runs)) == (1, 1)
    assert probe_output((str(first), "version")) == (0, "v5.5.0\n")
    assert probe_output((str(second), "version")) == (0, "v3.17.3\n")
    assert probe_output((str(missing), "version")) is None
    assert (_runs(first_runs), _runs(second_runs)) == (1, 1)


def test_a_probe_that_cannot_run_is_none(tmp_path: Path) -> None:
    not_executable = tmp_path / "tool"
    not_executable.write_text("#!/bin/sh\necho v1\n")  # no execute permission
    assert probe_output((str(not_executable), "version")) is None
    started = tmp_path / "started"
    started.write_text("#!/bin/sh\necho v1\n")
    start_probes([((str(started), "version"), None)])()
    assert probe_output((str(started), "version")) is None


def test_answers_learned_from_another_process_are_not_probed_again(tmp_path: Path, monkeypatch) -> None:
    import scanner.sources.tool_versions as tool_versions

    tool, runs = _tool(tmp_path, "tool", "v5.4.0")
    assert probe_output((str(tool), "version")) == (0, "v5.4.0\n")
    answers = tool_versions.known()
    monkeypatch.setattr(tool_versions, "_KNOWN", {})  # a worker that has probed nothing
    tool_versions.learn(answers)
    assert probe_output((str(tool), "version")) == (0, "v5.4.0\n")
    assert _runs(runs) == 1
