"""A renderer's output is bounded: past its size or its time it is killed, and what it printed
within them comes back as ``subprocess.run(..., text=True)`` gives it."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from scanner.sources.bounded_run import OutputTooLarge, run_bounded


def _python(program: str) -> list[str]:
    return [sys.executable, "-c", program]


def test_output_and_errors_come_back_as_text_run_gives_them() -> None:
    program = "import sys; sys.stdout.write('a\\r\\nb\\rc\\n' * 3); sys.stderr.write('oops\\n'); sys.exit(3)"
    done = run_bounded(_python(program), timeout=30, max_output=1 << 20)
    expected = subprocess.run(_python(program), capture_output=True, text=True, check=False)
    assert (done.returncode, done.stdout, done.stderr) == (3, expected.stdout, expected.stderr) == (
        3, "a\nb\nc\n" * 3, "oops\n")


def test_a_large_error_stream_does_not_block_and_its_end_is_kept() -> None:
    program = "import sys; sys.stderr.write('x' * (8 << 20) + 'the end'); print('out')"
    done = run_bounded(_python(program), timeout=60, max_output=1 << 20)
    assert done.stdout == "out\n" and done.stderr.endswith("the end") and len(done.stderr) <= 1 << 20


def test_output_past_the_limit_kills_the_process() -> None:
    program = "import sys\nwhile True: sys.stdout.write('x' * 65536)"
    started = time.monotonic()
    with pytest.raises(OutputTooLarge, match="more than 1,000,000 bytes"):
        run_bounded(_python(program), timeout=60, max_output=1_000_000)
    assert time.monotonic() - started < 30


def test_a_process_past_its_time_is_killed() -> None:
    with pytest.raises(subprocess.TimeoutExpired):
        run_bounded(_python("import time; print('started', flush=True); time.sleep(60)"), timeout=0.5,
                    max_output=1 << 20)


def test_a_program_that_cannot_start_raises_os_error() -> None:
    with pytest.raises(OSError):
        run_bounded(["/nonexistent/renderer"], timeout=5, max_output=1 << 20)
