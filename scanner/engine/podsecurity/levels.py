"""The ``validate.podSecurity`` sub-rule: levels, versions, exclusions, messages (spec 11).

``evaluate_pod_security`` turns one resource into a ``PodSecurityResult``;
``validate_pod_security_spec`` lists the policy validity problems of a podSecurity block
(spec 1.7). Controls live in ``podsecurity_controls``/``podsecurity_restricted``, pod
extraction and typed decoding in ``podsecurity_pod``.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from scanner.engine import wildcard
from scanner.engine.podsecurity.controls import REQUIRED, CheckFn, CheckResult, FieldError, Version
from scanner.engine.podsecurity.pod import ExtractedPod, PodDecodeError, extract_pod
from scanner.engine.podsecurity.restricted import CONTROLS
from scanner.engine.types import RuleStatus

LEVELS = ("privileged", "baseline", "restricted")
# The newest Pod Security Standards version the controls know ("latest").
LATEST_VERSION: Version = (1, 34)

CONTROL_IDS: dict[str, tuple[str, ...]] = {
    "Capabilities": ("capabilities_baseline", "capabilities_restricted"),
    "Seccomp": ("seccompProfile_baseline", "seccompProfile_restricted"),
    "Privileged Containers": ("privileged",),
    "Host Ports": ("hostPorts",),
    "/proc Mount Type": ("procMount",),
    "HostProcess": ("windowsHostProcess",),
    "SELinux": ("seLinuxOptions",),
    "Host Namespaces": ("hostNamespaces",),
    "HostPath Volumes": ("hostPathVolumes",),
    "Sysctls": ("sysctls",),
    "AppArmor": ("appArmorProfile",),
    "Privilege Escalation": ("allowPrivilegeEscalation",),
    "Running as Non-root": ("runAsNonRoot",),
    "Running as Non-root user": ("runAsUser",),
    "Volume Types": ("restrictedVolumes",),
}
CONTROL_NAMES = {cid: name for name, ids in CONTROL_IDS.items() for cid in ids}
_POD_LEVEL = frozenset({"Host Namespaces", "HostPath Volumes", "Sysctls", "AppArmor",
                        "Volume Types"})
_CONTAINER_LEVEL = frozenset({"Capabilities", "Privileged Containers", "Host Ports",
                              "/proc Mount Type", "Privilege Escalation"})
_RESTRICTED_NAMES = frozenset({"Volume Types", "Privilege Escalation", "Running as Non-root",
                               "Running as Non-root user"})
_VERSION_RE = re.compile(r"^v1\.(0|[1-9][0-9]*)$")
_DIGITS = re.compile(r"\d+")
_WORDS = re.compile(r"[a-zA-Z]+")
_CONTAINER_KEYS = ("containers", "initContainers", "ephemeralContainers")


@dataclass(frozen=True, slots=True)
class PodSecurityCheck:
    """A failing control as reported: ID, name, reason, detail, field errors, images."""

    id: str
    name: str
    reason: str
    detail: str
    errors: tuple[FieldError, ...]
    images: tuple[str, ...] | None


@dataclass(frozen=True, slots=True)
class PodSecurityResult:
    """The outcome of a podSecurity rule: status, Kyverno's message and the failed checks."""

    status: RuleStatus
    message: str
    checks: tuple[PodSecurityCheck, ...] = ()
    level: str = ""
    version: str = ""

    def properties(self) -> dict[str, Any]:
        """Report properties (standard, version, controls) as Kyverno's reports carry them."""
        props: dict[str, Any] = {"standard": self.level, "version": self.version}
        if self.checks:
            props["controls"] = ",".join(sorted(c.id for c in self.checks))
            props["controlsJSON"] = [
                {"ID": c.id, "Name": c.name, "Images": list(c.images) if c.images else None}
                for c in self.checks
            ]
        return props


# -- versions and evaluation --------------------------------------------------------------

def parse_version(version: str | None) -> Version:
    """``latest``/empty, or ``v1.MINOR``; raises ValueError otherwise."""
    if not version or version == "latest":
        return LATEST_VERSION
    match = _VERSION_RE.match(version)
    if not match:
        raise ValueError(f'must be "latest" or "v1.x": {version!r}')
    return (1, int(match.group(1)))


