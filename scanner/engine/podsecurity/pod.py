"""Pod extraction and typed decoding for the podSecurity sub-rule (spec 11.2 step 2).

Kyverno decodes the resource into the typed Kubernetes structure before the checks run:
unknown fields are dropped and a wrongly typed field is an error. We keep the resource as
plain data and check the types of every field the controls read (plus the structural fields
around them), reproducing Go's ``encoding/json`` error text.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from scanner.engine.golang.fmt import format_json_number
from scanner.errors import EngineError

_CONTROLLER_KINDS = frozenset(
    {"DaemonSet", "Deployment", "Job", "StatefulSet", "ReplicaSet", "ReplicationController"}
)


class PodDecodeError(EngineError):
    """The resource cannot be read as a pod (wrong kind or a wrongly typed field)."""


@dataclass(frozen=True, slots=True)
class ExtractedPod:
    """The pod metadata and spec of a pod or pod controller, as the controls read them."""

    metadata: dict[str, Any]
    spec: dict[str, Any]


# -- a small schema of the typed fields the controls read --------------------------------

_PROFILE = ("SeccompProfile", {"type": "string", "localhostProfile": "string"})
_APPARMOR = ("AppArmorProfile", {"type": "string", "localhostProfile": "string"})
_SELINUX = (
    "SELinuxOptions",
    {"type": "string", "user": "string", "role": "string", "level": "string"},
)
_WINDOWS = (
    "WindowsSecurityContextOptions",
    {"hostProcess": "bool", "gmsaCredentialSpecName": "string", "runAsUserName": "string"},
)
_HTTP_GET = ("HTTPGetAction", {"host": "string", "path": "string", "port": "intstr"})
_TCP = ("TCPSocketAction", {"host": "string", "port": "intstr"})
_PROBE = ("Probe", {"httpGet": _HTTP_GET, "tcpSocket": _TCP})
_HANDLER = ("LifecycleHandler", {"httpGet": _HTTP_GET, "tcpSocket": _TCP})
_CONTAINER_SC = (
    "SecurityContext",
    {
        "privileged": "bool",
        "allowPrivilegeEscalation": "bool",
        "runAsNonRoot": "bool",
        "runAsUser": "int64",
        "runAsGroup": "int64",
        "readOnlyRootFilesystem": "bool",
        "procMount": "string",
        "capabilities": ("Capabilities", {"add": ("list", "string"), "drop": ("list", "string")}),
        "seccompProfile": _PROFILE,
        "appArmorProfile": _APPARMOR,
        "seLinuxOptions": _SELINUX,
        "windowsOptions": _WINDOWS,
    },
)
_PORT = (
    "ContainerPort",
    {"name": "string", "hostPort": "int32", "containerPort": "int32", "protocol": "string",
     "hostIP": "string"},
)
_CONTAINER = (
    "Container",
    {
        "name": "string",
        "image": "string",
        "ports": ("list", _PORT),
        "securityContext": _CONTAINER_SC,
        "livenessProbe": _PROBE,
        "readinessProbe": _PROBE,
        "startupProbe": _PROBE,
        "lifecycle": ("Lifecycle", {"postStart": _HANDLER, "preStop": _HANDLER}),
    },
)
_POD_SC = (
    "PodSecurityContext",
    {
        "runAsNonRoot": "bool",
        "runAsUser": "int64",
        "runAsGroup": "int64",
        "fsGroup": "int64",
        "supplementalGroups": ("list", "int64"),
        "seccompProfile": _PROFILE,
        "appArmorProfile": _APPARMOR,
        "seLinuxOptions": _SELINUX,
        "windowsOptions": _WINDOWS,
        "sysctls": ("list", ("Sysctl", {"name": "string", "value": "string"})),
    },
)
_VOLUME = ("Volume", {"name": "string", "hostPath": ("HostPathVolumeSource", {"path": "string"})})
_POD_SPEC = (
    "PodSpec",
    {
        "hostNetwork": "bool",
        "hostPID": "bool",
        "hostIPC": "bool",
        "hostUsers": "bool",
        "os": ("PodOS", {"name": "string"}),
        "securityContext": _POD_SC,
        "volumes": ("list", _VOLUME),
        "containers": ("list", _CONTAINER),
        "initContainers": ("list", _CONTAINER),
        "ephemeralContainers": ("list", ("EphemeralContainer", _CONTAINER[1])),
    },
)
_META = (
    "ObjectMeta",
    {"name": "string", "namespace": "string", "annotations": ("map", "string"),
     "labels": ("map", "string")},
)

_GO_TYPES = {"bool": "bool", "string": "string", "int32": "int32", "int64": "int64",
             "intstr": "intstr.IntOrString"}


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _fail(value: Any, struct: str, path: str, go_type: str) -> PodDecodeError:
    what = _json_type(value)
    if what == "number":  # the number as its JSON text reads
        what = f"number {format_json_number(value)}"
    return PodDecodeError(
        f"json: cannot unmarshal {what} into Go struct field {struct}.{path} of type {go_type}"
    )


def _is_integral(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return True
    return isinstance(value, float) and value.is_integer()


_SCALAR_CHECKS: dict[str, Any] = {
    "bool": lambda v: isinstance(v, bool),
    "string": lambda v: isinstance(v, str),
    "int32": _is_integral,
    "int64": _is_integral,
    "intstr": lambda v: isinstance(v, str) or _is_integral(v),
}


def _check(value: Any, spec: Any, struct: str, path: str) -> None:
    if value is None:
        return
    if isinstance(spec, str):
        if not _SCALAR_CHECKS[spec](value):
            raise _fail(value, struct, path, _GO_TYPES[spec])
        return
    kind, inner = spec
    if kind == "list":
        if not isinstance(value, list):
            raise _fail(value, struct, path, f"[]{_type_name(inner)}")
        for item in value:
            _check(item, inner, struct, path)
        return
    if kind == "map":
        if not isinstance(value, dict):
            raise _fail(value, struct, path, f"map[string]{inner}")
        for item in value.values():
            _check(item, inner, struct, path)
        return
    if not isinstance(value, dict):
        raise _fail(value, struct, path, f"v1.{kind}")
    for key, sub in inner.items():
        item = value.get(key)
        if item is None or (sub.__class__ is str and _SCALAR_CHECKS[sub](item)):
            continue  # absent, null or a scalar of its type: nothing to report (the common case)
        _check(item, sub, kind, f"{path}.{key}")


def _type_name(spec: Any) -> str:
    if isinstance(spec, str):
        return _GO_TYPES[spec]
    return f"v1.{spec[0]}"


def _mapping(value: Any, struct: str, path: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise _fail(value, struct, path, "v1.ObjectMeta" if path.endswith("metadata") else "map")
    return value


def extract_pod(resource: dict[str, Any]) -> ExtractedPod:
    """Pod metadata and spec of a Pod or pod controller, type-checked like Kyverno's decoding."""
    kind = resource.get("kind")
    meta_path: tuple[str, ...]
    spec_path: tuple[str, ...]
    if kind == "Pod":
        root, meta_path, spec_path = "Pod", ("metadata",), ("spec",)
    elif kind in _CONTROLLER_KINDS:
        root = "Deployment"
        meta_path, spec_path = ("spec", "template", "metadata"), ("spec", "template", "spec")
    elif kind == "CronJob":
        root = "CronJob"
        meta_path = ("spec", "jobTemplate", "metadata")
        spec_path = ("spec", "jobTemplate", "spec", "template", "spec")
    else:
        raise PodDecodeError("could not find correct resource type")
    metadata = _walk(resource, meta_path, root)
    spec = _walk(resource, spec_path, root)
    _check(metadata, _META, root, ".".join(meta_path))
    _check(spec, _POD_SPEC, root, ".".join(spec_path))
    return ExtractedPod(metadata=metadata, spec=spec)


def _walk(resource: dict[str, Any], keys: tuple[str, ...], root: str) -> dict[str, Any]:
    node: Any = resource
    for depth, key in enumerate(keys):
        node = _mapping(node, root, ".".join(keys[:depth])).get(key)
    return _mapping(node, root, ".".join(keys))
