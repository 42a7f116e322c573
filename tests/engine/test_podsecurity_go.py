"""podSecurity cases translated from Kyverno's own unit tests and the pod-security checks.

Sources (Kyverno's Go code): ``pkg/pss/evaluate_test.go`` (the ``Test_EvaluatePod`` table),
``pkg/pss/evaluate_userns_test.go``, ``pkg/pss/hostprobes_test.go``,
``pkg/engine/handlers/validation/validate_pss_test.go``, ``api/kyverno/v1`` rule tests
(``Test_ValidatePSaControlNames``), and the check tables of the pod-security-admission library
Kyverno builds on (``policy/check_*_test.go``, field-error variant).

Where the project spec deliberately states a different behaviour (user-namespace relaxations not
enabled, the probe-host control applied at every pinned version and not excludable) the case
follows the spec and says so.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from scanner.engine.podsecurity.controls import FORBIDDEN, REQUIRED
from scanner.engine.podsecurity.levels import evaluate_pod_security, validate_pod_security_spec
from scanner.engine.podsecurity.restricted import CONTROLS
from scanner.engine.types import RuleStatus

# -- builders ------------------------------------------------------------------------------

_NO_SC = object()


def pod(spec: dict[str, Any], annotations: dict[str, str] | None = None,
        name: str | None = "test") -> dict[str, Any]:
    meta: dict[str, Any] = {}
    if name is not None:
        meta["name"] = name
    if annotations is not None:
        meta["annotations"] = annotations
    return {"kind": "Pod", "metadata": meta, "spec": spec}


def ctr(name: str = "nginx", image: str = "nginx", sc: Any = _NO_SC, **extra: Any
        ) -> dict[str, Any]:
    c: dict[str, Any] = {"name": name, "image": image}
    if sc is not _NO_SC:
        c["securityContext"] = sc
    c.update(extra)
    return c


def ex(control: str, images: list[str] | None = None, field: str | None = None,
       values: list[str] | None = None) -> dict[str, Any]:
    entry: dict[str, Any] = {"controlName": control}
    if images is not None:
        entry["images"] = images
    if field is not None:
        entry["restrictedField"] = field
    if values is not None:
        entry["values"] = values
    return entry


def rule(level: str, version: str, *excludes: dict[str, Any]) -> dict[str, Any]:
    return {"level": level, "version": version, "exclude": list(excludes)}


def b24(*excludes: dict[str, Any]) -> dict[str, Any]:
    return rule("baseline", "v1.24", *excludes)


def r24(*excludes: dict[str, Any]) -> dict[str, Any]:
    return rule("restricted", "v1.24", *excludes)


NG = ["nginx"]
APE_DROP = {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}
RSC = {"runAsNonRoot": True, **APE_DROP}  # a restricted-compliant container context
RD = {"type": "RuntimeDefault"}


def sc(**fields: Any) -> dict[str, Any]:
    """APE_DROP plus the given fields."""
    return {**copy.deepcopy(APE_DROP), **fields}


def hp(value: bool) -> dict[str, Any]:
    return {"windowsOptions": {"hostProcess": value}}


def sel(**opts: str) -> dict[str, Any]:
    return {"seLinuxOptions": opts}


def seccomp(kind: str | None) -> dict[str, Any]:
    return {"type": kind} if kind is not None else {}


def caps(add: list[Any] | None = None, drop: list[Any] | None = None) -> dict[str, Any]:
    c: dict[str, Any] = {}
    if drop is not None:
        c["drop"] = drop
    if add is not None:
        c["add"] = add
    return {"capabilities": c}


def evaluate(rule_spec: dict[str, Any], resource: dict[str, Any]):
    return evaluate_pod_security(copy.deepcopy(resource), "r", rule_spec["level"],
                                 rule_spec.get("version"), rule_spec.get("exclude") or [])


# -- pkg/pss/evaluate_test.go: Test_EvaluatePod ---------------------------------------------

HP = "HostProcess"
HP_C = "spec.containers[*].securityContext.windowsOptions.hostProcess"
HP_I = "spec.initContainers[*].securityContext.windowsOptions.hostProcess"
HP_E = "spec.ephemeralContainers[*].securityContext.windowsOptions.hostProcess"

BASELINE_HOST_PROCESS = [
    pytest.param(b24(ex(HP, NG)), pod({"securityContext": hp(False),
                                       "containers": [ctr(sc=hp(True))]}), True,
                 id="baseline_hostProcess_defines_all_violate_true"),
    pytest.param(b24(ex(HP, NG)), pod({"securityContext": hp(False),
                                       "containers": [ctr(sc=hp(False))]}), True,
                 id="baseline_hostProcess_defines_all_violate_false"),
    pytest.param(b24(ex(HP, NG)), pod({"containers": [ctr(sc=hp(True))]}), True,
                 id="baseline_hostProcess_defines_container_only_violate_true"),
    pytest.param(b24(ex(HP, NG)), pod({"initContainers": [ctr(sc=hp(True))]}), True,
                 id="baseline_hostProcess_defines_initcontainer_only_violate_true"),
    pytest.param(b24(ex(HP, NG)), pod({"ephemeralContainers": [ctr(sc=hp(True))]}), True,
                 id="baseline_hostProcess_defines_ephemeralcontainer_only_violate_true"),
    pytest.param(b24(ex(HP, NG)), pod({"containers": [ctr(sc=hp(False))]}), True,
                 id="baseline_hostProcess_defines_container_only_violate_false"),
    pytest.param(b24(ex(HP, NG, HP_C, ["true"]), ex(HP, NG, HP_I, ["true"]),
                     ex(HP, NG, HP_E, ["true"])),
                 pod({"containers": [ctr(sc=hp(True))], "initContainers": [ctr(sc=hp(True))],
                      "ephemeralContainers": [ctr(sc=hp(True))]}), True,
                 id="baseline_hostProcess_defines_initContainer_&_ephemeralContainer_allowed_positive"),
    pytest.param(b24(ex(HP, NG, HP_C, ["true"]), ex(HP, NG, HP_I, ["true"])),
                 pod({"containers": [ctr(sc=hp(True))], "initContainers": [ctr(sc=hp(True))],
                      "ephemeralContainers": [ctr(sc=hp(True))]}), False,
                 id="baseline_hostProcess_defines_initContainer_&_ephemeralContainer_allowed_negative"),
    pytest.param(b24(ex(HP)), pod({"securityContext": hp(True),
                                   "containers": [ctr(image="nginx:1.2.3")]}), True,
                 id="baseline_hostProcess_defines_spec_only_violate_true"),
    pytest.param(b24(), pod({"securityContext": hp(True),
                             "containers": [ctr(image="nginx:1.2.3")]}), False,
                 id="baseline_hostProcess_defines_spec_blocked_with_no_exclusion"),
    pytest.param(b24(ex(HP)), pod({"securityContext": hp(False),
                                   "containers": [ctr(image="nginx:1.2.3")]}), True,
                 id="baseline_hostProcess_defines_spec_only_violate_false"),
    pytest.param(b24(ex(HP)), pod({"containers": [ctr(image="nginx:1.2.3")]}), True,
                 id="baseline_hostProcess_defines_none"),
]

HN = "Host Namespaces"
BASELINE_HOST_NAMESPACES = [
    pytest.param(b24(ex(HN)), pod({key: value, "containers": [ctr()]}), True,
                 id=f"baseline_host_namespaces_{key}_violate_{str(value).lower()}")
    for key in ("hostNetwork", "hostPID") for value in (True, False)
] + [
    pytest.param(b24(ex(HN)), pod({"containers": [ctr()]}), True,
                 id="baseline_host_namespaces_hostNetwork_undefined"),
    pytest.param(b24(ex(HN)), pod({"containers": [ctr()]}), True,
                 id="baseline_host_namespaces_hostPID_undefined"),
    pytest.param(b24(ex(HN)), pod({"hostIPC": True, "containers": [ctr()]}), True,
                 id="baseline_host_namespaces_hostIPC_violate_true"),
    pytest.param(b24(ex(HN, NG)), pod({"hostIPC": False, "containers": [ctr()]}), True,
                 id="baseline_host_namespaces_hostIPC_violate_false"),
    pytest.param(b24(ex(HN, NG)), pod({"containers": [ctr()]}), True,
                 id="baseline_host_namespaces_hostIPC_undefined"),
]

PC = "Privileged Containers"
PRIV = {"privileged": True}
NOPRIV = {"privileged": False}
BASELINE_PRIVILEGED = [
    pytest.param(b24(ex(PC, NG)), pod({"containers": [ctr(sc=PRIV)]}), True,
                 id="baseline_privileged_defines_container_violate_true"),
    pytest.param(b24(ex(PC, NG)), pod({"containers": [ctr(sc=NOPRIV)]}), True,
                 id="baseline_privileged_defines_container_violate_false"),
    pytest.param(b24(ex(PC, NG)), pod({"containers": [ctr()]}), True,
                 id="baseline_privileged_defines_container_none"),
    pytest.param(b24(ex(PC, NG)), pod({"containers": [ctr(image="nginx:1.2.3", sc=PRIV)]}),
                 False, id="baseline_privileged_defines_container_violate_true_skip"),
    pytest.param(b24(ex(PC, NG)), pod({"containers": [ctr(sc=NOPRIV)],
                                       "initContainers": [ctr("nginx-init", sc=PRIV)]}), True,
                 id="baseline_privileged_defines_initContainer_violate_true"),
    pytest.param(b24(ex(PC, NG)), pod({"containers": [ctr(sc=NOPRIV)],
                                       "initContainers": [ctr("nginx-init", sc=PRIV)],
                                       "ephemeralContainers": [ctr("nginx-ephemeral", sc=PRIV)]}),
                 True,
                 id="baseline_privileged_defines_initContainer_&_ephemeralContainer_violate_true"),
    pytest.param(b24(ex(PC, NG, "spec.initContainers[*].securityContext.privileged", ["true"]),
                     ex(PC, NG, "spec.ephemeralContainers[*].securityContext.privileged",
                        ["true"])),
                 pod({"containers": [ctr(sc=NOPRIV)],
                      "initContainers": [ctr("nginx-init", sc=PRIV)],
                      "ephemeralContainers": [ctr("nginx-ephemeral", sc=PRIV)]}), True,
                 id="baseline_privileged_defines_initContainer_&_ephemeralContainer_violate_true_allowed_positive"),
    pytest.param(b24(ex(PC, NG, "spec.initContainers[*].securityContext.privileged", ["true"])),
                 pod({"containers": [ctr(sc=NOPRIV)],
                      "initContainers": [ctr("nginx-init", sc=PRIV)],
                      "ephemeralContainers": [ctr("nginx-ephemeral", sc=PRIV)]}), False,
                 id="baseline_privileged_defines_initContainer_&_ephemeralContainer_violate_true_allowed_negative"),
]

CAP = "Capabilities"
CAP_C = "spec.containers[*].securityContext.capabilities.add"
CAP_I = "spec.initContainers[*].securityContext.capabilities.add"
CAP_E = "spec.ephemeralContainers[*].securityContext.capabilities.add"
BASELINE_CAPABILITIES = [
    pytest.param(b24(ex(CAP, NG)), pod({"containers": [ctr(sc=caps(["FAKE_VALUE"]))]}), True,
                 id="baseline_capabilities_defines_container_violate_true"),
    pytest.param(b24(ex(CAP, NG)), pod({"containers": [ctr(sc=caps(["KILL"]))]}), True,
                 id="baseline_capabilities_defines_container_violate_false"),
    pytest.param(b24(ex(CAP, NG)), pod({"containers": [ctr(sc=caps(["FOO", "BAR"]))]}), True,
                 id="baseline_capabilities_foo_defines_container_violate_true"),
    pytest.param(b24(ex(CAP, NG, CAP_C, ["FOO", "BAR"])),
                 pod({"containers": [ctr(sc=caps(["FOO", "BAR"]))]}), True,
                 id="baseline_capabilities_foo_defines_container_allow_positive"),
    pytest.param(b24(ex(CAP, NG, CAP_I, ["FOO", "BAR"]), ex(CAP, NG, CAP_E, ["FOO", "BAZ"])),
                 pod({"initContainers": [ctr(sc=caps(["FOO", "BAR"]))],
                      "ephemeralContainers": [ctr(sc=caps(["FOO", "BAZ"]))]}), True,
                 id="baseline_capabilities_foo_defines_initContainer_&_ephemeralContainer_allow_positive"),
    pytest.param(b24(ex(CAP, NG, CAP_I, ["FOO", "BAR"]), ex(CAP, NG, CAP_E, ["FOO", "BAR"])),
                 pod({"initContainers": [ctr(sc=caps(["FOO", "BAR"]))],
                      "ephemeralContainers": [ctr(sc=caps(["FOO", "BAZ"]))]}), False,
                 id="baseline_capabilities_foo_defines_initContainer_&_ephemeralContainer_allow_negative"),
    pytest.param(b24(ex(CAP, NG, CAP_C, ["FOO"])),
                 pod({"containers": [ctr(sc=caps(["FOO", "BAR"]))]}), False,
                 id="baseline_capabilities_foo_defines_container_allow_negative"),
    pytest.param(b24(ex(CAP, NG)), pod({"containers": [ctr()]}), True,
                 id="baseline_capabilities_defines_container_none"),
    pytest.param(b24(ex(CAP, NG)),
                 pod({"containers": [ctr()],
                      "ephemeralContainers": [ctr("nginx-ephemeral", sc=caps(["FAKE_VALUE"]))]}),
                 True, id="baseline_capabilities_defines_ephemeralContainers_violate_true"),
    pytest.param(b24(ex(CAP, NG)),
                 pod({"containers": [ctr()],
                      "ephemeralContainers": [ctr("nginx-ephemeral", sc=caps(["KILL"]))]}),
                 True, id="baseline_capabilities_defines_ephemeralContainers_violate_false"),
    pytest.param(b24(ex(CAP, NG)),
                 pod({"containers": [ctr()], "ephemeralContainers": [ctr("nginx-ephemeral")]}),
                 True, id="baseline_capabilities_defines_ephemeralContainers_none"),
    pytest.param(r24(ex("Running as Non-root", NG)),
                 pod({"containers": [ctr()], "ephemeralContainers": [ctr("nginx-ephemeral")]}),
                 False, id="baseline_capabilities_not_match"),
]

HPV = "HostPath Volumes"
BASELINE_HOST_PATH = [
    pytest.param(b24(ex(HPV, None, "spec.volumes[*].hostPath", ["/etc/nginx"])),
                 pod({"containers": [ctr()], "volumes": [{"hostPath": {"path": "/etc/nginx"}}]}),
                 True, id="baseline_hostPath_volumes_exclude_path_true"),
    pytest.param(b24(ex(HPV, None, "spec.volumes[*].hostPath", ["/etc/nginx"])),
                 pod({"containers": [ctr()], "volumes": [{"hostPath": {"path": "/var/lib1"}}]}),
                 False, id="baseline_hostPath_volumes_exclude_path_false"),
    pytest.param(b24(ex(HPV)),
                 pod({"containers": [ctr()], "volumes": [{"hostPath": {"path": "/var/lib1"}}]}),
                 True, id="baseline_hostPath_volumes_violate_true"),
    pytest.param(b24(ex(HPV)), pod({"containers": [ctr()]}), True,
                 id="baseline_hostPath_volumes_violate_false"),
    pytest.param(b24(ex(PC, NG)),
                 pod({"containers": [ctr()], "volumes": [{"hostPath": {"path": "/var/lib1"}}]}),
                 False, id="baseline_hostPath_volumes_not_match"),
]

HPO = "Host Ports"


def ports(*host_ports: int) -> dict[str, Any]:
    return {"ports": [{"hostPort": p} for p in host_ports]}


# The Kyverno table writes `{"hostPort": 10, "hostPort": 20}`; JSON decoding keeps the last key.
BASELINE_HOST_PORTS = [
    pytest.param(b24(ex(HPO)), pod({"containers": [ctr(**ports(0))]}), True,
                 id="baseline_host_ports_defines_0"),
    pytest.param(b24(ex(HPO, NG)), pod({"containers": [ctr(**ports(1000))]}), True,
                 id="baseline_host_ports_defines_non_zero"),
    pytest.param(b24(ex(HPO, NG)), pod({"containers": [ctr(**ports(20))]}), True,
                 id="baseline_host_ports_define_different_values"),
    pytest.param(b24(ex(HPO, NG, "spec.initContainers[*].ports[*].hostPort", ["10", "20"]),
                     ex(HPO, NG, "spec.ephemeralContainers[*].ports[*].hostPort", ["10", "20"])),
                 pod({"initContainers": [ctr(**ports(20))],
                      "ephemeralContainers": [ctr(**ports(20))]}), True,
                 id="baseline_host_ports_initContainer_&_ephemeralContainer_define_different_values_allowed_positive"),
    pytest.param(b24(ex(HPO, NG, "spec.initContainers[*].ports[*].hostPort", ["10", "20"]),
                     ex(HPO, NG, "spec.ephemeralContainers[*].ports[*].hostPort", ["10"])),
                 pod({"initContainers": [ctr(**ports(20))],
                      "ephemeralContainers": [ctr(**ports(20))]}), False,
                 id="baseline_host_ports_initContainer_&_ephemeralContainer_define_different_values_allowed_negative"),
    pytest.param(b24(ex(HPO, NG, "spec.containers[*].ports.hostPort", ["-1"])),
                 pod({"containers": [ctr(**ports(20))]}), False,
                 id="baseline_host_ports_define_different_values_allow_negative"),
    pytest.param(b24(ex(HPO, NG)), pod({"containers": [ctr()]}), True,
                 id="baseline_host_ports_undefined"),
]

AA = "AppArmor"
AAK = "container.apparmor.security.beta.kubernetes.io/"
AA_MULTI = {AAK: "bogus", AAK + "a": "", AAK + "b": "runtime/default", AAK + "c": "localhost/",
            AAK + "d": "localhost/foo", AAK + "e": "unconfined", AAK + "f": "unknown"}


def aa_field(suffix: str) -> str:
    return f"metadata.annotations[{AAK}{suffix}]"


BASELINE_APPARMOR = [
    pytest.param(b24(ex(AA)), pod({"containers": [ctr()]}), True,
                 id="baseline_appArmor_undefined"),
    pytest.param(b24(ex(AA)), pod({"containers": [ctr()]}, {AAK + "kyverno.test": "fake_value"}),
                 True, id="baseline_appArmor_defines_violate_true"),
    pytest.param(b24(ex(AA)),
                 pod({"containers": [ctr()]}, {AAK + "kyverno.test": "runtime/default"}),
                 True, id="baseline_appArmor_defines_violate_false"),
    pytest.param(b24(ex(AA)), pod({"containers": [ctr()]}, AA_MULTI), True,
                 id="baseline_appArmor_defines_multiple_violate_true"),
    pytest.param(b24(ex(AA, None, aa_field(""), ["bogus"]), ex(AA, None, aa_field("a"), ["bogus"]),
                     ex(AA, None, aa_field("e"), ["unconfined"]),
                     ex(AA, None, aa_field("f"), ["unknown"])),
                 pod({"containers": [ctr()]}, AA_MULTI), True,
                 id="baseline_appArmor_defines_multiple_allow_positive"),
    pytest.param(b24(ex(AA, None, aa_field(""), ["bogus"]), ex(AA, None, aa_field("a"), ["bogus"]),
                     ex(AA, None, aa_field("e"), ["unconfined"])),
                 pod({"containers": [ctr()]}, AA_MULTI), False,
                 id="baseline_appArmor_defines_multiple_allow_negative"),
    pytest.param(b24(ex(HPV)), pod({"containers": [ctr()]}, {AAK + "kyverno.test": "fake_value"}),
                 False, id="baseline_appArmor_not_match_block"),
    pytest.param(b24(ex(HPV)),
                 pod({"containers": [ctr()]}, {AAK + "kyverno.test": "localhost/default"}),
                 True, id="baseline_appArmor_not_match_pass"),
]

SE = "SELinux"
SEL_C = "spec.containers[*].securityContext.seLinuxOptions."
SEL_I = "spec.initContainers[*].securityContext.seLinuxOptions."
SEL_E = "spec.ephemeralContainers[*].securityContext.seLinuxOptions."
SEL_P = "spec.securityContext.seLinuxOptions."
SEL_SIX = [ctr("a", sc=sel(type="container_t")), ctr("b", sc=sel(type="container_init_t")),
           ctr("c", sc=sel(type="container_kvm_t")), ctr("d", sc=sel(type="bar")),
           ctr("e", sc=sel(user="bar")), ctr("f", sc=sel(role="baz"))]
SEL_MIXED = {"containers": [ctr("a", sc=sel(type="bar"))],
             "initContainers": [ctr("a", sc=sel(user="bar"))],
             "ephemeralContainers": [ctr("a", sc=sel(role="bar"))]}


def sel_pod(pod_opts: dict[str, str] | None, container_opts: dict[str, str] | None
            ) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    if pod_opts is not None:
        spec["securityContext"] = sel(**pod_opts)
    spec["containers"] = [ctr(sc=sel(**container_opts)) if container_opts is not None else ctr()]
    return pod(spec)


BASELINE_SELINUX = [
    pytest.param(b24(ex(SE, NG)), sel_pod({"type": "fake_value"}, {"type": "fake_value"}), False,
                 id="baseline_seLinux_type_defines_all_violate_true_1"),
    pytest.param(b24(ex(SE), ex(SE, NG)), sel_pod({"type": "fake_value"}, {"type": "fake_value"}),
                 True, id="baseline_seLinux_type_defines_all_violate_true_2"),
    pytest.param(b24(ex(SE, NG)), sel_pod({"type": "container_t"}, {"type": "container_t"}),
                 True, id="baseline_seLinux_type_defines_all_violate_false"),
    pytest.param(b24(ex(SE, NG)), sel_pod(None, {"type": "fake_value"}), True,
                 id="baseline_seLinux_type_defines_container_violate_true"),
    pytest.param(b24(ex(SE, NG)), sel_pod(None, {"type": "container_t"}), True,
                 id="baseline_seLinux_type_defines_container_violate_false"),
    pytest.param(b24(ex(SE)), sel_pod({"type": "fake_value"}, None), True,
                 id="baseline_seLinux_type_defines_spec_violate_true"),
    pytest.param(b24(ex(SE, None, SEL_P + "type", ["fake_value"])),
                 sel_pod({"type": "fake_value"}, None), True,
                 id="baseline_seLinux_type_defines_spec"),
    pytest.param(b24(ex(SE)), sel_pod({"type": "container_t"}, None), True,
                 id="baseline_seLinux_type_defines_spec_violate_false"),
    pytest.param(b24(ex(SE)), sel_pod({"type": "bad"}, None), True,
                 id="baseline_seLinux_type_defines_bad_spec_violate_false"),
    pytest.param(b24(ex(SE, None, SEL_P + "type", ["bad"])), sel_pod({"type": "bad"}, None), True,
                 id="baseline_seLinux_type_defines_bad_spec_allow_positive"),
    pytest.param(b24(ex(SE, None, SEL_P + "type", ["good"])), sel_pod({"type": "bad"}, None),
                 False, id="baseline_seLinux_type_defines_bad_spec_allow_negative"),
    pytest.param(b24(ex(SE, NG)), pod({"containers": SEL_SIX}), True,
                 id="baseline_seLinux_type_securityContext_nil_violate_false"),
    pytest.param(b24(ex(SE, NG, SEL_C + "type", ["bar"]), ex(SE, NG, SEL_C + "user", ["bar"]),
                     ex(SE, NG, SEL_C + "role", ["baz"])),
                 pod({"containers": SEL_SIX}), True,
                 id="baseline_seLinux_type_securityContext_nil_allow_positive"),
    pytest.param(b24(ex(SE, NG, SEL_C + "type", ["bar"]), ex(SE, NG, SEL_C + "user", ["bar"])),
                 pod({"containers": SEL_SIX}), False,
                 id="baseline_seLinux_type_securityContext_nil_allow_negative"),
    pytest.param(b24(ex(SE, NG, SEL_C + "type", ["bar"]), ex(SE, NG, SEL_I + "user", ["bar"]),
                     ex(SE, NG, SEL_E + "role", ["bar"])),
                 pod(SEL_MIXED), True,
                 id="baseline_seLinux_type_securityContext_initContainer_&_ephemeralContainer_nil_allow_positive"),
    pytest.param(b24(ex(SE, NG, SEL_C + "type", ["bar"]), ex(SE, NG, SEL_I + "user", ["bar"]),
                     ex(SE, NG, SEL_E + "role", ["baz"])),
                 pod(SEL_MIXED), False,
                 id="baseline_seLinux_type_securityContext_initContainer_&_ephemeralContainer_nil_allow_negative"),
    pytest.param(b24(ex(HPV)), sel_pod({"type": "container_t"}, None), True,
                 id="baseline_seLinux_type_not_match_pass"),
    pytest.param(b24(ex(HPV)), sel_pod({"type": "fake_value"}, None), False,
                 id="baseline_seLinux_type_not_match_block"),
    pytest.param(b24(ex(HPO, NG)), sel_pod(None, {"type": "container_t"}), True,
                 id="baseline_seLinux_type_container_not_match_pass"),
    pytest.param(b24(ex(HPO, NG)), sel_pod(None, {"type": "fake_value"}), False,
                 id="baseline_seLinux_type_container_not_match_block"),
    pytest.param(b24(ex(SE)), pod({"containers": [ctr()]}), True,
                 id="baseline_seLinux_type_defines_none"),
    pytest.param(b24(ex(SE)), sel_pod({"user": "fake_value"}, None), True,
                 id="baseline_seLinux_user_defines_spec_violate_true"),
    pytest.param(b24(ex(SE)), sel_pod({"user": "bad"}, None), True,
                 id="baseline_seLinux_user_defines_bad_spec_violate_true"),
    pytest.param(b24(ex(SE, None, SEL_P + "user", ["bad"])), sel_pod({"user": "bad"}, None), True,
                 id="baseline_seLinux_user_defines_bad_spec_allowed_positive"),
    pytest.param(b24(ex(SE, None, SEL_P + "user", ["good"])), sel_pod({"user": "bad"}, None),
                 False, id="baseline_seLinux_user_defines_bad_spec_allowed_negative"),
    pytest.param(b24(ex(SE)), sel_pod({"role": "bad"}, None), True,
                 id="baseline_seLinux_role_defines_bad_spec_violate_true"),
    pytest.param(b24(ex(SE, None, SEL_P + "role", ["bad"])), sel_pod({"role": "bad"}, None), True,
                 id="baseline_seLinux_role_defines_bad_spec_allowed_positive"),
    pytest.param(b24(ex(SE, None, SEL_P + "role", ["good"])), sel_pod({"role": "bad"}, None),
                 False, id="baseline_seLinux_role_defines_bad_spec_allowed_negative"),
    pytest.param(b24(ex(SE, NG)), sel_pod(None, {"role": "fake_value"}), True,
                 id="baseline_seLinux_role_defines_container_violate_true"),
]

PM = "/proc Mount Type"
PM_C = "spec.containers[*].securityContext.procMount"
PM_FIVE = [ctr(sc=None), ctr(sc={}), ctr(sc={"procMount": "Default"}),
           ctr(sc={"procMount": "Unmasked"}), ctr(sc={"procMount": "other"})]
PM_MIXED = {"initContainers": [ctr(sc={"procMount": "Unmasked"})],
            "ephemeralContainers": [ctr(sc={"procMount": "other"})]}
BASELINE_PROC_MOUNT = [
    pytest.param(b24(ex(PM, NG)), pod({"containers": [ctr()]}), True,
                 id="baseline_procMount_undefined"),
    pytest.param(b24(ex(PM, NG)), pod({"containers": [ctr(sc={"procMount": "fakeValue"})]}),
                 True, id="baseline_procMount_defines_violate_true"),
    pytest.param(b24(ex(PM, NG)), pod({"containers": [ctr(sc={"procMount": "Default"})]}), True,
                 id="baseline_procMount_defines_violate_false"),
    pytest.param(b24(ex(PM, NG)), pod({"containers": PM_FIVE}), True,
                 id="baseline_procMount_defines_multiple_violate_true"),
    pytest.param(b24(ex(PM, NG, PM_C, ["Unmasked", "other"])), pod({"containers": PM_FIVE}), True,
                 id="baseline_procMount_defines_multiple_allowed_positive"),
    pytest.param(b24(ex(PM, NG, PM_C, ["Unmasked"])), pod({"containers": PM_FIVE}), False,
                 id="baseline_procMount_defines_multiple_allowed_negative"),
    pytest.param(b24(ex(PM, NG, "spec.initContainers[*].securityContext.procMount", ["Unmasked"]),
                     ex(PM, NG, "spec.ephemeralContainers[*].securityContext.procMount",
                        ["other"])),
                 pod(PM_MIXED), True,
                 id="baseline_procMount_defines_multiple_initContainer_&_ephemeralContainer_allowed_positive"),
    pytest.param(b24(ex(PM, NG, "spec.initContainers[*].securityContext.procMount", ["Unmasked"]),
                     ex(PM, NG, "spec.ephemeralContainers[*].securityContext.procMount",
                        ["others"])),
                 pod(PM_MIXED), False,
                 id="baseline_procMount_defines_multiple_initContainer_&_ephemeralContainer_allowed_negative"),
    pytest.param(b24(ex(PC, NG)), pod({"containers": [ctr(sc={"procMount": "Default"})]}), True,
                 id="baseline_procMount_not_match_pass"),
    pytest.param(b24(ex(PC, NG)), pod({"containers": [ctr(sc={"procMount": "fakeValue"})]}),
                 False, id="baseline_procMount_not_match_block"),
]

SC_ = "Seccomp"
SCP_P = "spec.securityContext.seccompProfile.type"
SCP_C = "spec.containers[*].securityContext.seccompProfile.type"
SCP_I = "spec.initContainers[*].securityContext.seccompProfile.type"
SCP_E = "spec.ephemeralContainers[*].securityContext.seccompProfile.type"


def scp_pod(pod_type: str | None, container_type: str | None) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    if pod_type is not None:
        spec["securityContext"] = {"seccompProfile": seccomp(pod_type)}
    c = ctr(sc={"seccompProfile": seccomp(container_type)}) if container_type else ctr()
    spec["containers"] = [c]
    return pod(spec)


SCP_FIVE = pod({"securityContext": {"seccompProfile": seccomp("Unconfined")}, "containers": [
    ctr(sc={"seccompProfile": None}), ctr(sc={"seccompProfile": {}}),
    ctr(sc={"seccompProfile": seccomp("Unconfined")}),
    ctr(sc={"seccompProfile": seccomp("RuntimeDefault")}),
    ctr(sc={"seccompProfile": seccomp("Localhost")})]})
SCP_MIXED = pod({"securityContext": {"seccompProfile": seccomp("Unconfined")},
                 "initContainers": [ctr(sc={"seccompProfile": seccomp("Unconfined")})],
                 "ephemeralContainers": [ctr(sc={"seccompProfile": seccomp("Unconfined")})]})
BASELINE_SECCOMP = [
    pytest.param(rule("baseline", "latest"), scp_pod("Unconfined", "Unconfined"), False,
                 id="baseline_seccompProfile_no_exclusion"),
    pytest.param(b24(ex(SC_, NG)), scp_pod("RuntimeDefault", "fake"), True,
                 id="baseline_seccompProfile_defines_all_violate_true_1"),
    pytest.param(b24(ex(SC_)), scp_pod("fake", "RuntimeDefault"), True,
                 id="baseline_seccompProfile_defines_all_violate_true_2"),
    pytest.param(b24(ex(SC_, NG)), scp_pod("RuntimeDefault", "RuntimeDefault"), True,
                 id="baseline_seccompProfile_defines_all_violate_false_1"),
    pytest.param(b24(ex(SC_)), scp_pod("RuntimeDefault", "RuntimeDefault"), True,
                 id="baseline_seccompProfile_defines_all_violate_false_2"),
    pytest.param(rule("baseline", "v1.0"), scp_pod("RuntimeDefault", "RuntimeDefault"), True,
                 id="baseline_seccompProfile_metadata_annotations_allow_unconfined"),
    pytest.param(rule("baseline", "v1.19", ex(SC_), ex(SC_, NG)), SCP_FIVE, True,
                 id="baseline_seccompProfile_defines_multiple_all_violate_true"),
    pytest.param(rule("baseline", "v1.19", ex(SC_, None, SCP_P, ["Unconfined"]),
                      ex(SC_, NG, SCP_C, ["Unconfined"])), SCP_FIVE, True,
                 id="baseline_seccompProfile_defines_multiple_all_allowed_positive"),
    pytest.param(rule("baseline", "v1.19", ex(SC_, None, SCP_P, ["unknown"]),
                      ex(SC_, NG, SCP_C, ["Unconfined"])), SCP_FIVE, False,
                 id="baseline_seccompProfile_defines_multiple_all_allowed_negative"),
    pytest.param(rule("baseline", "v1.19", ex(SC_, None, SCP_P, ["Unconfined"]),
                      ex(SC_, NG, SCP_I, ["Unconfined"]), ex(SC_, NG, SCP_E, ["Unconfined"])),
                 SCP_MIXED, True,
                 id="baseline_seccompProfile_defines_multiple_initContainer_&_ephemeralContainer_all_allowed_positive"),
    pytest.param(rule("baseline", "v1.19", ex(SC_, None, SCP_P, ["Unconfined"]),
                      ex(SC_, NG, SCP_I, ["Unconfined"]), ex(SC_, NG, SCP_E, ["unknown"])),
                 SCP_MIXED, False,
                 id="baseline_seccompProfile_defines_multiple_initContainer_&_ephemeralContainer_all_allowed_negative"),
    pytest.param(b24(ex(SC_, NG)), scp_pod(None, "fake"), True,
                 id="baseline_seccompProfile_defines_container_violate_true"),
    pytest.param(b24(ex(SC_, NG, SCP_C, ["fake"])), scp_pod(None, "fake"), True,
                 id="baseline_seccompProfile_defines_container_allowed_positive"),
    pytest.param(b24(ex(SC_, NG, SCP_C, ["real"])), scp_pod(None, "fake"), False,
                 id="baseline_seccompProfile_defines_container_allowed_negative"),
    pytest.param(b24(), scp_pod(None, "RuntimeDefault"), True,
                 id="baseline_seccompProfile_defines_container_violate_false"),
    pytest.param(b24(ex(SC_)), scp_pod("fake", None), True,
                 id="baseline_seccompProfile_defines_spec_violate_true"),
    pytest.param(b24(ex(SC_, None, SCP_P, ["fake"])), scp_pod("fake", None), True,
                 id="baseline_seccompProfile_defines_spec_allowed_positive"),
    pytest.param(b24(ex(SC_, None, SCP_P, ["true"])), scp_pod("fake", None), False,
                 id="baseline_seccompProfile_defines_spec_allowed_negative"),
    pytest.param(b24(), scp_pod("RuntimeDefault", None), True,
                 id="baseline_seccompProfile_defines_spec_violate_false"),
]

SY = "Sysctls"
SY_F = "spec.securityContext.sysctls[*].name"


def sysctl_pod(*names: str) -> dict[str, Any]:
    return pod({"securityContext": {"sysctls": [{"name": n} for n in names]},
                "containers": [ctr()]})


BASELINE_SYSCTLS = [
    pytest.param(b24(ex(SY)), pod({"containers": [ctr()]}), True, id="baseline_sysctls_undefined"),
    pytest.param(b24(ex(SY)), sysctl_pod("fake.value"), True,
                 id="baseline_sysctls_defines_violate_true"),
    pytest.param(b24(ex(SY, None, SY_F, ["fake.value"])), sysctl_pod("fake.value"), True,
                 id="baseline_sysctls_defines_allowed_positive"),
    pytest.param(b24(ex(SY)), sysctl_pod("kernel.shm_rmid_forced"), True,
                 id="baseline_sysctls_defines_violate_false"),
    pytest.param(rule("baseline", "v1.0", ex(SY)), sysctl_pod("a", "b"), True,
                 id="baseline_sysctls_multiple_sysctls_pass"),
    pytest.param(rule("baseline", "v1.0", ex(SY, None, SY_F, ["a", "b"])), sysctl_pod("a", "b"),
                 True, id="baseline_sysctls_multiple_sysctls_pass_allowed_positive"),
    pytest.param(rule("baseline", "v1.0", ex(SY, None, SY_F, ["a"])), sysctl_pod("a", "b"), False,
                 id="baseline_sysctls_multiple_sysctls_pass_allowed_negative"),
    pytest.param(rule("baseline", "v1.0", ex(SY)), sysctl_pod("net.ipv4.ip_local_reserved_ports"),
                 True, id="baseline_sysctls_new_sysctls_pass"),
    pytest.param(rule("baseline", "v1.0",
                      ex(SY, None, SY_F, ["net.ipv4.ip_local_reserved_ports"])),
                 sysctl_pod("net.ipv4.ip_local_reserved_ports"), True,
                 id="baseline_sysctls_new_sysctls_pass_allowed_positive"),
    pytest.param(b24(ex(SY)), sysctl_pod("a", "b"), True,
                 id="baseline_sysctls_multiple_sysctls_pass_v1.24"),
    pytest.param(b24(ex(SY, None, SY_F, ["a", "b"])), sysctl_pod("a", "b"), True,
                 id="baseline_sysctls_multiple_sysctls_pass_v1.24_allowed_positive"),
    pytest.param(b24(ex(SC_)), sysctl_pod("kernel.shm_rmid_forced"), True,
                 id="baseline_sysctls_not_match_pass"),
    pytest.param(b24(ex(SC_, None, SY_F, ["kernel.shm_rmid_forced"])),
                 sysctl_pod("kernel.shm_rmid_forced"), True,
                 id="baseline_sysctls_not_match_pass_allowed_positive"),
    pytest.param(b24(ex(SC_)), sysctl_pod("fake.value"), False,
                 id="baseline_sysctls_not_match_block"),
    pytest.param(b24(ex(SC_, None, SY_F, ["fake.value"])), sysctl_pod("fake.value"), False,
                 id="baseline_sysctls_not_match_block_allowed_positive"),
]

VT = "Volume Types"
RANR = "Running as Non-root"
RANRU = "Running as Non-root user"
PE = "Privilege Escalation"
ALL_VOLUMES = [{k: {}} for k in (
    "emptyDir", "secret", "persistentVolumeClaim", "downwardAPI", "configMap", "projected", "csi",
    "ephemeral", "hostPath", "awsElasticBlockStore", "gitRepo", "nfs", "iscsi", "glusterfs", "rbd",
    "flexVolume", "cinder", "cephfs", "flocker", "fc", "azureFile", "vsphereVolume", "quobyte",
    "azureDisk", "photonPersistentDisk", "portworxVolume", "scaleIO", "storageos", "unknown")]
RESTRICTED_KINDS = ("awsElasticBlockStore", "azureDisk", "azureFile", "cephfs", "cinder", "fc",
                    "flexVolume", "flocker", "gitRepo", "glusterfs", "hostPath", "iscsi", "nfs",
                    "photonPersistentDisk", "portworxVolume", "quobyte", "rbd", "scaleIO",
                    "storageos", "unknown", "vsphereVolume")
AWS_NULL = {"name": "test-volume", "awsElasticBlockStore": None, "volumeID": "<volume id>",
            "fsType": "ext4"}


def vol_pod(*volumes: dict[str, Any]) -> dict[str, Any]:
    spec: dict[str, Any] = {"securityContext": {"seccompProfile": RD},
                            "containers": [ctr(sc=RSC)]}
    if volumes:
        spec["volumes"] = list(volumes)
    return pod(spec)


RESTRICTED_VOLUME_TYPES = [
    pytest.param(r24(ex(VT)), vol_pod(), True, id="restricted_volume_types_undefined"),
    pytest.param(r24(ex(RANR, NG)), vol_pod(AWS_NULL), False,
                 id="restricted_volume_types_not_match_block"),
    pytest.param(r24(ex(VT)), vol_pod(AWS_NULL), True,
                 id="restricted_volume_types_defines_violate_true"),
    pytest.param(r24(ex(VT)), vol_pod({"emptyDir": {}}), True,
                 id="restricted_volume_types_defines_violate_false"),
    pytest.param(r24(ex(HPV)), vol_pod({"emptyDir": {}}), True,
                 id="restricted_volume_types_defines_violate_false_not_match_pass"),
    pytest.param(r24(ex(HPV)), vol_pod({"hostPath": {"path": "/var/lib1"}}), False,
                 id="restricted_volume_types_defines_violate_true_not_match_block"),
    pytest.param(r24(ex(VT), ex(HPV)), vol_pod(*ALL_VOLUMES), True,
                 id="restricted_volume_types_defines_violate_true_not_match_block-2"),
    pytest.param(r24(*[ex(VT, None, f"spec.volumes[*].{k}", [""]) for k in RESTRICTED_KINDS],
                     ex(HPV, None, "spec.volumes[*].hostPath", [""])),
                 vol_pod(*ALL_VOLUMES), True, id="restricted_volume_types_defines_allow_positive"),
]

PE_C = "spec.containers[*].securityContext.allowPrivilegeEscalation"
PE_I = "spec.initContainers[*].securityContext.allowPrivilegeEscalation"
PE_E = "spec.ephemeralContainers[*].securityContext.allowPrivilegeEscalation"


def rpod(**spec: Any) -> dict[str, Any]:
    """A restricted test pod: the pod-level context holds a RuntimeDefault seccomp profile."""
    return pod({"securityContext": {"seccompProfile": RD}, **spec})


def ape(value: Any) -> dict[str, Any]:
    return {"allowPrivilegeEscalation": value, "runAsNonRoot": True,
            "capabilities": {"drop": ["ALL"]}}


APE_THREE = [ctr(sc=ape(None)), ctr(sc=ape(False)), ctr(sc=ape(True))]
RESTRICTED_PRIVILEGE_ESCALATION = [
    pytest.param(r24(ex(PE, NG)),
                 rpod(containers=[ctr(sc={"runAsNonRoot": True, "capabilities": {"drop": ["ALL"]}})]),
                 True, id="restricted_privilege_escalation_undefined"),
    pytest.param(r24(ex(RANR, NG)),
                 rpod(containers=[ctr(sc={"runAsNonRoot": True, "capabilities": {"drop": ["ALL"]}})]),
                 False, id="restricted_privilege_escalation_undefined_not_match_block"),
    pytest.param(r24(ex(PE, NG)), rpod(containers=[ctr(sc=ape(True))]), True,
                 id="restricted_privilege_escalation_defines_container_violate_true"),
    pytest.param(r24(ex(PE, NG)), rpod(containers=[ctr(sc=ape(False))]), True,
                 id="restricted_privilege_escalation_defines_container_violate_false"),
    pytest.param(r24(ex(PE, NG)), rpod(containers=APE_THREE), True,
                 id="restricted_privilege_escalation_defines_container_violate_none"),
    pytest.param(r24(ex(PE, NG, PE_C, ["falses"])), rpod(containers=APE_THREE), False,
                 id="restricted_privilege_escalation_defines_container_allow_negative"),
    pytest.param(r24(ex(PE, NG, PE_I, ["true"]), ex(PE, NG, PE_E, ["true"])),
                 rpod(initContainers=[ctr(sc=ape(True))], ephemeralContainers=[ctr(sc=ape(True))]),
                 True,
                 id="restricted_privilege_escalation_defines_initContainer_&_ephemeralContainer_allow_positive"),
    pytest.param(r24(ex(PE, NG, PE_I, ["true"])),
                 rpod(initContainers=[ctr(sc=ape(True))], ephemeralContainers=[ctr(sc=ape(True))]),
                 False,
                 id="restricted_privilege_escalation_defines_initContainer_&_ephemeralContainer_allow_negative"),
    pytest.param(r24(ex(PE, NG)), rpod(containers=[ctr(sc=ape(False))],
                                       initContainers=[ctr("nginx-init", sc=ape(True))]), True,
                 id="restricted_privilege_escalation_defines_init_container_violate_true"),
    pytest.param(r24(ex(PE, NG)), rpod(containers=[ctr(sc=ape(False))],
                                       initContainers=[ctr("nginx-init", sc=ape(False))]), True,
                 id="restricted_privilege_escalation_defines_init_container_violate_false"),
    pytest.param(r24(ex(RANR, NG)), rpod(containers=[ctr(sc=ape(False))],
                                         initContainers=[ctr("nginx-init", sc=ape(True))]), False,
                 id="restricted_privilege_escalation_defines_init_container_violate_true_not_match_block"),
]

RNR_C = "spec.containers[*].securityContext.runAsNonRoot"
RNR_P = "spec.securityContext.runAsNonRoot"


def rnr_pod(pod_value: bool | None, container_value: bool | None, *, key: str = "containers"
            ) -> dict[str, Any]:
    pod_sc: dict[str, Any] = {"seccompProfile": RD}
    if pod_value is not None:
        pod_sc = {"runAsNonRoot": pod_value, **pod_sc}
    container_sc = sc() if container_value is None else sc(runAsNonRoot=container_value)
    return pod({"securityContext": pod_sc, key: [ctr(sc=container_sc)]})


def rnr_both(value: bool) -> dict[str, Any]:
    return pod({"securityContext": {"runAsNonRoot": value, "seccompProfile": RD},
                "initContainers": [ctr(sc=sc(runAsNonRoot=value))],
                "ephemeralContainers": [ctr(sc=sc(runAsNonRoot=value))]})


RESTRICTED_RUN_AS_NON_ROOT = [
    pytest.param(r24(ex(RANR, NG), ex(PE, NG), ex(CAP, NG), ex(SC_, NG)),
                 pod({"containers": [ctr()]}), True,
                 id="restricted_runAsNonRoot_defines_all_violate_none"),
    pytest.param(r24(ex(RANR)), rnr_pod(False, True), True,
                 id="restricted_runAsNonRoot_defines_all_violate_spec_true_container_false"),
    pytest.param(r24(ex(RANR, None, RNR_P, ["false"])), rnr_pod(False, True), True,
                 id="restricted_runAsNonRoot_defines_all_violate_spec_true_container_false_allow_positive"),
    pytest.param(r24(ex(RANR, None, RNR_P, ["true"])), rnr_pod(False, True), False,
                 id="restricted_runAsNonRoot_defines_all_violate_spec_true_container_false_allow_negative"),
    pytest.param(r24(ex(RANR)), rnr_pod(True, True), True,
                 id="restricted_runAsNonRoot_defines_all_violate_spec_false_container_false"),
    pytest.param(r24(ex(RANR), ex(PE, NG), ex(CAP, NG), ex(RANR, NG), ex(SC_, NG)),
                 pod({"securityContext": {"runAsNonRoot": True}, "containers": [
                     ctr(sc=None), ctr(sc={}), ctr(sc=sc(runAsNonRoot=False)),
                     ctr(sc=sc(runAsNonRoot=True))]}), True,
                 id="restricted_runAsNonRoot_defines_all_violate_pod_nil"),
    pytest.param(r24(ex(RANR), ex(PE, NG), ex(CAP, NG), ex(SC_, NG)),
                 pod({"securityContext": None, "containers": [
                     ctr(sc=None), ctr(sc={}), ctr(sc={"runAsNonRoot": False}),
                     ctr(sc={"runAsNonRoot": True})]}), True,
                 id="restricted_runAsNonRoot_defines_all_violate_multiple_container"),
    pytest.param(r24(ex(RANR, NG, RNR_C, ["false"]), ex(RANR, None, RNR_P, ["false"])),
                 rnr_pod(False, False), True,
                 id="restricted_runAsNonRoot_defines_all_violate_spec_true_container_true_spec_level_allowed_positive"),
    pytest.param(r24(ex(RANR, NG, RNR_C, ["true"]), ex(RANR, None, RNR_P, ["false"])),
                 rnr_pod(False, False), False,
                 id="restricted_runAsNonRoot_defines_all_violate_spec_true_container_true_spec_level_allowed_negative"),
    pytest.param(r24(ex(RANR, NG, "spec.initContainers[*].securityContext.runAsNonRoot", ["false"]),
                     ex(RANR, NG, "spec.ephemeralContainers[*].securityContext.runAsNonRoot",
                        ["false"]),
                     ex(RANR, None, RNR_P, ["false"])), rnr_both(False), True,
                 id="restricted_runAsNonRoot_defines_all_initContainer_&_ephemeralContainer_allowed_positive"),
    pytest.param(r24(ex(RANR, NG, "spec.ephemeralContainers[*].securityContext.runAsNonRoot",
                        ["false"]),
                     ex(RANR, None, RNR_P, ["false"])), rnr_both(False), False,
                 id="restricted_runAsNonRoot_defines_all_initContainer_&_ephemeralContainer_allowed_negative"),
    pytest.param(r24(ex(RANR)), rnr_pod(True, False), False,
                 id="restricted_runAsNonRoot_defines_all_violate_spec_false_container_true_spec_level"),
    pytest.param(r24(ex(RANR, NG)), rnr_pod(False, True), False,
                 id="restricted_runAsNonRoot_defines_all_violate_spec_true_container_false_container_level"),
    pytest.param(r24(ex(RANR, NG)), rnr_pod(True, False), True,
                 id="restricted_runAsNonRoot_defines_all_violate_spec_true_container_true_container_level"),
    pytest.param(r24(ex(RANR, NG)), rnr_pod(True, False), True,
                 id="restricted_runAsNonRoot_defines_all_violate_spec_false_container_true_container_level"),
    pytest.param(r24(ex(RANR, NG)), rnr_pod(True, True), True,
                 id="restricted_runAsNonRoot_defines_all_violate_spec_false_container_false_container_level"),
    pytest.param(r24(ex(RANR, NG)), rnr_pod(None, False), True,
                 id="restricted_runAsNonRoot_defines_container_only_violate_true"),
    pytest.param(r24(ex(RANR, NG)), rnr_pod(None, True), True,
                 id="restricted_runAsNonRoot_defines_container_only_violate_false"),
    pytest.param(r24(ex(RANR)), rnr_pod(False, None), True,
                 id="restricted_runAsNonRoot_defines_spec_only_violate_true"),
    pytest.param(r24(ex(RANR)), rnr_pod(True, None), True,
                 id="restricted_runAsNonRoot_defines_spec_only_violate_false"),
    pytest.param(r24(ex(PE, NG)), rnr_pod(False, None), False,
                 id="restricted_runAsNonRoot_defines_spec_violate_true_not_match"),
    pytest.param(r24(ex(RANR, NG)), rnr_pod(None, None), True,
                 id="restricted_runAsNonRoot_defines_none"),
    pytest.param(r24(ex(PE, NG)), rnr_pod(None, None), False,
                 id="restricted_runAsNonRoot_defines_none_not_match"),
]

RAU_C = "spec.containers[*].securityContext.runAsUser"


def rau_pod(pod_uid: int | None, containers: list[dict[str, Any]], key: str = "containers"
            ) -> dict[str, Any]:
    pod_sc: dict[str, Any] = {"runAsNonRoot": True, "seccompProfile": RD}
    if pod_uid is not None:
        pod_sc = {"runAsUser": pod_uid, **pod_sc}
    return pod({"securityContext": pod_sc, key: containers})


RAU_FOUR = [ctr(sc=None), ctr(sc={}), ctr(sc=sc(runAsUser=0)), ctr(sc=sc(runAsUser=1))]


def rau_mixed() -> dict[str, Any]:
    resource = rau_pod(1000, [ctr(sc=sc(runAsUser=0))], "initContainers")
    resource["spec"]["ephemeralContainers"] = [ctr(sc=sc(runAsUser=0))]
    return resource


RESTRICTED_RUN_AS_USER = [
    pytest.param(r24(ex(RANRU)), rau_pod(0, [ctr(sc=sc(runAsUser=1000))]), True,
                 id="restricted_runAsUser_defines_all_violate_true_spec_level"),
    pytest.param(r24(ex(RANRU), ex(PE), ex(CAP)), rau_pod(0, [ctr(sc=None)]), True,
                 id="restricted_runAsUser_defines_all_violate_null_spec_level"),
    pytest.param(r24(ex(RANRU, None, "spec.securityContext.runAsUser", ["0"]), ex(PE), ex(CAP)),
                 rau_pod(0, [ctr(sc=None)]), True,
                 id="restricted_runAsUser_defines_all_violate_null_spec_level_allow_positive"),
    pytest.param(r24(ex(RANRU, None, "spec.securityContext.runAsUser", ["1"]), ex(PE), ex(CAP)),
                 rau_pod(0, [ctr(sc=None)]), False,
                 id="restricted_runAsUser_defines_all_violate_null_spec_level_allow_negative"),
    pytest.param(r24(ex(RANRU, NG), ex(PE, NG), ex(CAP, NG)), rau_pod(1000, RAU_FOUR), True,
                 id="restricted_runAsUser_defines_all_violate_false_multiple_containers"),
    pytest.param(r24(ex(RANRU, NG, RAU_C, ["0"]), ex(PE, NG), ex(CAP, NG)),
                 rau_pod(1000, RAU_FOUR), True,
                 id="restricted_runAsUser_defines_all_multiple_containers_allow_positive"),
    pytest.param(r24(ex(RANRU, NG, RAU_C, ["1"]), ex(PE, NG), ex(CAP, NG)),
                 rau_pod(1000, RAU_FOUR), False,
                 id="restricted_runAsUser_defines_all_multiple_containers_allow_negative"),
    pytest.param(r24(ex(RANRU, NG, "spec.initContainers[*].securityContext.runAsUser", ["0"]),
                     ex(RANRU, NG, "spec.ephemeralContainers[*].securityContext.runAsUser", ["0"]),
                     ex(PE, NG), ex(CAP, NG)), rau_mixed(), True,
                 id="restricted_runAsUser_defines_all_multiple_initContainer_&_ephemeralContainer_allow_positive"),
    pytest.param(r24(ex(RANRU, NG, "spec.initContainers[*].securityContext.runAsUser", ["0"]),
                     ex(RANRU, NG, "spec.ephemeralContainers[*].securityContext.runAsUser",
                        ["-1"]),
                     ex(PE, NG), ex(CAP, NG)), rau_mixed(), False,
                 id="restricted_runAsUser_defines_all_multiple_initContainer_&_ephemeralContainer_allow_negative"),
    pytest.param(r24(ex(RANRU)), rau_pod(1000, [ctr(sc=sc(runAsUser=1000))]), True,
                 id="restricted_runAsUser_defines_all_violate_false_spec_level"),
    pytest.param(r24(ex(RANRU, NG)), rau_pod(1000, [ctr(sc=sc(runAsUser=0))]), True,
                 id="restricted_runAsUser_defines_all_violate_true_container_level"),
    pytest.param(r24(ex(RANRU, NG)), rau_pod(1000, [ctr(sc=sc(runAsUser=1000))]), True,
                 id="restricted_runAsUser_defines_all_violate_false_container_level"),
    pytest.param(r24(ex(RANRU, NG)), rau_pod(None, [ctr(sc=sc(runAsUser=0))]), True,
                 id="restricted_runAsUser_defines_container_violate_true"),
    pytest.param(r24(ex(RANRU, NG)), rau_pod(None, [ctr(sc=sc(runAsUser=1000))]), True,
                 id="restricted_runAsUser_defines_container_violate_false"),
    pytest.param(r24(ex(RANRU)), rau_pod(0, [ctr(sc=sc())]), True,
                 id="restricted_runAsUser_defines_spec_violate_true"),
    pytest.param(r24(ex(RANRU)), rau_pod(1000, [ctr(sc=sc())]), True,
                 id="restricted_runAsUser_defines_spec_violate_false"),
    pytest.param(r24(ex(RANRU)), rau_pod(None, [ctr(sc=sc())]), True,
                 id="restricted_runAsUser_defines_none"),
    pytest.param(r24(ex(RANR)), rau_pod(0, [ctr(sc=sc())]), False,
                 id="restricted_runAsUser_defines_spec_violate_true_not_match"),
]


def scr_pod(pod_type: str | None, *containers: dict[str, Any], key: str = "containers"
            ) -> dict[str, Any]:
    pod_sc: dict[str, Any] = {"runAsNonRoot": True}
    if pod_type is not None:
        pod_sc["seccompProfile"] = seccomp(pod_type)
    return pod({"securityContext": pod_sc, key: list(containers)})


def scr_ctr(kind: str | None, image: str = "nginx") -> dict[str, Any]:
    return ctr(image=image, sc=sc(seccompProfile=seccomp(kind)))


SCR_FIVE = [ctr(sc=None), ctr(sc={}), scr_ctr("Unconfined"), scr_ctr("RuntimeDefault"),
            scr_ctr("Localhost")]


def scr_mixed(eph_kind: str) -> dict[str, Any]:
    resource = scr_pod(None, scr_ctr("fake1"), key="initContainers")
    resource["spec"]["ephemeralContainers"] = [scr_ctr(eph_kind)]
    return resource


RESTRICTED_SECCOMP = [
    pytest.param(r24(ex(SC_, NG)), scr_pod(None, scr_ctr(None)), True,
                 id="restricted_seccompProfile_defines_container_no_seccompProfile"),
    pytest.param(r24(ex(SC_, NG)), scr_pod(None, scr_ctr("fakeValue")), True,
                 id="restricted_seccompProfile_defines_container_violate_true"),
    pytest.param(r24(ex(SC_, NG, SCP_C, ["fakeValue"])), scr_pod(None, scr_ctr("fakeValue")),
                 True, id="restricted_seccompProfile_defines_container_allow_positive"),
    pytest.param(r24(ex(SC_, NG, SCP_C, ["fake"])), scr_pod(None, scr_ctr("fakeValue")), False,
                 id="restricted_seccompProfile_defines_container_allow_negative"),
    pytest.param(r24(ex(SC_, NG, SCP_I, ["fake1"]), ex(SC_, NG, SCP_E, ["fake2"])),
                 scr_mixed("fake2"), True,
                 id="restricted_seccompProfile_defines_initContainer_&_ephemeralContainer_allow_positive"),
    pytest.param(r24(ex(SC_, NG, SCP_I, ["fake1"]), ex(SC_, NG, SCP_E, ["fake1"])),
                 scr_mixed("fake2"), False,
                 id="restricted_seccompProfile_defines_initContainer_&_ephemeralContainer_allow_negative"),
    pytest.param(r24(ex(SC_)), scr_pod("fakeValue", ctr(sc=sc())), True,
                 id="restricted_seccompProfile_defines_spec_violate_true"),
    pytest.param(r24(ex(SC_, NG), ex(SC_)), scr_pod("fakeValue", scr_ctr("Unconfined")), True,
                 id="restricted_seccompProfile_defines_container_seccompProfile_type_unconfined"),
    pytest.param(r24(ex(SC_, NG), ex(SC_), ex(PE, NG), ex(CAP, NG)),
                 scr_pod("RuntimeDefault", *SCR_FIVE), True,
                 id="restricted_seccompProfile_invalid"),
    pytest.param(r24(ex(PE, NG), ex(CAP, NG), ex(RANR, NG), ex(SC_, NG)),
                 pod({"securityContext": None, "containers": SCR_FIVE}), True,
                 id="restricted_seccompProfile_invalid_multiple_containers"),
    pytest.param(r24(ex(PE, NG), ex(CAP, NG), ex(RANR, NG),
                     ex(SC_, NG, SCP_C, ["Unconfined"])),
                 pod({"securityContext": None, "containers": SCR_FIVE}), True,
                 id="restricted_seccompProfile_invalid_multiple_containers_allow_positive"),
    pytest.param(r24(ex(PE), ex(CAP), ex(RANR), ex(SC_, ["nginx1"], SCP_C, ["unknown"])),
                 pod({"securityContext": None, "containers": [
                     ctr(sc=None), ctr(sc={}), scr_ctr("Unconfined", "nginx1"),
                     scr_ctr("RuntimeDefault", "nginx1"), scr_ctr("Localhost")]}), False,
                 id="restricted_seccompProfile_invalid_multiple_containers_allow_negative"),
    pytest.param(r24(ex(SC_, NG)), scr_pod(None, ctr(sc=sc())), True,
                 id="restricted_seccompProfile_undefined"),
    pytest.param(r24(ex(SC_)), scr_pod(None, ctr(sc=sc())), True,
                 id="restricted_seccompProfile_undefined_spec_level"),
    pytest.param(r24(ex(RANRU)), scr_pod(None, ctr(sc=sc())), False,
                 id="restricted_seccompProfile_undefined_not_match_block"),
]


def cap_pod(*containers: dict[str, Any], key: str = "containers") -> dict[str, Any]:
    return pod({"securityContext": {"runAsNonRoot": True, "seccompProfile": RD},
                key: list(containers)})


def cap_ctr(add: list[Any] | None = None, drop: list[Any] | None = None) -> dict[str, Any]:
    return ctr(sc={"allowPrivilegeEscalation": False, **caps(add, drop)})


APE_ONLY = ctr(sc={"allowPrivilegeEscalation": False})
CAP_THREE_VIOLATE = [cap_ctr(["BAR", "FOO"], [None]), cap_ctr(["BAR", "BAZ"], ["BAR", "FOO"]),
                     cap_ctr(["NET_BIND_SERVICE", "CHOWN"], ["ALL", "FOO"])]
CAP_THREE = [cap_ctr(["BAR", "FOO"], ["ALL"]), cap_ctr(["BAR", "BAZ"], ["ALL", "BAR", "FOO"]),
             cap_ctr(["NET_BIND_SERVICE", "CHOWN"], ["ALL", "FOO"])]


def cap_mixed() -> dict[str, Any]:
    resource = cap_pod(cap_ctr(["BAR"], ["ALL"]), key="initContainers")
    resource["spec"]["ephemeralContainers"] = [cap_ctr(["FOO"], ["ALL"])]
    return resource


RESTRICTED_CAPABILITIES = [
    pytest.param(r24(ex(CAP, NG)), cap_pod(APE_ONLY), True,
                 id="restricted_capabilities_drop_undefined"),
    pytest.param(r24(ex(CAP, NG)), cap_pod(cap_ctr(drop=["KILL"])), True,
                 id="restricted_capabilities_drop_defines_violate_true"),
    pytest.param(r24(ex(CAP, NG)), cap_pod(cap_ctr(drop=["ALL"])), True,
                 id="restricted_capabilities_drop_defines_violate_false"),
    pytest.param(r24(ex(CAP, NG)), cap_pod(APE_ONLY), True,
                 id="restricted_capabilities_add_undefined"),
    pytest.param(r24(ex(CAP, NG)), cap_pod(*CAP_THREE_VIOLATE), True,
                 id="restricted_capabilities_drop_defines_multiple_capabilities_violate_true"),
    pytest.param(r24(ex(CAP, NG, CAP_C, ["BAR", "FOO", "BAZ", "CHOWN"])), cap_pod(*CAP_THREE),
                 True, id="restricted_capabilities_drop_defines_multiple_capabilities_allow_positive"),
    pytest.param(r24(ex(CAP, NG, CAP_C, ["BAR", "FOO", "BAZ"])), cap_pod(*CAP_THREE), False,
                 id="restricted_capabilities_drop_defines_multiple_capabilities_allow_negative"),
    pytest.param(r24(ex(CAP, NG, CAP_I, ["BAR"]), ex(CAP, NG, CAP_E, ["FOO"])), cap_mixed(), True,
                 id="restricted_capabilities_drop_defines_initContainer_&_ephemeralContainer_allow_positive"),
    pytest.param(r24(ex(CAP, NG, CAP_I, ["BAR"]), ex(CAP, NG, CAP_E, ["BAR"])), cap_mixed(), False,
                 id="restricted_capabilities_drop_defines_initContainer_&_ephemeralContainer_allow_negative"),
    pytest.param(r24(ex(PE, NG)), cap_pod(APE_ONLY), False,
                 id="restricted_capabilities_add_undefined_not_match_block"),
    pytest.param(r24(ex(PE, NG)), cap_pod(cap_ctr(drop=["ALL"])), True,
                 id="restricted_capabilities_add_undefined_not_match_pass"),
    pytest.param(r24(ex(CAP, NG)), cap_pod(cap_ctr(["KILL"])), True,
                 id="restricted_capabilities_add_defines_violate_true"),
    pytest.param(r24(ex(CAP, NG)), cap_pod(cap_ctr(["NET_BIND_SERVICE"])), True,
                 id="restricted_capabilities_add_defines_violate_false"),
    pytest.param(r24(ex(PE, NG)), cap_pod(cap_ctr(["KILL"])), False,
                 id="restricted_capabilities_add_defines_violate_true_not_match_block"),
    pytest.param(r24(ex(PE, NG)), cap_pod(cap_ctr(["NET_BIND_SERVICE"])), False,
                 id="restricted_capabilities_add_defines_violate_false_not_match_pass"),
]

WILDCARD_IMAGES = [
    pytest.param(b24(ex(PC, ["nginx"])), pod({"containers": [ctr(image="nginx:1.2.3", sc=PRIV)]}),
                 False, id="wildcard_images_violate_true_image_not_match"),
    pytest.param(b24(ex(PC, ["nginx"])), pod({"containers": [ctr(sc=PRIV)]}), True,
                 id="wildcard_images_violate_true_image_match"),
    pytest.param(b24(ex(PC, ["nginx:*"])), pod({"containers": [ctr(image="nginx:1.2.3", sc=PRIV)]}),
                 True, id="wildcard_images_violate_true_image_match_wildcard"),
    pytest.param(b24(ex(PC, ["nginx*"])), pod({"containers": [ctr(image="busybox", sc=PRIV)]}),
                 False, id="wildcard_images_violate_true_image_not_match_wildcard"),
]

EVALUATE_POD = (BASELINE_HOST_PROCESS + BASELINE_HOST_NAMESPACES + BASELINE_PRIVILEGED
                + BASELINE_CAPABILITIES + BASELINE_HOST_PATH + BASELINE_HOST_PORTS
                + BASELINE_APPARMOR + BASELINE_SELINUX + BASELINE_PROC_MOUNT + BASELINE_SECCOMP
                + BASELINE_SYSCTLS + RESTRICTED_VOLUME_TYPES + RESTRICTED_PRIVILEGE_ESCALATION
                + RESTRICTED_RUN_AS_NON_ROOT + RESTRICTED_RUN_AS_USER + RESTRICTED_SECCOMP
                + RESTRICTED_CAPABILITIES + WILDCARD_IMAGES)


@pytest.mark.parametrize(("rule_spec", "resource", "allowed"), EVALUATE_POD)
def test_kyverno_evaluate_pod(rule_spec: dict[str, Any], resource: dict[str, Any],
                              allowed: bool) -> None:
    result = evaluate(rule_spec, resource)
    assert result.status in (RuleStatus.PASS, RuleStatus.FAIL), result.message
    assert (result.status is RuleStatus.PASS) is allowed, result.message


# -- pkg/pss/evaluate_userns_test.go ----------------------------------------------------------
# Kyverno's newest tree relaxes procMount/runAsNonRoot/runAsUser for `hostUsers: false` pods
# (Pod Security Standards v1.35) and adds a `procMount_restricted` check. The project spec
# (§11.3) pins the v1.34 checks with user-namespace relaxations disabled, so those rows expect
# the unrelaxed result; rows the spec agrees on keep Kyverno's expectation unchanged.

def _userns_pod(host_users: bool | None, **container_sc: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {"securityContext": {"seccompProfile": RD},
                            "containers": [ctr(sc={**RSC, **container_sc})]}
    if host_users is not None:
        spec["hostUsers"] = host_users
    return pod(spec, name=None)


_UNMASKED = {"procMount": "Unmasked"}
_ROOT = {"runAsNonRoot": None, "runAsUser": 0}
_EXCLUDE_PM = [ex(PM, NG)]
_EXCLUDE_UNMASKED = [ex(PM, NG, PM_C, ["Unmasked"])]

USERNS = [
    # (name, level, version, hostUsers, container context, excludes, spec ids, Kyverno ids)
    ("baseline latest, userns, unmasked", "baseline", "latest", False, _UNMASKED, None,
     ["procMount"], []),
    ("baseline latest, no userns, unmasked", "baseline", "latest", True, _UNMASKED, None,
     ["procMount"], ["procMount"]),
    ("baseline latest, hostUsers unset, unmasked", "baseline", "latest", None, _UNMASKED, None,
     ["procMount"], ["procMount"]),
    ("baseline v1.32, userns, unmasked", "baseline", "v1.32", False, _UNMASKED, None,
     ["procMount"], ["procMount"]),
    ("restricted latest, userns, unmasked", "restricted", "latest", False, _UNMASKED, None,
     ["procMount"], ["procMount_restricted"]),
    ("restricted latest, no userns, unmasked", "restricted", "latest", True, _UNMASKED, None,
     ["procMount"], ["procMount", "procMount_restricted"]),
    ("restricted v1.32, userns, unmasked", "restricted", "v1.32", False, _UNMASKED, None,
     ["procMount"], ["procMount", "procMount_restricted"]),
    ("restricted latest, userns, runAsUser 0", "restricted", "latest", False, _ROOT, None,
     ["runAsNonRoot", "runAsUser"], []),
    ("restricted latest, no userns, runAsUser 0", "restricted", "latest", True, _ROOT, None,
     ["runAsNonRoot", "runAsUser"], ["runAsNonRoot", "runAsUser"]),
    ("restricted latest, hostUsers unset, runAsUser 0", "restricted", "latest", None, _ROOT, None,
     ["runAsNonRoot", "runAsUser"], ["runAsNonRoot", "runAsUser"]),
    ("restricted v1.32, userns, runAsUser 0", "restricted", "v1.32", False, _ROOT, None,
     ["runAsNonRoot", "runAsUser"], ["runAsNonRoot", "runAsUser"]),
    ("restricted latest, userns, runAsNonRoot false", "restricted", "latest", False,
     {"runAsNonRoot": False}, None, ["runAsNonRoot"], []),
    ("restricted v1.32, userns, runAsNonRoot false", "restricted", "v1.32", False,
     {"runAsNonRoot": False}, None, ["runAsNonRoot"], ["runAsNonRoot"]),
    ("restricted latest, userns, privileged", "restricted", "latest", False, {"privileged": True},
     None, ["privileged"], ["privileged"]),
    ("restricted latest, userns, unmasked, control excluded", "restricted", "latest", False,
     _UNMASKED, _EXCLUDE_PM, [], []),
    ("restricted v1.32, no userns, unmasked, control excluded", "restricted", "v1.32", True,
     _UNMASKED, _EXCLUDE_PM, [], []),
    ("restricted latest, userns, unmasked, value excluded", "restricted", "latest", False,
     _UNMASKED, _EXCLUDE_UNMASKED, [], []),
]


@pytest.mark.parametrize(("level", "version", "host_users", "container_sc", "excludes",
                          "expected", "kyverno"),
                         [pytest.param(*row[1:], id=row[0]) for row in USERNS])
def test_kyverno_evaluate_pod_user_namespaces(level: str, version: str, host_users: bool | None,
                                              container_sc: dict[str, Any],
                                              excludes: list[dict[str, Any]] | None,
                                              expected: list[str], kyverno: list[str]) -> None:
    sc_fields = {k: v for k, v in container_sc.items() if v is not None}
    resource = _userns_pod(host_users, **sc_fields)
    if container_sc.get("runAsNonRoot", True) is None:
        del resource["spec"]["containers"][0]["securityContext"]["runAsNonRoot"]
    result = evaluate({"level": level, "version": version, "exclude": excludes}, resource)
    assert sorted(c.id for c in result.checks) == expected
    assert (result.status is RuleStatus.PASS) is (not expected)


# -- pkg/pss/hostprobes_test.go -------------------------------------------------------------
# Kyverno's newest tree skips the probe-host control (introduced with v1.34) when the rule pins
# an older version; the project spec (§11.2 step 5) deliberately applies the oldest variant of
# every control to older versions, so v1.33 and v1.29 fail here as well.

HOST_PROBE_POD = {
    "kind": "Pod", "apiVersion": "v1",
    "metadata": {"name": "eks-pod-identity-agent", "namespace": "kube-system"},
    "spec": {"containers": [{
        "name": "eks-pod-identity-agent",
        "image": "602401143452.dkr.ecr.eu-west-1.amazonaws.com/eks/eks-pod-identity-agent:0.1.0",
        "livenessProbe": {"httpGet": {"host": "localhost", "path": "/healthz", "port": 2703}},
    }]},
}


@pytest.mark.parametrize(("version", "allowed"), [
    pytest.param("", False, id="unset"),
    pytest.param("latest", False, id="latest"),
    pytest.param("v1.35", False, id="v1.35"),
    pytest.param("v1.34", False, id="v1.34"),
    pytest.param("v1.33", False, id="v1.33-spec-applies-oldest-variant"),
    pytest.param("v1.29", False, id="v1.29-spec-applies-oldest-variant"),
])
def test_kyverno_host_probes_version_gating(version: str, allowed: bool) -> None:
    result = evaluate({"level": "baseline", "version": version}, HOST_PROBE_POD)
    assert (result.status is RuleStatus.PASS) is allowed
    assert [c.id for c in result.checks] == ["hostProbesAndHostLifecycle"]


def test_kyverno_host_probes_control_name_is_not_excludable() -> None:
    # Kyverno's newest tree names the control "Host Probes / Lifecycle Hooks"; the spec (§11.3)
    # lists it as not excludable, so the name is not a known control here.
    problems = validate_pod_security_spec({"level": "baseline", "exclude": [
        {"controlName": "Host Probes / Lifecycle Hooks", "images": ["*"]}]})
    assert [p.split(":")[0] for p in problems] == ["exclude/0/controlName"]


# -- pkg/engine/handlers/validation/validate_pss_test.go ------------------------------------

def test_kyverno_pss_policy_exceptions_skip() -> None:
    resource = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "test-pod"}, "spec": {
        "containers": [{"name": "primary", "image": "alpine:latest", "securityContext": {
            "allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]},
            "runAsNonRoot": True, "runAsUser": 1000, "runAsGroup": 1000,
            "seccompProfile": RD}}],
        "initContainers": [
            {"name": "init1", "image": "alpine:latest", "securityContext": {
                "allowPrivilegeEscalation": False,
                "capabilities": {"add": ["NET_ADMIN", "NET_RAW"], "drop": ["ALL"]},
                "privileged": False, "readOnlyRootFilesystem": False, "runAsNonRoot": True,
                "runAsUser": 10001, "runAsGroup": 10001, "seccompProfile": RD}},
            {"name": "init2", "image": "busybox:latest", "securityContext": {
                "allowPrivilegeEscalation": False,
                "capabilities": {"add": ["SYS_TIME"], "drop": ["ALL"]},
                "privileged": False, "readOnlyRootFilesystem": True, "runAsNonRoot": True,
                "runAsUser": 10002, "runAsGroup": 10002, "seccompProfile": RD}},
        ]}}
    ex1 = ex(CAP, ["alpine:latest"], CAP_I, ["NET_ADMIN", "NET_RAW"])
    ex2 = ex(CAP, ["busybox:latest"], CAP_I, ["SYS_TIME"])
    failed = evaluate_pod_security(copy.deepcopy(resource), "baseline", "baseline", "v1.29", [])
    assert failed.status is RuleStatus.FAIL
    result = evaluate_pod_security(copy.deepcopy(resource), "baseline", "baseline", "v1.29", [],
                                   exception_excludes=[ex1, ex2],
                                   exception_keys=["init1-exception-baseline",
                                                   "init2-exception-baseline"])
    assert (result.status, result.message) == (
        RuleStatus.SKIP, "rule is skipped due to policy exceptions init1-exception-baseline, "
        "init2-exception-baseline")
    # one exception alone leaves the other init container failing
    partial = evaluate_pod_security(copy.deepcopy(resource), "baseline", "baseline", "v1.29", [],
                                    exception_excludes=[ex1],
                                    exception_keys=["init1-exception-baseline"])
    assert partial.status is RuleStatus.FAIL
    assert "spec.initContainers[1].securityContext.capabilities.add" in partial.message
    assert "spec.initContainers[0]" not in partial.message


def test_kyverno_add_images_maps_container_names_to_references() -> None:
    # Test_addImages: container names in a check's detail become image references, looked up in
    # containers, then init containers, then ephemeral containers.
    resource = pod({
        "initContainers": [ctr("busybox", "index.docker.io/busybox:v1.2.3")],
        "containers": [ctr("nginx", "nginx:v13.4")],
        "ephemeralContainers": [ctr("nginx2", "test/nginx:latest")],
    })
    result = evaluate({"level": "restricted", "version": "latest"}, resource)
    images = {c["ID"]: c["Images"] for c in result.properties()["controlsJSON"]}
    expected = ["index.docker.io/busybox:v1.2.3", "docker.io/nginx:v13.4",
                "docker.io/test/nginx:latest"]
    assert images["allowPrivilegeEscalation"] == expected
    assert images["capabilities_restricted"] == expected
    assert images["runAsNonRoot"] == expected
    assert images["seccompProfile_restricted"] == expected


# -- api/kyverno/v1: Test_ValidatePSaControlNames --------------------------------------------

@pytest.mark.parametrize(("level", "version", "excludes", "problems"), [
    pytest.param("baseline", "v1.24", [ex(RANR, ["nginx", "nodejs"]), ex(SC_, ["nginx", "nodejs"])],
                 ["exclude/0/controlName: Invalid value: 'Running as Non-root': "
                  "Invalid control name defined at the given level"],
                 id="baseline_with_restricted_control_name"),
    pytest.param("baseline", "v1.24", [ex(PM, ["nginx", "nodejs"]), ex(SC_, ["nginx", "nodejs"])],
                 [], id="baseline_with_baseline_control_name"),
    pytest.param("restricted", "v1.24", [ex(PM, ["nginx", "nodejs"]),
                                         ex(SC_, ["nginx", "nodejs"])],
                 [], id="restricted_with_baseline_control_name"),
    pytest.param("restricted", "v1.24", [ex(PE, ["nginx", "nodejs"])], [],
                 id="restricted_with_restricted_control_name"),
    pytest.param("restricted", "v1.24", [ex(PE)],
                 ["exclude/0/controlName: Invalid value: 'Privilege Escalation': "
                  "exclude.images must be specified for the container level control"],
                 id="container_level_control_with_images"),
    pytest.param("restricted", "v1.24", [ex(PE, ["nginx", "nodejs"])], [],
                 id="container_level_control_without_images"),
    pytest.param("baseline", "v1.24", [ex(HN, ["nginx", "nodejs"])],
                 ["exclude/0/controlName: Invalid value: 'Host Namespaces': "
                  "exclude.images must not be specified for the pod level control"],
                 id="pod_level_control_with_images"),
    pytest.param("baseline", "v1.24", [ex(HN)], [], id="pod_level_control_without_images"),
    pytest.param("baseline", "v1.24", [ex(SE)], [], id="mixed_level_controls_without_images"),
    pytest.param("baseline", "v1.24", [ex(SE, ["nginx", "nodejs"])], [],
                 id="mixed_level_controls_with_images"),
    pytest.param("baseline", "v1.24", [ex(VT)],
                 ["exclude/0/controlName: Invalid value: 'Volume Types': "
                  "Invalid control name defined at the given level"],
                 id="baseline_policy_with_restricted_control"),
    pytest.param("restricted", "latest", [ex(PC, ["dummyimagename*"])], [],
                 id="baseline_policy_with_restricted_control-2"),
    # PodSecurityStandard.Validate: restrictedField and values go together
    pytest.param("baseline", "latest", [ex(HPV, None, "spec.volumes[*].hostPath")],
                 ["exclude/0/values: Forbidden: values is required"],
                 id="restricted_field_without_values"),
    pytest.param("baseline", "latest", [ex(HPV, None, None, ["/etc"])],
                 ["exclude/0/restrictedField: Forbidden: restrictedField is required"],
                 id="values_without_restricted_field"),
])
def test_kyverno_validate_pss_control_names(level: str, version: str,
                                            excludes: list[dict[str, Any]],
                                            problems: list[str]) -> None:
    found = validate_pod_security_spec({"level": level, "version": version, "exclude": excludes})
    assert len(found) == len(problems), found
    for got, want in zip(found, problems, strict=True):
        pointer, _, reason = want.partition(": ")
        assert got.startswith(pointer + ": ") and got.endswith(reason.rsplit(": ", 1)[-1]), got


# -- pod-security-admission: policy/check_*_test.go -----------------------------------------

def _check(cid: str, minimum: tuple[int, int]):
    for control in CONTROLS:
        if control.id == cid:
            for version, fn in control.versions:
                if version == minimum:
                    return fn
    raise LookupError((cid, minimum))


F, R_ = FORBIDDEN, REQUIRED


def _errs(*errors: tuple[str, str, Any]) -> list[tuple[str, str, str]]:
    return sorted((t, f, repr(v)) for t, f, v in errors)


def _named(*containers: tuple[str, Any]) -> list[dict[str, Any]]:
    out = []
    for name, security_context in containers:
        c: dict[str, Any] = {"name": name}
        if security_context is not _NO_SC:
            c["securityContext"] = security_context
        out.append(c)
    return out


N = _NO_SC
RESTRICTED_VOLUME_NAMES = ["hostPath", "gcePersistentDisk", "awsElasticBlockStore", "gitRepo",
                           "nfs", "iscsi", "glusterfs", "rbd", "flexVolume", "cinder", "cephfs",
                           "flocker", "fc", "azureFile", "vsphereVolume", "quobyte", "azureDisk",
                           "photonPersistentDisk", "portworxVolume", "scaleIO", "storageos"]
ALLOWED_VOLUME_NAMES = ["emptyDir", "secret", "persistentVolumeClaim", "downwardAPI", "configMap",
                        "projected", "csi", "ephemeral", "image"]
VOLUMES_29 = ([{"name": f"a{i + 1}", k: {}} for i, k in enumerate(ALLOWED_VOLUME_NAMES)]
              + [{"name": f"b{i + 1}", k: {}} for i, k in enumerate(RESTRICTED_VOLUME_NAMES)]
              + [{"name": "c1"}])
SEL_SPEC = {"securityContext": sel(type="foo", user="bar", role="baz"), "containers": _named(
    ("a", sel(type="container_t")), ("b", sel(type="container_init_t")),
    ("c", sel(type="container_kvm_t")), ("d", sel(type="container_engine_t")),
    ("e", sel(type="bar")), ("f", sel(user="bar")), ("g", sel(role="baz")))}
SEL_SPEC_CONTAINERS = {**SEL_SPEC, "securityContext": {"seLinuxOptions": {}}}
SECCOMP_SIX = _named(("a", None), ("b", {}), ("c", {"seccompProfile": seccomp("Unconfined")}),
                     ("d", {"seccompProfile": seccomp("Unconfined")}),
                     ("e", {"seccompProfile": RD}), ("f", {"seccompProfile": RD}))
SECCOMP_FALLTHROUGH = _named(("a", None), ("b", {}), ("d", {"seccompProfile": RD}),
                             ("e", {"seccompProfile": RD}))
CAPS_ABC = _named(("a", caps(["FOO", "BAR"])), ("b", caps(["BAR", "BAZ"])),
                  ("c", caps(["NET_BIND_SERVICE", "CHOWN"], ["ALL", "FOO"])))
APE_ABCD = _named(("a", N), ("b", {}), ("c", {"allowPrivilegeEscalation": True}),
                  ("d", {"allowPrivilegeEscalation": False}))
APE_ERRS = _errs((R_, "spec.containers[0].securityContext.allowPrivilegeEscalation", ""),
                 (F, "spec.containers[1].securityContext.allowPrivilegeEscalation", "nil"),
                 (F, "spec.containers[2].securityContext.allowPrivilegeEscalation", True))
APE_DETAIL = 'containers "a", "b", "c" must set securityContext.allowPrivilegeEscalation=false'
SEL_POD_ERRS = [(F, "spec.securityContext.seLinuxOptions.type", "foo"),
                (F, "spec.securityContext.seLinuxOptions.user", "bar"),
                (F, "spec.securityContext.seLinuxOptions.role", "baz")]
SEL_CTR_ERRS = [(F, "spec.containers[4].securityContext.seLinuxOptions.type", "bar"),
                (F, "spec.containers[5].securityContext.seLinuxOptions.user", "bar"),
                (F, "spec.containers[6].securityContext.seLinuxOptions.role", "baz")]
SELINUX_TAIL = "user may not be set; role may not be set"
HOST_PORT_SPEC = {"containers": [{"name": "a", "ports": [{"hostPort": 0}]},
                                 {"name": "b", "ports": [{"hostPort": 0}, {"hostPort": 10},
                                                         {"hostPort": 20}]},
                                 {"name": "c", "ports": [{"hostPort": 0}, {"hostPort": 10},
                                                         {"hostPort": 30}]}]}
SECCOMP_ANNOTATIONS = {"seccomp.security.alpha.kubernetes.io/pod": "unconfined",
                       "container.seccomp.security.alpha.kubernetes.io/a": "unconfined",
                       "container.seccomp.security.alpha.kubernetes.io/b": "unknown"}
SECCOMP_ANN_PREFIX = "metadata.annotations[container.seccomp.security.alpha.kubernetes.io/"


def _probe(name: str, where: str, action: str, host: str) -> dict[str, Any]:
    handler = {action: {"host": host}}
    if where.startswith("lifecycle."):
        return {"name": name, "lifecycle": {where.split(".")[1]: handler}}
    return {"name": name, where: handler}


# (check id, variant minimum, metadata, spec, reason, detail, field errors or None to skip)
CHECK_CASES = [
    pytest.param("allowPrivilegeEscalation", (1, 25), {}, {"containers": APE_ABCD},
                 "allowPrivilegeEscalation != false", APE_DETAIL, APE_ERRS,
                 id="allowPrivilegeEscalation_1_25-multiple-containers"),
    pytest.param("allowPrivilegeEscalation", (1, 25), {},
                 {"os": {"name": "windows"}, "containers": [{"name": "a"}]}, None, None, None,
                 id="allowPrivilegeEscalation_1_25-windows-pod"),
    pytest.param("allowPrivilegeEscalation", (1, 25), {},
                 {"os": {"name": "linux"}, "containers": [{"name": "a"}]},
                 "allowPrivilegeEscalation != false",
                 'container "a" must set securityContext.allowPrivilegeEscalation=false',
                 _errs((R_, "spec.containers[0].securityContext.allowPrivilegeEscalation", "")),
                 id="allowPrivilegeEscalation_1_25-linux-pod"),
    pytest.param("allowPrivilegeEscalation", (1, 8), {}, {"containers": APE_ABCD},
                 "allowPrivilegeEscalation != false", APE_DETAIL, APE_ERRS,
                 id="allowPrivilegeEscalation_1_8-multiple-containers"),
    pytest.param("appArmorProfile", (1, 0),
                 {"annotations": {AAK + "test": "runtime/default", "env": "prod"}}, {},
                 None, None, None, id="appArmor-default-plus-extra-annotations"),
    pytest.param("appArmorProfile", (1, 0),
                 {"annotations": {AAK + "test": "localhost/sec-profile01", "env": "dev"}}, {},
                 None, None, None, id="appArmor-local-plus-extra-annotations"),
    pytest.param("appArmorProfile", (1, 0), {"annotations": {"env": "dev"}}, {}, None, None,
                 None, id="appArmor-no-apparmor-annotations"),
    pytest.param("appArmorProfile", (1, 0), {}, {}, None, None, None,
                 id="appArmor-no-annotations"),
    pytest.param("appArmorProfile", (1, 0), {},
                 {"securityContext": {"appArmorProfile": {"type": "RuntimeDefault"}}},
                 None, None, None, id="appArmor-pod-runtime-default"),
    pytest.param("appArmorProfile", (1, 0), {}, {"containers": [
        {"name": "foo", "securityContext": {"appArmorProfile": {"type": "RuntimeDefault"}}}]},
        None, None, None, id="appArmor-container-runtime-default"),
    pytest.param("appArmorProfile", (1, 0), {},
                 {"securityContext": {"appArmorProfile": {"type": "Unconfined"}}},
                 "forbidden AppArmor profile", 'pod must not set AppArmor profile type to '
                 '"Unconfined"',
                 _errs((F, "spec.securityContext.appArmorProfile.type", "Unconfined")),
                 id="appArmor-unconfined-pod"),
    pytest.param("appArmorProfile", (1, 0), {}, {
        "securityContext": {"appArmorProfile": {"type": "RuntimeDefault"}},
        "containers": [{"name": "foo", "securityContext": {
            "appArmorProfile": {"type": "Unconfined"}}}]},
        "forbidden AppArmor profile",
        'container "foo" must not set AppArmor profile type to "Unconfined"',
        _errs((F, "spec.containers[0].securityContext.appArmorProfile.type", "Unconfined")),
        id="appArmor-unconfined-container"),
    pytest.param("appArmorProfile", (1, 0), {}, {
        "securityContext": {"appArmorProfile": {"type": "RuntimeDefault"}},
        "containers": [{"name": "foo"}],
        "initContainers": [{"name": "bar", "securityContext": {
            "appArmorProfile": {"type": "Unconfined"}}}]},
        "forbidden AppArmor profile",
        'container "bar" must not set AppArmor profile type to "Unconfined"',
        _errs((F, "spec.initContainers[0].securityContext.appArmorProfile.type", "Unconfined")),
        id="appArmor-unconfined-init-container"),
    pytest.param("appArmorProfile", (1, 0), {"annotations": AA_MULTI}, {},
                 "forbidden AppArmor profiles",
                 "annotations must not set AppArmor profile type to "
                 f'"{AAK}="bogus"", "{AAK}e="unconfined"", "{AAK}f="unknown""',
                 _errs((F, aa_field(""), "bogus"), (F, aa_field("e"), "unconfined"),
                       (F, aa_field("f"), "unknown")),
                 id="appArmor-multiple-annotations"),
    pytest.param("capabilities_baseline", (1, 0), {},
                 {"containers": _named(("a", caps(["FOO", "BAR"])), ("b", caps(["BAR", "BAZ"])))},
                 "non-default capabilities",
                 'containers "a", "b" must not include "BAR", "BAZ", "FOO" in '
                 "securityContext.capabilities.add",
                 _errs((F, "spec.containers[0].securityContext.capabilities.add", ["BAR", "FOO"]),
                       (F, "spec.containers[1].securityContext.capabilities.add", ["BAR", "BAZ"])),
                 id="capabilities_baseline-multiple-containers"),
    pytest.param("capabilities_restricted", (1, 22), {}, {"containers": CAPS_ABC},
                 "unrestricted capabilities",
                 'containers "a", "b" must set securityContext.capabilities.drop=["ALL"]; '
                 'containers "a", "b", "c" must not include "BAR", "BAZ", "CHOWN", "FOO" in '
                 "securityContext.capabilities.add",
                 _errs((F, "spec.containers[0].securityContext.capabilities.add", ["BAR", "FOO"]),
                       (R_, "spec.containers[0].securityContext.capabilities.drop", ""),
                       (F, "spec.containers[1].securityContext.capabilities.add", ["BAR", "BAZ"]),
                       (R_, "spec.containers[1].securityContext.capabilities.drop", ""),
                       (F, "spec.containers[2].securityContext.capabilities.add", ["CHOWN"])),
                 id="capabilities_restricted_1_22-multiple-containers"),
    pytest.param("capabilities_restricted", (1, 25), {}, {"containers": _named(
        ("a", caps(["BAR", "BAZ"], ["FOO", "BAR"])))},
        "unrestricted capabilities",
        'container "a" must set securityContext.capabilities.drop=["ALL"]; container "a" must '
        'not include "BAR", "BAZ" in securityContext.capabilities.add',
        _errs((F, "spec.containers[0].securityContext.capabilities.add", ["BAR", "BAZ"]),
              (F, "spec.containers[0].securityContext.capabilities.drop", ["BAR", "FOO"])),
        id="capabilities_restricted_1_25-add-and-drop"),
    pytest.param("capabilities_restricted", (1, 25), {},
                 {"os": {"name": "windows"}, "containers": [{"name": "a"}]}, None, None, None,
                 id="capabilities_restricted_1_25-windows-pod"),
    pytest.param("capabilities_restricted", (1, 25), {},
                 {"os": {"name": "linux"}, "containers": [{"name": "a"}]},
                 "unrestricted capabilities",
                 'container "a" must set securityContext.capabilities.drop=["ALL"]',
                 _errs((R_, "spec.containers[0].securityContext.capabilities.drop", "")),
                 id="capabilities_restricted_1_25-linux-pod"),
    pytest.param("hostNamespaces", (1, 0), {},
                 {"hostNetwork": True, "hostIPC": True, "hostPID": True},
                 "host namespaces", "hostNetwork=true, hostPID=true, hostIPC=true",
                 _errs((F, "spec.hostNetwork", True), (F, "spec.hostPID", True),
                       (F, "spec.hostIPC", True)),
                 id="hostNamespaces-multiple"),
    pytest.param("hostPathVolumes", (1, 0), {}, {"volumes": [
        {"name": "a", "hostPath": {}}, {"name": "b", "hostPath": {}},
        {"name": "c", "emptyDir": {}}]},
        "hostPath volumes", 'volumes "a", "b"', None, id="hostPathVolumes-two"),
    pytest.param("hostPorts", (1, 0), {}, {"containers": [
        {"name": "a", "ports": [{"hostPort": 0}]},
        {"name": "b", "ports": [{"hostPort": 0}, {"hostPort": 20}]}]},
        "hostPort", 'container "b" uses hostPort 20',
        _errs((F, "spec.containers[1].ports[1].hostPort", 20)), id="hostPorts-one"),
    pytest.param("hostPorts", (1, 0), {}, HOST_PORT_SPEC, "hostPort",
                 'containers "b", "c" use hostPorts 10, 20, 30',
                 _errs((F, "spec.containers[1].ports[1].hostPort", 10),
                       (F, "spec.containers[1].ports[2].hostPort", 20),
                       (F, "spec.containers[2].ports[1].hostPort", 10),
                       (F, "spec.containers[2].ports[2].hostPort", 30)),
                 id="hostPorts-multiple"),
    pytest.param("hostProbesAndHostLifecycle", (1, 34), {}, {"containers": [{
        "name": "a", "livenessProbe": {"httpGet": {}}, "readinessProbe": {"tcpSocket": {}},
        "lifecycle": {"postStart": {"httpGet": {}}}}]}, None, None, None,
        id="hostProbes-unset-hosts"),
    pytest.param("hostProbesAndHostLifecycle", (1, 34), {}, {"containers": [{
        "name": "a", "livenessProbe": {"httpGet": {"host": "127.0.0.1"}},
        "readinessProbe": {"tcpSocket": {"host": "::1"}},
        "startupProbe": {"httpGet": {"host": "localhost"}}}]},
        "probe or lifecycle host",
        'container "a" uses probe or lifecycle hosts "127.0.0.1", "::1", "localhost"', None,
        id="hostProbes-local-hosts"),
    *[pytest.param("hostProbesAndHostLifecycle", (1, 34), {},
                   {"containers": [_probe(name, where, action, host)]},
                   "probe or lifecycle host",
                   f'container "{name}" uses probe or lifecycle host "{host}"', None,
                   id=f"hostProbes-{where}-{action}-{host}")
      for name, where, action, host in [
          ("a", "livenessProbe", "httpGet", "invalid.host"),
          ("b", "readinessProbe", "tcpSocket", "invalid.host"),
          ("c", "startupProbe", "httpGet", "invalid.host"),
          ("d", "lifecycle.postStart", "tcpSocket", "invalid.host"),
          ("e", "lifecycle.preStop", "httpGet", "another.invalid.host"),
          ("a", "livenessProbe", "httpGet", "8.8.8.8"),
          ("a", "livenessProbe", "tcpSocket", "2001:4860:4860::8888")]],
    pytest.param("hostProbesAndHostLifecycle", (1, 34), {}, {"containers": [
        {"name": "valid"},
        {"name": "invalid1", "livenessProbe": {"httpGet": {"host": "a.com"}}},
        {"name": "invalid2", "lifecycle": {"preStop": {"tcpSocket": {"host": "b.com"}}},
         "startupProbe": {"httpGet": {"host": "a.com"}}}]},
        "probe or lifecycle host",
        'containers "invalid1", "invalid2" use probe or lifecycle hosts "a.com", "b.com"', None,
        id="hostProbes-multiple-containers"),
    pytest.param("hostProbesAndHostLifecycle", (1, 34), {}, {"initContainers": [
        {"name": "init", "livenessProbe": {"httpGet": {"host": "invalid.init.host"}}}]},
        "probe or lifecycle host", 'container "init" uses probe or lifecycle host '
        '"invalid.init.host"', None, id="hostProbes-init-container"),
    pytest.param("privileged", (1, 0), {}, {"containers": _named(
        ("a", None), ("b", {}), ("c", {"privileged": False}), ("d", {"privileged": True}),
        ("e", {"privileged": True}))},
        "privileged", 'containers "d", "e" must not set securityContext.privileged=true',
        _errs((F, "spec.containers[3].securityContext.privileged", True),
              (F, "spec.containers[4].securityContext.privileged", True)),
        id="privileged-multiple"),
    pytest.param("procMount", (1, 0), {}, {"hostUsers": False, "containers": _named(
        ("a", None), ("b", {}), ("c", {"procMount": "Default"}), ("d", {"procMount": "Unmasked"}),
        ("e", {"procMount": "other"}))},
        "procMount", 'containers "d", "e" must not set securityContext.procMount to '
        '"Unmasked", "other"',
        _errs((F, "spec.containers[3].securityContext.procMount", "Unmasked"),
              (F, "spec.containers[4].securityContext.procMount", "other")),
        id="procMount-multiple-relaxation-disabled"),
    pytest.param("restrictedVolumes", (1, 0), {}, {"volumes": VOLUMES_29},
                 "restricted volume types",
                 "volumes " + ", ".join(f'"b{i}"' for i in range(1, 22)) + ', "c1" use '
                 "restricted volume types " + ", ".join(f'"{k}"' for k in sorted(
                     [*RESTRICTED_VOLUME_NAMES, "unknown"])),
                 _errs(*[(F, f"spec.volumes[{i + 9}].{k}", "")
                         for i, k in enumerate(RESTRICTED_VOLUME_NAMES)],
                       (F, "spec.volumes[30].unknown", "")),
                 id="restrictedVolumes-all-types"),
    pytest.param("runAsNonRoot", (1, 0), {}, {"containers": [{"name": "a"}]},
                 "runAsNonRoot != true",
                 'pod or container "a" must set securityContext.runAsNonRoot=true',
                 _errs((R_, "spec.containers[0].securityContext.runAsNonRoot", "")),
                 id="runAsNonRoot-no-explicit"),
    pytest.param("runAsNonRoot", (1, 0), {}, {"securityContext": {"runAsNonRoot": False},
                                              "containers": _named(("a", None))},
                 "runAsNonRoot != true", "pod must not set securityContext.runAsNonRoot=false",
                 _errs((F, "spec.securityContext.runAsNonRoot", False)),
                 id="runAsNonRoot-pod-false"),
    pytest.param("runAsNonRoot", (1, 0), {}, {"securityContext": {"runAsNonRoot": True},
                                              "containers": _named(
        ("a", None), ("b", {}), ("c", {"runAsNonRoot": False}), ("d", {"runAsNonRoot": False}),
        ("e", {"runAsNonRoot": True}), ("f", {"runAsNonRoot": True}))},
        "runAsNonRoot != true", 'containers "c", "d" must not set securityContext.runAsNonRoot=false',
        _errs((F, "spec.containers[2].securityContext.runAsNonRoot", False),
              (F, "spec.containers[3].securityContext.runAsNonRoot", False)),
        id="runAsNonRoot-containers-false"),
    pytest.param("runAsNonRoot", (1, 0), {}, {"containers": _named(
        ("a", None), ("b", {}), ("d", {"runAsNonRoot": True}), ("e", {"runAsNonRoot": True}))},
        "runAsNonRoot != true", 'pod or containers "a", "b" must set securityContext.runAsNonRoot=true',
        _errs((R_, "spec.containers[0].securityContext.runAsNonRoot", ""),
              (R_, "spec.containers[1].securityContext.runAsNonRoot", "")),
        id="runAsNonRoot-container-fallthrough"),
    pytest.param("runAsNonRoot", (1, 0), {}, {"hostUsers": True, "containers": [{"name": "a"}]},
                 "runAsNonRoot != true",
                 'pod or container "a" must set securityContext.runAsNonRoot=true',
                 _errs((R_, "spec.containers[0].securityContext.runAsNonRoot", "")),
                 id="runAsNonRoot-host-users"),
    pytest.param("runAsUser", (1, 23), {}, {"securityContext": {"runAsUser": 0},
                                            "containers": _named(("a", None))},
                 "runAsUser=0", "pod must not set runAsUser=0",
                 _errs((F, "spec.securityContext.runAsUser", 0)), id="runAsUser-pod-zero"),
    pytest.param("runAsUser", (1, 23), {}, {"securityContext": {"runAsUser": 1000},
                                            "containers": _named(("a", None))},
                 None, None, None, id="runAsUser-pod-non-zero"),
    pytest.param("runAsUser", (1, 23), {}, {"securityContext": {},
                                            "containers": _named(("a", None))},
                 None, None, None, id="runAsUser-pod-nil"),
    pytest.param("runAsUser", (1, 23), {}, {"securityContext": {"runAsUser": 1000},
                                            "containers": _named(
        ("a", None), ("b", {}), ("c", {"runAsUser": 0}), ("d", {"runAsUser": 0}),
        ("e", {"runAsUser": 1}), ("f", {"runAsUser": 1}))},
        "runAsUser=0", 'containers "c", "d" must not set runAsUser=0',
        _errs((F, "spec.containers[2].securityContext.runAsUser", 0),
              (F, "spec.containers[3].securityContext.runAsUser", 0)),
        id="runAsUser-containers-zero"),
    pytest.param("runAsUser", (1, 23), {}, {"containers": _named(
        ("c", {"runAsUser": 1}), ("d", {"runAsUser": 2}), ("e", {"runAsUser": 3}),
        ("f", {"runAsUser": 4}))}, None, None, None, id="runAsUser-containers-non-zero"),
    pytest.param("runAsUser", (1, 23), {}, {"hostUsers": False}, None, None, None,
                 id="runAsUser-no-containers"),
    pytest.param("seLinuxOptions", (1, 31), {}, SEL_SPEC, "seLinuxOptions",
                 'pod and containers "e", "f", "g" set forbidden securityContext.seLinuxOptions: '
                 f'types "bar", "foo"; {SELINUX_TAIL}',
                 _errs(*SEL_POD_ERRS, *SEL_CTR_ERRS),
                 id="seLinuxOptions-invalid-pod-and-containers"),
    pytest.param("seLinuxOptions", (1, 31), {}, {**SEL_SPEC, "containers": SEL_SPEC["containers"][:4]},
                 "seLinuxOptions",
                 f'pod set forbidden securityContext.seLinuxOptions: type "foo"; {SELINUX_TAIL}',
                 _errs(*SEL_POD_ERRS), id="seLinuxOptions-invalid-pod"),
    pytest.param("seLinuxOptions", (1, 31), {}, SEL_SPEC_CONTAINERS, "seLinuxOptions",
                 'containers "e", "f", "g" set forbidden securityContext.seLinuxOptions: '
                 f'type "bar"; {SELINUX_TAIL}',
                 _errs(*SEL_CTR_ERRS), id="seLinuxOptions-invalid-containers"),
    *[pytest.param("seLinuxOptions", (1, 31), {}, {"securityContext": sel(**{key: "bad"})},
                   "seLinuxOptions", f"pod set forbidden securityContext.seLinuxOptions: {text}",
                   _errs((F, f"spec.securityContext.seLinuxOptions.{key}", "bad")),
                   id=f"seLinuxOptions-bad-{key}")
      for key, text in [("type", 'type "bad"'), ("user", "user may not be set"),
                        ("role", "role may not be set")]],
    pytest.param("seLinuxOptions", (1, 0), {}, {"containers": _named(
        ("d", sel(type="container_engine_t")))},
        "seLinuxOptions",
        'container "d" set forbidden securityContext.seLinuxOptions: type "container_engine_t"',
        _errs((F, "spec.containers[0].securityContext.seLinuxOptions.type", "container_engine_t")),
        id="seLinuxOptions_1_0-container-engine-type"),
    pytest.param("seccompProfile_baseline", (1, 0),
                 {"annotations": {"seccomp.security.alpha.kubernetes.io/pod": "unconfined"}}, {},
                 "seccompProfile",
                 'forbidden annotation seccomp.security.alpha.kubernetes.io/pod="unconfined"',
                 _errs((F, "metadata.annotations[seccomp.security.alpha.kubernetes.io/pod]",
                        "unconfined")), id="seccompProfile_baseline_1_0-pod"),
    pytest.param("seccompProfile_baseline", (1, 0),
                 {"annotations": {k: v for k, v in SECCOMP_ANNOTATIONS.items() if "pod" not in k}},
                 {"containers": [{"name": "a"}, {"name": "b"}, {"name": "c"}]},
                 "seccompProfile",
                 "forbidden annotations "
                 'container.seccomp.security.alpha.kubernetes.io/a="unconfined", '
                 'container.seccomp.security.alpha.kubernetes.io/b="unknown"',
                 _errs((F, SECCOMP_ANN_PREFIX + "a]", "unconfined"),
                       (F, SECCOMP_ANN_PREFIX + "b]", "unknown")),
                 id="seccompProfile_baseline_1_0-containers"),
    pytest.param("seccompProfile_baseline", (1, 0), {"annotations": SECCOMP_ANNOTATIONS},
                 {"containers": [{"name": "a"}, {"name": "b"}, {"name": "c"}]},
                 "seccompProfile",
                 "forbidden annotations "
                 'container.seccomp.security.alpha.kubernetes.io/a="unconfined", '
                 'container.seccomp.security.alpha.kubernetes.io/b="unknown", '
                 'seccomp.security.alpha.kubernetes.io/pod="unconfined"',
                 _errs((F, "metadata.annotations[seccomp.security.alpha.kubernetes.io/pod]",
                        "unconfined"),
                       (F, SECCOMP_ANN_PREFIX + "a]", "unconfined"),
                       (F, SECCOMP_ANN_PREFIX + "b]", "unknown")),
                 id="seccompProfile_baseline_1_0-pod-and-containers"),
    pytest.param("seccompProfile_baseline", (1, 19), {},
                 {"securityContext": {"seccompProfile": seccomp("Unconfined")},
                  "containers": _named(("a", None))},
                 "seccompProfile",
                 'pod must not set securityContext.seccompProfile.type to "Unconfined"',
                 _errs((F, "spec.securityContext.seccompProfile.type", "Unconfined")),
                 id="seccompProfile_baseline_1_19-pod"),
    pytest.param("seccompProfile_baseline", (1, 19), {},
                 {"securityContext": {"seccompProfile": RD}, "containers": SECCOMP_SIX},
                 "seccompProfile",
                 'containers "c", "d" must not set securityContext.seccompProfile.type to '
                 '"Unconfined"',
                 _errs((F, "spec.containers[2].securityContext.seccompProfile.type", "Unconfined"),
                       (F, "spec.containers[3].securityContext.seccompProfile.type", "Unconfined")),
                 id="seccompProfile_baseline_1_19-containers"),
    pytest.param("seccompProfile_baseline", (1, 19), {},
                 {"securityContext": {"seccompProfile": seccomp("Unconfined")},
                  "containers": SECCOMP_SIX},
                 "seccompProfile",
                 'pod and containers "c", "d" must not set securityContext.seccompProfile.type to '
                 '"Unconfined"',
                 _errs((F, "spec.securityContext.seccompProfile.type", "Unconfined"),
                       (F, "spec.containers[2].securityContext.seccompProfile.type", "Unconfined"),
                       (F, "spec.containers[3].securityContext.seccompProfile.type", "Unconfined")),
                 id="seccompProfile_baseline_1_19-pod-and-containers"),
    *[pytest.param("seccompProfile_restricted", minimum, {}, {"containers": [{"name": "a"}]},
                   "seccompProfile",
                   'pod or container "a" must set securityContext.seccompProfile.type to '
                   '"RuntimeDefault" or "Localhost"',
                   _errs((R_, "spec.containers[0].securityContext.seccompProfile.type", "")),
                   id=f"seccompProfile_restricted_{minimum[1]}-no-explicit")
      for minimum in ((1, 19), (1, 25))],
    pytest.param("seccompProfile_restricted", (1, 25), {},
                 {"os": {"name": "windows"}, "containers": [{"name": "a"}]}, None, None, None,
                 id="seccompProfile_restricted_25-windows-pod"),
    pytest.param("seccompProfile_restricted", (1, 25), {},
                 {"os": {"name": "linux"}, "containers": [{"name": "a"}]}, "seccompProfile",
                 'pod or container "a" must set securityContext.seccompProfile.type to '
                 '"RuntimeDefault" or "Localhost"',
                 _errs((R_, "spec.containers[0].securityContext.seccompProfile.type", "")),
                 id="seccompProfile_restricted_25-linux-pod"),
    pytest.param("seccompProfile_restricted", (1, 19), {},
                 {"securityContext": {"seccompProfile": seccomp("Unconfined")},
                  "containers": _named(("a", None))},
                 "seccompProfile",
                 'pod must not set securityContext.seccompProfile.type to "Unconfined"',
                 _errs((F, "spec.securityContext.seccompProfile.type", "Unconfined")),
                 id="seccompProfile_restricted_19-pod-invalid"),
    pytest.param("seccompProfile_restricted", (1, 19), {},
                 {"securityContext": {"seccompProfile": RD}, "containers": SECCOMP_SIX},
                 "seccompProfile",
                 'containers "c", "d" must not set securityContext.seccompProfile.type to '
                 '"Unconfined"',
                 _errs((F, "spec.containers[2].securityContext.seccompProfile.type", "Unconfined"),
                       (F, "spec.containers[3].securityContext.seccompProfile.type", "Unconfined")),
                 id="seccompProfile_restricted_19-containers-invalid"),
    pytest.param("seccompProfile_restricted", (1, 19), {}, {"containers": SECCOMP_FALLTHROUGH},
                 "seccompProfile",
                 'pod or containers "a", "b" must set securityContext.seccompProfile.type to '
                 '"RuntimeDefault" or "Localhost"',
                 _errs((R_, "spec.containers[0].securityContext.seccompProfile.type", ""),
                       (R_, "spec.containers[1].securityContext.seccompProfile.type", "")),
                 id="seccompProfile_restricted_19-container-fallthrough"),
    pytest.param("sysctls", (1, 0), {}, {"securityContext": {"sysctls": [{"name": "a"},
                                                                          {"name": "b"}]}},
                 "forbidden sysctls", "a, b",
                 _errs((F, "spec.securityContext.sysctls[0].name", "a"),
                       (F, "spec.securityContext.sysctls[1].name", "b")),
                 id="sysctls_1_0-forbidden"),
    *[pytest.param("sysctls", minimum, {}, {"securityContext": {"sysctls": [
        {"name": name, "value": "1"}]}},
        None if allowed else "forbidden sysctls", None if allowed else name,
        None if allowed else _errs((F, "spec.securityContext.sysctls[0].name", name)),
        id=f"sysctls_{minimum[0]}_{minimum[1]}-{name}")
      for minimum, name, allowed in [
          ((1, 0), "net.ipv4.ip_local_reserved_ports", False),
          ((1, 0), "net.ipv4.tcp_keepalive_time", False),
          ((1, 0), "net.ipv4.tcp_fin_timeout", False),
          ((1, 0), "net.ipv4.tcp_keepalive_intvl", False),
          ((1, 0), "net.ipv4.tcp_keepalive_probes", False),
          ((1, 0), "net.ipv4.tcp_rmem", False),
          ((1, 0), "net.ipv4.tcp_wmem", False),
          ((1, 27), "net.ipv4.ip_local_reserved_ports", True),
          ((1, 29), "net.ipv4.tcp_keepalive_time", True),
          ((1, 29), "net.ipv4.tcp_fin_timeout", True),
          ((1, 29), "net.ipv4.tcp_keepalive_intvl", True),
          ((1, 29), "net.ipv4.tcp_keepalive_probes", True),
          ((1, 32), "net.ipv4.tcp_rmem", True),
          ((1, 32), "net.ipv4.tcp_wmem", True)]],
    *[pytest.param("sysctls", minimum, {}, {"securityContext": {"sysctls": [{"name": "a"},
                                                                             {"name": "b"}]}},
                   "forbidden sysctls", "a, b",
                   _errs((F, "spec.securityContext.sysctls[0].name", "a"),
                         (F, "spec.securityContext.sysctls[1].name", "b")),
                   id=f"sysctls_{minimum[0]}_{minimum[1]}-forbidden")
      for minimum in ((1, 27), (1, 29), (1, 32))],
    pytest.param("windowsHostProcess", (1, 0), {}, {
        "securityContext": hp(True), "containers": _named(
            ("a", None), ("b", {}), ("c", {"windowsOptions": {}}), ("d", hp(False)),
            ("e", hp(True)), ("f", hp(True)))},
        "hostProcess",
        'pod and containers "e", "f" must not set securityContext.windowsOptions.hostProcess=true',
        _errs((F, "spec.securityContext.windowsOptions.hostProcess", True),
              (F, "spec.containers[4].securityContext.windowsOptions.hostProcess", True),
              (F, "spec.containers[5].securityContext.windowsOptions.hostProcess", True)),
        id="windowsHostProcess-pod-and-containers"),
]


@pytest.mark.parametrize(("cid", "minimum", "meta", "spec", "reason", "detail", "errors"),
                         CHECK_CASES)
def test_pod_security_admission_checks(cid: str, minimum: tuple[int, int], meta: dict[str, Any],
                                       spec: dict[str, Any], reason: str | None,
                                       detail: str | None,
                                       errors: list[tuple[str, str, str]] | None) -> None:
    result = _check(cid, minimum)(copy.deepcopy(meta), copy.deepcopy(spec))
    if reason is None:
        assert result is None
        return
    assert result is not None
    assert (result.reason, result.detail) == (reason, detail)
    if errors is not None:
        assert _errs(*((e.type, e.field, e.bad_value) for e in result.errors)) == errors


# -- messages: pkg/pss FormatChecksPrint and the validate handler ----------------------------

def test_kyverno_message_lists_each_failing_check_with_field_errors() -> None:
    resource = pod({"securityContext": {"runAsNonRoot": True, "seccompProfile": RD},
                    "containers": [ctr("a", sc=caps(["FOO", "BAR"], ["ALL"])),
                                   ctr("c", sc={"allowPrivilegeEscalation": False,
                                                **caps(["NET_BIND_SERVICE"], ["ALL"])})]})
    result = evaluate({"level": "restricted", "version": "latest"}, resource)
    assert result.status is RuleStatus.FAIL
    assert result.message == (
        "Validation rule 'r' failed. It violates PodSecurity \"restricted:latest\": "
        "(Forbidden reason: allowPrivilegeEscalation != false, field error list: "
        "[spec.containers[0].securityContext.allowPrivilegeEscalation is forbidden, "
        "forbidden values found: nil])"
        "(Forbidden reason: non-default capabilities, field error list: "
        "[spec.containers[0].securityContext.capabilities.add is forbidden, "
        "forbidden values found: [BAR FOO]])"
        "(Forbidden reason: unrestricted capabilities, field error list: "
        "[spec.containers[0].securityContext.capabilities.add is forbidden, "
        "forbidden values found: [BAR FOO]])")


def test_kyverno_message_for_cronjob_rewrites_paths() -> None:
    resource = {"kind": "CronJob", "metadata": {"name": "cj"}, "spec": {"jobTemplate": {
        "metadata": {"annotations": {AAK + "c": "unconfined"}},
        "spec": {"template": {"spec": {"hostPID": True, "containers": [{"name": "c"}]}}}}}}
    result = evaluate({"level": "baseline", "version": "v1.29"}, resource)
    assert result.message == (
        "Validation rule 'r' failed. It violates PodSecurity \"baseline:v1.29\": "
        "(Forbidden reason: forbidden AppArmor profile, field error list: "
        f"[spec.template.metadata.annotations[{AAK}c] is forbidden, "
        "forbidden values found: unconfined])"
        "(Forbidden reason: host namespaces, field error list: "
        "[spec.jobTemplate.spec.template.spec.hostPID is forbidden, forbidden values found: true])")


def test_kyverno_message_for_restricted_volume_has_no_bad_value() -> None:
    resource = vol_pod({"name": "v", "nfs": {"server": "s", "path": "/"}})
    result = evaluate({"level": "restricted", "version": "latest"}, resource)
    assert result.message.endswith(
        "(Forbidden reason: restricted volume types, field error list: "
        "[spec.volumes[0].nfs: Forbidden])")


def test_kyverno_message_keeps_remaining_errors_after_exclusions() -> None:
    resource = pod({"containers": [ctr("a", "nginx", sc=PRIV), ctr("b", "busybox", sc=PRIV)]})
    result = evaluate(b24(ex(PC, NG)), resource)
    assert result.message == (
        "Validation rule 'r' failed. It violates PodSecurity \"baseline:v1.24\": "
        "(Forbidden reason: privileged, field error list: "
        "[spec.containers[1].securityContext.privileged is forbidden, "
        "forbidden values found: true])")


def test_kyverno_null_capability_decodes_as_empty_string() -> None:
    # `drop: [null]` decodes to a Capability "" (Go's zero value), as in the Kyverno table's
    # restricted_capabilities_drop_defines_multiple_capabilities_violate_true pod.
    resource = cap_pod(cap_ctr(["BAR", None], [None]))
    result = evaluate({"level": "restricted", "version": "latest"}, resource)
    assert result.status is RuleStatus.FAIL
    add = ("spec.containers[0].securityContext.capabilities.add is forbidden, "
           "forbidden values found: [ BAR]")
    drop = ("spec.containers[0].securityContext.capabilities.drop is forbidden, "
            "forbidden values found: []")
    assert f"(Forbidden reason: non-default capabilities, field error list: [{add}])" in (
        result.message)
    assert f"{add}, {drop}" in result.message or f"{drop}, {add}" in result.message
    details = {c.id: c.detail for c in result.checks}
    assert details["capabilities_baseline"] == (
        'container "nginx" must not include "", "BAR" in securityContext.capabilities.add')
