"""Running a renderer (``helm template``, ``kubectl kustomize``) with its output bounded.

``subprocess.run`` keeps whatever a process prints: a chart or kustomization of a scanned
repository could print gigabytes and take the scan's memory with it. Here a renderer's standard
output may hold at most ``max_output`` bytes (the largest file the scanner reads): past that, or
past its time, the renderer is killed and the caller gets an error to record for that render.
"""

from __future__ import annotations

import locale
import os
import selectors
import subprocess
import time
from collections.abc import Mapping
from dataclasses import dataclass

STDERR_KEPT = 1 << 20  # the last bytes of the standard error kept: its end says what went wrong


class OutputTooLarge(Exception):
    """A renderer printed more than it may."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"stopped after printing more than {limit:,} bytes (the largest file the scanner reads)")


@dataclass(frozen=True, slots=True)
class Finished:
    returncode: int
    stdout: str
    stderr: str


def run_bounded(command: list[str], *, timeout: float, max_output: int, env: Mapping[str, str] | None = None,
                cwd: str | None = None) -> Finished:
    """``subprocess.run(command, capture_output=True, text=True, timeout=timeout)`` with at most
    ``max_output`` bytes of standard output. Raises ``subprocess.TimeoutExpired`` past the
    time, ``OutputTooLarge`` past the size (the process killed either way), ``OSError`` when it
    cannot start. The text is decoded as ``text=True`` decodes it (locale encoding, universal
    newlines)."""
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                            env=None if env is None else dict(env), cwd=cwd)
    assert proc.stdout is not None and proc.stderr is not None
    out, err = bytearray(), bytearray()
    deadline = time.monotonic() + timeout
    with selectors.DefaultSelector() as selector:
        selector.register(proc.stdout, selectors.EVENT_READ, out)
        selector.register(proc.stderr, selectors.EVENT_READ, err)
        try:
            while selector.get_map():
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise subprocess.TimeoutExpired(command, timeout)
                for key, _ in selector.select(remaining):
                    chunk = os.read(key.fd, 1 << 16)
                    if not chunk:
                        selector.unregister(key.fileobj)
                        continue
                    key.data.extend(chunk)
                    if len(out) > max_output:
                        raise OutputTooLarge(max_output)
                    if len(err) > 2 * STDERR_KEPT:
                        del err[:-STDERR_KEPT]
            proc.wait(max(0.0, deadline - time.monotonic()))
        except BaseException:
            proc.kill()
            proc.wait()
            raise
        finally:
            proc.stdout.close()
            proc.stderr.close()
    return Finished(proc.returncode, _text(out), _text(err[-STDERR_KEPT:], "replace"))


def _text(data: bytes | bytearray, errors: str = "strict") -> str:
    """What ``text=True`` makes of a process's bytes (a message's bytes that do not decode replaced)."""
    text = bytes(data).decode(locale.getpreferredencoding(False), errors)
    return text.replace("\r\n", "\n").replace("\r", "\n")
