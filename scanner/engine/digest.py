"""Stable content digests of JSON-shaped data (policies, report content)."""

from __future__ import annotations

import hashlib
import json
from typing import Any


def content_digest(value: Any) -> str:
    """``sha256:<hex>`` of the canonical JSON of ``value`` (sorted keys, compact)."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()
