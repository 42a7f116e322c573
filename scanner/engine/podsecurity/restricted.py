"""Restricted-level and seccomp controls, and the registry of all controls (spec 11.3)."""

from __future__ import annotations

from typing import Any

from scanner.engine.podsecurity.controls import (
    FORBIDDEN,
    REQUIRED,
    CheckFn,
    CheckResult,
    Control,
    FieldError,
    _containers,
    _get,
    _goq,
    _is_windows,
    _jq,
    _names,
    _plural,
    _result,
    _selinux,
    _strings,
    _sysctls,
    app_armor,
    capabilities_baseline,
    host_namespaces,
    host_path_volumes,
    host_ports,
    host_probes,
    privileged,
    proc_mount,
    windows_host_process,
)

_SECCOMP_OK = ("RuntimeDefault", "Localhost")


def _windows_exempt(check: CheckFn) -> CheckFn:
    def exempt(meta: dict[str, Any], spec: dict[str, Any]) -> CheckResult | None:
        return None if _is_windows(spec) else check(meta, spec)

    return exempt


def allow_privilege_escalation(meta: dict[str, Any], spec: dict[str, Any]) -> CheckResult | None:
    bad, errs = [], []
    for c, path in _containers(spec):
        field = f"{path}.securityContext.allowPrivilegeEscalation"
        context = c.get("securityContext")
        if context is None:
            bad.append(c)
            errs.append(FieldError(REQUIRED, field))
        elif context.get("allowPrivilegeEscalation") is None:
            bad.append(c)
            errs.append(FieldError(FORBIDDEN, field, "nil"))
        elif context["allowPrivilegeEscalation"] is True:
            bad.append(c)
            errs.append(FieldError(FORBIDDEN, field, True))
    if not bad:
        return None
    return _result("allowPrivilegeEscalation", "allowPrivilegeEscalation != false",
                   f"{_names(bad)} must set securityContext.allowPrivilegeEscalation=false", errs)


def capabilities_restricted(meta: dict[str, Any], spec: dict[str, Any]) -> CheckResult | None:
    missing, adding, caps = [], [], set()
    drop_errs, add_errs = [], []
    for c, path in _containers(spec):
        base = f"{path}.securityContext.capabilities"
        capabilities = _get(c, "securityContext", "capabilities")
        if capabilities is None:
            missing.append(c)
            drop_errs.append(FieldError(REQUIRED, f"{base}.drop"))
            continue
        drop = _strings(capabilities.get("drop"))
        if "ALL" not in drop:
            missing.append(c)
            if drop:
                drop_errs.append(FieldError(FORBIDDEN, f"{base}.drop", sorted(set(drop))))
            else:
                drop_errs.append(FieldError(REQUIRED, f"{base}.drop"))
        forbidden = sorted({a for a in _strings(capabilities.get("add"))
                            if a != "NET_BIND_SERVICE"})
        if forbidden:
            adding.append(c)
            caps.update(forbidden)
            add_errs.append(FieldError(FORBIDDEN, f"{base}.add", forbidden))
    details = []
    if missing:
        details.append(f'{_names(missing)} must set securityContext.capabilities.drop=["ALL"]')
    if adding:
        details.append(f"{_names(adding)} must not include {_jq(sorted(caps))} "
                       "in securityContext.capabilities.add")
    if not details:
        return None
    return _result("capabilities_restricted", "unrestricted capabilities", "; ".join(details),
                   drop_errs + add_errs)


def run_as_non_root(meta: dict[str, Any], spec: dict[str, Any]) -> CheckResult | None:
    setters, errs = [], []
    pod_value = _get(spec, "securityContext", "runAsNonRoot")
    if pod_value is False:
        setters.append("pod")
        errs.append(FieldError(FORBIDDEN, "spec.securityContext.runAsNonRoot", False))
    explicit, implicit, implicit_errs = [], [], []
    for c, path in _containers(spec):
        value = _get(c, "securityContext", "runAsNonRoot")
        field = f"{path}.securityContext.runAsNonRoot"
        if value is not None:
            if value is False:
                explicit.append(c)
                errs.append(FieldError(FORBIDDEN, field, False))
        elif pod_value is not True:
            implicit.append(c)
            implicit_errs.append(FieldError(REQUIRED, field))
    if explicit:
        setters.append(_names(explicit))
    # explicit runAsNonRoot=false settings are reported alone; only without them do the
    # containers that merely omit the field (and lack a pod-level true) count
    if setters:
        return _result("runAsNonRoot", "runAsNonRoot != true",
                       f"{' and '.join(setters)} must not set securityContext.runAsNonRoot=false",
                       errs)
    if implicit:
        return _result("runAsNonRoot", "runAsNonRoot != true",
                       f"pod or {_names(implicit)} must set securityContext.runAsNonRoot=true",
                       implicit_errs)
    return None


