"""Fixed report data for the report tests: a small realistic run and a hostile one."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from scanner.engine.types import FailureAction, RuleStatus
from scanner.report.assemble import assemble_report, source_coverage
from scanner.report.data import (
    ErrorEntry,
    ExceptionApplied,
    PolicyInfo,
    ReportData,
    ResourceInfo,
    ResultChange,
    ResultRecord,
    RunInfo,
    Severity,
    SourceInfo,
    TrendPoint,
)

T0 = datetime(2024, 3, 1, 6, 0, 0, tzinfo=UTC)
PLATFORM_SHA = "3f9a1c2b7d4e5f60718293a4b5c6d7e8f9012345"
APPS_SHA = "b1e2d3c4a5f60718293a4b5c6d7e8f9012345678"

POLICIES = (
    PolicyInfo(name="disallow-privileged", title="Disallow Privileged Containers",
               category="Pod Security Standards (Baseline)", severity=Severity.HIGH,
               description="Privileged mode disables most security mechanisms.",
               action=FailureAction.ENFORCE,
               digest="sha256:1111111111111111111111111111111111111111111111111111111111111111",
               path="policies/disallow-privileged.yaml", rules=("privileged-containers",)),
    PolicyInfo(name="require-labels", title="Require Labels", category="Best Practices",
               severity=Severity.MEDIUM, description="Every workload needs an app label.",
               action=FailureAction.AUDIT,
               digest="sha256:2222222222222222222222222222222222222222222222222222222222222222",
               path="policies/require-labels.yaml", rules=("check-app-label", "check-team")),
    PolicyInfo(name="require-limits", title="Require Limits", category="Best Practices",
               severity=Severity.LOW, description="", action=FailureAction.AUDIT,
               digest="sha256:3333333333333333333333333333333333333333333333333333333333333333",
               path="policies/require-limits.yaml", rules=("validate-resources",)),
    PolicyInfo(name="team-naming", title="", category="", severity=None, description="",
               action=FailureAction.AUDIT,
               digest="sha256:4444444444444444444444444444444444444444444444444444444444444444",
               path="policies/team-naming.yaml", rules=("name-prefix",)),
)


def _resource(kind: str, namespace: str, name: str, source: str, path: str, line: int,
              commit: str, overlay: str = "", patches: tuple[str, ...] = (), **labels: str) -> ResourceInfo:
    api = {"Deployment": "apps/v1", "Namespace": "v1", "Pod": "v1"}[kind]
    return ResourceInfo(api_version=api, kind=kind, namespace=namespace, name=name,
                        source=source, path=path, line=line, commit=commit,
                        labels=tuple(sorted(labels.items())),
                        annotations=(("owner", "team-a@example.com"),), overlay=overlay, patches=patches)


def reassembled(data: ReportData, **changes: Any) -> ReportData:
    """``data`` assembled again, with some of its facts (``assemble_report`` arguments) replaced."""
    facts: dict[str, Any] = {
        "run": data.run, "policies": data.policies, "results": data.results, "errors": data.errors,
        "previous_run_id": data.previous_run_id, "new_findings": data.new_findings,
        "resolved_findings": data.resolved_findings, "trend": data.trend, "exceptions": data.exceptions,
        "not_evaluated": data.not_evaluated}
    return assemble_report(**{**facts, **changes})


def sample_report_data() -> ReportData:
    web = _resource("Deployment", "shop", "web", "platform", "apps/shop/web.yaml", 1,
                    PLATFORM_SHA, app="web")
    db = _resource("Deployment", "shop", "db", "platform", "apps/shop/db.yaml", 12,
                   PLATFORM_SHA)
    debug = _resource("Pod", "tools", "debug", "apps", "tools/debug.yaml", 3, APPS_SHA,
                      app="debug", team="sre")
    ns = _resource("Namespace", "", "shop", "platform", "namespaces.yaml", 1, PLATFORM_SHA)
    team_ns = _resource("Namespace", "", "team-tools", "platform", "namespaces.yaml", 9,
                        PLATFORM_SHA)
    R, S = ResultRecord, RuleStatus
    results = [
        R("disallow-privileged", "privileged-containers", S.PASS, "", web, FailureAction.ENFORCE),
        R("disallow-privileged", "privileged-containers", S.PASS, "", db, FailureAction.ENFORCE),
        R("disallow-privileged", "privileged-containers", S.FAIL,
          "validation error: privileged mode is disallowed. rule privileged-containers failed "
          "at path /spec/containers/0/securityContext/privileged/", debug,
          FailureAction.ENFORCE),
        R("require-labels", "check-app-label", S.PASS, "", web),
        R("require-labels", "check-app-label", S.FAIL,
          "validation error: label app is required. rule check-app-label failed at path "
          "/metadata/labels/app/", db),
        R("require-labels", "check-app-label", S.SKIP, "", debug, exception="tools/allow-debug"),
        R("require-labels", "check-team", S.WARN, "label team is recommended", web),
        R("require-limits", "validate-resources", S.FAIL,
          "validation error: CPU and memory limits are required.", web),
        R("require-limits", "validate-resources", S.ERROR,
          "failed to evaluate preconditions: unknown variable request.object.spec.x", db),
        R("team-naming", "name-prefix", S.PASS, "", team_ns),
        R("team-naming", "name-prefix", S.FAIL, "namespace name must start with team-", ns),
    ]
    run = RunInfo(
        run_id=42, started_at=T0, finished_at=T0 + timedelta(seconds=83.4),
        scanner_version="0.1.0", status="partial", trigger="schedule",
        policy_set_digest="sha256:abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789",
        resources=6, documents=7,
        sources=(
            SourceInfo(name="platform", type="git", url="https://git.example.com/platform.git",
                       ref="main", commit_sha=PLATFORM_SHA,
                       commit_time=T0 - timedelta(hours=3)),
            SourceInfo(name="apps", type="git", url="ssh://git@git.example.com/apps.git",
                       ref="release-1.4", commit_sha=APPS_SHA,
                       commit_time=T0 - timedelta(days=1)),
            SourceInfo(name="legacy", type="git", url="https://git.example.com/legacy.git",
                       ref="main", error="clone failed: repository not found"),
        ),
    )
    trend = [TrendPoint(run_id=38 + i, started_at=T0 - timedelta(days=4 - i),
                        failures={"critical": 0, "high": h, "medium": m, "low": lo,
                                  "info": 0, "unset": u})
             for i, (h, m, lo, u) in enumerate([(3, 4, 2, 0), (2, 4, 2, 1), (2, 3, 1, 1),
                                               (1, 2, 1, 1), (1, 1, 1, 1)])]
    return assemble_report(
        run=run, policies=POLICIES, results=results,
        errors=[ErrorEntry("legacy", "legacy", "clone failed: repository not found"),
                ErrorEntry("apps", "tools/broken.yaml:7:3",
                           "invalid YAML: mapping values are not allowed here"),
                ErrorEntry("", "policies/bad.yaml:9:11",
                           "invalid policy bad: at least one kind is required")],
        not_evaluated=[ErrorEntry("", "policies/add-labels.yaml:1", "not evaluated: ClusterPolicy 'add-labels': it "
                                  "has no validate rule (only mutate rules); a scan evaluates validate rules only")],
        previous_run_id=41,
        new_findings=[ResultChange("require-limits", "validate-resources", "Deployment",
                                   "shop", "web", "platform", S.PASS, S.FAIL,
                                   "validation error: CPU and memory limits are required.",
                                   path="apps/shop/web.yaml", line=1, commit=PLATFORM_SHA)],
        resolved_findings=[ResultChange("disallow-privileged", "privileged-containers",
                                        "Deployment", "shop", "db", "platform", S.FAIL,
                                        S.PASS, "", path="apps/shop/db.yaml", line=12,
                                        commit=PLATFORM_SHA)],
        trend=trend,
        exceptions=[ExceptionApplied(name="allow-debug", namespace="tools",
                                     policy="require-labels", rule="check-app-label",
                                     resources=1, reason="debug pods are short-lived",
                                     path="exceptions/allow-debug.yaml")],
    )


def overlay_report_data() -> ReportData:
    """A run over a Kustomize base rendered by two overlays (prod patches it), beside a file
    read as it is: one defect of the base is one group with its two overlays."""
    api_dev = _resource("Deployment", "shop-dev", "api", "platform", "apps/api/base/deploy.yaml", 5,
                        PLATFORM_SHA, overlay="apps/api/overlays/dev", app="api")
    api_prod = _resource("Deployment", "shop-prod", "api", "platform", "apps/api/base/deploy.yaml", 5,
                         PLATFORM_SHA, overlay="apps/api/overlays/prod",
                         patches=("apps/api/overlays/prod/replicas.yaml",), app="api")
    plain = _resource("Deployment", "shop", "web", "platform", "apps/shop/web.yaml", 1, PLATFORM_SHA)
    R, S = ResultRecord, RuleStatus
    limits = "validation error: CPU and memory limits are required."
    results = [
        R("require-limits", "validate-resources", S.FAIL, limits, api_dev),
        R("require-limits", "validate-resources", S.FAIL, limits, api_prod),
        R("require-limits", "validate-resources", S.FAIL, limits, plain),
        R("require-labels", "check-app-label", S.PASS, "", api_dev),
        R("require-labels", "check-app-label", S.PASS, "", api_prod),
    ]
    run = RunInfo(run_id=43, started_at=T0, finished_at=T0 + timedelta(seconds=12),
                  scanner_version="0.1.0", status="succeeded", trigger="manual",
                  policy_set_digest="sha256:" + "0" * 64,
                  sources=(SourceInfo(name="platform", type="git", url="https://git.example.com/platform.git",
                                      ref="main", commit_sha=PLATFORM_SHA, commit_time=T0 - timedelta(hours=3)),))
    return assemble_report(
        run=run, policies=[p for p in POLICIES if p.name in ("require-limits", "require-labels")],
        results=results, previous_run_id=42,
        new_findings=[ResultChange("require-limits", "validate-resources", "Deployment", "shop-prod", "api",
                                   "platform", None, S.FAIL, limits, path="apps/api/base/deploy.yaml", line=5,
                                   commit=PLATFORM_SHA, overlay="apps/api/overlays/prod")],
        coverage=source_coverage(OVERLAY_COVERAGE, [
            ("platform", "not-scanned", ErrorEntry("platform", "argo/apps.yaml:12", "not scanned: "
                                                   "https://charts.example/stable chart redis (the chart repository "
                                                   "is not one of the scanned sources; deployed by Application "
                                                   "argocd/cache)")),
            ("platform", "yaml", ErrorEntry("platform", "broken.yaml:1", "a YAML error is not a coverage gap"))]),
    )


OVERLAY_COVERAGE = [  # (source, what rendered, resources, files), as the store counts them
    ("platform", "", 1, 1),
    ("platform", "apps/api/overlays/dev", 1, 1),
    ("platform", "apps/api/overlays/prod", 1, 1),
    ("platform", "chart charts/web (release web in shop, values charts/web/values-prod.yaml)", 3, 2),
    ("platform", "Application argocd/guestbook (argo/apps.yaml:1)", 2, 2),
    ("platform", "overlay apps/cache: chart apps/cache/charts/redis (release cache in data)", 4, 3),
]


PAYLOADS = (
    "<script>document.title='PWNED'</script>",
    "<img src=x onerror=\"window.__pwned=1;document.title='PWNED'\">",
    "\"><svg onload=\"window.__pwned=1\"></svg>",
    "'><iframe srcdoc=\"<script>parent.__pwned=1</script>\"></iframe>",
    "</style></script><script>window.__pwned=1</script>",
    "{{ 7*7 }}{% raw %}",
    "javascript:window.__pwned=1",
)


def hostile_report_data() -> ReportData:
    """A run whose names, labels, annotations, messages, paths and sources carry payloads."""
    p = PAYLOADS
    resources = [
        ResourceInfo(api_version="apps/v1", kind="Deployment", namespace=f"ns-{p[0]}",
                     name=f"web{p[i % len(p)]}", source=f"src{p[2]}",
                     path=f"apps/{p[4]}/web-{i}.yaml", line=i + 1, commit=p[1],
                     labels=(("app", p[0]), (p[1], p[2]), ("team", p[4])),
                     annotations=((p[3], p[0]), ("note", p[1] + "\u2028" + p[5])))
        for i in range(len(p))
    ]
    policy = PolicyInfo(name=f"policy{p[0]}", title=f"Title {p[1]}", category=p[2],
                        severity=Severity.CRITICAL, description=p[3],
                        action=FailureAction.ENFORCE, digest=f"sha256:{p[4]}",
                        path=f"policies/{p[0]}.yaml", rules=(f"rule{p[2]}",))
    results = [
        ResultRecord(policy=policy.name, rule=f"rule{p[2]}",
                     status=(RuleStatus.FAIL, RuleStatus.WARN, RuleStatus.ERROR,
                             RuleStatus.PASS)[i % 4],
                     message=f"message {p[i % len(p)]} \x00\x07 end", resource=r,
                     action=FailureAction.ENFORCE, exception=p[5] if i == 3 else "")
        for i, r in enumerate(resources)
    ]
    run = RunInfo(run_id=7, started_at=T0, finished_at=T0 + timedelta(seconds=5),
                  scanner_version=f"0.1.0{p[0]}", status=p[1], trigger=p[2],
                  policy_set_digest=p[3],
                  sources=(SourceInfo(name=f"src{p[2]}", type="git", url=p[6], ref=p[0],
                                      commit_sha=p[1], commit_time=T0, error=p[4]),))
    change = ResultChange(policy=policy.name, rule=f"rule{p[2]}", kind="Deployment",
                          namespace=p[0], name=p[1], source=p[2], status_before=None,
                          status_after=RuleStatus.FAIL, message=p[3])
    return assemble_report(
        run=run, policies=[policy], results=results,
        errors=[ErrorEntry(source=p[0], location=f"{p[1]}:3", message=p[2])],
        previous_run_id=6, new_findings=[change], resolved_findings=[change],
        trend=[TrendPoint(run_id=6, started_at=T0 - timedelta(days=1),
                          failures={"critical": 2}),
               TrendPoint(run_id=7, started_at=T0, failures={"critical": 1, "unset": 1})],
        exceptions=[ExceptionApplied(name=p[0], namespace=p[1], policy=policy.name,
                                     rule=p[2], resources=1, reason=p[3], path=p[4])],
        coverage=source_coverage([(f"src{p[2]}", f"chart {p[0]} (release {p[3]})", 2, 1), (f"src{p[2]}", p[4], 1, 1)],
                                 [(f"src{p[2]}", "not-scanned", ErrorEntry(p[2], f"{p[1]}:1", f"not scanned: {p[6]}"))]),
    )