def evaluate_controls(level: str, version: Version, metadata: dict[str, Any], spec: dict[str, Any],
                      known: dict[CheckFn, CheckResult | None] | None = None) -> list[CheckResult]:
    """Failing controls for a pod: baseline level only baseline, any other level all controls.
    ``known`` keeps each check's outcome for this pod, for the next level evaluated on it."""
    results = []
    for check in _checks(level == "baseline", version):
        if known is None:
            result = check(metadata, spec)
        elif check in known:
            result = known[check]
        else:
            result = known[check] = check(metadata, spec)
        if result is not None:
            results.append(result)
    return results


_Decoded = tuple[ExtractedPod | PodDecodeError, dict[CheckFn, CheckResult | None]]


def _decoded(resource: dict[str, Any], memo: dict[str, Any] | None) -> _Decoded:
    """The resource's pod (or why it has none) and its controls' outcomes so far, kept in
    ``memo`` for the resource's next podSecurity rule (a baseline policy and a restricted
    one share the decoding and the baseline controls)."""
    decoded = memo.get("podSecurity") if memo is not None else None
    if decoded is None:
        try:
            pod: ExtractedPod | PodDecodeError = extract_pod(resource)
        except PodDecodeError as e:
            pod = e.with_traceback(None)  # kept: without its frames (which would hold it in a cycle)
        decoded = (pod, {})
        if memo is not None:
            memo["podSecurity"] = decoded
    return decoded


@lru_cache(maxsize=64)
def _checks(baseline_only: bool, version: Version) -> tuple[Any, ...]:
    """The check of each control at ``version`` (its newest version not after it)."""
    checks = []
    for control in CONTROLS:
        if baseline_only and control.level != "baseline":
            continue
        eligible = [v for v in control.versions if v[0] <= version]
        _minimum, check = max(eligible or control.versions[:1], key=lambda v: v[0])
        checks.append(check)
    return tuple(checks)


def _probe_pod(exclude: dict[str, Any], metadata: dict[str, Any], spec: dict[str, Any]
               ) -> tuple[dict[str, Any], dict[str, Any], bool]:
    images = exclude.get("images") or []
    if not images:
        probe_spec = copy.deepcopy(spec)
        probe_spec["containers"] = [{"name": "fake"}]
        probe_spec.pop("initContainers", None)
        probe_spec.pop("ephemeralContainers", None)
        return copy.deepcopy(metadata), probe_spec, False
    probe_meta: dict[str, Any] = {k: metadata[k] for k in ("name", "namespace") if k in metadata}
    probe_spec = {}
    for key in _CONTAINER_KEYS:
        matching = [c for c in spec.get(key) or []
                    if any(wildcard.match(p, (c or {}).get("image") or "") for p in images)]
        if matching:
            probe_spec[key] = matching
    return probe_meta, probe_spec, True


def _parse_field(field: str, spec: dict[str, Any]) -> tuple[str, str | None]:
    """Normalised path and, for container fields, the container's name."""
    normalised = _DIGITS.sub("*", field)
    words = _WORDS.findall(field)
    if len(words) > 1 and words[1] in _CONTAINER_KEYS:
        index = int(_DIGITS.findall(field)[0])
        return normalised, ((spec.get(words[1]) or [])[index] or {}).get("name") or ""
    return normalised, None


def _bad_values(error: FieldError) -> list[str]:
    value = error.bad_value
    if isinstance(value, bool):
        return ["true" if value else "false"]
    if isinstance(value, int):
        return [str(value)]
    if isinstance(value, str):
        return [value] if value else []
    if isinstance(value, list):
        return [str(v) for v in value]
    return []


