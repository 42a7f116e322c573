"""What a run rendered from what: its resource observations counted per source and per entry
point (the ``overlay`` column: ``""`` for files read as they are, else the overlay, chart or
GitOps object that rendered them)."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Connection, func, select

from scanner.store import tables as t


@dataclass(frozen=True, slots=True)
class CoverageCount:
    """The resources one entry point of a source gave in a run, and the files they are defined in."""

    source: str
    overlay: str  # "" for files read as they are
    resources: int
    files: int


def run_coverage(connection: Connection, run_id: int) -> list[CoverageCount]:
    """The run's observations per source and entry point, in source and entry point order."""
    obs = t.resource_observations.c
    query = (select(t.sources.c.name, obs.overlay, func.count().label("resources"),
                    func.count(obs.path.distinct()).label("files"))
             .select_from(t.resource_observations)
             .join(t.resources, t.resources.c.resource_id == obs.resource_id)
             .join(t.sources, t.sources.c.source_id == t.resources.c.source_id)
             .where(obs.run_id == run_id)
             .group_by(t.sources.c.name, obs.overlay))
    rows = [CoverageCount(row.name, row.overlay or "", row.resources, row.files) for row in connection.execute(query)]
    return sorted(rows, key=lambda r: (r.source, r.overlay))
