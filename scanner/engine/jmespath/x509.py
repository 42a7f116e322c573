"""``x509_decode``: an RSA certificate or CSR in PEM -> the JSON shape of Go's x509 structs.

Kyverno JSON-encodes Go's ``x509.Certificate`` / ``x509.CertificateRequest`` after replacing
the public key with ``{N: "<decimal>", E: <int>}``. Byte fields are base64 text, times are
RFC 3339 in UTC, enums are Go's integers, empty lists are null. Name-constraint and
policy fields are emitted as null/false (not decoded).
"""

from __future__ import annotations

import base64
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

_SIG_ALGS = {
    "1.2.840.113549.1.1.2": 1, "1.2.840.113549.1.1.4": 2, "1.2.840.113549.1.1.5": 3,
    "1.2.840.113549.1.1.11": 4, "1.2.840.113549.1.1.12": 5, "1.2.840.113549.1.1.13": 6,
    "1.2.840.10040.4.3": 7, "2.16.840.1.101.3.4.3.2": 8, "1.2.840.10045.4.1": 9,
    "1.2.840.10045.4.3.2": 10, "1.2.840.10045.4.3.3": 11, "1.2.840.10045.4.3.4": 12,
    "1.2.840.113549.1.1.10": 13, "1.3.101.112": 16,
}
_EXT_KEY_USAGE = {
    "2.5.29.37.0": 0, "1.3.6.1.5.5.7.3.1": 1, "1.3.6.1.5.5.7.3.2": 2, "1.3.6.1.5.5.7.3.3": 3,
    "1.3.6.1.5.5.7.3.4": 4, "1.3.6.1.5.5.7.3.5": 5, "1.3.6.1.5.5.7.3.6": 6,
    "1.3.6.1.5.5.7.3.7": 7, "1.3.6.1.5.5.7.3.8": 8, "1.3.6.1.5.5.7.3.9": 9,
}
_KEY_USAGE_BITS = ("digital_signature", "content_commitment", "key_encipherment",
                   "data_encipherment", "key_agreement", "key_cert_sign", "crl_sign")
_NAME_FIELDS = {"2.5.4.6": "Country", "2.5.4.10": "Organization", "2.5.4.11": "OrganizationalUnit",
                "2.5.4.7": "Locality", "2.5.4.8": "Province", "2.5.4.9": "StreetAddress",
                "2.5.4.17": "PostalCode"}


def _b64(data: bytes | None) -> str | None:
    return base64.b64encode(data).decode("ascii") if data else None


def _oid(dotted: str) -> list[int]:
    return [int(p) for p in dotted.split(".")]


def _name(name: x509.Name) -> dict[str, Any]:
    out: dict[str, Any] = {field: None for field in _NAME_FIELDS.values()}
    out.update({"SerialNumber": "", "CommonName": "", "ExtraNames": None})
    names = []
    for attr in name:
        dotted, value = attr.oid.dotted_string, attr.value
        names.append({"Type": _oid(dotted), "Value": value})
        if dotted in _NAME_FIELDS:
            out[_NAME_FIELDS[dotted]] = (out[_NAME_FIELDS[dotted]] or []) + [value]
        elif dotted == "2.5.4.3":
            out["CommonName"] = value
        elif dotted == "2.5.4.5":
            out["SerialNumber"] = value
    out["Names"] = names or None
    return out


def _public_key(key: Any) -> dict[str, Any]:
    if not isinstance(key, rsa.RSAPublicKey):
        raise ValueError("certificate should use rsa algorithm")
    numbers = key.public_numbers()
    return {"N": str(numbers.n), "E": numbers.e}


def _extensions(exts: x509.Extensions, out: dict[str, Any]) -> None:
    out["Extensions"] = [
        {"Id": _oid(e.oid.dotted_string), "Critical": e.critical,
         "Value": _b64(e.value.public_bytes())}
        for e in exts
    ] or None
    for ext in exts:
        value = ext.value
        if isinstance(value, x509.SubjectAlternativeName):
            out["DNSNames"] = value.get_values_for_type(x509.DNSName) or None
            out["EmailAddresses"] = value.get_values_for_type(x509.RFC822Name) or None
            ips = value.get_values_for_type(x509.IPAddress)
            out["IPAddresses"] = [str(ip) for ip in ips] or None
            uris = value.get_values_for_type(x509.UniformResourceIdentifier)
            out["URIs"] = [{"Scheme": u.split(":", 1)[0], "Host": "", "Path": ""}
                           for u in uris] or None
        elif isinstance(value, x509.KeyUsage):
            bits = sum(1 << i for i, attr in enumerate(_KEY_USAGE_BITS) if getattr(value, attr))
            if value.key_agreement:
                bits |= (128 if value.encipher_only else 0) | (256 if value.decipher_only else 0)
            out["KeyUsage"] = bits
        elif isinstance(value, x509.ExtendedKeyUsage):
            oids = [o.dotted_string for o in value]
            known = [_EXT_KEY_USAGE[o] for o in oids if o in _EXT_KEY_USAGE]
            unknown = [_oid(o) for o in oids if o not in _EXT_KEY_USAGE]
            out["ExtKeyUsage"], out["UnknownExtKeyUsage"] = known or None, unknown or None
        elif isinstance(value, x509.BasicConstraints):
            out["BasicConstraintsValid"] = True
            out["IsCA"] = value.ca
            out["MaxPathLen"] = -1 if value.path_length is None else value.path_length
            out["MaxPathLenZero"] = value.path_length == 0
        elif isinstance(value, x509.SubjectKeyIdentifier):
            out["SubjectKeyId"] = _b64(value.digest)
        elif isinstance(value, x509.AuthorityKeyIdentifier):
            out["AuthorityKeyId"] = _b64(value.key_identifier)


