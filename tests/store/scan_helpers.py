"""Small builders for store tests: a scan described as {resource: {(policy, rule): status}}."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime

from scanner.engine.types import FailureAction, RuleStatus
from scanner.store import (
    ErrorRecord,
    PolicyRecord,
    ResourceRecord,
    ResultRecord,
    RunStart,
    RunStatus,
    SourceRecord,
    SourceType,
    Store,
)

SEVERITY = {"require-labels": "medium", "disallow-latest": "high", "ns-policy": "low"}


def policy(name: str, digest: str = "v1", namespace: str = "") -> PolicyRecord:
    return PolicyRecord(kind="Policy" if namespace else "ClusterPolicy", name=name,
                        namespace=namespace, digest=f"sha256:{name}:{digest}",
                        title=name.replace("-", " ").title(), category="Best Practices",
                        severity=SEVERITY.get(name, "medium"),
                        failure_action=FailureAction.ENFORCE if name == "disallow-latest"
                        else FailureAction.AUDIT)


def pod(name: str, namespace: str = "default", source: str = "repo", path: str = "",
        line: int = 1) -> ResourceRecord:
    return ResourceRecord(source=source, api_version="v1", kind="Pod", name=name,
                          namespace=namespace, path=path or f"apps/{name}.yaml", line=line,
                          commit_sha="c0ffee")


Outcome = Mapping[ResourceRecord, Mapping[tuple[str, str], RuleStatus]]


def scan(store: Store, started_at: datetime, outcome: Outcome, *,
         policies: Iterable[PolicyRecord] | None = None,
         sources: Iterable[SourceRecord] = (), errors: Iterable[ErrorRecord] = (),
         status: RunStatus | None = None) -> int:
    """Store one finished run and return its id."""
    wanted = list(policies) if policies is not None else [
        policy(name) for name in sorted({p for r in outcome.values() for p, _ in r})]
    source_list = list(sources) or [SourceRecord(name=n, type=SourceType.GIT,
                                                 url=f"https://git.example/{n}.git",
                                                 commit_sha="c0ffee")
                                    for n in sorted({r.source for r in outcome} or {"repo"})]
    with store.begin_run(RunStart(started_at=started_at, scanner_version="0.1.0")) as run:
        for source in source_list:
            run.add_source(source)
        run.add_policies(wanted)
        run.add_resources(outcome)
        run.add_results(
            ResultRecord(policy=p, rule=rule, resource=resource, status=st,
                         message=f"{rule} {st}", path="/spec" if st == "fail" else "")
            for resource, results in outcome.items() for (p, rule), st in results.items())
        run.add_errors(errors)
        run.finish(status)
    return run.run_id
