"""The one orchestration path of a scan, and the only package that starts processes.

- ``runner``: ``run`` (one scan: policies, sources, workers, store, reports) and
  ``run_scheduled``; ``plan``: the sources and policies a run evaluates; ``collect``: what
  the workers send, written to the store;
- ``pool``, ``workers``, ``worker_signals``: the worker processes and what they run;
- ``git_prefetch``: Git sources fetched in a child while policies load; ``gitops``: the GitOps
  entry points found before the sources are read;
- ``forked``, ``processes``: one call in a forked child; signals, parent death, the collector;
- ``finish``: the run finished (in a child) while the reports' data is read;
- ``result_reuse``, ``replay``, ``cache_reader``: results of earlier scans reused per document
  and policy, and shard outputs sent again unread, while nothing that decides them changed;
- ``report_data``: the data of a stored run's reports, and the configured reports rendered.

Importing the package loads none of them (a worker's start imports ``worker_signals`` first);
``scanner.scan.run`` (and ``run_scheduled``, ``ScanOutcome``, ``exit_code_for``) load ``runner`` on
first use.
"""

from __future__ import annotations

from typing import Any

_RUNNER = frozenset({"run", "run_scheduled", "ScanOutcome", "exit_code_for"})


def __getattr__(name: str) -> Any:
    if name in _RUNNER:
        from scanner.scan import runner
        return getattr(runner, name)
    raise AttributeError(f"module 'scanner.scan' has no attribute {name!r}")
