"""What reports read about one run: its results (narrow rows, read through the driver and put
in report order here), where it found each resource, the policies it evaluated, and its error
records."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from operator import itemgetter
from typing import Any

from sqlalchemy import Connection, Row, func, select

from scanner.engine.exceptions import SKIP_MESSAGE, skipping_exceptions
from scanner.engine.types import FailureAction, RuleStatus
from scanner.store import tables as t
from scanner.store.driver_rows import driver_batches
from scanner.store.storedtext import ESCAPE, unescape_text
from scanner.store.views import ErrorInfo, ExceptionSkips, ObservationInfo, PolicyInfo, ReportResult, ResourceRef

STREAM_BATCH = 5_000
POLICY_COLUMNS = tuple(t.policies.c)  # every column, the id first


def _policy(row: Row) -> PolicyInfo:
    return PolicyInfo(kind=row.kind, namespace=row.namespace, name=row.name, digest=row.digest,
                      title=row.title, category=row.category, severity=row.severity,
                      description=row.description,
                      failure_action=FailureAction(row.failure_action), scored=row.scored)


def _policies_by_id(connection: Connection, run_id: int) -> dict[int, PolicyInfo]:
    query = (select(*POLICY_COLUMNS).join(t.run_policies, t.run_policies.c.policy_id == t.policies.c.policy_id)
             .where(t.run_policies.c.run_id == run_id))
    return {row.policy_id: _policy(row) for row in connection.execute(query)}


def run_policies(connection: Connection, run_id: int) -> list[PolicyInfo]:
    return sorted(_policies_by_id(connection, run_id).values(),
                  key=lambda p: (p.namespace, p.name, p.kind))


def run_errors(connection: Connection, run_id: int) -> list[ErrorInfo]:
    query = (select(t.sources.c.name, t.scan_errors.c.kind, t.scan_errors.c.path, t.scan_errors.c.line,
                    t.scan_errors.c.message)
             .outerjoin(t.sources, t.sources.c.source_id == t.scan_errors.c.source_id)
             .where(t.scan_errors.c.run_id == run_id).order_by(t.scan_errors.c.error_id))
    return [ErrorInfo(source=row.name, kind=row.kind, path=row.path, line=row.line,
                      message=row.message) for row in connection.execute(query)]


def exception_skips(connection: Connection, run_id: int) -> list[ExceptionSkips]:
    """The run's results skipped by policy exceptions, per policy, rule and exceptions (read
    from the skip results of the run only, through their status index)."""
    policies = _policies_by_id(connection, run_id)
    resources = func.count(t.results.c.resource_id.distinct())
    query = (select(t.results.c.policy_id, t.checks.c.rule, t.results.c.message, resources.label("resources"))
             .join(t.checks, t.checks.c.check_id == t.results.c.check_id)
             .where(t.results.c.run_id == run_id, t.results.c.status == RuleStatus.SKIP.value,
                    t.results.c.message.startswith(SKIP_MESSAGE, autoescape=True))
             .group_by(t.results.c.policy_id, t.checks.c.rule, t.results.c.message)
             .order_by(t.checks.c.rule, t.results.c.message))
    return [ExceptionSkips(policy=policies[row.policy_id], rule=row.rule, exceptions=skipping_exceptions(row.message),
                           resources=row.resources) for row in connection.execute(query)]


def policies_by_id(connection: Connection, run_id: int) -> dict[int, PolicyInfo]:
    """The policies the run evaluated, by their stored id (what ``iter_run_result_rows`` names)."""
    return _policies_by_id(connection, run_id)


_OBSERVATIONS = (
    "SELECT o.observation_id, o.resource_id, s.name, r.api_version, r.kind, r.namespace, r.name, o.path, "
    "o.document_index, o.item_index, o.line, o.commit_sha, o.overlay, o.patches "
    "FROM resource_observations o JOIN resources r ON r.resource_id = o.resource_id "
    "JOIN sources s ON s.source_id = r.source_id WHERE o.run_id = :run "
    "ORDER BY r.namespace, r.kind, r.name, s.name, o.path, o.observation_id")


def run_observations(connection: Connection, run_id: int) -> dict[int, ObservationInfo]:
    """Where the run found each resource, by observation id (one ``ResourceRef`` per resource),
    in the order reports list resources: namespace, kind, name, source, file (by the database's
    collation; read as the driver gives them)."""
    resources: dict[int, ResourceRef] = {}
    found: dict[int, ObservationInfo] = {}
    text = unescape_text
    for batch in driver_batches(connection, _OBSERVATIONS, run_id, cursor_name="scanner_run_observations"):
        for (observation_id, resource_id, source, api_version, kind, namespace, name, file, document, item, line,
             commit_sha, overlay, patches) in batch:
            resource = resources.get(resource_id)
            if resource is None:
                resource = resources[resource_id] = ResourceRef(
                    source=text(source), api_version=text(api_version), kind=text(kind), namespace=text(namespace),
                    name=text(name))
            patches = text(patches) if patches else ""
            found[observation_id] = ObservationInfo(
                resource=resource, file=text(file), document=document, item=item, line=line, commit_sha=commit_sha,
                overlay=text(overlay) if overlay else "", patches=tuple(patches.split("\n")) if patches else ())
    return found


ResultRowTuple = tuple[int, int, str, str, str, str, str, str, int]
"""(place in the order read, policy id, rule, declared rule, status, message, path, action,
observation id)"""

_RESULTS = "SELECT check_id, policy_id, status, message, path, action, observation_id FROM results WHERE run_id = :run"


CheckKey = Callable[[str, str, str], Any]
"""A sort key of a check: of its policy's namespace and name, and its rule."""


