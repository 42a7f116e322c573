"""``validate.manifests``: keyed verification of signed Kubernetes manifests (spec 19).

The rule evaluates its attestor sets in order (AND); a set passes once ``count`` entries
verified; entry errors dominate failures when the count is not reached. An entry is
checked in the order of spec 19.6, which decides between ``fail`` (unsigned, no document
of the kind, no signature, signature valid but a difference remains) and ``error`` (the
signature does not verify, unusable key, annotations mismatch, undecodable message, or a
verifier that needs network services: keyless, certificates, OCI bundles, key
references, transparency-log signature sets). Messages are Kyverno's, byte for byte.

Kyverno reuses one options object for every entry of a rule evaluation, so a ``keyless``
subject, ``certificates`` settings or an OCI ``repository`` leak into later entries; the
offline-visible consequences of those leaks are reproduced (spec 19.4).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from scanner.engine.golang.fmt import to_json
from scanner.engine.manifests.diff import DiffItem, compare, diff_json
from scanner.engine.manifests.ignore import ResourceIdentity, applicable_fields
from scanner.engine.manifests.message import (
    DecodedMessage,
    DocumentLoader,
    SignatureSet,
    annotations_of,
    decode_message,
    select_candidates,
    signature_sets,
)
from scanner.engine.manifests.signature import signature_bytes, signature_failure
from scanner.engine.manifests.spec import (
    CompiledEntry,
    CompiledManifests,
    CompiledSet,
    compile_manifests_rule,
    validate_manifests_spec,
)
from scanner.engine.types import RuleStatus

__all__ = ["CompiledManifests", "ManifestsResult", "compile_manifests_rule", "evaluate_manifests",
           "validate_manifests_spec"]

NOT_FOUND = "YAML manifest not found for this resource: "
SIGNED_BY_KEY = "singed by a valid signer: "  # sic, Kyverno's text
_NO_LOADER = "not supported: no YAML loader is available to read the signed message"
_OFFLINE_SET = ("not supported offline: the signature set carries a Rekor bundle or certificate "
                "(transparency-log verification needs network access)")
_OFFLINE_VERIFIER = {
    "keyless": "not supported offline: keyless verification needs Fulcio and Rekor",
    "certificates": "not supported offline: certificate verification needs the transparency log",
    "none": "not supported: the attestor entry has no keys, certificates, keyless or attestor",
}
_LEAKED_CERTIFICATES = ("not supported offline: the certificates settings of an earlier entry "
                        "apply to this entry")

Kind = Literal["pass", "fail", "error"]


@dataclass(frozen=True, slots=True)
class ManifestsResult:
    """The rule's outcome; ``status`` ``None`` means no result (DELETE, no attestor set)."""

    status: RuleStatus | None
    message: str


@dataclass(frozen=True, slots=True)
class _Outcome:
    kind: Kind
    text: str


@dataclass(frozen=True, slots=True)
class _Manifest:
    """What steps 4-8 found for the resource, independent of the entry."""

    blob: bytes
    diff: tuple[DiffItem, ...]
    sets: tuple[SignatureSet, ...]


def _trivial_subject(subject: str) -> bool:
    return subject in ("", "-") or set(subject) == {"*"}


