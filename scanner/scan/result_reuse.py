"""Reusing a resource's results from an earlier scan when nothing that decides them changed.

A result of a policy for a resource document is decided by:

- the document's content (after the scan gave it the cluster's scope): its **document digest**,
  the SHA-256 of its data as pickled (a different encoding of equal data only misses the cache);
- the policy's compiled content (its ``digest``), the values file, the policy exceptions and the
  scanner version;
- the cluster's look-up data, for a policy that reads it (API calls, ConfigMaps, namespace
  selectors, CEL parameters or ``namespaceObject``: ``policies_need_lookup``).

The last three and the policy make the policy's **evaluation key**, one per policy and cluster.
The cache keeps, per document digest, the results of each policy under its evaluation key: a
change of one policy re-evaluates only that policy, for the documents of the kinds it matches.
A policy whose results depend on the time or on chance (``time_now``, ``time_now_utc``,
``time_since``, ``random``, in the policy or in any exception) has no key and is evaluated
every time; so is a result cut short by the rule's time limit.

A worker reads the stored entries of each chunk's documents from the store (``StoredCache``)
and sends the entries it made or changed, and the digests it reused as stored, with the chunk's
results (``CacheUpdate``); the scan writes them with the results.
"""

from __future__ import annotations

import hashlib
import json
import marshal
import pickle
import re
import zlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from scanner.engine.evaluate import PolicyIndex
from scanner.engine.policy import Policy
from scanner.lookup import ResourceLookup, policies_need_lookup

FORMAT = "scanner-result-cache/v1"
"""Part of every key: a new encoding of keys or entries gets a new name."""

_UNSTABLE = re.compile(r"\b(time_now_utc|time_now|time_since|random)\s*\(")
"""Functions whose value changes from one scan to the next (``time_since`` with no end is now)."""

_TIME_LIMIT = "took longer than"
"""In an error result's message: the rule's time limit cut it short (it depends on the machine)."""

Row = tuple[Any, ...]
"""A result without its resource index: ``(policy, rule, status, message, path, action, declared rule)``."""


def _sha(*parts: str) -> str:
    return hashlib.sha256("\n".join(parts).encode("utf-8")).hexdigest()


def time_dependent(raw: Any) -> bool:
    """Whether a policy or exception document calls a function whose value changes between scans."""
    return bool(_UNSTABLE.search(json.dumps(raw, default=str)))


def lookup_digest(lookup: ResourceLookup) -> str:
    """A digest of the objects a cluster's look-ups see (in any order)."""
    objects = sorted(hashlib.sha256(pickle.dumps(obj, 5)).hexdigest() for obj in lookup.objects())
    return _sha("lookup", *objects)


def document_digest(data: dict) -> str | None:
    """The digest of a resource document's data; None when it cannot be encoded."""
    try:
        return hashlib.sha256(pickle.dumps(data, 5)).hexdigest()
    except (pickle.PicklingError, TypeError, AttributeError, RecursionError):
        return None


@dataclass(frozen=True, slots=True)
class EvaluationKeys:
    """The evaluation key of each cacheable policy (by its digest), per cluster name (``None``:
    a resource of no cluster with look-ups)."""

    by_cluster: Mapping[str | None, Mapping[str, str]]

    def of(self, cluster: str | None) -> Mapping[str, str]:
        return self.by_cluster.get(cluster) or self.by_cluster.get(None) or {}


def evaluation_keys(policies: Sequence[Policy], exceptions: Sequence[dict], values_text: bytes, version: str,
                    lookups: Mapping[str, ResourceLookup]) -> EvaluationKeys:
    """The evaluation keys of ``policies`` for each cluster of ``lookups`` (and for none)."""
    if any(time_dependent(raw) for raw in exceptions):
        return EvaluationKeys({None: {}})
    common = _sha(FORMAT, version, hashlib.sha256(values_text).hexdigest(),
                  *sorted(_sha(json.dumps(raw, sort_keys=True, default=str)) for raw in exceptions))
    cacheable = [p for p in policies if not time_dependent(p.raw)]
    reading = {p.digest for p in cacheable if policies_need_lookup([p.raw])}
    clusters: dict[str | None, str] = {None: ""}
    clusters.update((name, lookup_digest(lookup)) for name, lookup in lookups.items())
    return EvaluationKeys({
        cluster: {p.digest: _sha(common, p.digest, looked_up if p.digest in reading else "")[:32] for p in cacheable}
        for cluster, looked_up in clusters.items()})


