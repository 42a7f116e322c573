"""Signed audit reports: an Ed25519 signature over a report file's digest, its audit content
digest and its run's chain digest, in a detached signature file (``<report>.sig``).

The signature file is JSON: the signed statement (``schema``, ``algorithm``, ``run_id``,
``report_sha256``, ``content_digest``, ``chain_digest``), the signer's public key and its
id (``key_id``: SHA-256 of the raw public key), and ``signature`` (base64 of the Ed25519
signature of the statement's canonical JSON: keys sorted, no whitespace, UTF-8). Checking it
needs no database and no network: the report file, the signature file and, to know who
signed, the signer's public key.

Keys are PEM files (PKCS#8 private keys, SubjectPublicKeyInfo public keys), as made by
``openssl genpkey -algorithm ed25519 -out audit.key`` and ``openssl pkey -in audit.key -pubout``.
A key's text never appears in an error, a report or a signature file: errors name where the
key was read from.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from scanner.errors import Location, ReportError
from scanner.report.audit import DIGEST_KEY, audit_content_digest, audit_document
from scanner.report.data import ReportData

SIGNATURE_SCHEMA = "urn:scanner:audit-signature:1"
SIGNATURE_SUFFIX = ".sig"
ALGORITHM = "ed25519"
STATEMENT_KEYS = ("schema", "algorithm", "run_id", "report_sha256", "content_digest", "chain_digest")
CHAIN_KEY = "chain_digest"


def _canonical(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def _raw(key: Ed25519PublicKey) -> bytes:
    return key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def key_id(key: Ed25519PublicKey) -> str:
    """``sha256:<hex>`` of the raw public key: how a signature names its signer."""
    return "sha256:" + hashlib.sha256(_raw(key)).hexdigest()


def _kind(key: object) -> str:
    name = type(key).__name__.lstrip("_")
    return name.removesuffix("PrivateKey").removesuffix("PublicKey") or name


def load_private_key(pem: bytes, where: str) -> Ed25519PrivateKey:
    """The Ed25519 private key in ``pem`` (read from ``where``, which errors name)."""
    try:
        key = serialization.load_pem_private_key(pem, password=None)
    except (ValueError, TypeError):
        raise ReportError(f"signing key from {where} is not an unencrypted PEM private key "
                          "(make one with `openssl genpkey -algorithm ed25519`)") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise ReportError(f"signing key from {where}: not supported: {_kind(key)} keys (use an Ed25519 key)")
    return key


def load_public_key(pem: bytes, where: str) -> Ed25519PublicKey:
    """The Ed25519 public key in ``pem``: a public key, or the public half of a private key."""
    try:
        key: object = serialization.load_pem_public_key(pem)
    except (ValueError, TypeError):
        return load_private_key(pem, where).public_key()
    if not isinstance(key, Ed25519PublicKey):
        raise ReportError(f"public key from {where}: not supported: {_kind(key)} keys (use an Ed25519 key)")
    return key


def _digests(report: bytes) -> tuple[str, str]:
    """The audit content digest and chain digest a report states (audit JSON: its keys)."""
    try:
        document = json.loads(report)
    except ValueError:
        return "", ""
    if not isinstance(document, dict):
        return "", ""
    return str(document.get(DIGEST_KEY, "")), str(document.get(CHAIN_KEY, ""))


def sign_report(report: bytes, *, run_id: int, content_digest: str, chain_digest: str,
                key: Ed25519PrivateKey) -> str:
    """The signature file's text for the rendered ``report`` (its bytes as written)."""
    statement = {"schema": SIGNATURE_SCHEMA, "algorithm": ALGORITHM, "run_id": run_id,
                 "report_sha256": "sha256:" + hashlib.sha256(report).hexdigest(),
                 "content_digest": content_digest, "chain_digest": chain_digest}
    public = key.public_key()
    document = {**statement, "key_id": key_id(public),
                "public_key": base64.b64encode(_raw(public)).decode("ascii"),
                "signature": base64.b64encode(key.sign(_canonical(statement))).decode("ascii")}
    return json.dumps(document, indent=2, sort_keys=True) + "\n"


@dataclass(frozen=True, slots=True)
class Verification:
    """What checking a signed report found: ``problems`` is empty when it verifies.
    ``trusted`` says whether the signer's key was the one given (not only the one it names)."""

    run_id: int | None
    key_id: str
    trusted: bool
    content_digest: str
    chain_digest: str
    problems: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return not self.problems


