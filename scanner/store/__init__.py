"""The report database: every scan's results kept, with history (SQLite or PostgreSQL).

The public names below are imported on first use, so that the plain record types
(``scanner.store.records``) can be imported without SQLAlchemy and Alembic.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from scanner.store.locks import DatabaseLock
    from scanner.store.records import (
        COMPLETED_STATUSES,
        FINDING_STATUSES,
        EndReason,
        ErrorRecord,
        PolicyRecord,
        ResourceRecord,
        ResultRecord,
        ResultRow,
        RunStart,
        RunStatus,
        SourceRecord,
        SourceType,
        Trigger,
    )
    from scanner.store.store import Store
    from scanner.store.views import ResourceRef
    from scanner.store.writer import RunWriter

_HOMES = {
    "DatabaseLock": "locks",
    **dict.fromkeys(("COMPLETED_STATUSES", "FINDING_STATUSES", "EndReason", "ErrorRecord", "PolicyRecord",
                     "ResourceRecord", "ResultRecord", "ResultRow", "RunStart", "RunStatus", "SourceRecord",
                     "SourceType", "Trigger"), "records"),
    "Store": "store",
    "ResourceRef": "views",
    "RunWriter": "writer",
}

__all__ = [
    "COMPLETED_STATUSES",
    "FINDING_STATUSES",
    "DatabaseLock",
    "EndReason",
    "ErrorRecord",
    "PolicyRecord",
    "ResourceRecord",
    "ResourceRef",
    "ResultRecord",
    "ResultRow",
    "RunStart",
    "RunStatus",
    "RunWriter",
    "SourceRecord",
    "SourceType",
    "Store",
    "Trigger",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value