class _Evaluation:
    """State of one rule evaluation (including Kyverno's settings shared between entries)."""

    def __init__(self, compiled: CompiledManifests, resource: dict,
                 load_documents: DocumentLoader | None) -> None:
        self.compiled, self.resource, self.load_documents = compiled, resource, load_documents
        self.annotations = annotations_of(resource)
        self.ignore_fields = applicable_fields(compiled.ignore, ResourceIdentity.of(resource))
        self.repository = (compiled.repository
                           or self.annotations.get(f"{compiled.domain}/resourceBundleRef", ""))
        self.subject = ""
        self.certificates = False
        self._manifest: _Manifest | _Outcome | None = None

    def run(self) -> ManifestsResult:
        passed = []
        for i, attestor_set in enumerate(self.compiled.attestors):
            outcome = self.evaluate_set(attestor_set, f".attestors[{i}]")
            if outcome.kind == "error":
                return ManifestsResult(RuleStatus.ERROR,
                                       f"error occurred during manifest verification: {outcome.text}")
            if outcome.kind == "fail":
                return ManifestsResult(RuleStatus.FAIL, outcome.text)
            passed.append(outcome.text)
        return ManifestsResult(RuleStatus.PASS, "verified manifest signatures; " + ",".join(passed))

    def evaluate_set(self, attestor_set: CompiledSet, path: str) -> _Outcome:
        entries = attestor_set.entries
        required = attestor_set.count if attestor_set.count is not None else len(entries)
        verified, errors, ok, failed = 0, [], [], []
        for i, entry in enumerate(entries):
            entry_path = f"{path}.entries[{i}]"
            if entry.nested is not None or entry.nested_problem:
                outcome = self._nested(entry, entry_path)
            else:
                outcome = self.evaluate_entry(entry, entry_path)
            if outcome.kind == "pass":
                verified += 1
                ok.append(outcome.text)
            elif outcome.kind == "fail":
                failed.append(outcome.text)
            else:
                errors.append(outcome.text)
            if verified >= required:
                return _Outcome("pass", f"manifest verification succeeded; verifiedCount {verified}; "
                                        f"requiredCount {required}; message {','.join(ok)}")
        if errors:
            return _Outcome("error", "; ".join(errors))
        return _Outcome("fail", f"manifest verification failed; verifiedCount {verified}; "
                                f"requiredCount {required}; message {','.join(failed)}")

    def _nested(self, entry: CompiledEntry, path: str) -> _Outcome:
        if entry.nested is None:
            return _Outcome("error", f"failed to unmarshal nested attestor {path}: {entry.nested_problem}")
        nested_path = path + ".attestor"
        outcome = self.evaluate_set(entry.nested, nested_path)
        if outcome.kind == "error":
            return _Outcome("error", f"failed to verify signature; {nested_path}: {outcome.text}")
        return outcome

    def evaluate_entry(self, entry: CompiledEntry, path: str) -> _Outcome:
        """Steps 1-11 of spec 19.6 for an entry that is not a nested set."""
        for key, expected in entry.annotations:
            actual = self.annotations.get(key, "")
            if actual != expected:
                return _Outcome("error", f"annotations mismatch: {actual} does not match expected "
                                         f"value {expected} for key {key}")
        if entry.verifier == "keyless":  # settings kept for every later entry (spec 19.4)
            self.subject = "" if _trivial_subject(entry.subject) else entry.subject
        elif entry.verifier == "certificates":
            self.certificates = True
        if entry.repository:
            self.repository = entry.repository
        p = path if entry.verifier == "none" else f"{path}.{entry.verifier}"
        manifest = self._find_manifest()
        if isinstance(manifest, _Outcome):
            return _Outcome(manifest.kind, f"{p}: {manifest.text}")
        if not manifest.sets:
            return _Outcome("fail", f"{p}: failed to verify signature: signature not found")
        problem = self._verifier_problem(entry)
        if problem:
            return _Outcome("error", f"{p}: failed to verify signature: {problem}")
        trials = self._try_sets(entry, manifest)
        if trials:
            return _Outcome("error", f"{p}: failed to verify signature: verification failed for "
                                     f"{len(manifest.sets)} signature. all trials: {to_json(trials)}")
        if manifest.diff:
            return _Outcome("fail", f"{p}: failed to verify signature. diff found; "
                                    f"{diff_json(manifest.diff)}")
        if self.subject:  # a leaked keyless subject rejects the (empty) key signer
            return _Outcome("fail", f"{p}: failed to verify signature.")
        return _Outcome("pass", SIGNED_BY_KEY)

    def _verifier_problem(self, entry: CompiledEntry) -> str:
        if entry.verifier != "keys":
            return _OFFLINE_VERIFIER[entry.verifier]
        if self.certificates:
            return _LEAKED_CERTIFICATES
        return entry.key_problem

    def _try_sets(self, entry: CompiledEntry, manifest: _Manifest) -> list[str]:
        """Empty when a set verifies; otherwise one trial text per set (spec 19.3.3)."""
        assert entry.key is not None
        trials = []
        total = len(manifest.sets)
        for number, sig_set in enumerate(manifest.sets, 1):
            if sig_set.has_bundle or sig_set.has_certificate:
                why: str | None = _OFFLINE_SET
            else:
                why = signature_failure(entry.key, signature_bytes(sig_set.signature), manifest.blob)
            if why is None:
                return []
            trials.append(f"[publickey 1/1] [signature {number}/{total}] error: "
                          f"cosign.VerifyBlobCmd.Exec() returned an error: {why}")
        return trials

    def _find_manifest(self) -> _Manifest | _Outcome:
        """Steps 4-7 (the repository check first: it depends on leaked settings)."""
        if self.repository:
            return _Outcome("error", f"{NOT_FOUND}not supported offline: OCI resource bundle "
                                     f"{self.repository}")
        if self._manifest is None:
            self._manifest = self._read_manifest()
        return self._manifest

    def _read_manifest(self) -> _Manifest | _Outcome:
        domain = self.compiled.domain
        message = self.annotations.get(f"{domain}/message")
        if message is None:
            return _Outcome("fail", f"{NOT_FOUND}message not found")
        if self.load_documents is None:
            return _Outcome("error", f"{NOT_FOUND}{_NO_LOADER}")
        decoded: DecodedMessage = decode_message(message, self.load_documents)
        if decoded.error:
            return _Outcome("error", decoded.error)
        candidates = select_candidates(decoded.documents, self.resource, self.ignore_fields)
        if not candidates:
            return _Outcome("fail", f"{NOT_FOUND}failed to find a YAML manifest in the gzipped message")
        first: list[DiffItem] | None = None
        for candidate in candidates:
            diff = compare(candidate, self.resource, self.ignore_fields)
            if not diff:
                first = []
                break
            if first is None:
                first = diff
        return _Manifest(decoded.blob, tuple(first or ()),
                         tuple(signature_sets(self.annotations, domain)))


def evaluate_manifests(
    compiled: CompiledManifests,
    resource: dict,
    *,
    rule_name: str,
    operation: str,
    load_documents: DocumentLoader | None = None,
) -> ManifestsResult:
    """One manifests rule x one resource (as the CLI loaded it: namespace defaulted).

    ``load_documents`` turns the signed YAML text into documents (plain data); it is
    injected because the engine has no YAML parser. ``rule_name`` names the rule the
    result belongs to; Kyverno's messages for this sub-rule do not include it.
    """
    del rule_name  # the messages of this sub-rule never name the rule
    if operation == "DELETE" or not compiled.attestors:
        return ManifestsResult(None, "")
    return _Evaluation(compiled, resource, load_documents).run()
