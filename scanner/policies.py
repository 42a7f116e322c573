"""Find and load policy files -> compiled engine policies, with file:line locations."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from scanner.engine.exceptions import PolicyException, is_exception_document, parse_exception
from scanner.engine.policy import InvalidPolicyError, Policy, parse_policy
from scanner.errors import Location, ManifestError, PolicyError
from scanner.yamldoc import YamlDocument, iter_documents

YAML_SUFFIXES = (".yaml", ".yml", ".json")
WHAT_IS_A_POLICY = "a policy is a kyverno.io ClusterPolicy or Policy document in a .yaml, .yml or .json file"


# policy kinds of other engines (Kyverno's CEL policies, Kubernetes admission policies): recognised so
# that they are reported as not supported, never passed over in silence
UNSUPPORTED_POLICY_KINDS = {
    "policies.kyverno.io": ("ValidatingPolicy", "NamespacedValidatingPolicy", "ImageValidatingPolicy",
                            "NamespacedImageValidatingPolicy", "MutatingPolicy", "NamespacedMutatingPolicy",
                            "GeneratingPolicy", "NamespacedGeneratingPolicy", "DeletingPolicy",
                            "NamespacedDeletingPolicy"),
    "admissionregistration.k8s.io": ("ValidatingAdmissionPolicy", "MutatingAdmissionPolicy"),
}


@dataclass(frozen=True, slots=True)
class UnsupportedPolicy:
    """A policy of a kind this engine does not evaluate, where it was found."""

    api_version: str
    kind: str
    name: str
    location: Location

    @property
    def message(self) -> str:
        return (f"not supported: {self.kind} {self.name!r} ({self.api_version}) is not evaluated; "
                "only kyverno.io ClusterPolicy and Policy documents are")


@dataclass(frozen=True, slots=True)
class NotEvaluated:
    """A valid policy a scan does not evaluate (it has no validate rule), where it was found."""

    kind: str
    name: str
    location: Location
    reason: str

    @property
    def message(self) -> str:
        return f"not evaluated: {self.kind} {self.name!r}: {self.reason}"


# the rule types of Kyverno besides validate; a policy of only these gives no validate result
OTHER_RULE_TYPES = ("mutate", "generate", "verifyImages")


def not_evaluated_reason(policy: Policy) -> str | None:
    """Why a scan gives ``policy`` no result whatever the resources (None when it has a validate
    rule): its rules are all mutate, generate or verifyImages rules."""
    if any(rule.handler is not None for rule in policy.rules):
        return None
    raw_rules = policy.raw.get("spec", {}).get("rules") or []
    kinds = [t for t in OTHER_RULE_TYPES if any(isinstance(r, dict) and r.get(t) for r in raw_rules)]
    has = f"only {' and '.join(kinds)} rules" if kinds else "no rules"
    return f"it has no validate rule ({has}); a scan evaluates validate rules only"


@dataclass(frozen=True, slots=True)
class DuplicatePolicy:
    """Two or more different policies of one name: a cluster holds one ClusterPolicy (or one
    Policy of a namespace) per name, the last applied, so which one is meant is not known."""

    ref: str
    locations: tuple[Location, ...]

    def error(self) -> PolicyError:
        others = ", ".join(str(loc) for loc in self.locations[1:])
        return PolicyError(f"policy {self.ref!r} is defined {len(self.locations)} times with different content "
                           f"(also at {others}); a cluster holds one policy of a name, so none of them is "
                           "evaluated", self.locations[0])


class PathAccepts(Protocol):
    """Which files under a policy folder are read (include/exclude globs of relative paths)."""

    def accepts(self, relpath: str) -> bool: ...


@dataclass(slots=True)
class PolicySet:
    """Policies loaded from files; invalid ones are kept as located errors, never dropped.
    ``locations[i]`` is where ``policies[i]`` was found."""

    policies: list[Policy] = field(default_factory=list)
    errors: list[PolicyError] = field(default_factory=list)
    invalid_names: set[str] = field(default_factory=set)
    unsupported: list[UnsupportedPolicy] = field(default_factory=list)
    locations: list[Location] = field(default_factory=list)

    def location_of(self, index: int) -> Location:
        return self.locations[index] if index < len(self.locations) else Location(None)

    def duplicates(self) -> list[DuplicatePolicy]:
        """Names given to policies of different content (the same content twice is one policy)."""
        found: dict[str, list[int]] = {}
        for i, policy in enumerate(self.policies):
            found.setdefault(policy.key, []).append(i)
        out = []
        for ref, indexes in found.items():
            if len({self.policies[i].digest for i in indexes}) > 1:
                out.append(DuplicatePolicy(ref, tuple(self.location_of(i) for i in indexes)))
        return out

    def without(self, refs: set[str]) -> None:
        """Leave out the policies named ``refs`` (and one of each repeated identical policy)."""
        kept, locations, seen = [], [], set()
        for i, policy in enumerate(self.policies):
            if policy.key in refs or policy.key in seen:
                continue
            seen.add(policy.key)
            kept.append(policy)
            locations.append(self.location_of(i))
        self.policies, self.locations = kept, locations

    def nothing_found(self, places: str) -> str:
        """The message when ``places`` held no policy, naming the kinds found but not supported."""
        kinds = sorted({u.kind for u in self.unsupported})
        found = f" (found only kinds not supported: {', '.join(kinds)})" if kinds else ""
        return f"no policies found in {places}{found}: {WHAT_IS_A_POLICY}"

    def extend(self, other: PolicySet) -> None:
        self.policies += other.policies
        self.locations += [other.location_of(i) for i in range(len(other.policies))]
        self.errors += other.errors
        self.invalid_names |= other.invalid_names
        self.unsupported += other.unsupported


def _unsupported(doc: YamlDocument, data: dict) -> UnsupportedPolicy | None:
    api_version, kind = str(data.get("apiVersion") or ""), str(data.get("kind") or "")
    if kind not in UNSUPPORTED_POLICY_KINDS.get(api_version.rpartition("/")[0], ()):
        return None
    meta = data.get("metadata")
    name = str(meta.get("name") or "") if isinstance(meta, dict) else ""
    return UnsupportedPolicy(api_version, kind, name, doc.locate(""))


def iter_yaml_files(paths: Iterable[str | os.PathLike[str]], accept: PathAccepts | None = None) -> Iterator[Path]:
    """Files named directly, and YAML/JSON files under directories (recursively, sorted); hidden
    files and folders under a directory are left out, as the Kyverno CLI leaves them out.
    ``accept`` picks files by their ``/``-separated path relative to the folder named (a file
    named directly, by its base name)."""
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            for dirpath, dirnames, filenames in os.walk(path):
                dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
                for name in sorted(filenames):
                    if name.endswith(YAML_SUFFIXES) and not name.startswith("."):
                        file = Path(dirpath) / name
                        if accept is None or accept.accepts(file.relative_to(path).as_posix()):
                            yield file
        elif accept is None or accept.accepts(path.name):
            yield path


def _located(exc: InvalidPolicyError, doc: YamlDocument, what: str = "policy") -> list[PolicyError]:
    out = []
    for pointer, message in exc.problems:
        loc = doc.locate(pointer)
        out.append(PolicyError(f"invalid {what} {exc.policy_name}: {message}", loc))
    return out


def _policy_documents(doc: YamlDocument) -> Iterator[tuple[YamlDocument, str]]:
    """Policy documents, expanding ``kind: List`` (items keep their own positions)."""
    data = doc.data
    if isinstance(data, dict) and data.get("kind") == "List" and isinstance(data.get("items"), list):
        for i, item in enumerate(data["items"]):
            sub = YamlDocument(item, doc.path, doc.index, doc.line, doc.node)
            yield sub, f"/items/{i}"
    else:
        yield doc, ""


def load_policy_text(text: str | bytes, path: str) -> PolicySet:
    """Policies in one file's text; other documents (tests, resources, values) are passed over."""
    result = PolicySet()
    try:
        documents = list(iter_documents(text, path, keep_nodes=True))
    except ManifestError as exc:
        result.errors.append(PolicyError(exc.message, exc.location))
        return result
    for doc in documents:
        for sub, prefix in _policy_documents(doc):
            data = sub.data
            if not isinstance(data, dict) or data.get("kind") not in ("ClusterPolicy", "Policy") or not str(
                data.get("apiVersion", "")
            ).startswith("kyverno.io/"):
                unsupported = _unsupported(sub, data) if isinstance(data, dict) else None
                if unsupported is not None:
                    result.unsupported.append(unsupported)
                continue
            try:
                result.policies.append(parse_policy(data))
                result.locations.append(doc.locate(prefix))
            except InvalidPolicyError as exc:
                shifted = InvalidPolicyError(exc.policy_name, [(prefix + p, m) for p, m in exc.problems])
                result.errors.extend(_located(shifted, doc))
                meta = data.get("metadata")
                result.invalid_names.add(str(meta.get("name") or "") if isinstance(meta, dict) else "")
    return result