def apply_exclusions(level: str, version: Version, excludes: Sequence[dict[str, Any]],
                     checks: list[CheckResult], metadata: dict[str, Any],
                     spec: dict[str, Any]) -> list[CheckResult]:
    """Kyverno's exclusion algorithm (spec 11.4): each probe error removes one real error."""
    current: dict[str, list[FieldError]] = {c.id: list(c.errors) for c in checks}
    by_id = {c.id: c for c in checks}
    for exclude in excludes:
        probe_meta, probe_spec, container_level = _probe_pod(exclude, metadata, spec)
        ids = CONTROL_IDS.get(exclude.get("controlName") or "", ())
        restricted_field = exclude.get("restrictedField") or ""
        values = exclude.get("values") or []
        for probe in evaluate_controls(level, version, probe_meta, probe_spec):
            if probe.id not in ids:
                continue
            for probe_error in probe.errors:
                if container_level:
                    field, name = _parse_field(probe_error.field, probe_spec)
                else:
                    field, name = _DIGITS.sub("*", probe_error.field), None
                if restricted_field and field != restricted_field:
                    continue
                if values and not all(any(wildcard.match(p, v) for p in values)
                                      for v in _bad_values(probe_error)):
                    continue
                errors = current.get(probe.id)
                if errors is None:
                    continue
                for idx, real in enumerate(errors):
                    if container_level:
                        real_field, real_name = _parse_field(real.field, spec)
                        matched = real_field == field and (
                            real_name is None or (name or "") == real_name)
                    else:
                        matched = _DIGITS.sub("*", real.field) == field
                    if matched:
                        errors[idx] = errors[-1]
                        errors.pop()
                        break
                if not errors:
                    del current[probe.id]
    return [CheckResult(cid, by_id[cid].reason, by_id[cid].detail, tuple(errs))
            for cid, errs in current.items()]


# -- messages ------------------------------------------------------------------------------

def _go_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + " ".join(str(v) for v in value) + "]"
    return str(value)


def format_error(error: FieldError) -> str:
    if error.type == REQUIRED or error.bad_value == "":
        return error.text()
    return f"{error.field} is forbidden, forbidden values found: {_go_value(error.bad_value)}"


def format_checks(checks: Sequence[PodSecurityCheck]) -> str:
    return "".join(
        f"(Forbidden reason: {c.reason}, field error list: "
        f"[{', '.join(format_error(e) for e in c.errors)}])"
        for c in checks
    )


def _rewrite(field: str, kind: str) -> str:
    if kind == "CronJob":
        field = field.replace("spec", "spec.jobTemplate.spec.template.spec")
    elif kind in ("DaemonSet", "Deployment", "Job", "StatefulSet", "ReplicaSet",
                  "ReplicationController"):
        field = field.replace("spec", "spec.template.spec")
    return field.replace("metadata", "spec.template.metadata")


_CONTAINER_NAMES = re.compile(r"container(?:s)?\s*(.*?)\s*must")


def image_reference(image: str) -> str:
    """A container image as a full reference (registry, path, tag), like Kyverno's image info."""
    if "@" not in image and ":" not in image.rsplit("/", 1)[-1]:
        image += ":latest"
    first = image.split("/", 1)[0]
    if "/" not in image or not ("." in first or ":" in first or first == "localhost"):
        image = "docker.io/" + image
    return image


def _images(detail: str, spec: dict[str, Any]) -> tuple[str, ...] | None:
    match = _CONTAINER_NAMES.search(detail)
    if not match:
        return None
    names = match.group(1).replace('"', "").replace(" ", "").split(",")
    lookup: dict[str, str] = {}
    for key in reversed(_CONTAINER_KEYS):
        for c in spec.get(key) or []:
            c = c or {}
            lookup[c.get("name") or ""] = image_reference(c.get("image") or "")
    return tuple(lookup.get(n, n) for n in names)


def _report_checks(checks: list[CheckResult], kind: str, spec: dict[str, Any]
                   ) -> tuple[PodSecurityCheck, ...]:
    return tuple(
        PodSecurityCheck(
            id=c.id, name=CONTROL_NAMES.get(c.id, ""), reason=c.reason, detail=c.detail,
            errors=tuple(FieldError(e.type, _rewrite(e.field, kind), e.bad_value)
                         for e in c.errors),
            images=_images(c.detail, spec),
        )
        for c in checks
    )


