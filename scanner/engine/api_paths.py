"""The namespace an API server path reaches: a namespaced policy's ``apiCall`` may reach only its
own namespace (Kyverno's fix of CVE-2026-22039), whatever escapes and ``..`` the path holds."""

from __future__ import annotations

import re

from scanner.engine import gopath

_NAMESPACE_SEGMENT = re.compile(r"/namespaces/([^/]+)")


def namespace_problem(url_path: str, policy_namespace: str) -> str | None:
    """Why a policy of ``policy_namespace`` may not call ``url_path``, or None when it may."""
    try:
        path = gopath.clean(gopath.path_unescape(url_path))
    except ValueError as exc:
        return str(exc)
    found = _NAMESPACE_SEGMENT.search(path)
    if found is None:
        return f"path {path} does not contain a namespace segment, which is required for namespaced policies"
    if found.group(1) != policy_namespace:
        return (f"path {path} refers to namespace {found.group(1)}, which is different from the policy "
                f"namespace {policy_namespace}")
    return None