def _common(obj: Any, out: dict[str, Any]) -> None:
    key = obj.public_key()
    out["PublicKey"] = _public_key(key)
    spki = key.public_bytes(Encoding.DER, PublicFormat.SubjectPublicKeyInfo)
    out["RawSubjectPublicKeyInfo"] = _b64(spki)
    out["RawSubject"] = _b64(obj.subject.public_bytes())
    out["Signature"] = _b64(obj.signature)
    out["SignatureAlgorithm"] = _SIG_ALGS.get(obj.signature_algorithm_oid.dotted_string, 0)
    out["PublicKeyAlgorithm"] = 1
    out["Subject"] = _name(obj.subject)
    for field in ("DNSNames", "EmailAddresses", "IPAddresses", "URIs", "ExtraExtensions"):
        out[field] = None
    _extensions(obj.extensions, out)


def _certificate(cert: x509.Certificate, der: bytes) -> dict[str, Any]:
    out: dict[str, Any] = {
        "Raw": _b64(der), "RawTBSCertificate": _b64(cert.tbs_certificate_bytes),
        "RawIssuer": _b64(cert.issuer.public_bytes()), "Version": cert.version.value + 1,
        "SerialNumber": float(cert.serial_number), "Issuer": _name(cert.issuer),
        "NotBefore": cert.not_valid_before_utc.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "NotAfter": cert.not_valid_after_utc.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "KeyUsage": 0, "ExtKeyUsage": None, "UnknownExtKeyUsage": None,
        "BasicConstraintsValid": False, "IsCA": False, "MaxPathLen": 0, "MaxPathLenZero": False,
        "SubjectKeyId": None, "AuthorityKeyId": None, "OCSPServer": None,
        "IssuingCertificateURL": None, "UnhandledCriticalExtensions": None,
        "PermittedDNSDomainsCritical": False, "PermittedDNSDomains": None,
        "ExcludedDNSDomains": None, "PermittedIPRanges": None, "ExcludedIPRanges": None,
        "PermittedEmailAddresses": None, "ExcludedEmailAddresses": None,
        "PermittedURIDomains": None, "ExcludedURIDomains": None,
        "CRLDistributionPoints": None, "PolicyIdentifiers": None, "Policies": None,
    }
    _common(cert, out)
    return out


def _request(csr: x509.CertificateSigningRequest, der: bytes) -> dict[str, Any]:
    out: dict[str, Any] = {"Raw": _b64(der), "Version": 0, "Attributes": None,
                           "RawTBSCertificateRequest": _b64(csr.tbs_certrequest_bytes)}
    _common(csr, out)
    return out


def decode_pem(text: str) -> dict[str, Any]:
    """Decode the first PEM block of ``text``; ``ValueError`` with Kyverno's wording on failure."""
    begin = text.find("-----BEGIN ")
    end_label = text.find("-----", begin + 11) if begin >= 0 else -1
    if begin < 0 or end_label < 0:
        raise ValueError("failed to decode PEM block")
    label = text[begin + 11:end_label]
    footer = f"-----END {label}-----"
    stop = text.find(footer, end_label)
    if stop < 0:
        raise ValueError("failed to decode PEM block")
    try:
        der = base64.b64decode("".join(text[end_label + 5:stop].split()), validate=True)
    except ValueError:
        raise ValueError("failed to decode PEM block") from None
    try:
        if label == "CERTIFICATE":
            return _certificate(x509.load_der_x509_certificate(der), der)
        if label == "CERTIFICATE REQUEST":
            return _request(x509.load_der_x509_csr(der), der)
    except ValueError as exc:
        raise ValueError(f"x509: {exc}") from None
    raise ValueError("PEM block neither contains a CERTIFICATE or CERTIFICATE REQUEST")
