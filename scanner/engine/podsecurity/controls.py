"""The Pod Security Standards controls with field errors (spec 11.3).

Each control looks at a pod (metadata and spec as plain data, already type-checked) and
returns a ``CheckResult`` when the pod violates it. Reasons, details and field errors follow
the Kubernetes pod-security-admission checks as forked by Kyverno (field-error variant).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

REQUIRED = "Required"
FORBIDDEN = "Forbidden"

Version = tuple[int, int]
Pod = tuple[dict[str, Any], dict[str, Any]]  # (metadata, spec)


@dataclass(frozen=True, slots=True)
class FieldError:
    """One field error; ``bad_value`` "" means none (as in Go)."""

    type: str
    field: str
    bad_value: Any = ""

    def text(self) -> str:
        """The standard field error text (``<field>: Required value`` / ``<field>: Forbidden``)."""
        return f"{self.field}: {'Required value' if self.type == REQUIRED else 'Forbidden'}"


@dataclass(frozen=True, slots=True)
class CheckResult:
    """A Pod Security control's failure: its id, reason, detail and field errors."""

    id: str
    reason: str
    detail: str
    errors: tuple[FieldError, ...]


CheckFn = Callable[[dict[str, Any], dict[str, Any]], CheckResult | None]


@dataclass(frozen=True, slots=True)
class Control:
    """A Pod Security control: its level and its check per version."""

    id: str
    level: str
    versions: tuple[tuple[Version, CheckFn], ...]


def _plural(singular: str, plural: str, count: int) -> str:
    return singular if count == 1 else plural


def _jq(items: list[str]) -> str:
    return "" if not items else '"' + '", "'.join(items) + '"'


