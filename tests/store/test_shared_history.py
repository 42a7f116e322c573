"""History that grows with change: a run stores only what differs from its sources' last completed
runs, and every run still reads, verifies and is pruned as if it held all its rows; on every backend."""

from __future__ import annotations

import pathlib
from datetime import timedelta

import pytest
from sqlalchemy import text

from scanner.engine.types import RuleStatus
from scanner.errors import StoreError
from scanner.scan.collect import Collector
from scanner.scan.replay import ShardFootprint, footprint_key
from scanner.store import Store
from scanner.store.prune import discard_unfinished
from scanner.store.shared_rows import block_ids, id_blocks, id_ranges
from scanner.store.tables import VIEWS
from tests.scan.conftest import pod
from tests.store import scan_helpers
from tests.store.conftest import day
from tests.store.test_result_reuse import Estate, from_scratch, stored


def _rows(url: str) -> dict[str, int]:
    """How many rows each table of shared rows, and each blocks table, holds."""
    with Store(url) as store, store.engine.connect() as connection:
        return {table: connection.execute(text(f"SELECT COUNT(*) FROM {table}")).scalar_one()
                for table in ("observation_rows", "result_rows", "tally_rows", "run_observation_blocks",
                              "run_tally_blocks")}


def test_shared_history_an_unchanged_night_stores_no_copy(databases: tuple[str, str],
                                                          tmp_path: pathlib.Path) -> None:
    url, scratch = databases
    estate = Estate(tmp_path)
    first = estate.scan(url, "first")
    after_first = _rows(url)
    nights = [estate.scan(url, f"night-{n}") for n in range(3)]
    after = _rows(url)
    for table in ("observation_rows", "result_rows", "tally_rows"):
        assert after[table] == after_first[table], table
    # each night: the blocks of the first run's rows again, no more
    for table in ("run_observation_blocks", "run_tally_blocks"):
        assert after[table] - after_first[table] == 3 * after_first[table], table
    for night in nights:
        assert stored(url, night.run_id) == stored(url, first.run_id)
    assert stored(url, nights[-1].run_id) == from_scratch(estate, scratch, "scratch")


def test_shared_history_a_commit_stores_only_what_it_changed(databases: tuple[str, str],
                                                             tmp_path: pathlib.Path) -> None:
    url, scratch = databases
    estate = Estate(tmp_path)
    estate.scan(url, "first")
    before = _rows(url)
    estate.commit({"apps/pod-1.yaml": pod("p1", None), "apps/pod-new.yaml": pod("new", "team")})
    changed = estate.scan(url, "commit")
    after = _rows(url)
    assert after["observation_rows"] - before["observation_rows"] == 2  # the changed Pod, the new one
    assert stored(url, changed.run_id) == from_scratch(estate, scratch, "scratch")


def test_shared_history_first_run_verifies_after_later_runs(databases: tuple[str, str],
                                                                         tmp_path: pathlib.Path) -> None:
    url, _ = databases
    estate = Estate(tmp_path)
    first = estate.scan(url, "first")
    with Store(url) as store:
        recorded = store.chain_link(first.run_id)
    for n in range(4):
        estate.commit({f"apps/extra-{n}.yaml": pod(f"x{n}", None if n % 2 else "team")})
        estate.scan(url, f"night-{n}")
    with Store(url) as store:
        assert store.chain_link(first.run_id) == recorded
        verdict = store.verify_chain()
        assert verdict.ok and verdict.checked == 5


def test_shared_history_prune_deletes_only_rows_no_kept_run_covers(databases: tuple[str, str],
                                                                   tmp_path: pathlib.Path) -> None:
    url, _ = databases
    estate = Estate(tmp_path)
    estate.scan(url, "first")
    estate.commit({"apps/pod-1.yaml": pod("p1", None)})
    estate.scan(url, "second")
    with Store(url) as store:
        first, second = sorted(store.list_runs(), key=lambda run: run.run_id)
        runs = [first.run_id, second.run_id]
        before = stored(url, runs[1])
        between = first.started_at + (second.started_at - first.started_at) / 2
        result = store.prune(keep_days=1, now=between + timedelta(days=1))
        assert result.runs == 1
    assert stored(url, runs[1]) == before
    with Store(url) as store, store.engine.connect() as connection:
        # every remaining row is the kept run's: the first run's copy of the changed Pod went
        covered = connection.execute(text("SELECT COUNT(*) FROM results")).scalar_one()
        assert covered == connection.execute(text("SELECT COUNT(*) FROM result_rows")).scalar_one()
        assert store.verify_chain().ok


