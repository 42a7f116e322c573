"""Judge Kyverno's end-to-end (chainsaw) tests offline with ``scanner apply``.

    .venv/bin/python benchmarks/chainsaw_outcomes.py --kyverno /tmp/kyverno --policies /tmp/policies \\
        [--jobs 2] [--only SUBSTRING] [--json out.json] [--markdown out.md]

``--kyverno`` is a checkout of kyverno/kyverno (its ``test/conformance/chainsaw/validate`` tests
are read), ``--policies`` one of kyverno/policies (every ``.chainsaw-test`` folder). Either may be
left out.

Each test's steps are replayed against a simulated cluster: the objects the test applied or
created so far (denied ones are not stored), the Kyverno policies it created (with the patches it
made, e.g. ``validationFailureAction: Enforce``), its PolicyExceptions, the test's namespace and
the namespaces a kind cluster starts with. For every resource a step applies or creates while a
Kyverno policy in Enforce mode is active, the admission outcome is computed with

    scanner apply POLICIES --resource R --resource CLUSTER-OBJECTS --exception EXC \\
        --userinfo ADMIN --output json [--values-file OPERATION]

(denied = a ``fail`` of an Enforce rule, or an ``error`` of an Enforce rule of a policy whose
``failurePolicy`` is not ``Ignore``; admitted otherwise) and compared with what the step asserts:
an ``expect`` check ``($error != null): true`` means denied, a plain apply or create admitted.
Every Kyverno policy a step applies is also judged: the test asserts that Kyverno accepts it
(or, with an expected error, refuses it); ``scanner apply`` refusing it (exit 2 naming the policy)
is "refused".

Steps that cannot be judged offline are counted with a reason: no Enforce policy active,
mutate/generate rules that change the request or the cluster, verifyImages, image registry or
service calls, global context, policies of other engines, Kyverno's default resourceFilters,
apiCalls answered by the API server (POST), UPDATEs (``scanner apply`` cannot be given the old
object: offline the old object is the new one, so Enforce failures of an UPDATE are pre-existing
violations), scripts and commands (and steps after a script that changed the cluster), assertions
on the cluster's state (reports, readiness, generated objects), sleeps, waits and deletes.

Nothing here knows any test by name: the same rules apply to every step. The script prints a
summary (and writes JSON or Markdown when asked); exit status 0 whatever the figures.
"""

from __future__ import annotations

import argparse
import collections
import copy
import dataclasses
import glob
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import yaml

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_SCANNER = os.path.join(HERE, ".venv", "bin", "scanner")
TEST_NAMESPACE = "chainsaw-measure"
# the namespaces a kind cluster with Kyverno installed starts with
BASE_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease", "local-path-storage", "kyverno")

KYVERNO_POLICY_KINDS = {"ClusterPolicy", "Policy"}
OTHER_ENGINE_GROUPS = {"policies.kyverno.io", "admissionregistration.k8s.io"}
CLEANUP_KINDS = {"CleanupPolicy", "ClusterCleanupPolicy"}
EXCEPTION_KINDS = {"PolicyException"}
GLOBAL_CONTEXT_KINDS = {"GlobalContextEntry"}
POD_CONTROLLERS = {"DaemonSet", "Deployment", "Job", "StatefulSet", "ReplicaSet", "ReplicationController",
                   "CronJob"}

# Kinds the Kubernetes API serves cluster-scoped (CRDs a test installs add theirs).
CLUSTER_SCOPED = {
    "Namespace", "Node", "PersistentVolume", "StorageClass", "CSIDriver", "CSINode", "VolumeAttachment",
    "ClusterRole", "ClusterRoleBinding", "CustomResourceDefinition", "APIService",
    "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration", "ValidatingAdmissionPolicy",
    "ValidatingAdmissionPolicyBinding", "MutatingAdmissionPolicy", "MutatingAdmissionPolicyBinding",
    "PriorityClass", "RuntimeClass", "IngressClass", "CertificateSigningRequest", "FlowSchema",
    "PriorityLevelConfiguration", "ComponentStatus", "TokenReview", "SelfSubjectReview",
    "SubjectAccessReview", "SelfSubjectAccessReview", "SelfSubjectRulesReview", "PodSecurityPolicy",
    "ClusterPolicy", "ClusterCleanupPolicy", "ClusterPolicyReport", "ClusterEphemeralReport",
    "ValidatingPolicy", "ImageValidatingPolicy", "MutatingPolicy", "GeneratingPolicy", "DeletingPolicy",
    "GlobalContextEntry", "ClusterIssuer", "GatewayClass", "DeviceClass", "ResourceSlice", "IPAddress",
    "ServiceCIDR", "VolumeAttributesClass", "ClusterTriggerBinding", "ClusterTask",
}

