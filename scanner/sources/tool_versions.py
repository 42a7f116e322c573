"""What a tool's version command prints, run once per binary file and process.

The renderers' versions decide how a tree is read (``kustomize.version``, ``helm.render``);
every worker needs them. ``start_probes`` runs the probes ahead, side by side, in the scan's
own process while it starts; the answers travel to its workers with the shards that need them
(``known``, ``learn``), so that no worker runs the tools again.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Mapping, Sequence

Probe = tuple[int, str] | None  # (exit code, standard output), or None where it could not run
PROBE_TIMEOUT = 60.0

_KNOWN: dict[tuple, Probe] = {}


def _key(argv: Sequence[str]) -> tuple | None:
    """The probe's key: its command and the binary file's identity (a replaced binary is probed again)."""
    try:
        stat = os.stat(argv[0])
    except OSError:
        return None
    return (tuple(argv), stat.st_mtime_ns, stat.st_size, stat.st_ino)


def probe_output(argv: Sequence[str], env: Mapping[str, str] | None = None) -> Probe:
    """The exit code and output of ``argv`` (``argv[0]`` a binary's path), run once per binary."""
    key = _key(argv)
    if key is None:
        return None
    if key not in _KNOWN:
        try:
            proc = subprocess.run(list(argv), capture_output=True, text=True, timeout=PROBE_TIMEOUT, check=False,
                                  env=None if env is None else dict(env))
        except (OSError, subprocess.TimeoutExpired):
            _KNOWN[key] = None
        else:
            _KNOWN[key] = (proc.returncode, proc.stdout)
    return _KNOWN[key]


Known = tuple[tuple[tuple, Probe], ...]  # probes answered: (key, answer) pairs, as they travel


def known() -> Known:
    """Every probe answered in this process."""
    return tuple(_KNOWN.items())


def learn(answers: Known) -> None:
    """Take the answers of another process on this machine (the same binaries)."""
    for key, answer in answers:
        _KNOWN.setdefault(key, answer)


def start_probes(probes: Sequence[tuple[Sequence[str], Mapping[str, str] | None]]) -> Callable[[], None]:
    """Start the ``(argv, env)`` probes not run yet, each in a child process (no thread); the
    call returned waits for them and keeps their answers for ``probe_output``."""
    started: list[tuple[tuple, subprocess.Popen[str]]] = []
    for argv, env in probes:
        key = _key(argv)
        if key is None or key in _KNOWN or any(key == k for k, _ in started):
            continue
        try:
            proc = subprocess.Popen(list(argv), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                                    env=None if env is None else dict(env))
        except OSError:
            _KNOWN[key] = None
            continue
        started.append((key, proc))

    def finish() -> None:
        for key, proc in started:
            try:
                out, _ = proc.communicate(timeout=PROBE_TIMEOUT)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.communicate()
                _KNOWN[key] = None
                continue
            _KNOWN[key] = (proc.returncode, out)
        started.clear()

    return finish
