from __future__ import annotations

import textwrap
from typing import Any

import pytest
import yaml


def y(text: str) -> Any:
    """Inline YAML for table rows."""
    return yaml.safe_load(textwrap.dedent(text))


@pytest.fixture
def load_yaml():
    return y