def _goq(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _containers(spec: dict[str, Any]) -> Iterator[tuple[dict[str, Any], str]]:
    for key in ("initContainers", "containers", "ephemeralContainers"):
        for i, container in enumerate(spec.get(key) or []):
            yield (container or {}), f"spec.{key}[{i}]"


def _get(node: Any, *keys: str) -> Any:
    for key in keys:
        if not isinstance(node, dict):
            return None
        node = node.get(key)
    return node


def _int(value: Any) -> int:
    return int(value)


def _strings(values: Any) -> list[str]:
    """A decoded string list: a null item is the empty string (Go's zero value)."""
    return ["" if v is None else v for v in values or []]


def _names(containers: list[dict[str, Any]]) -> str:
    names = [c.get("name") or "" for c in containers]
    return f"{_plural('container', 'containers', len(names))} {_jq(names)}"


def _is_windows(spec: dict[str, Any]) -> bool:
    return _get(spec, "os", "name") == "windows"


def _result(cid: str, reason: str, detail: str, errors: list[FieldError]) -> CheckResult:
    return CheckResult(cid, reason, detail, tuple(errors))


# -- baseline ----------------------------------------------------------------------------

def host_namespaces(meta: dict[str, Any], spec: dict[str, Any]) -> CheckResult | None:
    found = [k for k in ("hostNetwork", "hostPID", "hostIPC") if spec.get(k) is True]
    if not found:
        return None
    return _result("hostNamespaces", "host namespaces", ", ".join(f"{k}=true" for k in found),
                   [FieldError(FORBIDDEN, f"spec.{k}", True) for k in found])


def privileged(meta: dict[str, Any], spec: dict[str, Any]) -> CheckResult | None:
    bad, errs = [], []
    for c, path in _containers(spec):
        if _get(c, "securityContext", "privileged") is True:
            bad.append(c)
            errs.append(FieldError(FORBIDDEN, f"{path}.securityContext.privileged", True))
    if not bad:
        return None
    return _result("privileged", "privileged",
                   f"{_names(bad)} must not set securityContext.privileged=true", errs)


_BASELINE_CAPS = frozenset({
    "AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD",
    "NET_BIND_SERVICE", "SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT",
})


def capabilities_baseline(meta: dict[str, Any], spec: dict[str, Any]) -> CheckResult | None:
    bad, errs, caps = [], [], set()
    for c, path in _containers(spec):
        added = _strings(_get(c, "securityContext", "capabilities", "add"))
        forbidden = sorted({a for a in added if a not in _BASELINE_CAPS})
        if forbidden:
            bad.append(c)
            caps.update(forbidden)
            field = f"{path}.securityContext.capabilities.add"
            errs.append(FieldError(FORBIDDEN, field, forbidden))
    if not bad:
        return None
    detail = (f"{_names(bad)} must not include {_jq(sorted(caps))} "
              "in securityContext.capabilities.add")
    return _result("capabilities_baseline", "non-default capabilities", detail, errs)


def host_path_volumes(meta: dict[str, Any], spec: dict[str, Any]) -> CheckResult | None:
    names, errs = [], []
    for i, volume in enumerate(spec.get("volumes") or []):
        host_path = (volume or {}).get("hostPath")
        if host_path is not None:
            names.append(volume.get("name") or "")
            errs.append(FieldError(FORBIDDEN, f"spec.volumes[{i}].hostPath",
                                   host_path.get("path") or ""))
    if not names:
        return None
    return _result("hostPathVolumes", "hostPath volumes",
                   f"{_plural('volume', 'volumes', len(names))} {_jq(names)}", errs)


def host_ports(meta: dict[str, Any], spec: dict[str, Any]) -> CheckResult | None:
    bad, errs, ports = [], [], set()
    for c, path in _containers(spec):
        found = False
        for i, port in enumerate(c.get("ports") or []):
            value = _int((port or {}).get("hostPort") or 0)
            if value != 0:
                found = True
                ports.add(str(value))
                errs.append(FieldError(FORBIDDEN, f"{path}.ports[{i}].hostPort", value))
        if found:
            bad.append(c)
    if not bad:
        return None
    detail = (f"{_names(bad)} {_plural('uses', 'use', len(bad))} "
              f"{_plural('hostPort', 'hostPorts', len(ports))} {', '.join(sorted(ports))}")
    return _result("hostPorts", "hostPort", detail, errs)


def app_armor(meta: dict[str, Any], spec: dict[str, Any]) -> CheckResult | None:
    setters: list[str] = []
    errs: list[FieldError] = []
    bad_values: set[str] = set()
    pod_type = _get(spec, "securityContext", "appArmorProfile")
    if pod_type is not None and (pod_type.get("type") or "") not in ("RuntimeDefault", "Localhost"):
        setters.append("pod")
        errs.append(FieldError(FORBIDDEN, "spec.securityContext.appArmorProfile.type",
                               pod_type.get("type") or ""))
        bad_values.add(pod_type.get("type") or "")
    bad = []
    for c, path in _containers(spec):
        profile = _get(c, "securityContext", "appArmorProfile")
        if profile is not None and (profile.get("type") or "") not in ("RuntimeDefault",
                                                                         "Localhost"):
            bad.append(c)
            errs.append(FieldError(FORBIDDEN, f"{path}.securityContext.appArmorProfile.type",
                                   profile.get("type") or ""))
            bad_values.add(profile.get("type") or "")
    if bad:
        setters.append(_names(bad))
    annotations = []
    prefix = "container.apparmor.security.beta.kubernetes.io/"
    for key, value in sorted((meta.get("annotations") or {}).items()):
        value = value or ""
        if key.startswith(prefix) and not (
            value == "" or value == "runtime/default" or value.startswith("localhost/")
        ):
            annotations.append(f"{key}={_goq(value)}")
            errs.append(FieldError(FORBIDDEN, f"metadata.annotations[{key}]", value))
    values = sorted(bad_values) + annotations
    if annotations:
        setters.append(_plural("annotation", "annotations", len(annotations)))
    if not setters:
        return None
    reason = _plural("forbidden AppArmor profile", "forbidden AppArmor profiles", len(values))
    detail = f"{' and '.join(setters)} must not set AppArmor profile type to {_jq(values)}"
    return _result("appArmorProfile", reason, detail, errs)


def _selinux(allowed: frozenset[str]) -> CheckFn:
    def check(meta: dict[str, Any], spec: dict[str, Any]) -> CheckResult | None:
        types: set[str] = set()
        flags = {"user": False, "role": False}

        def problems(opts: dict[str, Any], prefix: str) -> list[FieldError]:
            found = []
            if (opts.get("type") or "") not in allowed:
                types.add(opts.get("type") or "")
                found.append(FieldError(FORBIDDEN, f"{prefix}.type", opts.get("type") or ""))
            for key in ("user", "role"):
                if opts.get(key):
                    flags[key] = True
                    found.append(FieldError(FORBIDDEN, f"{prefix}.{key}", opts[key]))
            return found

        setters, errs = [], []
        pod_opts = _get(spec, "securityContext", "seLinuxOptions")
        if pod_opts is not None:
            found = problems(pod_opts, "spec.securityContext.seLinuxOptions")
            if found:
                setters.append("pod")
                errs.extend(found)
        bad = []
        for c, path in _containers(spec):
            opts = _get(c, "securityContext", "seLinuxOptions")
            if opts is not None:
                found = problems(opts, f"{path}.securityContext.seLinuxOptions")
                if found:
                    bad.append(c)
                    errs.extend(found)
        if bad:
            setters.append(_names(bad))
        if not setters:
            return None
        data = []
        if types:
            data.append(f"{_plural('type', 'types', len(types))} {_jq(sorted(types))}")
        data += [f"{k} may not be set" for k in ("user", "role") if flags[k]]
        detail = (f"{' and '.join(setters)} set forbidden securityContext.seLinuxOptions: "
                  f"{'; '.join(data)}")
        return _result("seLinuxOptions", "seLinuxOptions", detail, errs)

    return check


def proc_mount(meta: dict[str, Any], spec: dict[str, Any]) -> CheckResult | None:
    bad, errs, kinds = [], [], set()
    for c, path in _containers(spec):
        value = _get(c, "securityContext", "procMount")
        if value is not None and value != "Default":
            bad.append(c)
            kinds.add(value)
            errs.append(FieldError(FORBIDDEN, f"{path}.securityContext.procMount", value))
    if not bad:
        return None
    detail = f"{_names(bad)} must not set securityContext.procMount to {_jq(sorted(kinds))}"
    return _result("procMount", "procMount", detail, errs)


def _sysctls(allowed: frozenset[str]) -> CheckFn:
    def check(meta: dict[str, Any], spec: dict[str, Any]) -> CheckResult | None:
        names, errs = [], []
        for i, sysctl in enumerate(_get(spec, "securityContext", "sysctls") or []):
            name = (sysctl or {}).get("name") or ""
            if name not in allowed:
                names.append(name)
                errs.append(FieldError(FORBIDDEN, f"spec.securityContext.sysctls[{i}].name", name))
        if not names:
            return None
        return _result("sysctls", "forbidden sysctls", ", ".join(names), errs)

    return check


def windows_host_process(meta: dict[str, Any], spec: dict[str, Any]) -> CheckResult | None:
    setters, errs = [], []
    if _get(spec, "securityContext", "windowsOptions", "hostProcess") is True:
        setters.append("pod")
        errs.append(FieldError(FORBIDDEN, "spec.securityContext.windowsOptions.hostProcess", True))
    bad = []
    for c, path in _containers(spec):
        if _get(c, "securityContext", "windowsOptions", "hostProcess") is True:
            bad.append(c)
            errs.append(FieldError(FORBIDDEN, f"{path}.securityContext.windowsOptions.hostProcess",
                                   True))
    if bad:
        setters.append(_names(bad))
    if not setters:
        return None
    detail = f"{' and '.join(setters)} must not set securityContext.windowsOptions.hostProcess=true"
    return _result("windowsHostProcess", "hostProcess", detail, errs)


def host_probes(meta: dict[str, Any], spec: dict[str, Any]) -> CheckResult | None:
    bad: list[str] = []
    hosts: set[str] = set()
    errs = []
    for c, path in _containers(spec):
        handlers = [(k, c.get(k)) for k in ("livenessProbe", "readinessProbe", "startupProbe")]
        lifecycle = c.get("lifecycle") or {}
        handlers += [(f"lifecycle.{k}", lifecycle.get(k)) for k in ("postStart", "preStop")]
        found = False
        for where, handler in handlers:
            for action in ("httpGet", "tcpSocket"):
                host = _get(handler, action, "host")
                if host:
                    found = True
                    hosts.add(host)
                    errs.append(FieldError(FORBIDDEN, f"{path}.{where}.{action}.host", host))
        if found and (c.get("name") or "") not in bad:
            bad.append(c.get("name") or "")
    if not bad:
        return None
    names = sorted(bad)
    detail = (f"{_plural('container', 'containers', len(names))} {_jq(names)} "
              f"{_plural('uses', 'use', len(names))} "
              f"{_plural('probe or lifecycle host', 'probe or lifecycle hosts', len(hosts))} "
              f"{_jq(sorted(hosts))}")
    return _result("hostProbesAndHostLifecycle", "probe or lifecycle host", detail, errs)
