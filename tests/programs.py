"""External programs some tests need: skipped where absent on a developer's machine, a failure in CI."""

from __future__ import annotations

import os
import shutil

import pytest


def missing(reason: str) -> None:
    """Skip the calling test for ``reason``, or, in CI (where everything must be there), fail it."""
    if os.environ.get("CI") == "true":
        pytest.fail(reason)
    pytest.skip(reason)


def need_program(name: str, install: str) -> None:
    """Skip (or, in CI, fail) the calling test when ``name`` is not on ``PATH``."""
    if shutil.which(name) is None:
        missing(f"{name} is not installed ({install})")


@pytest.fixture
def helm() -> None:
    need_program("helm", "scripts/install-test-deps.sh installs helm 3")
