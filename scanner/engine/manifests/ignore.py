"""Which diff paths a signed-manifest comparison tolerates (spec 19.8, 19.9).

An ignore binding is a set of object selectors and field patterns. The default bindings
(sigstore's and Kyverno's lists plus the signature-annotation masks of the annotation
domain) always apply; the policy's ``ignoreFields`` are added to them. Field patterns are
searched *anywhere* in a dotted diff path, which is why ``status`` ignores
``metadata.labels.status`` too.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from scanner.engine.golang.regexp import GoRegexp, RegexError, compile_re2

DEFAULT_DOMAIN = "cosign.sigstore.dev"
SIGNATURE_ANNOTATIONS = ("message", "signature", "certificate", "bundle", "resourceBundleRef")


@dataclass(frozen=True, slots=True)
class ObjectSelector:
    group: str = ""
    version: str = ""
    kind: str = ""
    name: str = ""
    namespace: str = ""


@dataclass(frozen=True, slots=True)
class IgnoreBinding:
    """``fields`` apply to resources matching any selector (all resources when none)."""

    objects: tuple[ObjectSelector, ...]
    fields: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ResourceIdentity:
    """The values object selectors are matched against."""

    group: str
    version: str
    kind: str
    name: str
    namespace: str

    @classmethod
    def of(cls, resource: dict) -> ResourceIdentity:
        api_version = resource.get("apiVersion")
        api_version = api_version if isinstance(api_version, str) else ""
        group, _, version = api_version.rpartition("/")
        meta = resource.get("metadata")
        meta = meta if isinstance(meta, dict) else {}
        return cls(group, version, _str(resource.get("kind")), _str(meta.get("name")),
                   _str(meta.get("namespace")))


def _str(value: object) -> str:
    return value if isinstance(value, str) else ""


_EVERY_KIND = (
    "metadata.managedFields.*", "metadata.resourceVersion", "metadata.selfLink",
    "metadata.annotations.kubectl.kubernetes.io/last-applied-configuration",
    "metadata.annotations.namespace", "metadata.creationTimestamp", "metadata.generation",
    "metadata.uid", "metadata.finalizers", "metadata.finalizers*",
    "metadata.labels.app.kubernetes.io/instance", "metadata.namespace",
    "metadata.annotations.control-plane.alpha.kubernetes.io/leader",
    "metadata.annotations.deprecated.daemonset.template.generation",
    "metadata.annotations.deployment.kubernetes.io/revision", "status",
    "spec.containers.*.imagePullPolicy", "spec.containers.*.terminationMessagePath",
    "spec.containers.*.terminationMessagePolicy", "spec.dnsPolicy", "spec.restartPolicy",
    "spec.schedulerName", "spec.terminationGracePeriodSeconds",
    *(f"metadata.annotations.{DEFAULT_DOMAIN}/{name}" for name in
      ("resourceBundleRef", "signature", "message", "certificate", "bundle")),
)

_PER_KIND: tuple[tuple[ObjectSelector, tuple[str, ...]], ...] = (
    (ObjectSelector(kind="Pod"), (
        "spec.volumes.*.name", "spec.volumes.*.projected.*", "spec.volumes.*.configMap.defaultMode",
        "spec.containers.*.volumeMounts.*", "spec.tolerations.*", "spec.enableServiceLinks",
        "spec.preemptionPolicy", "spec.priority", "spec.serviceAccount")),
    (ObjectSelector(kind="Deployment"), (
        "metadata.annotations.deployment.kubernetes.io/revision", "spec.progressDeadlineSeconds",
        "spec.revisionHistoryLimit", "spec.strategy.*", "spec.template.metadata.creationTimestamp",
        "spec.containers.*.ports.*.protocol", "spec.containers.*.resources",
        "spec.securityContext")),
    (ObjectSelector(kind="DaemonSet"), (
        "metadata.annotations.deprecated.daemonset.template.generation",)),
    (ObjectSelector(kind="Service"), (
        "spec.ports.*.nodePort", "spec.clusterIP", "spec.clusterIPs.0", "spec.sessionAffinity",
        "spec.type", "spec.ipFamilies.*", "spec.ipFamilyPolicy", "spec.internalTrafficPolicy")),
    (ObjectSelector(kind="ServiceAccount"), ("secrets.*.name", "imagePullSecrets.*.name")),
    (ObjectSelector(kind="CustomResourceDefinition"), (
        "spec.conversion.strategy", "spec.names.listKind")),
    (ObjectSelector(kind="ClusterPolicy"), (
        "metadata.annotations.pod-policies.kyverno.io/autogen-controllers", "spec.failurePolicy",
        "spec.background", "spec.validationFailureAction")),
    (ObjectSelector(kind="Policy"), (
        "metadata.annotations.pod-policies.kyverno.io/autogen-controllers", "spec.failurePolicy",
        "spec.background", "spec.validationFailureAction")),
    (ObjectSelector(group="route.openshift.io", kind="Route"), ("spec.host",)),
)


def default_bindings(domain: str) -> tuple[IgnoreBinding, ...]:
    """The always-applied bindings, including the annotation masks of ``domain``."""
    masks = tuple(f"metadata.annotations.{domain}/{name}*" for name in SIGNATURE_ANNOTATIONS)
    return (IgnoreBinding((), masks + _EVERY_KIND),
            *(IgnoreBinding((selector,), fields) for selector, fields in _PER_KIND))


def selector_value_matches(pattern: str, value: str) -> bool:
    """sigstore's object-selector rule (not Kyverno's wildcard match, spec 19.8)."""
    pattern = pattern.strip()
    if pattern in ("", "*"):
        return True
    if pattern == "-":
        return value == ""
    if pattern.endswith("*"):
        return value.startswith(pattern.rstrip("*"))
    if pattern == value:
        return True
    if "," in pattern:
        return any(selector_value_matches(alt, value) for alt in pattern.split(","))
    return False


def selector_matches(selector: ObjectSelector, resource: ResourceIdentity) -> bool:
    return (selector_value_matches(selector.group, resource.group)
            and selector_value_matches(selector.version, resource.version)
            and selector_value_matches(selector.kind, resource.kind)
            and selector_value_matches(selector.name, resource.name)
            and selector_value_matches(selector.namespace, resource.namespace))


def applicable_fields(bindings: Iterable[IgnoreBinding], resource: ResourceIdentity) -> tuple[str, ...]:
    """The field patterns of every binding that applies to ``resource``, in order, deduplicated."""
    out: dict[str, None] = {}
    for binding in bindings:
        if not binding.objects or any(selector_matches(s, resource) for s in binding.objects):
            out.update(dict.fromkeys(binding.fields))
    return tuple(out)


@lru_cache(maxsize=4096)
def _field_regex(pattern: str) -> GoRegexp | None:
    try:
        return compile_re2(pattern.replace("*", ".*"))
    except RegexError:
        return None


def field_matches(field: str, path: str) -> bool:
    """Whether the ignore ``field`` covers the diff ``path`` (an implicit trailing ``*``)."""
    pattern = field + "*"
    if path == pattern or pattern == "*":
        return True
    regex = _field_regex(pattern)
    return regex is not None and regex.search(path) is not None


def is_ignored(path: str, fields: Iterable[str]) -> bool:
    return any(field_matches(f, path) for f in fields)
