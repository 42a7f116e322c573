"""The worker side of a scan: set up the compiled policies once per process (inherited from the
scan when forked from it), then read one shard of a source, evaluate its resources and stream
the results back in batches.

Messages sent to the scan (through ``emit``): ``("chunk", task, resources, results, errors,
cache)`` (``cache``: what the chunk adds to the result cache, ``scanner.scan.result_reuse``, or
None) and, once per task, ``("done", task, stats, failure, output)`` (``output``: the task's
encoded output to store under its shard key, ``scanner.scan.replay``, or None). A task whose
output is stored sends it again instead of reading its shard; one whose footprint is stored
sends ``("footprint", task, footprint)`` alone (the encoded ``ShardFootprint``).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from queue import Full
from typing import TYPE_CHECKING, Any

from scanner.engine.environment import make_environment
from scanner.engine.evaluate import PolicyIndex, RequestContext, evaluate_resource
from scanner.engine.exceptions import PolicyException
from scanner.engine.kinds import cluster_scoped_in_cluster
from scanner.engine.policy import Policy
from scanner.engine.types import RuleResult
from scanner.engine.values import Values
from scanner.lookup import ResourceLookup, param_kinds
from scanner.scan.processes import collect_less_often
from scanner.scan.replay import ShardOutput, footprint_key
from scanner.scan.result_reuse import CacheUpdate, DocumentCache, ReuseSetup, Row, SelectiveIndex
from scanner.sources.documents import Origin
from scanner.sources.export import ExportSource
from scanner.sources.file_tree import DiskTree, FileTree
from scanner.sources.git_tree import GitTree
from scanner.sources.paths import Shard
from scanner.sources.provenance import ErrorRecord, Resource, SourceStats
from scanner.sources.tool_versions import Known, learn
from scanner.sources.tree import TreeOptions, scan_tree
from scanner.yamldoc import load_yaml_value, load_yaml_values

if TYPE_CHECKING:
    from scanner.scan.cache_reader import StoredCache

CHUNK = 64
WORKER_NICENESS = 10  # added to the scan's own
Emit = Callable[[tuple], None]
Compiled = tuple[Sequence[Policy], Sequence[PolicyException]]
_WORKER: dict[str, Any] = {}


@dataclass(frozen=True, slots=True)
class EvaluationSetup:
    """What a worker needs to compile the policies and build the environment itself."""

    policies: tuple[dict, ...]
    values: Values
    exceptions: tuple[dict, ...]
    started_at: datetime
    # the objects of each cluster (by cluster name) that look-ups see, when the policies make any
    lookups: dict[str, ResourceLookup] = field(default_factory=dict)
    clusters: dict[str, str] = field(default_factory=dict)  # source name -> its cluster's name
    reuse: ReuseSetup | None = None  # where results stored by earlier scans are, and their keys


@dataclass(frozen=True, slots=True)
class ShardTask:
    """One shard of one source: a tree (Git commit or directory) or export files (whose
    include/exclude patterns travel in ``tree``)."""

    task_id: int
    source: str
    source_type: str
    root: str = ""
    paths: tuple[str, ...] = ()
    commit: str | None = None
    objects: bool = False  # the commit's files are read from the clone's objects, not from ``root``
    tree: TreeOptions = field(default_factory=TreeOptions)
    shard: Shard = field(default_factory=Shard)
    key: str | None = None  # the shard key its output is stored under (``scanner.scan.replay``)
    footprint: bool = True  # with a key: its footprint may be sent instead (not when it was refused)
    tool_versions: Known = ()  # the renderers' version probes the scan answered (``tool_versions``)


def setup_worker(setup: EvaluationSetup, emit: Emit | None = None, compiled: Compiled | None = None) -> None:
    """Build the evaluation environment of this process from the policies and exceptions
    ``compiled`` already, or compile them."""
    if compiled is None:
        from scanner.engine.exceptions import parse_exception
        from scanner.engine.policy import parse_policy

        compiled = ([parse_policy(doc) for doc in setup.policies], [parse_exception(doc) for doc in setup.exceptions])
    policies, exceptions = compiled
    _WORKER["setup"] = setup
    _WORKER["index"] = PolicyIndex(list(policies))
    _WORKER["clusters"] = {name: _ClusterEvaluation(setup, tuple(exceptions), lookup)
                           for name, lookup in setup.lookups.items()}
    _WORKER["alone"] = _ClusterEvaluation(setup, tuple(exceptions), None)
    reuse = setup.reuse
    stored = None
    if reuse is not None:  # the store's client loads only for a scan reusing results
        from scanner.scan.cache_reader import StoredCache

        stored = StoredCache(reuse.database_url)
    _WORKER["stored"] = stored
    _WORKER["cache"] = DocumentCache(reuse.keys, stored.entries) if reuse is not None and stored else None
    if emit is not None:
        _WORKER["emit"] = emit


class _ClusterEvaluation:
    """The environment of the resources of one cluster: its look-ups, Namespace labels and CEL
    parameter objects (none without a lookup)."""

    __slots__ = ("context", "lookup")

    def __init__(self, setup: EvaluationSetup, exceptions: tuple[PolicyException, ...],
                 lookup: ResourceLookup | None) -> None:
        self.lookup = lookup
        env = make_environment(
            now=lambda: setup.started_at, load_yaml=load_yaml_value, values=setup.values, exceptions=exceptions,
            load_documents=load_yaml_values, loader=lookup, namespaces=lookup.namespaces if lookup else None,
            param_resources=tuple(lookup.objects(param_kinds(setup.policies))) if lookup else (), admission=True,
            cluster_scoped=lookup.is_cluster_scoped if lookup else None, monotonic=time.monotonic)
        values = setup.values

        def labels(namespace: str) -> dict | None:
            found = values.labels_of(namespace)
            return found if found is not None or lookup is None else lookup.namespace_labels(namespace)

        # on CREATE, a resource's look-ups do not see it
        self.context = RequestContext(env, namespace_labels=labels,
                                      admitting=lookup.admitting if lookup is not None else None)

    def scoped(self, resource: Resource) -> Resource:
        """``resource`` as the cluster keeps it: without a namespace (written, or given by default)
        when its kind is cluster-scoped (built in, or a custom kind whose CRD or project says so)."""
        ident = resource.identity
        if not resource.data["metadata"].get("namespace") or not (
                self.lookup.is_cluster_scoped(ident.api_version, ident.kind) if self.lookup is not None
                else cluster_scoped_in_cluster(ident.api_version, ident.kind)):
            return resource
        del resource.data["metadata"]["namespace"]
        return replace(resource, identity=replace(ident, namespace=None), namespace_defaulted=False)


class Stopped(Exception):
    """The scan stopped this worker (it ended early or failed elsewhere)."""


def setup_process(setup: EvaluationSetup, queue: Any, stop: Any) -> None:
    """``setup_worker`` in a worker process whose messages go to ``queue`` until ``stop`` is set
    or the scan's process is gone.

    Interrupts are the scan's to handle: a Ctrl-C or a SIGTERM sent to the whole process group
    (a terminal, systemd) must not kill the workers of a scan that is meant to finish (the
    scheduler lets the running scan end); the scan stops its workers through ``stop``.

    Workers run at a lower priority (``WORKER_NICENESS``) than the scan's process, which
    writes what they send: behind them it would build a backlog, written while a core idles
    at the end of the scan. Where the cores are free, the workers use them all the same.
    """
    collect_less_often()  # a forkserver's workers do not inherit it from the command line
    with contextlib.suppress(OSError):
        os.nice(WORKER_NICENESS)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    threading.Thread(target=_end_with, args=(os.getppid(),), name="parent-watch", daemon=True).start()

    def emit(message: tuple) -> None:
        while not stop.is_set():
            try:
                queue.put(message, timeout=0.25)
                return
            except Full:
                continue
        queue.cancel_join_thread()  # nobody reads any more: exit without flushing
        raise Stopped

    if _WORKER.get("setup") is setup:  # forked from the scan, which set this process up already
        _WORKER["emit"] = emit
    else:
        setup_worker(setup, emit)


def _end_with(parent: int) -> None:
    """End this worker once the scan's process is gone (killed): nothing would read its results,
    and the pool's pipes, which every worker holds open, never tell it so."""
    while os.getppid() == parent:
        time.sleep(0.5)
    os._exit(1)