def verify_report(report: bytes, signature: bytes, trusted: Ed25519PublicKey | None = None) -> Verification:
    """Check ``report`` against its ``signature`` file (and the signer's key, when given)."""
    try:
        document = json.loads(signature)
        statement = {key: document[key] for key in STATEMENT_KEYS}
        named = base64.b64decode(document["public_key"], validate=True)
        sealed = base64.b64decode(document["signature"], validate=True)
    except (ValueError, KeyError, TypeError) as e:
        return Verification(None, "", False, "", "", (f"the signature file is not a scanner audit signature ({e})",))
    problems = []
    if statement["schema"] != SIGNATURE_SCHEMA or statement["algorithm"] != ALGORITHM:
        problems.append(f"not supported: signature schema {statement['schema']!r}, algorithm "
                        f"{statement['algorithm']!r}")
    key = trusted
    if key is None:
        try:
            key = Ed25519PublicKey.from_public_bytes(named)
        except ValueError:
            problems.append("the signature file's public key is not an Ed25519 key")
    elif _raw(key) != named:
        problems.append(f"signed by key {document.get('key_id', '?')}, not by the key given ({key_id(key)})")
    if key is not None and not problems:
        try:
            key.verify(sealed, _canonical(statement))
        except InvalidSignature:
            problems.append("the signature does not match its statement (the signature file was edited, "
                            "or made with another key)")
    digest = "sha256:" + hashlib.sha256(report).hexdigest()
    if digest != statement["report_sha256"]:
        problems.append(f"the report file changed since it was signed: its SHA-256 is {digest}, "
                        f"the signature covers {statement['report_sha256']}")
    stated_content, stated_chain = _digests(report)
    if stated_content:
        if audit_content_digest(json.loads(report)) != stated_content:
            problems.append("the audit record's content does not match its content_digest")
        if (stated_content, stated_chain) != (statement["content_digest"], statement["chain_digest"]):
            problems.append("the audit record's digests are not the ones signed")
    elif statement["content_digest"].encode() not in report:
        problems.append("the report does not show the signed content digest")
    return Verification(run_id=statement["run_id"], key_id=str(document.get("key_id", "")),
                        trusted=trusted is not None, content_digest=statement["content_digest"],
                        chain_digest=statement["chain_digest"], problems=tuple(problems))


AUDIT_FORMATS = ("audit-json", "audit-html")


def read_signing_key(file: str | None = None, env: str | None = None,
                     environ: dict[str, str] | None = None) -> Ed25519PrivateKey:
    """The signing key from a PEM file, or from the environment variable ``env`` (its PEM text)."""
    if file is not None:
        where = f"file {file}"
        try:
            with open(file, "rb") as handle:
                pem = handle.read()
        except OSError as e:
            raise ReportError(f"cannot read the signing key {where}: {e.strerror or type(e).__name__}") from None
        return load_private_key(pem, where)
    if env is None:
        raise ReportError("no signing key named (a file or an environment variable)")
    text = (os.environ if environ is None else environ).get(env, "")
    if not text.strip():
        raise ReportError(f"the signing key environment variable {env} is not set")
    return load_private_key(text.encode("utf-8"), f"environment variable {env}")


def signing_key_option(value: str) -> Ed25519PrivateKey:
    """The key ``--sign`` names: ``env:NAME`` (an environment variable) or a PEM file's path."""
    if value.startswith("env:"):
        return read_signing_key(env=value[len("env:"):])
    return read_signing_key(file=value)


def write_signature(report: Path, data: ReportData, key: Ed25519PrivateKey) -> Path:
    """Sign the audit report written at ``report``: its signature file, ``<report>.sig``."""
    try:
        written = report.read_bytes()
    except OSError as e:
        raise ReportError(f"cannot read the report to sign it: {e.strerror or type(e).__name__}",
                          Location(path=str(report))) from e
    content, _ = _digests(written)
    text = sign_report(written, run_id=data.run.run_id, content_digest=content or audit_document(data)[DIGEST_KEY],
                       chain_digest=data.run.chain_digest, key=key)
    target = report.with_name(report.name + SIGNATURE_SUFFIX)
    try:
        target.write_text(text, encoding="utf-8")
    except OSError as e:
        raise ReportError(f"cannot write the report's signature: {e.strerror or type(e).__name__}",
                          Location(path=str(target))) from e
    return target
