"""The ``scanner`` program's ending: exit code, flushed output and exit hooks, with or without
a thread still running."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

PROGRAM = """\
import atexit, sys, threading, time
print("started")  # buffered: a pipe is written to in blocks
atexit.register(lambda: print("exit hook ran", file=sys.stderr))
if {thread}:
    threading.Thread(target=lambda: (time.sleep(0.2), print("thread ended", file=sys.stderr))).start()
from scanner.cli import run
sys.argv = ["scanner", "jp", "query", {query!r}]
run()
"""


@pytest.mark.parametrize(("query", "thread", "code", "out_lines"), [
    ("@", False, 0, 20004),  # a long output, written whole through a pipe
    ("@", True, 0, 20004),
    ("unknown_function(@)", False, 2, 1),
], ids=["long-output", "thread-still-running", "error-exit-code"])
def test_program_ends_with_its_code_output_and_exit_hooks(query: str, thread: bool, code: int,
                                                          out_lines: int) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}  # output in blocks, as usual
    proc = subprocess.run([sys.executable, "-c", PROGRAM.format(query=query, thread=thread)], input=str(list(range(20000))),
                          capture_output=True, text=True, timeout=60, check=False, env=env)
    assert proc.returncode == code, proc.stderr
    assert len(proc.stdout.splitlines()) == out_lines
    assert "exit hook ran" in proc.stderr
    assert ("thread ended" in proc.stderr) is thread