# Kyverno's default resourceFilters (charts/kyverno/values.yaml config.resourceFilters): requests
# for these kinds or namespaces never reach the policies.
FILTERED_KINDS = {"Event", "Node", "APIService", "TokenReview", "SubjectAccessReview", "SelfSubjectAccessReview",
                  "Binding", "ReplicaSet", "EphemeralReport", "ClusterEphemeralReport"}
FILTERED_NAMESPACES = {"kube-system", "kube-public", "kube-node-lease", "kyverno"}

# The user chainsaw runs as on a kind cluster (kubeadm's admin.conf), with the cluster roles its
# groups are bound to.
USERINFO = {
    "apiVersion": "cli.kyverno.io/v1alpha1", "kind": "UserInfo",
    "clusterRoles": ["cluster-admin", "system:basic-user", "system:discovery", "system:public-info-viewer"],
    "userInfo": {"username": "kubernetes-admin", "groups": ["kubeadm:cluster-admins", "system:authenticated"]},
}

MUTATING_SCRIPT = re.compile(
    r"\bkubectl\b[^\n|;&]*?\b(apply|create|replace|patch|label|annotate|delete|scale|edit|run|expose|set|"
    r"taint|cordon|drain|rollout)\b")


# ---------------------------------------------------------------------------------------------
# records


@dataclasses.dataclass
class Check:
    """One judged (or not judged) admission of a resource or a policy."""

    suite: str
    test: str
    step: str
    op: str
    target: str
    file: str
    what: str = "resource"  # "resource" or "policy"
    operation: str = "CREATE"
    expected: str = ""  # denied/admitted (resource) or accepted/refused (policy)
    got: str = ""
    verdict: str = ""  # agree/disagree/not-judged
    reason: str = ""
    message: str = ""
    matched: bool = False  # the scanner gave R a non-skip result


@dataclasses.dataclass
class Job:
    """One ``scanner apply`` call: policies to judge (``checks`` of what="policy", one file each), or
    resources to judge (``checks[i]`` is about ``resources[i]``) under ``policies``."""

    policies: list[dict]
    cluster: list[dict]
    resources: list[dict]
    exceptions: list[dict]
    operation: str
    checks: list[Check]
    failure_policies: dict[str, str]
    lookup_free: bool = False

    def group_key(self) -> str | None:
        """Jobs with the same key can share one call (their resources do not see each other)."""
        if not self.lookup_free:
            return None
        return json.dumps([self.policies, self.cluster, self.exceptions, self.operation], sort_keys=True,
                          default=str)


# ---------------------------------------------------------------------------------------------
# small helpers


