"""The ``Source`` protocol: a named place that yields resources and error records."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Protocol

from scanner.sources.documents import SourceItem
from scanner.sources.provenance import SourceStats


class Source(Protocol):
    """Iterating a source reads it once; ``stats`` is filled in as it is iterated.

    Failures of the whole source (a repository that cannot be cloned, a ref that does
    not exist) are yielded as error records too, so a caller never loses other sources.
    """

    name: str
    source_type: str
    stats: SourceStats

    def iter_items(self) -> Iterator[SourceItem]: ...
