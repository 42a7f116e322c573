"""``reports.keep`` and ``reports.keep_days``: the reports folder keeps the report files of the
newest runs only, and of the runs whose reports were written in the last days only.

Only files the scanner writes there are removed: ``scanner-run-<id><suffix>`` for a report
format's suffix, and the ``.sig`` signature of an audit report. Anything else in the folder
(other files, folders, a file of another name) stays.
"""

from __future__ import annotations

import re
import stat
import time
from collections import defaultdict
from pathlib import Path

from scanner.errors import Location, ReportError
from scanner.report.render import FORMATS

SIGNATURE_SUFFIX = ".sig"  # as ``signing`` writes it (not imported: it loads the cryptography package)
_NAME = re.compile(r"scanner-run-(?P<run>[1-9][0-9]*)(?P<suffix>\..+)")
_SUFFIXES = frozenset(suffix for _, suffix in FORMATS.values())


def report_run_id(name: str) -> int | None:
    """The run whose report (or audit report signature) a file of this name is, or None when
    the scanner does not write files of this name."""
    match = _NAME.fullmatch(name)
    if match is None:
        return None
    suffix = match["suffix"]
    if suffix.endswith(SIGNATURE_SUFFIX):
        suffix = suffix.removesuffix(SIGNATURE_SUFFIX)
        if not suffix.startswith(".audit."):
            return None
    return int(match["run"]) if suffix in _SUFFIXES else None


def prune_reports(folder: Path, keep: int | None, current: int | None = None, *, keep_days: int | None = None,
                  now: float | None = None) -> list[Path]:
    """Remove the report files of the runs in ``folder`` other than the ``keep`` newest (by run
    id), and of those whose files were all written (last modified) more than ``keep_days`` days
    before ``now`` (the time, by default); either left None keeps what it would remove. The
    ``current`` run's files are kept whatever its id (a new database numbers its runs from 1
    again) and age, and count as the newest. Returns the files removed; raises ``ReportError``
    naming a file that cannot be removed."""
    if keep is not None and keep < 1:
        raise ValueError(f"keep must be at least 1, not {keep}")
    if keep_days is not None and keep_days < 1:
        raise ValueError(f"keep_days must be at least 1, not {keep_days}")
    by_run: dict[int, list[Path]] = defaultdict(list)
    written: dict[int, float] = {}  # a run -> when its newest file was written
    try:
        entries = list(folder.iterdir())
    except FileNotFoundError:
        return []
    except OSError as e:
        raise ReportError(f"cannot list the reports folder: {e.strerror or type(e).__name__}",
                          Location(path=str(folder))) from e
    for entry in entries:
        run_id = report_run_id(entry.name)
        if run_id is None:
            continue
        try:
            info = entry.lstat()
        except FileNotFoundError:
            continue
        if stat.S_ISREG(info.st_mode) or stat.S_ISLNK(info.st_mode):  # a link goes, not what it leads to
            by_run[run_id].append(entry)
            written[run_id] = max(written.get(run_id, info.st_mtime), info.st_mtime)
    newest_first = sorted(by_run, key=lambda run_id: (run_id == current, run_id), reverse=True)
    gone = set(newest_first[keep:]) if keep is not None else set()
    if keep_days is not None:
        cutoff = (time.time() if now is None else now) - keep_days * 86_400
        gone.update(run_id for run_id in by_run if run_id != current and written[run_id] < cutoff)
    removed = []
    for run_id in sorted(gone, reverse=True):
        for path in sorted(by_run[run_id]):
            try:
                path.unlink()
            except FileNotFoundError:
                continue
            except OSError as e:
                raise ReportError(f"cannot remove an old report: {e.strerror or type(e).__name__}",
                                  Location(path=str(path))) from e
            removed.append(path)
    return removed