def group_of(api_version: str | None) -> str:
    return (api_version or "").rpartition("/")[0] if "/" in (api_version or "") else ""


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch (chainsaw's ``patch`` and ``apply`` over an existing object)."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = copy.deepcopy(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = merge_patch(out.get(key), value)
    return out


def subset(expected: Any, actual: Any) -> bool:
    """Chainsaw's plain (non-expression) resource match: ``expected`` is contained in ``actual``."""
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return False
        return all(
            k.startswith("(") or (k in actual and subset(v, actual[k])) for k, v in expected.items())
    if isinstance(expected, list):
        return isinstance(actual, list) and len(expected) == len(actual) and all(
            subset(e, a) for e, a in zip(expected, actual, strict=True))
    return expected == actual


def substitute(value: Any, bindings: dict[str, Any]) -> Any:
    """Replace ``($name)`` strings of a step template by the step's bindings."""
    if isinstance(value, dict):
        return {k: substitute(v, bindings) for k, v in value.items()}
    if isinstance(value, list):
        return [substitute(v, bindings) for v in value]
    if isinstance(value, str):
        m = re.fullmatch(r"\(\$(\w+)\)", value.strip())
        if m and m.group(1) in bindings:
            return bindings[m.group(1)]
    return value


def load_docs(path: str) -> list[dict]:
    with open(path, encoding="utf-8") as fh:
        return [d for d in yaml.safe_load_all(fh) if isinstance(d, dict)]


def rel(path: str, root: str) -> str:
    return os.path.relpath(path, root)


# ---------------------------------------------------------------------------------------------
# test discovery and step expansion


def discover(kyverno: str | None, policies: str | None) -> list[tuple[str, str, str]]:
    """(suite, root, test file) of every chainsaw test in scope."""
    found: list[tuple[str, str, str]] = []
    if kyverno:
        base = os.path.join(kyverno, "test", "conformance", "chainsaw", "validate")
        if not os.path.isdir(base):
            raise SystemExit(f"{base}: not found (is --kyverno a kyverno/kyverno checkout?)")
        found += [("kyverno", kyverno, p) for p in sorted(glob.glob(f"{base}/**/chainsaw-test.yaml", recursive=True))]
    if policies:
        paths = sorted(glob.glob(f"{policies}/**/.chainsaw-test/**/chainsaw-test.yaml", recursive=True))
        if not paths:
            raise SystemExit(f"{policies}: no .chainsaw-test folder (is --policies a kyverno/policies checkout?)")
        found += [("policies", policies, p) for p in paths]
    return found


@dataclasses.dataclass
class Step:
    name: str
    ops: list[tuple[str, dict]]


def expand_steps(test_file: str, test: dict) -> list[Step]:
    """The steps of a Test, with ``use: template`` steps expanded (their ``try`` operations)."""
    base = os.path.dirname(test_file)
    steps: list[Step] = []
    for i, raw in enumerate((test.get("spec") or {}).get("steps") or []):
        name = raw.get("name") or f"step#{i + 1}"
        ops: list[tuple[str, dict]] = []
        if "use" in raw:
            use = raw["use"]
            template = load_docs(os.path.join(base, use["template"]))[0]
            bindings = {b["name"]: b.get("value") for b in ((use.get("with") or {}).get("bindings") or [])}
            body = substitute(template.get("spec") or {}, bindings)
            raw = {**raw, "try": body.get("try") or []}
        for op in raw.get("try") or []:
            for key, value in op.items():
                if key in ("description", "name"):
                    continue
                ops.append((key, value if isinstance(value, dict) else {"value": value}))
        steps.append(Step(name, ops))
    return steps


# ---------------------------------------------------------------------------------------------
# policy facts


def failure_action_enforce(policy: dict) -> bool:
    spec = policy.get("spec") or {}
    if str(spec.get("validationFailureAction", "")).lower() == "enforce":
        return True
    if any(str(o.get("action", "")).lower() == "enforce" for o in spec.get("validationFailureActionOverrides") or []):
        return True
    for rule in spec.get("rules") or []:
        validate = rule.get("validate") or {}
        if str(validate.get("failureAction", "")).lower() == "enforce":
            return True
        if any(str(o.get("action", "")).lower() == "enforce" for o in validate.get("failureActionOverrides") or []):
            return True
    return False


def rule_kinds(rule: dict) -> set[str]:
    kinds: set[str] = set()
    match = rule.get("match") or {}
    blocks = [match, *(match.get("any") or []), *(match.get("all") or [])]
    for block in blocks:
        for kind in ((block.get("resources") or {}).get("kinds") or []):
            kinds.add(str(kind).rsplit("/", 1)[-1])
    if "Pod" in kinds:
        kinds |= POD_CONTROLLERS
    return kinds


def dependence(policies: Iterable[dict], resource: dict) -> str | None:
    """Why the admission of ``resource`` under ``policies`` cannot be judged offline, if it cannot."""
    kind = resource.get("kind")
    for policy in policies:
        text = json.dumps(policy)
        for rule in (policy.get("spec") or {}).get("rules") or []:
            kinds = rule_kinds(rule)
            hits = "*" in kinds or kind in kinds or any("*" in k for k in kinds)
            if "mutate" in rule and hits:
                return "mutate rule changes the request"
            if "verifyImages" in rule and hits:
                return "verifyImages (registry, signatures)"
            if "generate" in rule:
                return "generate rule changes the cluster"
        if '"imageRegistry"' in text:
            return "imageRegistry context (network)"
        if '"service"' in text and '"apiCall"' in text:
            return "apiCall to a service (network)"
        if '"globalReference"' in text:
            return "global context entry"
        if re.search(r'"method": "POST"', text):
            return "apiCall POST (answered by the API server)"
    return None


def uses_lookups(policies: Iterable[dict]) -> bool:
    """Whether a policy reads other objects of the cluster (API calls, ConfigMaps, CEL params)."""
    text = json.dumps(list(policies))
    return any(word in text for word in ('"apiCall"', '"configMap"', '"paramKind"', '"paramRef"'))


# ---------------------------------------------------------------------------------------------
# replaying one test


class Replay:
    """The simulated cluster of one test, step after step."""

    def __init__(self, suite: str, root: str, test_file: str, test: dict) -> None:
        self.suite, self.root, self.test_file = suite, root, test_file
        self.base = os.path.dirname(test_file)
        self.test = rel(test_file, root)
        self.objects: dict[tuple, dict] = {}
        self.policies: dict[tuple, dict] = {}
        self.exceptions: dict[tuple, dict] = {}
        self.other_engine: list[str] = []
        self.global_context = False
        self.script_changed = False
        self.cluster_scoped = set(CLUSTER_SCOPED)
        self.checks: list[Check] = []
        self.jobs: list[Job] = []
        self.test_doc = test
        for ns in (*BASE_NAMESPACES, TEST_NAMESPACE):
            self._store(namespace_object(ns))
            self._store({"apiVersion": "v1", "kind": "ServiceAccount",
                         "metadata": {"name": "default", "namespace": ns}})

    # identities ------------------------------------------------------------------------------
    def ident(self, obj: dict) -> tuple:
        meta = obj.get("metadata") or {}
        return (group_of(obj.get("apiVersion")), obj.get("kind"), meta.get("namespace") or "", meta.get("name"))

    def place(self, obj: dict) -> dict:
        """The object as chainsaw sends it: namespaced kinds without a namespace go to the test's."""
        obj = copy.deepcopy(obj)
        meta = obj.setdefault("metadata", {})
        if obj.get("kind") == "CustomResourceDefinition" and (obj.get("spec") or {}).get("scope") == "Cluster":
            self.cluster_scoped.add(((obj.get("spec") or {}).get("names") or {}).get("kind"))
        if obj.get("kind") not in self.cluster_scoped and not meta.get("namespace"):
            meta["namespace"] = TEST_NAMESPACE
        if not meta.get("name") and meta.get("generateName"):
            meta["name"] = meta["generateName"] + "x7k2q"
        if obj.get("kind") == "Namespace":
            meta.setdefault("labels", {})["kubernetes.io/metadata.name"] = meta.get("name")
        return obj

    def _store(self, obj: dict) -> None:
        self.objects[self.ident(obj)] = obj

    # operations ------------------------------------------------------------------------------
    def run(self) -> None:
        for step in expand_steps(self.test_file, self.test_doc):
            for index, (kind, op) in enumerate(step.ops):
                label = f"{step.name}/{index + 1}:{kind}"
                handler = getattr(self, f"op_{kind}", None)
                if handler is None:
                    self.not_judged(label, kind, op, f"{kind} step")
                    continue
                handler(label, kind, op)

    def not_judged(self, label: str, kind: str, op: dict, reason: str, target: str = "", file: str = "") -> None:
        self.checks.append(Check(self.suite, self.test, label.split("/")[0], label, target or kind,
                                 file or str(op.get("file", "")), verdict="not-judged", reason=reason))

    def op_script(self, label: str, kind: str, op: dict) -> None:
        content = str(op.get("content", ""))
        if content.startswith("./") or content.endswith(".sh"):
            path = os.path.join(self.base, content.split()[0])
            if os.path.isfile(path):
                with open(path, encoding="utf-8", errors="replace") as fh:
                    content = fh.read()
        if MUTATING_SCRIPT.search(content):
            self.script_changed = True
        self.not_judged(label, kind, op, "script or command")

    op_command = op_script

    def op_sleep(self, label: str, kind: str, op: dict) -> None:
        self.not_judged(label, kind, op, "sleep/wait")

    op_wait = op_sleep

    def _docs(self, op: dict) -> list[tuple[str, int, dict]]:
        if "file" in op:
            path = os.path.join(self.base, op["file"])
            return [(path, i, d) for i, d in enumerate(load_docs(path))]
        if "resource" in op:
            return [(self.test_file, 0, op["resource"])]
        return []

    def op_delete(self, label: str, kind: str, op: dict) -> None:
        ref = op.get("ref")
        docs = [d for _, _, d in self._docs(op)] if ref is None else [ref]
        for doc in docs:
            doc = self.place(doc)
            key = self.ident(doc)
            for store in (self.objects, self.policies, self.exceptions):
                for k in [k for k in store if k[1:] == key[1:] or (k[1] == key[1] and k[3] == key[3])]:
                    store.pop(k, None)
        self.not_judged(label, kind, op, "delete step")

    def op_assert(self, label: str, kind: str, op: dict) -> None:
        docs = [d for _, _, d in self._docs(op)]
        kinds = {d.get("kind") for d in docs}
        if kinds & KYVERNO_POLICY_KINDS:
            reason = "policy ready (judged with the policy's apply)"
        elif any("Report" in str(k) for k in kinds):
            reason = "report assertion (background/audit)"
        else:
            reason = "state assertion (mutation, generation, controllers)"
        self.not_judged(label, kind, op, reason, target=",".join(sorted(str(k) for k in kinds)))

    op_error = op_assert

    def expected_for(self, op: dict, doc: dict) -> str | None:
        """denied/admitted as the step asserts it for ``doc``; None when the check is not about it."""
        expects = op.get("expect") or []
        verdict = "admitted"
        for expect in expects:
            match = expect.get("match")
            if match is not None and not subset(match, doc):
                continue
            check = expect.get("check") or {}
            for key, value in check.items():
                norm = key.replace("`", "").replace(" ", "")
                if norm == "($error!=null)":
                    verdict = "denied" if value is True else "admitted"
                elif norm == "($error==null)":
                    verdict = "admitted" if value is True else "denied"
                elif "$error" in norm and norm.startswith("(contains($error"):
                    verdict = "denied" if value is True else verdict
                elif "$error" in norm:
                    return None
        return verdict

    def op_patch(self, label: str, kind: str, op: dict) -> None:
        for path, doc_index, doc in self._docs(op):
            placed = self.place(doc)
            key = self.ident(placed)
            if placed.get("kind") in KYVERNO_POLICY_KINDS:
                current = self.policies.get(key)
                if current is not None:
                    self.policies[key] = merge_patch(current, placed)
                continue
            if group_of(placed.get("apiVersion")) in OTHER_ENGINE_GROUPS:
                continue
            old = self.objects.get(key)
            new = merge_patch(old, placed) if old is not None else placed
            self.admit(label, kind, op, path, doc_index, new, "UPDATE" if old is not None else "CREATE")
        if not self._docs(op):
            self.not_judged(label, kind, op, "patch without resource")

    def op_apply(self, label: str, kind: str, op: dict) -> None:
        for path, doc_index, doc in self._docs(op):
            placed = self.place(doc)
            key = self.ident(placed)
            doc_kind = placed.get("kind")
            group = group_of(placed.get("apiVersion"))
            expected = self.expected_for(op, placed)
            if doc_kind in KYVERNO_POLICY_KINDS and group == "kyverno.io":
                self.policy_step(label, kind, op, path, doc_index, placed, expected)
            elif group in OTHER_ENGINE_GROUPS or (doc_kind in CLEANUP_KINDS and group == "kyverno.io"):
                self.other_engine.append(f"{doc_kind}/{placed['metadata'].get('name')}")
                self.not_judged(label, kind, op, f"policy of another engine ({doc_kind})", doc_kind,
                                rel(path, self.root))
            elif doc_kind in EXCEPTION_KINDS:
                if expected != "denied":
                    self.exceptions[key] = placed
                self.not_judged(label, kind, op, "PolicyException applied", doc_kind, rel(path, self.root))
            elif doc_kind in GLOBAL_CONTEXT_KINDS:
                self.global_context = True
                self.not_judged(label, kind, op, "global context entry", doc_kind, rel(path, self.root))
            else:
                exists = key in self.objects
                if kind == "create" and exists:
                    self.not_judged(label, kind, op, "create of an existing object (API error)", doc_kind,
                                    rel(path, self.root))
                    continue
                old = self.objects.get(key)
                new = merge_patch(old, placed) if old is not None else placed
                self.admit(label, kind, op, path, doc_index, new, "UPDATE" if exists else "CREATE", expected)

    op_create = op_apply

    def policy_step(self, label: str, kind: str, op: dict, path: str, doc_index: int, policy: dict,
                    expected: str | None) -> None:
        check = Check(self.suite, self.test, label.split("/")[0], label,
                      f"{policy['kind']}/{policy['metadata'].get('name')}", f"{rel(path, self.root)}#{doc_index}",
                      what="policy", expected="refused" if expected == "denied" else "accepted")
        self.checks.append(check)
        self.jobs.append(Job([policy], [], [], [], "CREATE", [check], {}))
        if expected != "denied":
            self.policies[self.ident(policy)] = policy

    def admit(self, label: str, kind: str, op: dict, path: str, doc_index: int, obj: dict, operation: str,
              expected: str | None = "admitted") -> None:
        meta = obj.get("metadata") or {}
        target = "/".join(str(x) for x in (obj.get("kind"), meta.get("namespace"), meta.get("name")) if x)
        where = f"{rel(path, self.root)}#{doc_index}"
        check = Check(self.suite, self.test, label.split("/")[0], label, target, where, operation=operation,
                      expected=expected or "")
        self.checks.append(check)
        key = self.ident(obj)
        active = [p for p in self.policies.values() if (p.get("spec") or {}).get("admission") is not False]
        reason = None
        if expected is None:
            reason = "expectation other than a denial check"
        elif obj.get("kind") in FILTERED_KINDS or meta.get("namespace") in FILTERED_NAMESPACES:
            reason = "Kyverno resourceFilters (not sent to policies)"
        elif self.other_engine:
            reason = "policy of another engine active"
        elif self.global_context:
            reason = "global context entry"
        elif not any(failure_action_enforce(p) for p in active):
            reason = "no Enforce policy active"
        elif self.script_changed:
            reason = "after a script that changed the cluster"
        else:
            reason = dependence(active, obj)
            if reason is None and operation == "UPDATE":
                reason = "UPDATE (scanner apply takes no old object)"
        if reason is not None:
            check.verdict, check.reason = "not-judged", reason
        else:
            lookup_free = not uses_lookups(active)
            cluster = [o for k, o in self.objects.items()
                       if k != key and (not lookup_free or o.get("kind") == "Namespace")]
            failure = {p["metadata"]["name"]: str((p.get("spec") or {}).get("failurePolicy") or "Fail")
                       for p in active}
            self.jobs.append(Job(copy.deepcopy(active), copy.deepcopy(cluster), [copy.deepcopy(obj)],
                                 copy.deepcopy(list(self.exceptions.values())), operation, [check], failure,
                                 lookup_free))
        # the cluster follows what the test asserts (it passes on a real cluster)
        if expected != "denied":
            self._store(obj)


def namespace_object(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": name, "labels": {"kubernetes.io/metadata.name": name}}}


# ---------------------------------------------------------------------------------------------
# running the scanner


def dump(path: str, docs: list[dict]) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        yaml.safe_dump_all(docs, fh, sort_keys=False)


def batch(jobs: list[Job], size: int = 40) -> list[Job]:
    """Merge jobs that can share a scanner call: policy checks (one file per policy) and resources
    judged under the same lookup-free policies, cluster namespaces, exceptions and operation."""
    out: list[Job] = []
    policy_jobs = [j for j in jobs if j.checks and j.checks[0].what == "policy"]
    for i in range(0, len(policy_jobs), size):
        part = policy_jobs[i:i + size]
        out.append(Job([p for j in part for p in j.policies], [], [], [], "CREATE",
                       [c for j in part for c in j.checks], {}))
    groups: dict[str, Job] = {}
    for job in jobs:
        if job.checks and job.checks[0].what == "policy":
            continue
        key = job.group_key()
        if key is None:
            out.append(job)
            continue
        group = groups.get(key)
        if group is None or len(group.resources) >= size:
            group = groups[key] = dataclasses.replace(job, resources=[], checks=[])
            out.append(group)
        group.resources += job.resources
        group.checks += job.checks
    return out


def run_job(scanner: str, job: Job) -> None:
    with tempfile.TemporaryDirectory(prefix="chainsaw-outcomes-") as tmp:
        rows, stderr, _code = _invoke(scanner, job, tmp)
    errors = [ln for ln in stderr.splitlines() if ln.startswith("error:")]
    if not job.resources:
        for index, check in enumerate(job.checks):
            mine = [ln for ln in errors if f"policy-{index:04d}.yaml" in ln]
            check.got = "refused" if mine else "accepted"
            check.message = " | ".join(ln.replace(tmp + os.sep, "") for ln in mine)[:600]
            check.verdict = "agree" if check.got == check.expected else "disagree"
        return
    for index, check in enumerate(job.checks):
        mine = [r for r in rows if r["source"]["file"].endswith("resource.yaml") and r["source"]["document"] == index]
        denying = [r for r in mine if r.get("action") == "Enforce" and (
            r["status"] == "fail" or (r["status"] == "error"
                                      and job.failure_policies.get(r["policy"], "Fail") != "Ignore"))]
        check.matched = any(r["status"] != "skip" for r in mine)
        check.got = "denied" if denying else "admitted"
        shown = denying or [r for r in mine if r["status"] in ("fail", "error")]
        msg = "; ".join(f"{r['policy']}/{r['rule']} {r['status']}: {r['message']}" for r in shown)
        if errors:
            msg = (msg + " | " if msg else "") + " | ".join(ln.replace(tmp + os.sep, "") for ln in errors)
        check.message = msg[:600]
        check.verdict = "agree" if check.got == check.expected else "disagree"


def _invoke(scanner: str, job: Job, tmp: str) -> tuple[list[dict], str, int]:
    if job.resources:
        dump(os.path.join(tmp, "policies.yaml"), job.policies)
        args = [scanner, "apply", os.path.join(tmp, "policies.yaml"), "--output", "json"]
    else:
        os.mkdir(os.path.join(tmp, "policies"))
        for index, policy in enumerate(job.policies):
            dump(os.path.join(tmp, "policies", f"policy-{index:04d}.yaml"), [policy])
        args = [scanner, "apply", os.path.join(tmp, "policies"), "--output", "json"]
    resources = job.resources or [{"apiVersion": "v1", "kind": "ConfigMap",
                                   "metadata": {"name": "probe", "namespace": TEST_NAMESPACE}}]
    dump(os.path.join(tmp, "resource.yaml"), resources)
    args += ["--resource", os.path.join(tmp, "resource.yaml")]
    if job.cluster:
        dump(os.path.join(tmp, "cluster.yaml"), job.cluster)
        args += ["--resource", os.path.join(tmp, "cluster.yaml")]
    if job.exceptions:
        dump(os.path.join(tmp, "exceptions.yaml"), job.exceptions)
        args += ["--exception", os.path.join(tmp, "exceptions.yaml")]
    if job.resources:
        dump(os.path.join(tmp, "userinfo.yaml"), [USERINFO])
        args += ["--userinfo", os.path.join(tmp, "userinfo.yaml")]
    if job.operation != "CREATE":
        dump(os.path.join(tmp, "values.yaml"), [{"apiVersion": "cli.kyverno.io/v1alpha1", "kind": "Value",
                                                 "globalValues": {"request.operation": job.operation}}])
        args += ["--values-file", os.path.join(tmp, "values.yaml")]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=600, check=False)
    try:
        rows = json.loads(proc.stdout) if proc.stdout.strip() else []
    except json.JSONDecodeError:
        rows = []
    return rows, proc.stderr, proc.returncode


# ---------------------------------------------------------------------------------------------
# main


def replay_all(tests: list[tuple[str, str, str]]) -> Iterator[Replay]:
    for suite, root, path in tests:
        try:
            docs = load_docs(path)
        except (OSError, yaml.YAMLError) as exc:
            print(f"warning: {path}: {exc}", file=sys.stderr)
            continue
        for doc in docs:
            if doc.get("kind") != "Test":
                continue
            replay = Replay(suite, root, path, doc)
            try:
                replay.run()
            except (OSError, yaml.YAMLError, KeyError, IndexError, TypeError) as exc:
                replay.checks.append(Check(suite, rel(path, root), "-", "-", "-", "", verdict="not-judged",
                                           reason=f"test not readable offline ({type(exc).__name__})"))
                replay.jobs = []
            yield replay


def summarize(checks: list[Check]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for what in ("resource", "policy"):
        sel = [c for c in checks if c.what == what and c.verdict in ("agree", "disagree")]
        agree = sum(c.verdict == "agree" for c in sel)
        out[what] = {"judged": len(sel), "agreed": agree, "disagreed": len(sel) - agree,
                     "agreed_pct": round(100.0 * agree / len(sel), 2) if sel else None}
        if what == "resource":
            matched = [c for c in sel if c.matched or c.expected == "denied"]
            out[what]["judged_where_a_policy_applied"] = len(matched)
            out[what]["agreed_where_a_policy_applied"] = sum(c.verdict == "agree" for c in matched)
            by_suite = collections.defaultdict(lambda: [0, 0])
            for c in sel:
                by_suite[c.suite][0] += 1
                by_suite[c.suite][1] += c.verdict == "agree"
            out[what]["by_suite"] = {k: {"judged": v[0], "agreed": v[1]} for k, v in sorted(by_suite.items())}
    not_judged = collections.Counter(c.reason for c in checks if c.verdict == "not-judged")
    out["not_judged"] = dict(not_judged.most_common())
    out["disagreements"] = [dataclasses.asdict(c) for c in checks if c.verdict == "disagree"]
    return out


def markdown(summary: dict[str, Any]) -> str:
    lines = ["| judged | what | agreed | disagreed | agreed % |", "|---|---|---|---|---|"]
    for what in ("resource", "policy"):
        s = summary[what]
        lines.append(f"| {s['judged']} | {what} admissions | {s['agreed']} | {s['disagreed']} | {s['agreed_pct']} |")
    r = summary["resource"]
    lines += ["", f"Resource admissions where a policy gave a non-skip result or the test expects a denial: "
              f"{r['judged_where_a_policy_applied']} judged, {r['agreed_where_a_policy_applied']} agreed.", "",
              "| not judged: reason | count |", "|---|---|"]
    lines += [f"| {k} | {v} |" for k, v in summary["not_judged"].items()]
    lines += ["", "| test | step | target | op | expected | got | scanner message |", "|---|---|---|---|---|---|---|"]
    for d in summary["disagreements"]:
        msg = d["message"].replace("|", "\\|").replace("\n", " ")
        lines.append(f"| {d['test']} | {d['op']} | {d['target']} ({d['file']}) | {d['operation']} | "
                     f"{d['expected']} | {d['got']} | {msg} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kyverno", help="checkout of kyverno/kyverno (test/conformance/chainsaw/validate)")
    parser.add_argument("--policies", help="checkout of kyverno/policies (.chainsaw-test folders)")
    parser.add_argument("--scanner", default=DEFAULT_SCANNER, help="scanner executable (default: %(default)s)")
    parser.add_argument("--jobs", type=int, default=2, help="scanner processes at once (default: 2)")
    parser.add_argument("--only", action="append", default=[], help="only tests whose path contains this")
    parser.add_argument("--json", help="write the summary and every check as JSON here")
    parser.add_argument("--markdown", help="write the summary as Markdown tables here")
    args = parser.parse_args(argv)
    if not args.kyverno and not args.policies:
        parser.error("give --kyverno and/or --policies")
    tests = discover(args.kyverno, args.policies)
    if args.only:
        tests = [t for t in tests if any(o in t[2] for o in args.only)]
    start = time.perf_counter()
    replays = list(replay_all(tests))
    jobs = batch([j for r in replays for j in r.jobs])
    with ThreadPoolExecutor(max(1, args.jobs)) as pool:
        for i, _ in enumerate(pool.map(lambda j: run_job(args.scanner, j), jobs), 1):
            if i % 200 == 0:
                print(f"... {i}/{len(jobs)} scanner calls", file=sys.stderr)
    checks = [c for r in replays for c in r.checks]
    summary = summarize(checks)
    summary["tests"] = len(replays)
    summary["scanner_calls"] = len(jobs)
    summary["seconds"] = round(time.perf_counter() - start, 1)
    text = markdown(summary)
    print(f"{len(replays)} tests, {len(jobs)} scanner calls, {summary['seconds']} s")
    print(text)
    if args.markdown:
        with open(args.markdown, "w", encoding="utf-8") as fh:
            fh.write(text)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump({"summary": summary, "checks": [dataclasses.asdict(c) for c in checks]}, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