STDIN = "-"  # a path that stands for the standard input (read by the caller, given as ``stdin``)


def load_policies(paths: Iterable[str | os.PathLike[str]], stdin: bytes | None = None,
                  accept: PathAccepts | None = None) -> PolicySet:
    """Load every policy under ``paths`` (``-``: the ``stdin`` text; ``accept``: the files read
    under a folder); unreadable files become located errors."""
    result = PolicySet()
    for path in iter_yaml_files(paths, accept):
        if str(path) == STDIN and stdin is not None:
            result.extend(load_policy_text(stdin, "<stdin>"))
            continue
        try:
            text = path.read_bytes()
        except OSError as exc:
            result.errors.append(PolicyError(f"cannot read policy file: {exc.strerror}", Location(str(path))))
            continue
        result.extend(load_policy_text(text, str(path)))
    return result


def load_exceptions(paths: Iterable[str | os.PathLike[str]]) -> tuple[list[PolicyException], list[PolicyError]]:
    """PolicyExceptions in files and folders; invalid ones become located errors."""
    found: list[PolicyException] = []
    errors: list[PolicyError] = []
    for path in iter_yaml_files(paths):
        try:
            documents = list(iter_documents(path.read_bytes(), str(path), keep_nodes=True))
        except OSError as exc:
            errors.append(PolicyError(f"cannot read exception file: {exc.strerror}", Location(str(path))))
            continue
        except ManifestError as exc:
            errors.append(PolicyError(exc.message, exc.location))
            continue
        for doc in documents:
            for sub, prefix in _policy_documents(doc):
                if not is_exception_document(sub.data):
                    continue
                try:
                    found.append(parse_exception(sub.data))
                except InvalidPolicyError as exc:
                    shifted = InvalidPolicyError(exc.policy_name, [(prefix + p, m) for p, m in exc.problems])
                    errors.extend(_located(shifted, doc, "PolicyException"))
    return found, errors