def run_result_rows(connection: Connection, run_id: int, observations: Iterable[int], *,
                    statuses: Iterable[RuleStatus] = (), check_key: CheckKey | None = None) -> list[ResultRowTuple]:
    """A run's results as narrow rows, ordered by policy, rule, then their observation's place in
    ``observations`` (the run's, as ``run_observations`` orders them, or another order of
    them): read as the driver gives them and sorted here, by the rank of each check (the
    database's, by its own collation, or by ``check_key``; equal keys rank equal) and of each
    observation, rather than sorted wide in the database. Equal texts (statuses, messages,
    paths, actions) are one string object."""
    c = t.checks.c
    if check_key is None:
        checks = {check_id: (rank, rule, declared) for check_id, rule, declared, rank in connection.execute(
            select(c.check_id, c.rule, c.declared_rule,
                   func.dense_rank().over(order_by=(c.policy_namespace, c.policy_name, c.rule))))}
    else:
        columns = select(c.check_id, c.policy_namespace, c.policy_name, c.rule, c.declared_rule)
        keyed = {check_id: (check_key(namespace, name, rule), rule, declared)
                 for check_id, namespace, name, rule, declared in connection.execute(columns)}
        ranks = {key: n for n, key in enumerate(sorted({key for key, _, _ in keyed.values()}))}
        checks = {check_id: (ranks[key], rule, declared) for check_id, (key, rule, declared) in keyed.items()}
    place = {observation_id: n for n, observation_id in enumerate(observations)}
    width = len(place) + 1
    query = _RESULTS
    if wanted := [RuleStatus(s).value for s in statuses]:  # (the enumeration's own values)
        query += " AND status IN (" + ", ".join(f"'{value}'" for value in wanted) + ")"
    rows: list[ResultRowTuple] = []
    texts: dict[str, str] = {}
    same = texts.setdefault  # (the driver makes a new string of each value of each row)
    for batch in driver_batches(connection, query, run_id, cursor_name="scanner_run_results"):
        for check_id, policy_id, status, message, path, action, observation_id in batch:
            rank, rule, declared = checks[check_id]
            if ESCAPE in message:
                message = unescape_text(message)
            if ESCAPE in path:
                path = unescape_text(path)
            rows.append((rank * width + place[observation_id], policy_id, rule, declared, same(status, status),
                         same(message, message), same(path, path), same(action, action), observation_id))
    rows.sort(key=_FIRST)
    return rows


_FIRST = itemgetter(0)


def iter_run_results(connection: Connection, run_id: int, *,
                     statuses: Iterable[RuleStatus] = ()) -> Iterator[ReportResult]:
    """A run's results ordered by policy, rule, namespace, kind, name, source, file."""
    policies = _policies_by_id(connection, run_id)
    observations = run_observations(connection, run_id)
    statuses_by_value = {s.value: s for s in RuleStatus}
    actions_by_value = {a.value: a for a in FailureAction}
    for _, policy_id, rule, declared_rule, status, message, path, action, observation_id in run_result_rows(
            connection, run_id, observations, statuses=statuses):
        ob = observations[observation_id]
        yield ReportResult(
            policy=policies[policy_id], rule=rule, declared_rule=declared_rule,
            status=statuses_by_value[status], message=message, path=path,
            action=actions_by_value[action], resource=ob.resource, file=ob.file,
            document=ob.document, item=ob.item, line=ob.line, commit_sha=ob.commit_sha, overlay=ob.overlay,
            patches=ob.patches)


def iter_run_observations(connection: Connection, run_id: int) -> Iterator[tuple[str, str, bool]]:
    """``(namespace, source, failing)`` of every resource observation with results in the run.

    What reports count besides the tallies: resources per namespace and per source, and how
    many of them fail, without reading every result into Python.
    """
    # whether an observation has results: one probe of the results' key, which starts with it;
    # whether it fails: a look-up in the run's failing results, read once through their index
    results = select(t.result_rows.c.observation_id).where(
        t.result_rows.c.observation_id == t.resource_observations.c.observation_id).exists()
    failing = t.resource_observations.c.observation_id.in_(select(t.results.c.observation_id).where(
        t.results.c.run_id == run_id, t.results.c.status == RuleStatus.FAIL.value))
    query = (select(t.resources.c.namespace, t.sources.c.name, failing)
             .select_from(t.resource_observations)
             .join(t.resources, t.resources.c.resource_id == t.resource_observations.c.resource_id)
             .join(t.sources, t.sources.c.source_id == t.resources.c.source_id)
             .where(t.resource_observations.c.run_id == run_id, results))
    for namespace, source, fails in connection.execution_options(yield_per=STREAM_BATCH).execute(query):
        yield namespace, source, bool(fails)
