"""Text with NUL (and the escape character) stored and read back unchanged on every backend."""

from __future__ import annotations

import pytest
from sqlalchemy import create_engine, text

from scanner.engine.types import RuleStatus
from scanner.store import ErrorRecord, Store
from scanner.store.storedtext import ESCAPE, escape_text, escape_value, unescape_text, unescape_value
from tests.store.conftest import day
from tests.store.scan_helpers import pod, scan

HOSTILE = [
    pytest.param("plain", id="plain-text-unchanged"),
    pytest.param("a\x00b", id="nul-inside"),
    pytest.param("\x00", id="nul-alone"),
    pytest.param(f"a{ESCAPE}0b", id="escape-then-zero"),
    pytest.param(f"{ESCAPE}", id="escape-alone"),
    pytest.param(f"\x00{ESCAPE}\x00{ESCAPE}{ESCAPE}0", id="nul-and-escapes-mixed"),
    pytest.param("tab\tbell\x07esc\x1b", id="other-control-characters-unchanged"),
]


@pytest.mark.parametrize("value", HOSTILE)
def test_escape_text_round_trips(value: str) -> None:
    stored = escape_text(value)
    assert "\x00" not in stored
    assert unescape_text(stored) == value


@pytest.mark.parametrize("value", HOSTILE)
def test_escape_value_round_trips_inside_json(value: str) -> None:
    data = {value: [value, {"k": value}, 1, None]}
    stored = escape_value(data)
    assert "\x00" not in repr(stored)
    assert unescape_value(stored) == data


def test_plain_text_is_stored_unchanged() -> None:
    assert escape_text("image: nginx:latest") == "image: nginx:latest"


def test_store_keeps_nul_in_every_text_column(store: Store) -> None:
    name, message = "web\x00evil", f"bad\x00value {ESCAPE}0 here"
    resource = pod(name, namespace="ns\x00x", path="apps/a\x00.yaml")
    run_id = scan(store, day(0), {resource: {("require-labels", "check\x00rule"): RuleStatus.FAIL}},
                  errors=[ErrorRecord(kind="manifest", path="bad\x00.yaml", line=1, message=message, source="repo")])
    results = list(store.iter_run_results(run_id))
    assert [(r.resource.name, r.resource.namespace, r.rule) for r in results] == [(name, "ns\x00x", "check\x00rule")]
    assert [(r.message, r.file) for r in results] == [("check\x00rule fail", "apps/a\x00.yaml")]
    assert [(e.path, e.message) for e in store.run_errors(run_id)] == [("bad\x00.yaml", message)]
    # the same stored bytes on both backends: escaped, no NUL
    engine = create_engine(store.url)
    with engine.connect() as connection:
        stored = connection.execute(text("SELECT name FROM resources")).scalar_one()
    engine.dispose()
    assert stored == f"web{ESCAPE}0evil"
