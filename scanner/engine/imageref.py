"""Container image references as Kyverno reads them (spec 7.5).

Kyverno's ``GetImageInfo``: ``docker.io/`` is prepended when there is no ``/`` or when the
part before the first ``/`` does not look like a registry (no ``.`` or ``:``, not
``localhost``, lowercase); the result is parsed with the Docker reference grammar
(``github.com/distribution/reference``, digests checked as ``go-digest`` does); no
``library/`` is inserted. A reference without tag and digest gets tag ``latest``. A name
whose first part cannot be a domain (a host with ``_``) parses without one, and Kyverno then
takes that first part as the registry.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from scanner.errors import EngineError

DEFAULT_REGISTRY = "docker.io"

_DOMAIN_COMPONENT = r"(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
_DOMAIN = rf"(?:{_DOMAIN_COMPONENT}(?:\.{_DOMAIN_COMPONENT})*|\[[a-fA-F0-9:]+\])(?::[0-9]+)?"
_PATH_COMPONENT = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
_REMOTE_NAME = rf"{_PATH_COMPONENT}(?:/{_PATH_COMPONENT})*"
_TAG = r"[\w][\w.-]{0,127}"
_DIGEST = r"[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9A-Fa-f]{32,}"
# reference := name [":" tag] ["@" digest]; name := [domain "/"] remote-name
_REFERENCE = re.compile(rf"((?:{_DOMAIN}/)?{_REMOTE_NAME})(?::({_TAG}))?(?:@({_DIGEST}))?", re.ASCII)
_NAME = re.compile(rf"(?:({_DOMAIN})/)?({_REMOTE_NAME})", re.ASCII)
_REPOSITORY_NAME_MAX = 255

# go-digest v1.0.0: registered algorithms with their hex length, and its looser digest form
_DIGEST_HEX_LENGTH = {"sha256": 64, "sha384": 96, "sha512": 128}
_GO_DIGEST = re.compile(r"[a-z0-9]+(?:[.+_-][a-z0-9]+)*:[a-zA-Z0-9=_-]+", re.ASCII)
_LOWER_HEX = re.compile(r"[a-f0-9]+", re.ASCII)


class ImageReferenceError(EngineError, ValueError):
    """An image string that is not a valid reference."""


@dataclass(frozen=True, slots=True)
class ImageInfo:
    """A container image reference, split as Kyverno's ``images`` variable splits it."""

    registry: str
    path: str
    tag: str
    digest: str

    @property
    def name(self) -> str:
        return self.path.rsplit("/", 1)[-1]

    @property
    def _repository(self) -> str:
        return f"{self.registry}/{self.path}" if self.registry else self.path

    @property
    def reference_with_tag(self) -> str:
        return f"{self._repository}:{self.tag}"

    @property
    def reference(self) -> str:
        """``registry/path@digest`` when a digest exists, else ``registry/path:tag``."""
        if self.digest:
            return f"{self._repository}@{self.digest}"
        return self.reference_with_tag


def _needs_default_registry(image: str) -> bool:
    first, slash, _ = image.partition("/")
    if not slash:
        return True
    return "." not in first and ":" not in first and first != "localhost" and first == first.lower()


def _digest_error(digest: str) -> str | None:
    """go-digest's ``Digest.Validate`` on a digest the reference grammar accepted."""
    algorithm, _, encoded = digest.partition(":")
    length = _DIGEST_HEX_LENGTH.get(algorithm)
    if length is None:
        return "unsupported digest algorithm" if _GO_DIGEST.fullmatch(digest) else "invalid checksum digest format"
    if len(encoded) != length:
        return "invalid checksum digest length"
    return None if _LOWER_HEX.fullmatch(encoded) else "invalid checksum digest format"


def parse_reference(name: str) -> tuple[str, str, str, str]:
    """``reference.Parse``: domain, path, tag and digest, or ``ImageReferenceError`` with its reason."""
    m = _REFERENCE.fullmatch(name)
    if m is None:
        lowered = name.lower()
        if lowered != name and _REFERENCE.fullmatch(lowered):
            raise ImageReferenceError("repository name must be lowercase")
        raise ImageReferenceError("invalid reference format")
    repository, tag, digest = m.group(1), m.group(2) or "", m.group(3) or ""
    split = _NAME.fullmatch(repository)
    domain, path = (split.group(1) or "", split.group(2)) if split else ("", repository)
    if len(path) > _REPOSITORY_NAME_MAX:
        raise ImageReferenceError(f"repository name must not be more than {_REPOSITORY_NAME_MAX} characters")
    if digest and (reason := _digest_error(digest)):
        raise ImageReferenceError(reason)
    return domain, path, tag, digest


@lru_cache(maxsize=4096)
def parse_image(image: str) -> ImageInfo:
    """Parse ``image``; ``ImageReferenceError`` (Kyverno's message) if it is not a valid reference."""
    full = f"{DEFAULT_REGISTRY}/{image}" if _needs_default_registry(image) else image
    try:
        registry, path, tag, digest = parse_reference(full)
    except ImageReferenceError as exc:
        raise ImageReferenceError(f"bad image: {full}, defaultRegistry: {DEFAULT_REGISTRY}, "
                                  f"enableDefaultRegistryMutation: true: {exc}") from None
    if not tag and not digest:
        tag = "latest"
    first, slash, rest = path.partition("/")
    if not registry and slash and "_" in first:
        registry, path = first, rest
    return ImageInfo(registry, path, tag, digest)
