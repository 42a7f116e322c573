"""The keys results are reused under, and the stored shard outputs sent again."""

from __future__ import annotations

import pathlib

import pytest

from scanner.engine.policy import Policy, parse_policy
from scanner.lookup import cluster_of
from scanner.scan.replay import ShardFootprint, ShardOutput, files_digest
from scanner.scan.result_reuse import (
    CacheUpdate,
    DocumentCache,
    EvaluationKeys,
    decode_entries,
    document_digest,
    evaluation_keys,
    time_dependent,
)
from scanner.sources.paths import PathFilter


def policy(name: str, rule: dict) -> Policy:
    return parse_policy({"apiVersion": "kyverno.io/v1", "kind": "ClusterPolicy", "metadata": {"name": name},
                         "spec": {"rules": [{"name": "r", "match": {"any": [{"resources": {"kinds": ["Pod"]}}]},
                                             **rule}]}})


PLAIN = policy("plain", {"validate": {"message": "m", "pattern": {"metadata": {"name": "?*"}}}})
LOOKING = policy("looking", {"context": [{"name": "cm", "configMap": {"name": "c", "namespace": "n"}}],
                             "validate": {"message": "m", "deny": {"conditions": {"any": [
                                 {"key": "{{ cm.data.x }}", "operator": "Equals", "value": "y"}]}}}})
CLOCK = policy("clock", {"validate": {"message": "at {{ time_now_utc() }}", "pattern": {"metadata": {}}}})


@pytest.mark.parametrize(("text", "expected"), [
    ("{{ time_now() }}", True),
    ("{{ time_now_utc() }}", True),
    ("{{ time_since('', '2020-01-01T00:00:00Z', '') }}", True),
    ("{{ random('[a-z]{8}') }}", True),
    ("{{ time_add('2020-01-01T00:00:00Z', '1h') }}", False),
    ("{{ time_after(a, b) }}", False),
    ("a random word", False),
], ids=["time-now", "time-now-utc", "time-since", "random", "time-add-is-stable", "time-after-is-stable",
        "the-word-random-is-no-call"])
def test_scan_cache_time_dependent_calls(text: str, expected: bool) -> None:
    assert time_dependent({"spec": {"message": text}}) is expected


def test_scan_cache_document_digest_tells_types_apart() -> None:
    digests = [document_digest({"a": value}) for value in (1, "1", True, 1.0, None)]
    assert len(set(digests)) == len(digests)
    assert document_digest({"a": [1, {"b": "c"}]}) == document_digest({"a": [1, {"b": "c"}]})


def keys(values: bytes = b"", version: str = "1", exceptions: list[dict] | None = None,
         objects: list[dict] | None = None) -> EvaluationKeys:
    lookups = {"prod": cluster_of(objects or [])}
    return evaluation_keys([PLAIN, LOOKING, CLOCK], exceptions or [], values, version, lookups)


CONFIG_MAP = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "n"},
              "data": {"x": "y"}}


@pytest.mark.parametrize(("changed", "plain_changes", "looking_changes"), [
    (keys(values=b"namespaces: {}"), True, True),
    (keys(version="2"), True, True),
    (keys(exceptions=[{"kind": "PolicyException", "metadata": {"name": "e"}}]), True, True),
    (keys(objects=[CONFIG_MAP]), False, True),
], ids=["values", "scanner-version", "exceptions", "look-up-data-only-for-policies-reading-it"])
def test_scan_cache_evaluation_keys_follow_what_decides_results(changed: EvaluationKeys, plain_changes: bool,
                                                                looking_changes: bool) -> None:
    before, after = keys().of("prod"), changed.of("prod")
    assert (before[PLAIN.digest] != after[PLAIN.digest]) is plain_changes
    assert (before[LOOKING.digest] != after[LOOKING.digest]) is looking_changes


def test_scan_cache_policies_reading_the_time_have_no_key() -> None:
    assert CLOCK.digest not in keys().of("prod") and PLAIN.digest in keys().of(None)
    clocked = keys(exceptions=[{"spec": {"conditions": "{{ time_now() }}"}}])
    assert clocked.of("prod") == {} and clocked.of(None) == {}


ROW = ("plain", "r", "pass", "rule passed", "", "Audit", "r")
TIMED_OUT = ("plain", "r", "error", "limit exceeded: rule evaluation took longer than 10s", "", "Audit", "r")


@pytest.mark.parametrize(("rows", "stored"), [
    ([ROW], True),
    ([], True),
    ([TIMED_OUT], False),
], ids=["results-stored", "no-result-is-stored-too", "time-limit-error-never-stored"])
def test_scan_cache_document_keeps_what_it_may_reuse(rows: list[tuple], stored: bool) -> None:
    cache = DocumentCache(keys(), lambda digests: {})
    [reuse] = cache.documents([{"kind": "Pod"}], None)
    assert reuse is not None and reuse.rows(PLAIN) is None
    reuse.keep(PLAIN, rows)
    reuse.done()
    update = cache.take()
    assert bool(update.entries) is stored
    if stored:
        entries = decode_entries(update.entries[reuse.digest])
        asked: list[list[str]] = []
        [later] = DocumentCache(keys(), lambda digests: asked.append(digests) or update.entries).documents(
            [{"kind": "Pod"}], None)
        assert asked == [[reuse.digest]] and later is not None and later.rows(PLAIN) == tuple(rows) == next(iter(entries.values()))
        later.done()  # nothing new: the digest is marked reused, not written again
        assert later.rows(CLOCK) is None


def test_scan_cache_update_counts() -> None:
    assert not CacheUpdate() and CacheUpdate(evaluated=1)


def test_scan_replay_output_moves_to_the_commit_read() -> None:
    row = ("src", "v1", "Pod", "p", "apps", "a.yaml", 0, None, 1, "old", None, None)
    other = (*row[:9], "", None, None)  # an export's resource names no commit
    output = ShardOutput("old", [([row, other], [(0, "p", "r")], [], ["d"])])
    decoded = ShardOutput.decode(output.encode())
    assert decoded.replayed("old") == output.chunks
    assert decoded.replayed("new")[0][0] == [(*row[:9], "new", None, None), other]
    with pytest.raises(ValueError, match="shard cache row"):
        ShardOutput.decode(b"not a row")
    with pytest.raises(ValueError, match="not a shard footprint"):
        ShardFootprint.decode(output.encode())


def test_scan_replay_files_digest_follows_the_bytes(tmp_path: pathlib.Path) -> None:
    (tmp_path / "a.yaml").write_text("kind: Pod\n")
    accept = PathFilter((), ())
    before = files_digest([str(tmp_path)], accept)
    assert before == files_digest([str(tmp_path)], accept)
    (tmp_path / "a.yaml").write_text("kind: Service\n")
    assert files_digest([str(tmp_path)], accept) != before
    assert files_digest([str(tmp_path / "missing")], accept) is None
