"""Kyverno functions needing an injected helper or a special library: ``parse_yaml``,
``random``, ``x509_decode``, ``is_external_url``.

``is_external_url`` works offline (Kyverno resolves host names through DNS): an IP
literal is external unless it is loopback or private (Go ``IsLoopback``/``IsPrivate``); a
host name is external unless it is ``localhost``, ends in ``.localhost``, ``.local`` or
``.internal``, or is a single label (an in-cluster service name such as ``my-svc``).
"""

from __future__ import annotations

import ipaddress
import random as _random
from collections.abc import Callable
from typing import Any

from scanner.engine.jmespath.random_strings import RegexError, random_string
from scanner.engine.jmespath.registry import FunctionSpec, error
from scanner.errors import ScannerError

_GO_PRIVATE = [ipaddress.ip_network(n) for n in ("10.0.0.0/8", "172.16.0.0/12",
                                                 "192.168.0.0/16", "fc00::/7")]
_INTERNAL_SUFFIXES = (".localhost", ".local", ".internal")


def url_host(url: str) -> str:
    """The host of ``scheme://[user@]host[:port]/...`` (brackets of IPv6 removed)."""
    scheme, sep, rest = url.partition("://")
    if not sep or not scheme:
        raise ValueError(f"parse {url!r}: missing scheme or host")
    authority = rest.split("/", 1)[0].split("?", 1)[0].split("#", 1)[0]
    host = authority.rpartition("@")[2]
    if host.startswith("["):
        return host[1:host.find("]")] if "]" in host else host[1:]
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def is_external_host(host: str) -> bool:
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        name = host.lower().rstrip(".")
        if not name or name == "localhost" or name.endswith(_INTERNAL_SUFFIXES):
            return False
        return "." in name
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped:
        ip = ip.ipv4_mapped
    private = any(ip in net for net in _GO_PRIVATE if net.version == ip.version)
    return not (ip.is_loopback or private)


def _is_external_url(a: list[Any]) -> bool:
    try:
        return is_external_host(url_host(a[0]))
    except ValueError as exc:
        raise error("is_external_url", str(exc)) from None


def _random_string(rng: _random.Random) -> Callable[[list[Any]], str]:
    def generate(a: list[Any]) -> str:
        if a[0] == "":
            raise error("random", "no pattern provided")
        try:
            return random_string(a[0], rng)
        except RegexError as exc:
            raise error("random", str(exc)) from None

    return generate


def _parse_yaml(load_yaml: Callable[[str], Any] | None) -> Callable[[list[Any]], Any]:
    def parse(a: list[Any]) -> Any:
        if load_yaml is None:
            raise error("parse_yaml", "not supported: no YAML loader is available")
        try:
            return load_yaml(a[0])
        except (ValueError, ScannerError) as exc:
            raise error("parse_yaml", str(exc)) from None

    return parse


def _x509_decode(a: list[Any]) -> dict[str, Any]:
    from scanner.engine.jmespath.x509 import decode_pem  # cryptography loads only when used

    try:
        return decode_pem(a[0])
    except ValueError as exc:
        raise error("x509_decode", str(exc)) from None


def build_extra_specs(
    load_yaml: Callable[[str], Any] | None, rng: _random.Random
) -> tuple[FunctionSpec, ...]:
    s = ("string",)
    return (
        FunctionSpec("parse_yaml", (s,), "any", "decodes a valid YAML encoded string to the "
                     "appropriate type provided it can be represented as JSON",
                     _parse_yaml(load_yaml)),
        FunctionSpec("random", (s,), "string", "Generates a random sequence of characters",
                     _random_string(rng)),
        FunctionSpec("x509_decode", (s,), "object", "decodes an x.509 certificate to an "
                     "object. you may also use this in conjunction with `base64_decode` "
                     "jmespath function to decode a base64-encoded certificate", _x509_decode),
        FunctionSpec("is_external_url", (s,), "bool", "checks if a URL points to an external "
                     "host (offline: IP literals by range, host names by name)", _is_external_url),
    )
