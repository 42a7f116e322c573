"""Keyed signature checks of signed manifests, with cosign's failure texts (spec 19.3).

The digest is always SHA-256. ECDSA signatures are ASN.1 DER when they parse as an ASN.1
``SEQUENCE { r, s }`` the way Go's ``encoding/asn1`` reads it (trailing data allowed),
otherwise IEEE P1363 ``r || s``; the DER check itself is strict. RSA is PKCS #1 v1.5 only,
Ed25519 is pure Ed25519 over the blob.
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Literal

from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, padding, rsa
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

PEM_PUBLIC_KEY = "-----BEGIN PUBLIC KEY-----"
PEM_PUBLIC_KEY_END = "-----END PUBLIC KEY-----"
PGP_PUBLIC_KEY = "-----BEGIN PGP PUBLIC KEY BLOCK-----"
JUDGE_ERROR = "failed to judge signature type from public key configuration"

_PEM_BLOCK = re.compile(r"-----BEGIN PUBLIC KEY-----\r?\n(.*?)-----END PUBLIC KEY-----", re.S)
_B64_ALPHABET = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
_CURVES = frozenset({"secp224r1", "secp256r1", "secp384r1", "secp521r1"})
_MIN_RSA_BITS = 1024

KeyType = Literal["ecdsa", "rsa", "ed25519"]
PublicKey = ec.EllipticCurvePublicKey | rsa.RSAPublicKey | ed25519.Ed25519PublicKey


@dataclass(frozen=True, slots=True)
class ParsedKey:
    """An inline public key the verifier can use; equal (and hashed) by its DER bytes."""

    type: KeyType
    der: bytes
    key: PublicKey = field(compare=False)


def decode_go_base64(text: str) -> bytes:
    """Go ``base64.StdEncoding.DecodeString``: CR/LF ignored, strict alphabet and padding.

    Raises ``ValueError`` with Go's ``illegal base64 data at input byte N``.
    """
    stripped = []
    for offset, char in enumerate(text):
        if char in "\r\n":
            continue
        if char not in _B64_ALPHABET and char != "=":
            raise ValueError(f"illegal base64 data at input byte {offset}")
        stripped.append(char)
    data = "".join(stripped)
    try:
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        raise ValueError(f"illegal base64 data at input byte {_padding_offset(text)}") from None


def _padding_offset(text: str) -> int:
    """Where Go reports a padding/length problem: the first ``=`` or the end of the input."""
    pad = text.find("=")
    return pad if pad >= 0 else len(text)


def parse_public_key(text: str) -> ParsedKey | None:
    """The first ``PUBLIC KEY`` PEM block of an inline key, if it is a supported key."""
    match = _PEM_BLOCK.search(text)
    if match is None:
        return None
    try:
        der = base64.b64decode("".join(match.group(1).split()), validate=True)
        key = serialization.load_der_public_key(der)
    except (ValueError, binascii.Error, UnsupportedAlgorithm):
        return None
    if isinstance(key, ec.EllipticCurvePublicKey):
        return ParsedKey("ecdsa", der, key) if key.curve.name in _CURVES else None
    if isinstance(key, rsa.RSAPublicKey):
        return ParsedKey("rsa", der, key) if key.key_size >= _MIN_RSA_BITS else None
    if isinstance(key, ed25519.Ed25519PublicKey):
        return ParsedKey("ed25519", der, key)
    return None


def _read_length(data: bytes, pos: int) -> tuple[int, int] | None:
    """A DER length at ``pos`` (minimal form only); returns (length, next position)."""
    if pos >= len(data):
        return None
    first = data[pos]
    pos += 1
    if first < 0x80:
        return first, pos
    count = first & 0x7F
    if count == 0 or count > 4 or pos + count > len(data) or data[pos] == 0:
        return None  # indefinite or non-minimal
    length = int.from_bytes(data[pos:pos + count], "big")
    if length < 0x80:
        return None
    return length, pos + count


def _read_integer(data: bytes, pos: int, end: int) -> tuple[bytes, int] | None:
    if pos >= end or data[pos] != 0x02:
        return None
    read = _read_length(data, pos + 1)
    if read is None:
        return None
    length, start = read
    stop = start + length
    if length == 0 or stop > end:
        return None
    body = data[start:stop]
    if len(body) > 1 and ((body[0] == 0 and body[1] < 0x80) or (body[0] == 0xFF and body[1] >= 0x80)):
        return None  # not minimally encoded
    return body, stop


def _asn1_pair(data: bytes) -> tuple[bytes, bytes, bool] | None:
    """Go's ``asn1.Unmarshal`` into ``struct{R, S *big.Int}``: (r, s, strict DER) or None.

    Go accepts trailing bytes after the sequence and extra elements inside it; the strict
    flag says whether Go's ``ecdsa.VerifyASN1`` would parse the same bytes.
    """
    if not data or data[0] != 0x30:
        return None
    read = _read_length(data, 1)
    if read is None:
        return None
    length, start = read
    end = start + length
    if end > len(data):
        return None
    first = _read_integer(data, start, end)
    if first is None:
        return None
    second = _read_integer(data, first[1], end)
    if second is None:
        return None
    strict = end == len(data) and second[1] == end and first[0][0] < 0x80 and second[0][0] < 0x80
    return first[0], second[0], strict


def _ecdsa_why(key: ec.EllipticCurvePublicKey, signature: bytes, blob: bytes) -> str | None:
    pair = _asn1_pair(signature)
    if pair is not None:
        r, s, strict = pair
        if not strict or not _ecdsa_ok(key, int.from_bytes(r, "big"), int.from_bytes(s, "big"), blob):
            return "invalid signature when validating ASN.1 encoded signature"
        return None
    if not signature or len(signature) > 132 or len(signature) % 2:
        return "ecdsa: Invalid IEEE_P1363 encoded bytes"
    half = len(signature) // 2
    r_value, s_value = int.from_bytes(signature[:half], "big"), int.from_bytes(signature[half:], "big")
    if not _ecdsa_ok(key, r_value, s_value, blob):
        return "invalid signature when validating IEEE_P1363 encoded signature"
    return None


def _ecdsa_ok(key: ec.EllipticCurvePublicKey, r: int, s: int, blob: bytes) -> bool:
    if r <= 0 or s <= 0:
        return False
    try:
        key.verify(encode_dss_signature(r, s), blob, ec.ECDSA(hashes.SHA256()))
    except (InvalidSignature, ValueError):
        return False
    return True


def signature_failure(key: ParsedKey, signature: bytes, blob: bytes) -> str | None:
    """``None`` when ``signature`` verifies ``blob`` with ``key``, else cosign's reason."""
    return _cached_failure(key, signature, blob)


@lru_cache(maxsize=2048)
def _cached_failure(key: ParsedKey, signature: bytes, blob: bytes) -> str | None:
    if key.type == "ecdsa":
        assert isinstance(key.key, ec.EllipticCurvePublicKey)
        return _ecdsa_why(key.key, signature, blob)
    try:
        if key.type == "rsa":
            assert isinstance(key.key, rsa.RSAPublicKey)
            key.key.verify(signature, blob, padding.PKCS1v15(), hashes.SHA256())
        else:
            assert isinstance(key.key, ed25519.Ed25519PublicKey)
            key.key.verify(signature, blob)
    except (InvalidSignature, ValueError):
        return "crypto/rsa: verification error" if key.type == "rsa" else "failed to verify signature"
    return None


def signature_bytes(annotation: str) -> bytes:
    """The raw signature of a ``signature`` annotation; undecodable text is used as is."""
    try:
        return decode_go_base64(annotation)
    except ValueError:
        return annotation.encode("utf-8", "surrogateescape")
