"""Find and load policy files -> compiled engine policies, with file:line locations."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

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


@dataclass(slots=True)
class PolicySet:
    """Policies loaded from files; invalid ones are kept as located errors, never dropped."""

    policies: list[Policy] = field(default_factory=list)
    errors: list[PolicyError] = field(default_factory=list)
    invalid_names: set[str] = field(default_factory=set)
    unsupported: list[UnsupportedPolicy] = field(default_factory=list)

    def nothing_found(self, places: str) -> str:
        """The message when ``places`` held no policy, naming the kinds found but not supported."""
        kinds = sorted({u.kind for u in self.unsupported})
        found = f" (found only kinds not supported: {', '.join(kinds)})" if kinds else ""
        return f"no policies found in {places}{found}: {WHAT_IS_A_POLICY}"

    def extend(self, other: PolicySet) -> None:
        self.policies += other.policies
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


def iter_yaml_files(paths: Iterable[str | os.PathLike[str]]) -> Iterator[Path]:
    """Files named directly, and YAML/JSON files under directories (recursively, sorted); hidden
    files and folders under a directory are left out, as the Kyverno CLI leaves them out."""
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            for dirpath, dirnames, filenames in os.walk(path):
                dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
                for name in sorted(filenames):
                    if name.endswith(YAML_SUFFIXES) and not name.startswith("."):
                        yield Path(dirpath) / name
        else:
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
            except InvalidPolicyError as exc:
                shifted = InvalidPolicyError(exc.policy_name, [(prefix + p, m) for p, m in exc.problems])
                result.errors.extend(_located(shifted, doc))
                meta = data.get("metadata")
                result.invalid_names.add(str(meta.get("name") or "") if isinstance(meta, dict) else "")
    return result


STDIN = "-"  # a path that stands for the standard input (read by the caller, given as ``stdin``)


def load_policies(paths: Iterable[str | os.PathLike[str]], stdin: bytes | None = None) -> PolicySet:
    """Load every policy under ``paths`` (``-``: the ``stdin`` text); unreadable files become
    located errors."""
    result = PolicySet()
    for path in iter_yaml_files(paths):
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
