"""The ``validate.manifests`` block: validity checks and compilation (spec 19.1, 19.3.1).

Compilation parses every inline public key once and expands multi-key ``publicKeys``
strings the way Kyverno does (one entry per ``-----END PUBLIC KEY-----``; every piece after
the first keeps the preceding line break and is therefore unusable). A nested ``attestor``
is free-form in Kyverno's schema, so its shape problems are not policy errors: they become
an ``error`` result when the entry is reached.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, TypeGuard

from scanner.engine.manifests.ignore import IgnoreBinding, ObjectSelector, default_bindings
from scanner.engine.manifests.message import domain_of
from scanner.engine.manifests.signature import (
    JUDGE_ERROR,
    PEM_PUBLIC_KEY,
    PEM_PUBLIC_KEY_END,
    PGP_PUBLIC_KEY,
    ParsedKey,
    parse_public_key,
)
from scanner.errors import Location, PolicyError

Problems = list[tuple[str, str]]
Verifier = Literal["keys", "certificates", "keyless", "none"]
_SELECTOR_FIELDS = ("group", "version", "kind", "name", "namespace")


@dataclass(frozen=True, slots=True)
class CompiledEntry:
    """One attestor entry. ``key_problem`` is the step-9 error tail of an unusable key."""

    verifier: Verifier
    key: ParsedKey | None = None
    key_problem: str = ""
    subject: str = ""
    annotations: tuple[tuple[str, str], ...] = ()
    repository: str = ""
    nested: CompiledSet | None = None
    nested_problem: str = ""


@dataclass(frozen=True, slots=True)
class CompiledSet:
    """An attestor set; ``count`` ``None`` means every entry must verify."""

    count: int | None
    entries: tuple[CompiledEntry, ...]


@dataclass(frozen=True, slots=True)
class CompiledManifests:
    attestors: tuple[CompiledSet, ...]
    domain: str
    ignore: tuple[IgnoreBinding, ...]
    repository: str = ""


def _is_int(value: Any) -> TypeGuard[int | float]:
    return (isinstance(value, int) and not isinstance(value, bool)) or (
        isinstance(value, float) and value.is_integer())


def _check_mapping(raw: Any, pointer: str, problems: Problems, strings: tuple[str, ...] = (),
                   booleans: tuple[str, ...] = ()) -> bool:
    if not isinstance(raw, dict):
        problems.append((pointer, "must be an object"))
        return False
    for key in strings:
        if raw.get(key) is not None and not isinstance(raw[key], str):
            problems.append((f"{pointer}/{key}", "must be a string"))
    for key in booleans:
        if raw.get(key) is not None and not isinstance(raw[key], bool):
            problems.append((f"{pointer}/{key}", "must be a boolean"))
    return True


def _check_list(raw: Any, pointer: str, problems: Problems) -> list[Any]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        problems.append((pointer, "must be a list"))
        return []
    return raw


def _check_entry(raw: Any, pointer: str, problems: Problems) -> None:
    if not _check_mapping(raw, pointer, problems, strings=("repository", "signatureAlgorithm")):
        return
    if raw.get("keys") is not None:
        _check_mapping(raw["keys"], pointer + "/keys", problems,
                       strings=("publicKeys", "kms", "signatureAlgorithm"))
    for verifier in ("certificates", "keyless"):
        if raw.get(verifier) is not None:
            _check_mapping(raw[verifier], f"{pointer}/{verifier}", problems,
                           strings=("cert", "certChain", "issuer", "subject", "roots"))
    annotations = raw.get("annotations")
    if annotations is not None and _check_mapping(annotations, pointer + "/annotations", problems):
        for key, value in annotations.items():
            if not isinstance(value, str):
                problems.append((f"{pointer}/annotations/{key}", "must be a string"))


def _check_set(raw: Any, pointer: str, problems: Problems, *, minimum: int | None = 1) -> None:
    if not _check_mapping(raw, pointer, problems):
        return
    count = raw.get("count")
    if count is not None and not _is_int(count):
        problems.append((pointer + "/count", "count must be an integer"))
    elif count is not None and minimum is not None and count < minimum:
        problems.append((pointer + "/count", f"count must be at least {minimum}"))
    for i, entry in enumerate(_check_list(raw.get("entries"), pointer + "/entries", problems)):
        _check_entry(entry, f"{pointer}/entries/{i}", problems)


def validate_manifests_spec(spec: Any) -> Problems:
    """Problems of a ``manifests`` block as (JSON pointer relative to the block, message)."""
    problems: Problems = []
    if not _check_mapping(spec, "", problems, strings=("annotationDomain", "repository")):
        return problems
    for i, attestor_set in enumerate(_check_list(spec.get("attestors"), "/attestors", problems)):
        _check_set(attestor_set, f"/attestors/{i}", problems)
    for i, binding in enumerate(_check_list(spec.get("ignoreFields"), "/ignoreFields", problems)):
        pointer = f"/ignoreFields/{i}"
        if not _check_mapping(binding, pointer, problems):
            continue
        for j, selector in enumerate(_check_list(binding.get("objects"), pointer + "/objects", problems)):
            _check_mapping(selector, f"{pointer}/objects/{j}", problems, strings=_SELECTOR_FIELDS)
        for j, field in enumerate(_check_list(binding.get("fields"), pointer + "/fields", problems)):
            if not isinstance(field, str):
                problems.append((f"{pointer}/fields/{j}", "must be a string"))
    if spec.get("dryRun") is not None:
        _check_mapping(spec["dryRun"], "/dryRun", problems, strings=("namespace",), booleans=("enable",))
    return problems


def expand_public_keys(text: str) -> list[str]:
    """One string per ``-----END PUBLIC KEY-----`` when there are several (text after the last
    marker is dropped); otherwise ``[text]``."""
    if text.count(PEM_PUBLIC_KEY_END) < 2:
        return [text]
    pieces, start = [], 0
    while (end := text.find(PEM_PUBLIC_KEY_END, start)) >= 0:
        end += len(PEM_PUBLIC_KEY_END)
        pieces.append(text[start:end])
        start = end
    return pieces


def _key_problem(text: str) -> tuple[ParsedKey | None, str]:
    if text.startswith(PEM_PUBLIC_KEY):
        key = parse_public_key(text)
        return key, "" if key is not None else JUDGE_ERROR
    if text.startswith(PGP_PUBLIC_KEY):
        return None, "not supported: PGP keys"
    reference = text.strip()
    if not reference or reference.startswith("-----BEGIN"):
        return None, JUDGE_ERROR
    shown = reference.splitlines()[0][:120]
    return None, f"not supported offline: key reference {shown!r} cannot be loaded"


def _verifier(raw: dict) -> Verifier:
    for name in ("keys", "certificates", "keyless"):
        if raw.get(name) is not None:
            return name  # type: ignore[return-value]
    return "none"


def _compile_entries(raw: dict) -> list[CompiledEntry]:
    annotations = found if isinstance(found := raw.get("annotations"), dict) else {}
    common: dict[str, Any] = {
        "annotations": tuple((str(k), str(v)) for k, v in annotations.items()),
        "repository": raw.get("repository") if isinstance(raw.get("repository"), str) else "",
    }
    if raw.get("attestor") is not None:
        nested, problem = _compile_nested(raw["attestor"])
        return [CompiledEntry("none", nested=nested, nested_problem=problem, **common)]
    verifier = _verifier(raw)
    if verifier == "keyless":
        subject = raw["keyless"].get("subject") if isinstance(raw["keyless"], dict) else ""
        return [CompiledEntry("keyless", subject=subject if isinstance(subject, str) else "", **common)]
    if verifier != "keys":
        return [CompiledEntry(verifier, **common)]
    text = raw["keys"].get("publicKeys") if isinstance(raw["keys"], dict) else None
    out = []
    for piece in expand_public_keys(text if isinstance(text, str) else ""):
        key, problem = _key_problem(piece)
        out.append(CompiledEntry("keys", key=key, key_problem=problem, **common))
    return out


def _compile_set(raw: dict) -> CompiledSet:
    count = raw.get("count")
    entries = found if isinstance(found := raw.get("entries"), list) else []
    return CompiledSet(
        int(count) if _is_int(count) and count != 0 else None,
        tuple(e for entry in entries if isinstance(entry, dict) for e in _compile_entries(entry)),
    )


def _compile_nested(raw: Any) -> tuple[CompiledSet | None, str]:
    problems: Problems = []
    _check_set(raw, "", problems, minimum=None)
    if problems:
        pointer, message = problems[0]
        return None, f"json: {pointer or 'attestor'} {message}"
    return _compile_set(raw), ""


def compile_manifests_rule(spec: dict) -> CompiledManifests:
    """Compile a valid ``manifests`` block (check it with ``validate_manifests_spec`` first)."""
    problems = validate_manifests_spec(spec)
    if problems:
        pointer, message = problems[0]
        raise PolicyError(f"invalid manifests block: {message}", Location(pointer=pointer or "/"))
    domain = domain_of(spec.get("annotationDomain"))
    extra = []
    for binding in spec.get("ignoreFields") or []:
        selectors = tuple(ObjectSelector(**{k: str(s.get(k) or "") for k in _SELECTOR_FIELDS})
                          for s in binding.get("objects") or [])
        extra.append(IgnoreBinding(selectors, tuple(binding.get("fields") or [])))
    repository = spec.get("repository")
    return CompiledManifests(
        attestors=tuple(_compile_set(s) for s in spec.get("attestors") or []),
        domain=domain,
        ignore=default_bindings(domain) + tuple(extra),
        repository=repository if isinstance(repository, str) else "",
    )