def run_as_user(meta: dict[str, Any], spec: dict[str, Any]) -> CheckResult | None:
    setters, errs = [], []
    value = _get(spec, "securityContext", "runAsUser")
    if value is not None and int(value) == 0:
        setters.append("pod")
        errs.append(FieldError(FORBIDDEN, "spec.securityContext.runAsUser", 0))
    bad = []
    for c, path in _containers(spec):
        value = _get(c, "securityContext", "runAsUser")
        if value is not None and int(value) == 0:
            bad.append(c)
            errs.append(FieldError(FORBIDDEN, f"{path}.securityContext.runAsUser", 0))
    if bad:
        setters.append(_names(bad))
    if not setters:
        return None
    return _result("runAsUser", "runAsUser=0", f"{' and '.join(setters)} must not set runAsUser=0",
                   errs)


_ALLOWED_VOLUMES = ("configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "image",
                    "persistentVolumeClaim", "projected", "secret")
_RESTRICTED_VOLUMES = (
    "hostPath", "gcePersistentDisk", "awsElasticBlockStore", "gitRepo", "nfs", "iscsi",
    "glusterfs", "rbd", "flexVolume", "cinder", "cephfs", "flocker", "fc", "azureFile",
    "vsphereVolume", "quobyte", "azureDisk", "photonPersistentDisk", "portworxVolume", "scaleIO",
    "storageos",
)


def restricted_volumes(meta: dict[str, Any], spec: dict[str, Any]) -> CheckResult | None:
    names, errs, kinds = [], [], set()
    for i, volume in enumerate(spec.get("volumes") or []):
        volume = volume or {}
        if any(volume.get(k) is not None for k in _ALLOWED_VOLUMES):
            continue
        kind = next((k for k in _RESTRICTED_VOLUMES if volume.get(k) is not None), "unknown")
        names.append(volume.get("name") or "")
        kinds.add(kind)
        errs.append(FieldError(FORBIDDEN, f"spec.volumes[{i}].{kind}"))
    if not names:
        return None
    detail = (f"{_plural('volume', 'volumes', len(names))} {_jq(names)} "
              f"{_plural('uses', 'use', len(names))} "
              f"{_plural('restricted volume type', 'restricted volume types', len(kinds))} "
              f"{_jq(sorted(kinds))}")
    return _result("restrictedVolumes", "restricted volume types", detail, errs)


def _seccomp(restricted: bool) -> CheckFn:
    def check(meta: dict[str, Any], spec: dict[str, Any]) -> CheckResult | None:
        cid = "seccompProfile_restricted" if restricted else "seccompProfile_baseline"
        setters, errs, values = [], [], set()
        pod_set = False
        profile = _get(spec, "securityContext", "seccompProfile")
        if profile is not None:
            kind = profile.get("type") or ""
            if kind not in _SECCOMP_OK:
                setters.append("pod")
                errs.append(FieldError(FORBIDDEN, "spec.securityContext.seccompProfile.type", kind))
                values.add(kind)
            else:
                pod_set = True
        explicit, implicit, implicit_errs = [], [], []
        for c, path in _containers(spec):
            field = f"{path}.securityContext.seccompProfile.type"
            profile = _get(c, "securityContext", "seccompProfile")
            if profile is not None:
                kind = profile.get("type") or ""
                if kind not in _SECCOMP_OK:
                    explicit.append(c)
                    errs.append(FieldError(FORBIDDEN, field, kind))
                    values.add(kind)
            elif restricted and not pod_set:
                implicit.append(c)
                implicit_errs.append(FieldError(REQUIRED, field))
        if explicit:
            setters.append(_names(explicit))
        if setters:
            detail = (f"{' and '.join(setters)} must not set securityContext.seccompProfile.type "
                      f"to {_jq(sorted(values))}")
            return _result(cid, "seccompProfile", detail, errs)
        if implicit:
            detail = (f"pod or {_names(implicit)} must set securityContext.seccompProfile.type "
                      'to "RuntimeDefault" or "Localhost"')
            return _result(cid, "seccompProfile", detail, implicit_errs)
        return None

    return check


