"""Container image references as Kyverno reads them (spec 7.5).

``docker.io/`` is prepended when the part before the first ``/`` does not look like a
registry (no ``.`` or ``:``, not ``localhost``, lowercase) or when there is no ``/``; no
``library/`` is inserted. A reference without tag and digest gets tag ``latest``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

DEFAULT_REGISTRY = "docker.io"

_DOMAIN_PART = r"(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
_DOMAIN = rf"(?:{_DOMAIN_PART}(?:\.{_DOMAIN_PART})*|\[[0-9A-Fa-f:.]+\])(?::[0-9]+)?"
_PATH_PART = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
_REFERENCE = re.compile(
    rf"(?P<registry>{_DOMAIN})/(?P<path>{_PATH_PART}(?:/{_PATH_PART})*)"
    r"(?::(?P<tag>[\w][\w.-]{0,127}))?"
    r"(?:@(?P<digest>[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9A-Fa-f]{32,}))?",
    re.ASCII,
)


class ImageReferenceError(ValueError):
    """An image string that is not a valid reference."""


@dataclass(frozen=True, slots=True)
class ImageInfo:
    registry: str
    path: str
    tag: str
    digest: str

    @property
    def name(self) -> str:
        return self.path.rsplit("/", 1)[-1]

    @property
    def reference_with_tag(self) -> str:
        return f"{self.registry}/{self.path}:{self.tag}"

    @property
    def reference(self) -> str:
        """``registry/path@digest`` when a digest exists, else ``registry/path:tag``."""
        if self.digest:
            return f"{self.registry}/{self.path}@{self.digest}"
        return self.reference_with_tag


def _needs_default_registry(image: str) -> bool:
    first, slash, _ = image.partition("/")
    if not slash:
        return True
    return "." not in first and ":" not in first and first != "localhost" and first == first.lower()


@lru_cache(maxsize=4096)
def parse_image(image: str) -> ImageInfo:
    """Parse ``image``; ``ImageReferenceError`` if it is not a valid reference."""
    full = f"{DEFAULT_REGISTRY}/{image}" if _needs_default_registry(image) else image
    m = _REFERENCE.fullmatch(full)
    if m is None or len(m.group("registry")) + 1 + len(m.group("path")) > 255:
        raise ImageReferenceError(f"bad image: {image}, defaultRegistry: {DEFAULT_REGISTRY}, "
                                  "enableDefaultRegistryMutation: true: invalid reference format")
    tag, digest = m.group("tag") or "", m.group("digest") or ""
    if not tag and not digest:
        tag = "latest"
    return ImageInfo(m.group("registry"), m.group("path"), tag, digest)
