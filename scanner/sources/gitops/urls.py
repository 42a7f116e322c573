"""Repository URLs compared as the same repository whatever their form (https, ssh, scp-like)."""

from __future__ import annotations

import re

_SCP = re.compile(r"^(?:[\w.-]+@)?(?P<host>[\w.-]+):(?!//)(?P<path>.+)$")


def repository_key(url: str) -> str:
    """``host/path`` of a repository URL, lower-cased host, without user, port-less scheme parts,
    ``.git`` or a trailing ``/`` (``git@github.com:a/b.git`` and ``https://github.com/a/b`` agree)."""
    text = url.strip()
    match = _SCP.match(text) if "://" not in text else None
    if match:
        host, path = match["host"], match["path"]
    else:
        rest = text.split("://", 1)[-1]
        host, _, path = rest.partition("/")
        host = host.rsplit("@", 1)[-1]
    path = path.strip("/")
    path = path.removesuffix(".git")
    return f"{host.lower()}/{path}"