def seccomp_annotations(meta: dict[str, Any], spec: dict[str, Any]) -> CheckResult | None:
    """The pre-1.19 baseline variant: the alpha seccomp annotations."""
    annotations = meta.get("annotations") or {}
    found: dict[str, list[FieldError]] = {}

    def visit(key: str) -> None:
        value = annotations.get(key)
        if value is not None and not (value in ("runtime/default", "docker/default")
                                      or value.startswith("localhost/")):
            text = f"{key}={_goq(value)}"
            found.setdefault(text, []).append(
                FieldError(FORBIDDEN, f"metadata.annotations[{key}]", value))

    visit("seccomp.security.alpha.kubernetes.io/pod")
    for c, _path in _containers(spec):
        visit("container.seccomp.security.alpha.kubernetes.io/" + (c.get("name") or ""))
    if not found:
        return None
    texts = sorted(found)
    detail = f"forbidden {_plural('annotation', 'annotations', len(texts))} {', '.join(texts)}"
    return _result("seccompProfile_baseline", "seccompProfile", detail,
                   [e for t in texts for e in found[t]])


_SYSCTLS_1_0 = frozenset({
    "kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range", "net.ipv4.tcp_syncookies",
    "net.ipv4.ping_group_range", "net.ipv4.ip_unprivileged_port_start",
})
_SYSCTLS_1_27 = _SYSCTLS_1_0 | {"net.ipv4.ip_local_reserved_ports"}
_SYSCTLS_1_29 = _SYSCTLS_1_27 | {
    "net.ipv4.tcp_keepalive_time", "net.ipv4.tcp_fin_timeout", "net.ipv4.tcp_keepalive_intvl",
    "net.ipv4.tcp_keepalive_probes",
}
_SYSCTLS_1_32 = _SYSCTLS_1_29 | {"net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem"}
_SELINUX_1_0 = frozenset({"", "container_t", "container_init_t", "container_kvm_t"})

# In the order the Kubernetes library registers them (its source files sorted by name).
CONTROLS: tuple[Control, ...] = (
    Control("allowPrivilegeEscalation", "restricted", (
        ((1, 8), allow_privilege_escalation),
        ((1, 25), _windows_exempt(allow_privilege_escalation)))),
    Control("appArmorProfile", "baseline", (((1, 0), app_armor),)),
    Control("capabilities_baseline", "baseline", (((1, 0), capabilities_baseline),)),
    Control("capabilities_restricted", "restricted", (
        ((1, 22), capabilities_restricted),
        ((1, 25), _windows_exempt(capabilities_restricted)))),
    Control("hostNamespaces", "baseline", (((1, 0), host_namespaces),)),
    Control("hostPathVolumes", "baseline", (((1, 0), host_path_volumes),)),
    Control("hostPorts", "baseline", (((1, 0), host_ports),)),
    Control("hostProbesAndHostLifecycle", "baseline", (((1, 34), host_probes),)),
    Control("privileged", "baseline", (((1, 0), privileged),)),
    Control("procMount", "baseline", (((1, 0), proc_mount),)),
    Control("restrictedVolumes", "restricted", (((1, 0), restricted_volumes),)),
    Control("runAsNonRoot", "restricted", (((1, 0), run_as_non_root),)),
    Control("runAsUser", "restricted", (((1, 23), run_as_user),)),
    Control("seLinuxOptions", "baseline", (
        ((1, 0), _selinux(_SELINUX_1_0)),
        ((1, 31), _selinux(_SELINUX_1_0 | {"container_engine_t"})))),
    Control("seccompProfile_baseline", "baseline", (
        ((1, 0), seccomp_annotations), ((1, 19), _seccomp(restricted=False)))),
    Control("seccompProfile_restricted", "restricted", (
        ((1, 19), _seccomp(restricted=True)),
        ((1, 25), _windows_exempt(_seccomp(restricted=True))))),
    Control("sysctls", "baseline", (
        ((1, 0), _sysctls(_SYSCTLS_1_0)), ((1, 27), _sysctls(_SYSCTLS_1_27)),
        ((1, 29), _sysctls(_SYSCTLS_1_29)), ((1, 32), _sysctls(_SYSCTLS_1_32)))),
    Control("windowsHostProcess", "baseline", (((1, 0), windows_host_process),)),
)