def test_shared_history_a_failed_run_loses_only_its_own_rows(databases: tuple[str, str],
                                                             tmp_path: pathlib.Path) -> None:
    url, _ = databases
    estate = Estate(tmp_path)
    first = estate.scan(url, "first")
    before = _rows(url)
    second = estate.scan(url, "second")  # shares every row of the first
    with Store(url) as store, store.engine.begin() as connection:
        connection.execute(text("UPDATE runs SET status = 'failed' WHERE run_id = :run"), {"run": second.run_id})
        connection.execute(text("DELETE FROM run_chain WHERE run_id = :run"), {"run": second.run_id})
        assert discard_unfinished(connection) == 0  # (result rows deleted: each is the first run's too)
    assert _rows(url) == before
    with Store(url) as store:
        assert len(list(store.iter_run_results(first.run_id))) == sum(first.counts.values())


def test_shared_history_id_blocks_and_ranges() -> None:
    assert id_ranges([5, 1, 2, 3, 7, 8, 3]) == [(1, 3), (5, 5), (7, 8)]
    assert id_ranges([]) == []
    assert id_blocks([0, 1, 31, 32, 100]) == {0: 1 | 2 | 1 << 31, 1: 1, 3: 1 << 4}
    assert block_ids(id_blocks([0, 1, 31, 32, 100])) == [0, 1, 31, 32, 100]
    assert block_ids({2: 0, 5: 0b101}) == [160, 162]


def test_shared_history_views_are_the_migrations() -> None:
    from importlib import util

    path = pathlib.Path(__file__).parents[2] / "migrations" / "versions" / "0011_shared_history.py"
    spec = util.spec_from_file_location("revision_0011", path)
    assert spec is not None and spec.loader is not None
    module = util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.VIEWS == VIEWS


def test_shared_history_a_shards_new_output_replaces_its_old_one(databases: tuple[str, str],
                                                                 tmp_path: pathlib.Path) -> None:
    url, _ = databases
    estate = Estate(tmp_path)
    estate.scan(url, "first")

    def outputs() -> int:
        with Store(url) as store, store.engine.connect() as connection:
            return connection.execute(text("SELECT COUNT(*) FROM shard_cache")).scalar_one()

    before = outputs()
    estate.commit({"apps/pod-1.yaml": pod("p1", None)})
    changed = estate.scan(url, "commit")
    assert changed.replayed == 1 and outputs() == before  # the tree's shard: stored anew, in place
    assert estate.scan(url, "again").replayed == 2


def test_shared_history_replaced_cache_rows_leave_no_growing_dead_space(store: Store) -> None:
    """PostgreSQL keeps a replaced row's space until a VACUUM: a scan makes it reusable (where
    autovacuum is off, or slower than the nights), so a shard replaced every night takes its
    size once, not once a night; SQLite reuses freed pages itself."""
    import os

    from scanner.store.result_cache import write_shard_outputs

    run = scan_helpers.scan(store, day(0), {scan_helpers.pod("a"): {("require-labels", "check"): RuleStatus.PASS}})
    sizes = []
    for night in range(6):
        with store.engine.begin() as connection:  # one shard's output, replaced (incompressible: 1 MB)
            write_shard_outputs(connection, run, {f"key-{night}": ("slot", os.urandom(1 << 20))}, [])
        store.reclaim_replaced()
        sizes.append(_bytes(store))
    assert sizes[-1] - sizes[1] < 2 * (1 << 20), sizes


def _bytes(store: Store) -> int:
    with store.engine.connect() as connection:
        if store.engine.dialect.name == "postgresql":
            return connection.execute(text("SELECT pg_total_relation_size('shard_cache')")).scalar_one()
        pages = connection.exec_driver_sql("PRAGMA page_count").scalar_one()
        return pages * connection.exec_driver_sql("PRAGMA page_size").scalar_one()


def _shard_cache(url: str) -> dict[str, bytes]:
    with Store(url) as store, store.engine.connect() as connection:
        return {key: bytes(blob) for key, blob in connection.execute(text("SELECT shard_key, output FROM shard_cache"))}