def evaluate_pod_security(
    resource: dict[str, Any],
    rule_name: str,
    level: str,
    version: str | None,
    excludes: Sequence[dict[str, Any]],
    exception_excludes: Sequence[dict[str, Any]] | None = None,
    exception_keys: Sequence[str] = (),
    memo: dict[str, Any] | None = None,
) -> PodSecurityResult:
    """One podSecurity rule on one resource (spec 11.2); ``memo``, kept by the caller for the
    resource (unchanged) while its rules are evaluated, shares work between its podSecurity rules."""
    shown_version = version or ""
    pod, known = _decoded(resource, memo)
    if isinstance(pod, PodDecodeError):
        return PodSecurityResult(RuleStatus.ERROR, f"Error while getting new resource: {pod}",
                                 level=level, version=shown_version)
    try:
        parsed = parse_version(version)
    except ValueError as e:
        return PodSecurityResult(RuleStatus.ERROR,
                                 f"failed to parse pod security api version: {e}",
                                 level=level, version=shown_version)
    checks = evaluate_controls(level, parsed, pod.metadata, pod.spec, known)
    if excludes:
        checks = apply_exclusions(level, parsed, excludes, checks, pod.metadata, pod.spec)
    if not checks:
        return PodSecurityResult(RuleStatus.PASS, f"Validation rule '{rule_name}' passed.",
                                 level=level, version=shown_version)
    if exception_excludes is not None:
        checks = apply_exclusions(level, parsed, exception_excludes, checks, pod.metadata,
                                  pod.spec)
        if not checks:
            return PodSecurityResult(
                RuleStatus.SKIP,
                "rule is skipped due to policy exceptions " + ", ".join(exception_keys),
                level=level, version=shown_version)
    reported = _report_checks(checks, resource.get("kind") or "", pod.spec)
    message = (f"Validation rule '{rule_name}' failed. It violates PodSecurity "
               f'"{level}:{shown_version}": {format_checks(reported)}')
    return PodSecurityResult(RuleStatus.FAIL, message, reported, level, shown_version)


# -- policy validity (spec 1.7) -----------------------------------------------------------

def validate_pod_security_spec(spec: dict[str, Any]) -> list[str]:
    """Problems of a podSecurity block, each prefixed with its pointer relative to the block."""
    problems = []
    if not isinstance(spec, dict):
        return ["podSecurity must be an object"]
    level = spec.get("level")
    if level not in LEVELS:
        problems.append(f"level: Unsupported value: {level!r}: supported values: "
                        '"privileged", "baseline", "restricted"')
    version = spec.get("version")
    if version not in (None, "", "latest") and not (
        isinstance(version, str) and _VERSION_RE.match(version)
    ):
        problems.append(f'version: Invalid value: {version!r}: must be "latest" or "v1.x"')
    excludes = spec.get("exclude") or []
    if not isinstance(excludes, list):
        return [*problems, "exclude: must be a list"]
    for idx, exclude in enumerate(excludes):
        problems.extend(f"exclude/{idx}/{p}" for p in _exclude_problems(exclude, level))
    return problems


def exclude_type_problems(exclude: Any) -> list[str]:
    """The fields of one exclude entry (of a policy or an exception) that do not decode."""
    if not isinstance(exclude, dict):
        return ["must be an object"]
    problems = []
    for key in ("controlName", "restrictedField"):
        value = exclude.get(key)
        if value is not None and not isinstance(value, str):
            problems.append(f"{key}: Invalid value: {value!r}: must be a string")
    for key in ("images", "values"):
        value = exclude.get(key)
        if value is not None and not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
            problems.append(f"{key}: Invalid value: {value!r}: must be a list of strings")
    return problems


def _exclude_problems(exclude: Any, level: Any) -> list[str]:
    problems = exclude_type_problems(exclude)
    if problems:  # the entry does not decode: its type errors alone
        return problems
    name = exclude.get("controlName")
    images = exclude.get("images") or []
    if name not in CONTROL_IDS:
        problems.append(f"controlName: Unsupported value: {name!r}")
    elif name in _CONTAINER_LEVEL and not images:
        problems.append(f"controlName: Invalid value: {name!r}: "
                        "exclude.images must be specified for the container level control")
    elif name in _POD_LEVEL and images:
        problems.append(f"controlName: Invalid value: {name!r}: "
                        "exclude.images must not be specified for the pod level control")
    if level == "baseline" and name in _RESTRICTED_NAMES:
        problems.append(f"controlName: Invalid value: {name!r}: "
                        "Invalid control name defined at the given level")
    if exclude.get("restrictedField") and not exclude.get("values"):
        problems.append("values: Forbidden: values is required")
    if not exclude.get("restrictedField") and exclude.get("values"):
        problems.append("restrictedField: Forbidden: restrictedField is required")
    return problems