def evaluate_chunk(resources: list[Resource], source: str = "") -> tuple[list[tuple], list[tuple]]:
    """Resources of ``source`` and their results as plain tuples (cheap to send between processes).

    A resource tuple holds a ``ResourceRecord``'s fields, a result tuple a ``ResultRow``'s (the
    collector reads it through ``records.wire_rows``); repeated strings are one object each
    (messages and paths interned), so each is sent once per chunk.
    """
    index: PolicyIndex = _WORKER["index"]
    setup: EvaluationSetup = _WORKER["setup"]
    cluster_name = setup.clusters.get(source, source)
    cluster: _ClusterEvaluation = _WORKER["clusters"].get(cluster_name) or _WORKER["alone"]
    context = cluster.context
    intern = sys.intern
    resources = [cluster.scoped(resource) for resource in resources]
    cache: DocumentCache | None = _WORKER.get("cache")
    reuses = (cache.documents([r.data for r in resources], cluster_name if cluster.lookup is not None else None)
              if cache is not None else [None] * len(resources))
    selective = SelectiveIndex(index) if cache is not None else index
    resource_rows: list[tuple] = []
    result_rows: list[tuple] = []
    for position, (resource, reuse) in enumerate(zip(resources, reuses, strict=True)):
        ident, prov = resource.identity, resource.provenance
        resource_rows.append((prov.source, ident.api_version, ident.kind, ident.name or "", ident.namespace or "",
                              prov.path, prov.document, prov.item, prov.line, prov.commit or "",
                              prov.overlay, "\n".join(prov.patches) or None))
        if not isinstance(selective, SelectiveIndex):  # (no result cache: the rows as they come)
            for _, results in evaluate_resource(selective, resource.data, context):
                result_rows += _rows(results, intern, (position,))
            continue
        selective.reuse = reuse
        evaluated = {id(policy): _rows(results, intern)
                     for policy, results in evaluate_resource(selective, resource.data, context)}
        if reuse is None:
            for found in evaluated.values():
                result_rows += [(position, *row) for row in found]
            continue
        for policy in selective.met:  # in policy order, stored and evaluated alike
            rows: tuple[Row, ...] | list[Row] | None = reuse.cached(policy)
            if rows is None:
                rows = evaluated.get(id(policy), [])
                reuse.keep(policy, rows)
            result_rows += [(position, *row) for row in rows]
        reuse.done()
    return resource_rows, result_rows