@dataclass(frozen=True, slots=True)
class ReuseSetup:
    """What the workers need to reuse results: the keys, and the database that stores them."""

    keys: EvaluationKeys
    database_url: str


def encode_entries(entries: Mapping[str, Sequence[Row]]) -> bytes:
    return zlib.compress(marshal.dumps({key: tuple(rows) for key, rows in entries.items()}), 1)


def decode_entries(blob: bytes) -> dict[str, tuple[Row, ...]]:
    entries = marshal.loads(zlib.decompress(blob))
    if not isinstance(entries, dict):
        raise ValueError("a result cache entry is not a mapping")
    return entries


@dataclass(slots=True)
class CacheUpdate:
    """What one chunk adds to the cache: new or changed entries, and the digests reused as stored."""

    entries: dict[str, bytes] = field(default_factory=dict)
    reused: list[str] = field(default_factory=list)
    evaluated: int = 0  # policies evaluated for a document
    hits: int = 0  # policies whose results were reused

    def __bool__(self) -> bool:
        return bool(self.entries or self.reused or self.evaluated or self.hits)


class DocumentReuse:
    """One document's stored results: ``cached`` rows of a policy when reusable, ``keep`` what was
    evaluated, ``done`` when every policy it meets was asked for."""

    __slots__ = ("_changed", "_entries", "_keys", "_update", "digest")

    def __init__(self, digest: str, entries: dict[str, tuple[Row, ...]], keys: Mapping[str, str],
                 update: CacheUpdate) -> None:
        self.digest, self._entries, self._keys, self._update = digest, entries, keys, update
        self._changed = False

    def cached(self, policy: Policy) -> tuple[Row, ...] | None:
        key = self._keys.get(policy.digest)
        return self._entries.get(key) if key is not None else None

    def rows(self, policy: Policy) -> tuple[Row, ...] | None:
        """``cached``, counted as reused or to evaluate."""
        found = self.cached(policy)
        if found is None:
            self._update.evaluated += 1
        else:
            self._update.hits += 1
        return found

    def keep(self, policy: Policy, rows: Iterable[Row]) -> None:
        key = self._keys.get(policy.digest)
        if key is None:
            return
        kept = tuple(rows)
        if any(row[2] == "error" and _TIME_LIMIT in row[3] for row in kept):
            return
        self._entries[key] = kept
        self._changed = True

    def done(self) -> None:
        if self._changed:
            current = set(self._keys.values())  # entries of policies no longer evaluated go
            self._update.entries[self.digest] = encode_entries(
                {key: rows for key, rows in self._entries.items() if key in current})
        else:
            self._update.reused.append(self.digest)


class DocumentCache:
    """The worker's view of the cache: the entries ``read`` gives for a chunk's digests."""

    def __init__(self, keys: EvaluationKeys, read: Callable[[list[str]], Mapping[str, bytes]]) -> None:
        self.keys, self.read = keys, read
        self.update = CacheUpdate()

    def documents(self, documents: Sequence[dict], cluster: str | None) -> list[DocumentReuse | None]:
        """The stored results of each document (none yet: empty; None: it has no digest) for
        resources of ``cluster``."""
        digests = [document_digest(data) for data in documents]
        stored = self.read([digest for digest in digests if digest is not None])
        keys = self.keys.of(cluster)
        found: list[DocumentReuse | None] = []
        for digest in digests:
            if digest is None:
                found.append(None)
                continue
            blob = stored.get(digest)
            entries: dict[str, tuple[Row, ...]] = {}
            if blob is not None:
                try:
                    entries = decode_entries(blob)
                except (ValueError, EOFError, TypeError, zlib.error):
                    entries = {}  # unreadable: evaluated again and written anew
            found.append(DocumentReuse(digest, entries, keys, self.update))
        return found

    def take(self) -> CacheUpdate:
        """What the chunks since the last call added (sent with the chunk's results)."""
        update, self.update = self.update, CacheUpdate()
        return update


class SelectiveIndex:
    """The policies of ``index`` that a document's stored results do not cover: what
    ``evaluate_resource`` evaluates for it. ``met`` holds every policy the document met, in order."""

    def __init__(self, index: PolicyIndex) -> None:
        self.index = index
        self.reuse: DocumentReuse | None = None
        self.met: list[Policy] = []

    def for_kind(self, kind: str) -> list[Policy]:
        self.met = self.index.for_kind(kind)
        reuse = self.reuse
        return self.met if reuse is None else [p for p in self.met if reuse.rows(p) is None]
