"""Scans shared by many machines through PostgreSQL: ``scanner enqueue`` creates a run and one
Procrastinate job per shard of each source; ``scanner worker`` processes the jobs on any machine
that reaches the database and the sources, each shard's results written in one transaction,
and the last job of a run assembles it (status, tallies, findings, chain, reports) once.

Every step is the single-machine scan's own: the sources and shards of ``scanner.scan.plan``,
the evaluation of ``scanner.scan.workers``, the ``Collector`` and ``RunWriter`` of the store.
Procrastinate is an optional dependency (``pip install 'scanner[distributed]'``).
"""
