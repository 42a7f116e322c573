"""podSecurity sub-rule: controls, levels, versions, exclusions, controllers, messages."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from scanner.engine.podsecurity.levels import evaluate_pod_security, validate_pod_security_spec
from scanner.engine.types import RuleStatus

GOOD_CONTAINER = {
    "name": "c",
    "image": "nginx",
    "securityContext": {
        "allowPrivilegeEscalation": False,
        "runAsNonRoot": True,
        "seccompProfile": {"type": "RuntimeDefault"},
        "capabilities": {"drop": ["ALL"]},
    },
}


def pod(spec_extra: dict[str, Any] | None = None, container: dict[str, Any] | None = None,
        annotations: dict[str, str] | None = None) -> dict[str, Any]:
    c = yaml.safe_load(yaml.safe_dump(GOOD_CONTAINER))
    for key, value in (container or {}).items():
        if key == "securityContext":
            c["securityContext"].update(value)
        else:
            c[key] = value
    meta: dict[str, Any] = {"name": "p"}
    if annotations:
        meta["annotations"] = annotations
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta,
            "spec": {"containers": [c], **(spec_extra or {})}}


def run(resource: dict[str, Any], level: str = "restricted", version: str | None = "latest",
        excludes: list[dict[str, Any]] | None = None):
    return evaluate_pod_security(resource, "r", level, version, excludes or [])


def failing_ids(resource: dict[str, Any], level: str = "restricted",
                version: str | None = "latest") -> set[str]:
    return {c.id for c in run(resource, level, version).checks}


BASELINE_VIOLATIONS = [
    pytest.param(pod({"securityContext": {"windowsOptions": {"hostProcess": True}}}),
                 "windowsHostProcess", id="pod-host-process"),
    pytest.param(pod({"hostNetwork": True}), "hostNamespaces", id="host-network"),
    pytest.param(pod({"hostPID": True}), "hostNamespaces", id="host-pid"),
    pytest.param(pod(container={"securityContext": {"privileged": True}}), "privileged",
                 id="privileged-container"),
    pytest.param(pod(container={"securityContext": {"capabilities": {
        "drop": ["ALL"], "add": ["SYS_ADMIN"]}}}), "capabilities_baseline",
                 id="capability-sys-admin"),
    pytest.param(pod({"volumes": [{"name": "v", "hostPath": {"path": "/etc"}}]}),
                 "hostPathVolumes", id="host-path-volume"),
    pytest.param(pod(container={"ports": [{"containerPort": 80, "hostPort": 8080}]}),
                 "hostPorts", id="host-port"),
    pytest.param(pod(annotations={"container.apparmor.security.beta.kubernetes.io/c":
                                  "unconfined"}), "appArmorProfile", id="apparmor-annotation"),
    pytest.param(pod({"securityContext": {"appArmorProfile": {"type": "Unconfined"}}}),
                 "appArmorProfile", id="apparmor-pod-field"),
    pytest.param(pod(container={"securityContext": {"seLinuxOptions": {"type": "spc_t"}}}),
                 "seLinuxOptions", id="selinux-type"),
    pytest.param(pod({"securityContext": {"seLinuxOptions": {"user": "root"}}}),
                 "seLinuxOptions", id="selinux-user"),
    pytest.param(pod(container={"securityContext": {"procMount": "Unmasked"}}), "procMount",
                 id="proc-mount-unmasked"),
    pytest.param(pod({"securityContext": {"seccompProfile": {"type": "Unconfined"}}}),
                 "seccompProfile_baseline", id="seccomp-unconfined"),
    pytest.param(pod({"securityContext": {"sysctls": [{"name": "kernel.msgmax", "value": "1"}]}}),
                 "sysctls", id="unsafe-sysctl"),
    pytest.param(pod(container={"livenessProbe": {"httpGet": {"host": "evil", "port": 80}}}),
                 "hostProbesAndHostLifecycle", id="probe-host"),
]


@pytest.mark.parametrize(("resource", "control"), BASELINE_VIOLATIONS)
@pytest.mark.parametrize("level", ["baseline", "restricted", "privileged"])
def test_podsecurity_baseline_controls_fail(resource: dict[str, Any], control: str,
                                            level: str) -> None:
    result = run(resource, level)
    assert result.status is RuleStatus.FAIL
    assert control in {c.id for c in result.checks}


RESTRICTED_VIOLATIONS = [
    pytest.param(pod({"volumes": [{"name": "v", "nfs": {"server": "s", "path": "/"}}]}),
                 "restrictedVolumes", id="nfs-volume"),
    pytest.param(pod(container={"securityContext": {"allowPrivilegeEscalation": True}}),
                 "allowPrivilegeEscalation", id="privilege-escalation-true"),
    pytest.param(pod(container={"securityContext": {"runAsNonRoot": False}}), "runAsNonRoot",
                 id="run-as-non-root-false"),
    pytest.param(pod(container={"securityContext": {"runAsUser": 0}}), "runAsUser",
                 id="run-as-user-zero"),
    pytest.param(pod(container={"securityContext": {"runAsUser": 0.0}}), "runAsUser",
                 id="run-as-user-float-zero"),
    pytest.param(pod(container={"securityContext": {"seccompProfile": None}}),
                 "seccompProfile_restricted", id="seccomp-missing"),
    pytest.param(pod(container={"securityContext": {"capabilities": {"drop": ["NET_RAW"]}}}),
                 "capabilities_restricted", id="drop-without-all"),
]


@pytest.mark.parametrize(("resource", "control"), RESTRICTED_VIOLATIONS)
def test_podsecurity_restricted_controls_fail_only_above_baseline(
        resource: dict[str, Any], control: str) -> None:
    assert control in failing_ids(resource, "restricted")
    assert control in failing_ids(resource, "privileged")
    assert run(resource, "baseline").status is RuleStatus.PASS


@pytest.mark.parametrize("level", ["baseline", "restricted"])
def test_podsecurity_compliant_pod_passes(level: str) -> None:
    resource = pod({"volumes": [{"name": "v", "configMap": {"name": "x"}}]},
                   container={"ports": [{"containerPort": 80, "hostPort": 0}]})
    result = run(resource, level)
    assert (result.status, result.message) == (RuleStatus.PASS, "Validation rule 'r' passed.")


def test_podsecurity_vector_30_missing_privilege_escalation_fails() -> None:
    resource = pod(container={"securityContext": {"allowPrivilegeEscalation": None}})
    result = run(resource)
    assert result.status is RuleStatus.FAIL
    assert result.message == (
        "Validation rule 'r' failed. It violates PodSecurity \"restricted:latest\": "
        "(Forbidden reason: allowPrivilegeEscalation != false, field error list: "
        "[spec.containers[0].securityContext.allowPrivilegeEscalation is forbidden, "
        "forbidden values found: nil])")


def test_podsecurity_seed_pod_message_is_exact() -> None:
    resource = {"kind": "Pod", "metadata": {"name": "badpod01"},
                "spec": {"hostIPC": True, "containers": [{"name": "container01",
                                                          "image": "dummyimagename"}]}}
    result = evaluate_pod_security(resource, "restricted", "restricted", "latest", [])
    assert result.message == (
        "Validation rule 'restricted' failed. It violates PodSecurity \"restricted:latest\": "
        "(Forbidden reason: allowPrivilegeEscalation != false, field error list: "
        "[spec.containers[0].securityContext.allowPrivilegeEscalation: Required value])"
        "(Forbidden reason: unrestricted capabilities, field error list: "
        "[spec.containers[0].securityContext.capabilities.drop: Required value])"
        "(Forbidden reason: host namespaces, field error list: "
        "[spec.hostIPC is forbidden, forbidden values found: true])"
        "(Forbidden reason: runAsNonRoot != true, field error list: "
        "[spec.containers[0].securityContext.runAsNonRoot: Required value])"
        "(Forbidden reason: seccompProfile, field error list: "
        "[spec.containers[0].securityContext.seccompProfile.type: Required value])")
    assert result.properties()["controls"] == (
        "allowPrivilegeEscalation,capabilities_restricted,hostNamespaces,runAsNonRoot,"
        "seccompProfile_restricted")


def test_podsecurity_capabilities_bad_value_is_a_go_list() -> None:
    resource = pod(container={"securityContext": {"capabilities": {
        "drop": ["ALL"], "add": ["SYS_ADMIN", "NET_RAW"]}}})
    result = run(resource, "baseline")
    assert result.message.endswith(
        "(Forbidden reason: non-default capabilities, field error list: "
        "[spec.containers[0].securityContext.capabilities.add is forbidden, "
        "forbidden values found: [NET_RAW SYS_ADMIN]])")


EXCLUSIONS = [
    pytest.param(pod({"hostIPC": True}), "baseline", [{"controlName": "Host Namespaces"}],
                 RuleStatus.PASS, id="vector-29-pod-level-control"),
    pytest.param(pod(container={"image": "nginx:1.1.9", "securityContext": {"capabilities": {
        "drop": ["ALL"], "add": ["SYS_ADMIN"]}}}), "restricted",
        [{"controlName": "Capabilities", "images": ["nginx*", "redis*"]}],
        RuleStatus.PASS, id="container-level-image-wildcard"),
    pytest.param(pod(container={"image": "busybox:1.28", "securityContext": {"capabilities": {
        "drop": ["ALL"], "add": ["SYS_ADMIN"]}}}), "restricted",
        [{"controlName": "Capabilities", "images": ["nginx*", "redis*"]}],
        RuleStatus.FAIL, id="container-level-other-image-fails"),
    pytest.param(pod(container={"image": "nginx:latest", "securityContext": {"capabilities": {
        "add": ["FOO"]}}}), "baseline",
        [{"controlName": "Capabilities", "images": ["nginx*"],
          "restrictedField": "spec.containers[*].securityContext.capabilities.add",
          "values": ["FOO", "BAR"]}], RuleStatus.PASS, id="restricted-field-values-match"),
    pytest.param(pod(container={"image": "nginx:latest", "securityContext": {"capabilities": {
        "add": ["BAZ"]}}}), "baseline",
        [{"controlName": "Capabilities", "images": ["nginx*"],
          "restrictedField": "spec.containers[*].securityContext.capabilities.add",
          "values": ["FOO", "BAR"]}], RuleStatus.FAIL, id="restricted-field-values-differ"),
    pytest.param(pod({"securityContext": {"seccompProfile": {"type": "Unconfined"}}},
                     container={"securityContext": {"seccompProfile": None}}), "restricted",
                 [{"controlName": "Seccomp"}, {"controlName": "Seccomp", "images": ["*"]}],
                 RuleStatus.PASS, id="seccomp-two-entries"),
    pytest.param(pod({"securityContext": {"seccompProfile": {"type": "Unconfined"}}},
                     container={"securityContext": {"seccompProfile": {"type": "Unconfined"}}}),
                 "restricted", [{"controlName": "Seccomp", "images": ["*"]}],
                 RuleStatus.FAIL, id="seccomp-container-entry-cannot-exempt-pod-field"),
    pytest.param(pod({"securityContext": {"seccompProfile": {"type": "Unconfined"}}},
                     container={"securityContext": {"seccompProfile": {"type": "Unconfined"}}}),
                 "baseline",
                 [{"controlName": "Seccomp",
                   "restrictedField": "spec.securityContext.seccompProfile.type",
                   "values": ["Unconfined"]},
                  {"controlName": "Seccomp", "images": ["nginx*"],
                   "restrictedField": "spec.containers[*].securityContext.seccompProfile.type",
                   "values": ["Unconfined"]}], RuleStatus.PASS, id="seccomp-values-both-levels"),
    pytest.param(pod({"securityContext": {"seccompProfile": {"type": "Unknown"}}},
                     container={"securityContext": {"seccompProfile": {"type": "Unconfined"}}}),
                 "baseline",
                 [{"controlName": "Seccomp",
                   "restrictedField": "spec.securityContext.seccompProfile.type",
                   "values": ["Unconfined"]},
                  {"controlName": "Seccomp", "images": ["nginx*"],
                   "restrictedField": "spec.containers[*].securityContext.seccompProfile.type",
                   "values": ["Unconfined"]}], RuleStatus.FAIL, id="seccomp-values-pod-differs"),
    pytest.param(pod(container={"livenessProbe": {"tcpSocket": {"host": "h", "port": 1}}}),
                 "baseline", [{"controlName": n, "images": ["*"]} for n in (
                     "Capabilities", "Privileged Containers", "Host Ports", "/proc Mount Type")],
                 RuleStatus.FAIL, id="probe-host-not-excludable"),
]


@pytest.mark.parametrize(("resource", "level", "excludes", "expected"), EXCLUSIONS)
def test_podsecurity_exclusions(resource: dict[str, Any], level: str,
                                excludes: list[dict[str, Any]], expected: RuleStatus) -> None:
    assert run(resource, level, excludes=excludes).status is expected


SHARED_RULES = [  # the podSecurity rules of one resource, in the order a scan meets them
    ("baseline", "latest", []), ("restricted", "latest", []), ("restricted", "v1.24", []),
    ("baseline", "v1.0", []), ("privileged", "latest", []),
    ("restricted", "latest", [{"controlName": "Capabilities", "images": ["*"]}]),
]


@pytest.mark.parametrize("resource", [
    *(p.values[0] for p in BASELINE_VIOLATIONS + RESTRICTED_VIOLATIONS), pod(),
    {"kind": "Pod", "spec": {"containers": "not a list"}},
])
def test_podsecurity_rules_sharing_a_memo_see_what_each_sees_alone(resource: dict[str, Any]) -> None:
    alone = [evaluate_pod_security(resource, "r", *rule) for rule in SHARED_RULES]
    memo: dict[str, Any] = {}
    shared, decoded = [], []
    for rule in SHARED_RULES:
        shared.append(evaluate_pod_security(resource, "r", *rule, memo=memo))
        decoded.append(memo["podSecurity"])
    assert shared == alone
    assert all(d is decoded[0] for d in decoded)  # decoded once, by the first rule, for all of them


def test_podsecurity_pod_level_exclusion_removes_one_error_per_path() -> None:
    resource = pod(container={"securityContext": {"privileged": True}})
    resource["spec"]["containers"].append({**resource["spec"]["containers"][0], "name": "d"})
    # the fake probe container produces no privileged error, so nothing is removed
    result = run(resource, "baseline", excludes=[{"controlName": "Privileged Containers"}])
    assert [len(c.errors) for c in result.checks] == [2]


def test_podsecurity_exception_excludes_turn_failure_into_skip() -> None:
    resource = pod({"hostNetwork": True})
    result = evaluate_pod_security(resource, "r", "baseline", None, [],
                                   exception_excludes=[{"controlName": "Host Namespaces"}],
                                   exception_keys=["ns/ex"])
    assert (result.status, result.message) == (
        RuleStatus.SKIP, "rule is skipped due to policy exceptions ns/ex")


def test_podsecurity_deployment_paths_are_rewritten() -> None:
    resource = {"kind": "Deployment", "metadata": {"name": "d"},
                "spec": {"template": {"metadata": {}, "spec": {
                    "containers": [{"name": "c", "image": "x",
                                    "securityContext": {"privileged": True}}]}}}}
    result = run(resource, "baseline", None)
    assert result.message == (
        "Validation rule 'r' failed. It violates PodSecurity \"baseline:\": "
        "(Forbidden reason: privileged, field error list: "
        "[spec.template.spec.containers[0].securityContext.privileged is forbidden, "
        "forbidden values found: true])")


def test_podsecurity_cronjob_reads_job_template_metadata() -> None:
    annotation = {"container.apparmor.security.beta.kubernetes.io/c": "unconfined"}
    template = {"metadata": {"annotations": annotation},
                "spec": {"containers": [{"name": "c", "image": "x"}]}}
    resource = {"kind": "CronJob", "metadata": {"name": "cj"},
                "spec": {"jobTemplate": {"spec": {"template": template}}}}
    assert run(resource, "baseline").status is RuleStatus.PASS
    resource["spec"]["jobTemplate"]["metadata"] = {"annotations": annotation}
    result = run(resource, "baseline")
    assert result.status is RuleStatus.FAIL
    assert "spec.template.metadata.annotations[container.apparmor" in result.message


@pytest.mark.parametrize(("resource", "fragment"), [
    pytest.param({"kind": "Service", "spec": {}}, "could not find correct resource type",
                 id="other-kind"),
    pytest.param(pod(container={"securityContext": {"runAsUser": "1000"}}),
                 "cannot unmarshal string into Go struct field SecurityContext."
                 "spec.containers.securityContext.runAsUser of type int64", id="string-uid"),
    pytest.param(pod({"hostNetwork": "yes"}), "of type bool", id="string-bool"),
    pytest.param({"kind": "Pod", "metadata": {"labels": {"hash": 14398205e3}}, "spec": {}},
                 "cannot unmarshal number 14398205000 into Go struct field ObjectMeta.metadata.labels of type string",
                 id="number-as-json-text"),
])
def test_podsecurity_undecodable_resource_errors(resource: dict[str, Any], fragment: str) -> None:
    result = run(resource)
    assert result.status is RuleStatus.ERROR
    assert fragment in result.message


def test_podsecurity_unknown_fields_are_ignored() -> None:
    resource = pod(container={"securityContext": {"madeUp": {"x": 1}}})
    assert run(resource).status is RuleStatus.PASS


@pytest.mark.parametrize(("version", "expected"), [
    pytest.param("v1.26", RuleStatus.FAIL, id="tcp-keepalive-forbidden-before-1-29"),
    pytest.param("v1.29", RuleStatus.PASS, id="tcp-keepalive-allowed-from-1-29"),
    pytest.param("latest", RuleStatus.PASS, id="tcp-keepalive-allowed-latest"),
])
def test_podsecurity_version_pinning_selects_variant(version: str, expected: RuleStatus) -> None:
    resource = pod({"securityContext": {"sysctls": [{"name": "net.ipv4.tcp_keepalive_time"}]}})
    assert run(resource, "baseline", version).status is expected


def test_podsecurity_oldest_variant_applies_to_older_versions() -> None:
    resource = pod(container={"securityContext": {"runAsUser": 0}})
    assert "runAsUser" in failing_ids(resource, "restricted", "v1.19")


def test_podsecurity_windows_pod_exempt_from_1_25() -> None:
    resource = pod({"os": {"name": "windows"}}, container={"securityContext": {
        "allowPrivilegeEscalation": None}})
    assert "allowPrivilegeEscalation" not in failing_ids(resource, "restricted", "v1.25")
    assert "allowPrivilegeEscalation" in failing_ids(resource, "restricted", "v1.24")


def test_podsecurity_bad_version_errors() -> None:
    assert run(pod(), version="1.29").status is RuleStatus.ERROR


@pytest.mark.parametrize(("spec", "problems"), [
    pytest.param({"level": "restricted", "version": "latest"}, [], id="valid"),
    pytest.param({"level": "strict"}, ["level"], id="bad-level"),
    pytest.param({"level": "baseline", "version": "1.29"}, ["version"], id="bad-version"),
    pytest.param({"level": "baseline", "exclude": [{"controlName": "Capabilities"}]},
                 ["exclude/0/controlName"], id="container-control-needs-images"),
    pytest.param({"level": "baseline", "exclude": [
        {"controlName": "Host Namespaces", "images": ["*"]}]},
        ["exclude/0/controlName"], id="pod-control-rejects-images"),
    pytest.param({"level": "baseline", "exclude": [{"controlName": "Running as Non-root"}]},
                 ["exclude/0/controlName"], id="restricted-control-at-baseline"),
    pytest.param({"level": "baseline", "exclude": [{"controlName": "Seccomp"}]}, [],
                 id="seccomp-allowed-at-baseline"),
    pytest.param({"level": "restricted", "exclude": [
        {"controlName": "Sysctls", "restrictedField": "spec.securityContext.sysctls[*].name"}]},
        ["exclude/0/values"], id="restricted-field-needs-values"),
    pytest.param({"level": "restricted", "exclude": [{"controlName": "Sysctls", "values": ["a"]}]},
                 ["exclude/0/restrictedField"], id="values-need-restricted-field"),
    pytest.param({"level": "restricted", "exclude": [{"controlName": "Nope"}]},
                 ["exclude/0/controlName"], id="unknown-control"),
    pytest.param({"level": "restricted", "exclude": [{"controlName": {"name": "Capabilities"}}]},
                 ["exclude/0/controlName"], id="control-name-not-a-string"),
    pytest.param({"level": "restricted", "exclude": [{"controlName": "Capabilities", "images": [["nginx"], 5]}]},
                 ["exclude/0/images"], id="images-not-strings"),
    pytest.param({"level": "restricted", "exclude": [{"controlName": "Capabilities", "images": "nginx"}]},
                 ["exclude/0/images"], id="images-not-a-list"),
    pytest.param({"level": "restricted", "exclude": [
        {"controlName": "Sysctls", "restrictedField": ["spec"], "values": [1]}]},
        ["exclude/0/restrictedField", "exclude/0/values"], id="restricted-field-and-values-types"),
])
def test_podsecurity_spec_validity(spec: dict[str, Any], problems: list[str]) -> None:
    found = validate_pod_security_spec(spec)
    assert [p.split(":")[0] for p in found] == problems
