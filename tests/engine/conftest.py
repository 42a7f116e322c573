from __future__ import annotations

import textwrap
from typing import Any

import pytest
import yaml


def y(text: str) -> Any:
    """Inline YAML for table rows."""
    return yaml.safe_load(textwrap.dedent(text))


def policy(rules: str, spec_extra: str = "", kind: str = "ClusterPolicy", meta: str = "") -> dict:
    """A ClusterPolicy (or a Policy in namespace ``team``) named ``p`` with ``rules`` (inline YAML),
    extra spec fields and extra metadata."""
    namespace = ", namespace: team" if kind == "Policy" else ""
    doc = y(f"""
apiVersion: kyverno.io/v1
kind: {kind}
metadata: {{name: p{namespace}}}
spec:
  rules: {rules}
""")
    if meta:
        doc["metadata"].update(y(meta))
    if spec_extra:
        doc["spec"].update(y(spec_extra))
    return doc


@pytest.fixture
def load_yaml():
    return y
