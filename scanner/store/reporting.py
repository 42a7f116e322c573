"""What reports read about one run: its results joined with policy metadata and
provenance (streamed), the policies it evaluated, and its error records."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from sqlalchemy import Connection, Row, func, select

from scanner.engine.exceptions import SKIP_MESSAGE, skipping_exceptions
from scanner.engine.types import FailureAction, RuleStatus
from scanner.store.models import (
    Check,
    Policy,
    Resource,
    ResourceObservation,
    Result,
    RunPolicy,
    ScanError,
    Source,
)
from scanner.store.views import ErrorInfo, ExceptionSkips, PolicyInfo, ReportResult, ResourceRef

STREAM_BATCH = 5_000
POLICY_COLUMNS = (Policy.policy_id, Policy.kind, Policy.namespace, Policy.name, Policy.digest,
                  Policy.title, Policy.category, Policy.severity, Policy.description,
                  Policy.failure_action, Policy.scored)


def _policy(row: Row) -> PolicyInfo:
    return PolicyInfo(kind=row.kind, namespace=row.namespace, name=row.name, digest=row.digest,
                      title=row.title, category=row.category, severity=row.severity,
                      description=row.description,
                      failure_action=FailureAction(row.failure_action), scored=row.scored)


def _policies_by_id(connection: Connection, run_id: int) -> dict[int, PolicyInfo]:
    query = (select(*POLICY_COLUMNS).join(RunPolicy, RunPolicy.policy_id == Policy.policy_id)
             .where(RunPolicy.run_id == run_id))
    return {row.policy_id: _policy(row) for row in connection.execute(query)}


def run_policies(connection: Connection, run_id: int) -> list[PolicyInfo]:
    return sorted(_policies_by_id(connection, run_id).values(),
                  key=lambda p: (p.namespace, p.name, p.kind))


def run_errors(connection: Connection, run_id: int) -> list[ErrorInfo]:
    query = (select(Source.name, ScanError.kind, ScanError.path, ScanError.line,
                    ScanError.message)
             .outerjoin(Source, Source.source_id == ScanError.source_id)
             .where(ScanError.run_id == run_id).order_by(ScanError.error_id))
    return [ErrorInfo(source=row.name, kind=row.kind, path=row.path, line=row.line,
                      message=row.message) for row in connection.execute(query)]


def exception_skips(connection: Connection, run_id: int) -> list[ExceptionSkips]:
    """The run's results skipped by policy exceptions, per policy, rule and exceptions (read
    from the skip results of the run only, through their status index)."""
    policies = _policies_by_id(connection, run_id)
    resources = func.count(Result.resource_id.distinct())
    query = (select(Result.policy_id, Check.rule, Result.message, resources.label("resources"))
             .join(Check, Check.check_id == Result.check_id)
             .where(Result.run_id == run_id, Result.status == RuleStatus.SKIP.value,
                    Result.message.startswith(SKIP_MESSAGE, autoescape=True))
             .group_by(Result.policy_id, Check.rule, Result.message)
             .order_by(Check.rule, Result.message))
    return [ExceptionSkips(policy=policies[row.policy_id], rule=row.rule, exceptions=skipping_exceptions(row.message),
                           resources=row.resources) for row in connection.execute(query)]


def iter_run_results(connection: Connection, run_id: int, *,
                     statuses: Iterable[RuleStatus] = ()) -> Iterator[ReportResult]:
    """A run's results ordered by policy, rule, namespace, kind, name, source, file."""
    policies = _policies_by_id(connection, run_id)
    query = (select(Result.policy_id, Check.rule, Check.declared_rule, Result.status,
                    Result.message, Result.path, Result.action, Source.name.label("source"),
                    Resource.api_version, Resource.kind, Resource.namespace,
                    Resource.name, ResourceObservation.path.label("file"),
                    ResourceObservation.document_index, ResourceObservation.item_index,
                    ResourceObservation.line, ResourceObservation.commit_sha)
             .join(Check, Check.check_id == Result.check_id)
             .join(ResourceObservation,
                   ResourceObservation.observation_id == Result.observation_id)
             .join(Resource, Resource.resource_id == Result.resource_id)
             .join(Source, Source.source_id == Resource.source_id)
             .where(Result.run_id == run_id)
             .order_by(Check.policy_namespace, Check.policy_name, Check.rule,
                       Resource.namespace, Resource.kind, Resource.name, Source.name,
                       ResourceObservation.path, ResourceObservation.observation_id))
    wanted = [RuleStatus(s).value for s in statuses]
    if wanted:
        query = query.where(Result.status.in_(wanted))
    stream = connection.execution_options(yield_per=STREAM_BATCH).execute(query)
    statuses_by_value = {s.value: s for s in RuleStatus}
    actions_by_value = {a.value: a for a in FailureAction}
    resources: dict[tuple, ResourceRef] = {}  # one object per resource, shared by its results
    for (policy_id, rule, declared_rule, status, message, path, action, source, api_version, kind,
         namespace, name, file, document, item, line, commit_sha) in stream:
        key = (source, api_version, kind, namespace, name)
        resource = resources.get(key)
        if resource is None:
            resource = resources[key] = ResourceRef(source=source, api_version=api_version, kind=kind,
                                                    namespace=namespace, name=name)
        yield ReportResult(
            policy=policies[policy_id], rule=rule, declared_rule=declared_rule,
            status=statuses_by_value[status], message=message, path=path,
            action=actions_by_value[action], resource=resource, file=file,
            document=document, item=item, line=line, commit_sha=commit_sha)


def iter_run_observations(connection: Connection, run_id: int) -> Iterator[tuple[str, str, bool]]:
    """``(namespace, source, failing)`` of every resource observation with results in the run.

    What reports count besides the tallies: resources per namespace and per source, and how
    many of them fail, without reading every result into Python.
    """
    # whether an observation has results: one probe of the results' key, which starts with it;
    # whether it fails: a look-up in the run's failing results, read once through their index
    results = select(Result.observation_id).where(
        Result.observation_id == ResourceObservation.observation_id).exists()
    failing = ResourceObservation.observation_id.in_(select(Result.observation_id).where(
        Result.run_id == run_id, Result.status == RuleStatus.FAIL.value))
    query = (select(Resource.namespace, Source.name, failing)
             .select_from(ResourceObservation)
             .join(Resource, Resource.resource_id == ResourceObservation.resource_id)
             .join(Source, Source.source_id == Resource.source_id)
             .where(ResourceObservation.run_id == run_id, results))
    for namespace, source, fails in connection.execution_options(yield_per=STREAM_BATCH).execute(query):
        yield namespace, source, bool(fails)
