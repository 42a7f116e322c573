"""The report database: every scan's results kept, with history (SQLite or PostgreSQL)."""

from __future__ import annotations

from scanner.store.locks import DatabaseLock
from scanner.store.records import (
    COMPLETED_STATUSES,
    FINDING_STATUSES,
    EndReason,
    ErrorRecord,
    PolicyRecord,
    ResourceRecord,
    ResultRecord,
    RunStart,
    RunStatus,
    SourceRecord,
    SourceType,
    Trigger,
)
from scanner.store.store import Store
from scanner.store.views import ResourceRef
from scanner.store.writer import RunWriter

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
    "RunStart",
    "RunStatus",
    "RunWriter",
    "SourceRecord",
    "SourceType",
    "Store",
    "Trigger",
]