def _rows(results: list[RuleResult], intern: Callable[[str], str], head: tuple = ()) -> list[Row]:
    """Each result's ResultRow fields after the resource index, after ``head`` (the index, or
    nothing); ``_value_``: the member's plain string, without the enum's ``value`` property;
    the names are the policy's and rule's own strings, shared; repeated messages and paths
    interned."""
    return [(*head, r.policy, r.rule, r.status._value_, intern(r.message), intern(r.path), r.action._value_,
             r.declared_rule) for r in results]


def _cache_update() -> CacheUpdate | None:
    """What the chunks evaluated since the last call add to the result cache (None: no cache)."""
    cache: DocumentCache | None = _WORKER.get("cache")
    return cache.take() if cache is not None else None


def _items(task: ShardTask, stats: SourceStats) -> Iterator[Resource | ErrorRecord]:
    if task.paths:
        source = ExportSource(task.source, list(task.paths), path_filter=task.tree.path_filter, shard=task.shard)
        yield from source.iter_items()
        stats.files, stats.documents, stats.resources, stats.errors = (
            source.stats.files, source.stats.documents, source.stats.resources, source.stats.errors)
        stats.skipped.update(source.stats.skipped)
    else:
        origin = Origin(task.source, task.source_type, task.commit)
        yield from scan_tree(_tree(task), origin, replace(task.tree, shard=task.shard), stats)


def _tree(task: ShardTask) -> FileTree:
    """The task's tree; a Git commit's listing is made once per process."""
    if not task.objects:
        return DiskTree(task.root)
    key = (task.root, task.commit)
    tree = _GIT_TREES.get(key)
    if tree is None:
        _GIT_TREES.clear()  # one commit at a time: the shards of a source follow each other
        tree = _GIT_TREES[key] = GitTree(task.root, task.commit or "HEAD")
    return tree


_GIT_TREES: dict[tuple[str, str | None], GitTree] = {}


def _replay(task: ShardTask, emit: Emit) -> bool:
    """Send the footprint stored under the task's key, or else its output, again; False when
    there is none (or one that cannot be read: the shard is then read, and its output stored
    anew)."""
    stored: StoredCache | None = _WORKER.get("stored")
    if stored is None or task.key is None:
        return False
    if task.footprint and (footprint := stored.shard_output(footprint_key(task.key))) is not None:
        emit(("footprint", task.task_id, footprint))
        return True
    blob = stored.shard_output(task.key)
    if blob is None:
        return False
    try:
        output = ShardOutput.decode(blob)
    except ValueError:
        return False
    for resources, results, errors, digests in output.replayed(task.commit or ""):
        emit(("chunk", task.task_id, resources, results, errors, CacheUpdate(reused=digests)))
    emit(("done", task.task_id, output.stats or SourceStats(), None, None))
    return True


def run_task(task: ShardTask, emit: Emit | None = None) -> None:
    """Read, evaluate and emit one shard (or send its stored output again); failures are
    reported, never raised."""
    emit = emit or _WORKER["emit"]
    learn(task.tool_versions)
    stats = SourceStats()
    failure = None
    output = ShardOutput(task.commit or "", stats=stats) if task.key is not None else None

    def send(chunk: list[Resource], errors: list[ErrorRecord]) -> None:
        resources, results = evaluate_chunk(chunk, task.source)
        cache = _cache_update()
        if output is not None:
            output.chunks.append((resources, results, errors,
                                  [*cache.entries, *cache.reused] if cache is not None else []))
        emit(("chunk", task.task_id, resources, results, errors, cache))

    try:
        if _replay(task, emit):
            return
        chunk: list[Resource] = []
        errors: list[ErrorRecord] = []
        for item in _items(task, stats):
            if isinstance(item, ErrorRecord):
                errors.append(item)
                continue
            chunk.append(item)
            if len(chunk) >= CHUNK:
                send(chunk, errors)
                chunk, errors = [], []
        if chunk or errors:
            send(chunk, errors)
    except Stopped:
        return
    except Exception as exc:
        failure = f"{type(exc).__name__}: {exc}"
        if _WORKER.get("verbose"):
            traceback.print_exc()
    finally:
        stored: StoredCache | None = _WORKER.get("stored")
        if stored is not None:
            stored.close()  # no connection crosses a fork (the scan's own process forks to finish)
    encoded = output.encode() if output is not None and failure is None else None
    with contextlib.suppress(Stopped):
        emit(("done", task.task_id, stats, failure, encoded))