def _rewrite(url: str, blobs: dict[str, bytes]) -> None:
    with Store(url) as store, store.engine.begin() as connection:
        connection.execute(text("UPDATE shard_cache SET output = :blob WHERE shard_key = :key"),
                           [{"key": key, "blob": blob} for key, blob in blobs.items()])


def _outputs_and_footprints(url: str) -> tuple[dict[str, bytes], dict[str, bytes]]:
    """The stored shard outputs with a footprint, and their footprints (by the output's key)."""
    cache = _shard_cache(url)
    with_footprint = {key: footprint_key(key) for key in cache if footprint_key(key) in cache}
    return ({key: cache[key] for key in with_footprint},
            {key: cache[footprint] for key, footprint in with_footprint.items()})


def test_shared_history_an_unchanged_shard_is_replayed_from_its_footprint(databases: tuple[str, str],
                                                                          tmp_path: pathlib.Path) -> None:
    url, scratch = databases
    estate = Estate(tmp_path)
    estate.commit({"apps/broken.yaml": "kind: Pod\nmetadata: [unclosed\n"})  # its error is replayed too
    first = estate.scan(url, "first")
    assert first.errors == 1
    outputs, footprints = _outputs_and_footprints(url)
    assert len(footprints) == 2  # the tree's shard, the export's
    assert all(ShardFootprint.decode(blob).stored.observations for blob in footprints.values())
    _rewrite(url, dict.fromkeys(outputs, b"not an output"))  # a footprint is enough: no output is read
    before = _rows(url)
    night = estate.scan(url, "night")
    assert (night.replayed, night.evaluated, night.counts, night.errors) == (2, 0, first.counts, 1)
    assert _rows(url)["observation_rows"] == before["observation_rows"]
    assert stored(url, night.run_id) == stored(url, first.run_id)
    assert _outputs_and_footprints(url)[1] == footprints  # (not written again)
    assert stored(url, night.run_id) == from_scratch(estate, scratch, "scratch")


@pytest.mark.parametrize("jobs", [1, 2])
@pytest.mark.parametrize("footprint", ["unreadable", "naming-another-observation"])
def test_shared_history_a_refused_footprint_replays_the_shards_output(
        databases: tuple[str, str], tmp_path: pathlib.Path, footprint: str, jobs: int) -> None:
    url, scratch = databases
    estate = Estate(tmp_path)
    first = estate.scan(url, "first", jobs=jobs)
    _, footprints = _outputs_and_footprints(url)
    if footprint == "unreadable":
        changed = dict.fromkeys(footprints, b"not a footprint")
    else:  # (as one stored by a run that failed after it, whose new observations were discarded)
        changed = {}
        for key, blob in footprints.items():
            observations = (decoded := ShardFootprint.decode(blob)).stored.observations
            if observations:  # (with more workers than files: shards without any)
                observations[next(iter(observations))] += 10_000
                changed[key] = decoded.encode()
        assert changed
    _rewrite(url, {footprint_key(key): blob for key, blob in changed.items()})
    night = estate.scan(url, "night", jobs=jobs)  # each shard sent again, replayed from its output
    assert (night.replayed, night.evaluated, night.counts) == (len(footprints), 0, first.counts)
    assert stored(url, night.run_id) == stored(url, first.run_id)
    assert _outputs_and_footprints(url)[1] == footprints  # stored again as the output made them
    assert stored(url, night.run_id) == from_scratch(estate, scratch, "scratch", jobs=jobs)


def test_shared_history_footprints_not_stored_cost_only_a_replay_of_the_outputs(
        databases: tuple[str, str], tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    url, _ = databases
    estate = Estate(tmp_path)

    def fail(self: Collector) -> None:
        raise StoreError("disk full")

    with monkeypatch.context() as patched:
        patched.setattr(Collector, "store_footprints", fail)
        first = estate.scan(url, "first")
    assert first.status == "succeeded" and "footprints were not stored" in caplog.text and "disk full" in caplog.text
    assert _outputs_and_footprints(url) == ({}, {})
    night = estate.scan(url, "night")  # the outputs replayed, their footprints stored
    assert (night.replayed, night.evaluated) == (2, 0)
    assert stored(url, night.run_id) == stored(url, first.run_id)
    assert len(_outputs_and_footprints(url)[1]) == 2
