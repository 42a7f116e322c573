"""The hash chain of runs: recorded at finish, checked by `scanner runs verify` against the rows."""

from __future__ import annotations

import pytest
from sqlalchemy import text

from scanner.cli import main
from scanner.engine.types import RuleStatus
from scanner.store import ErrorRecord, RunStart, Store
from tests.store.conftest import day
from tests.store.scan_helpers import pod, policy, scan

LABELS = ("require-labels", "check")
LATEST = ("disallow-latest", "image")
F, P = RuleStatus.FAIL, RuleStatus.PASS


def _three_runs(store: Store) -> tuple[int, int, int]:
    """Three finished runs; the middle one has a policy version of its own and an error record."""
    first = scan(store, day(0), {pod("web"): {LABELS: F}, pod("db"): {LABELS: P}})
    middle = scan(store, day(1), {pod("web"): {LABELS: F, LATEST: P}, pod("db"): {LABELS: P}},
                  policies=[policy("require-labels"), policy("disallow-latest", digest="v2")],
                  errors=[ErrorRecord(kind="manifest", path="apps/bad.yaml", line=3, message="not YAML",
                                      source="repo")])
    last = scan(store, day(2), {pod("web"): {LABELS: P}, pod("db"): {LABELS: P}})
    return first, middle, last


def _verify(capsys: pytest.CaptureFixture[str], url: str, *args: str) -> tuple[int, str, str]:
    code = main(["runs", "verify", "--database", url, *args])
    out, err = capsys.readouterr()
    return code, out, err


def _execute(store: Store, *statements: str, **params: object) -> None:
    with store.engine.begin() as connection:
        for statement in statements:
            connection.execute(text(statement), params)


_RUN_ROWS = ("run_observation_blocks", "run_tally_blocks", "run_policy_tallies", "scan_errors", "run_policies",
             "run_sources")
_OF_RUN = "observation_id IN (SELECT observation_id FROM resource_observations WHERE run_id = :run)"

TAMPERING = [
    pytest.param([f"UPDATE result_rows SET status = 'pass' WHERE {_OF_RUN} AND status = 'fail'"],
                 "results changed", id="one-result-status-edited"),
    pytest.param([f"UPDATE result_rows SET message = 'looks fine' WHERE {_OF_RUN} AND status = 'fail'"],
                 "results changed", id="one-result-message-edited"),
    pytest.param(["UPDATE policies SET digest = 'sha256:forged' WHERE digest = 'sha256:disallow-latest:v2'"],
                 "policies changed", id="one-policy-digest-edited"),
    pytest.param([f"UPDATE observation_rows SET line = 99 WHERE {_OF_RUN}"],
                 "results changed", id="result-location-edited"),
    pytest.param(["UPDATE run_sources SET commit_sha = 'deadbeef' WHERE run_id = :run"],
                 "sources, results changed", id="source-commit-edited"),  # (its observations' commit)
    pytest.param(["UPDATE scan_errors SET message = 'nothing' WHERE run_id = :run"],
                 "errors changed", id="error-record-edited"),
    pytest.param(["UPDATE runs SET fail_count = 0 WHERE run_id = :run"],
                 "run changed", id="run-counts-edited"),
    pytest.param([*(f"DELETE FROM {table} WHERE run_id = :run" for table in _RUN_ROWS),
                  "UPDATE sources SET findings_run_id = NULL WHERE findings_run_id = :run",
                  "DELETE FROM runs WHERE run_id = :run"],
                 "deleted: run {run} is in the chain but its rows are gone", id="run-deleted-from-the-middle"),
    pytest.param([*(f"DELETE FROM {table} WHERE run_id = :run" for table in _RUN_ROWS),
                  "UPDATE sources SET findings_run_id = NULL WHERE findings_run_id = :run",
                  "DELETE FROM runs WHERE run_id = :run", "DELETE FROM run_chain WHERE run_id = :run"],
                 "deleted: run {run} is gone from the chain", id="run-and-its-link-deleted-from-the-middle"),
    pytest.param(["UPDATE run_chain SET chain_digest = 'sha256:0' WHERE run_id = :run"],
                 "link: run {run}: its chain digest does not follow", id="chain-digest-edited"),
]


@pytest.mark.parametrize(("statements", "named"), TAMPERING)
def test_chain_verify_names_the_tampered_run(store: Store, database_url: str, statements: list[str],
                                             named: str, capsys: pytest.CaptureFixture[str]) -> None:
    _, middle, _ = _three_runs(store)
    assert _verify(capsys, database_url)[0] == 0
    _execute(store, *statements, run=middle)
    code, out, _ = _verify(capsys, database_url)
    assert code == 1
    assert out.startswith(f"run {middle}: {named.format(run=middle)}"), out
    verdict = store.verify_chain()
    assert verdict.broken is not None and verdict.broken.run_id == middle and verdict.checked == 1


def test_chain_verify_untouched_runs_pass(store: Store, database_url: str,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    first, middle, last = _three_runs(store)
    code, out, _ = _verify(capsys, database_url)
    head = store.chain_link(last)
    assert head is not None
    assert (code, out) == (0, f"chain verified: 3 runs, run {first} to run {last}, from the start of the "
                              f"chain\nhead {head.chain_digest}\n")
    links = [store.chain_link(run) for run in (first, middle, last)]
    assert [(link.position, link.previous_run_id) for link in links if link] == [
        (1, None), (2, first), (3, middle)]
    assert main(["runs", "show", str(last), "--database", database_url]) == 0
    assert f"\nchain: {head.chain_digest}\n" in capsys.readouterr().out


def test_chain_verify_from_a_run_after_the_tampered_one(store: Store, database_url: str,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    first, middle, last = _three_runs(store)
    _execute(store, f"UPDATE result_rows SET status = 'pass' WHERE {_OF_RUN} AND status = 'fail'", run=first)
    assert _verify(capsys, database_url)[1].startswith(f"run {first}: results changed")
    code, out, _ = _verify(capsys, database_url, "--from", str(middle))
    assert (code, out.splitlines()[0]) == (0, f"chain verified: 2 runs, run {middle} to run {last}, "
                                              "from the start of the chain")
    code, _, err = _verify(capsys, database_url, "--from", "99")
    assert code == 2 and "run 99 is not in the chain of runs" in err


def test_chain_verify_names_a_completed_run_missing_from_the_chain(store: Store, database_url: str,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    _, _, last = _three_runs(store)
    _execute(store, "DELETE FROM run_chain WHERE run_id = :run", run=last)
    code, out, _ = _verify(capsys, database_url)
    assert code == 1 and out.startswith(f"run {last}: unchained: run {last} is a completed run that is not in")


def test_chain_unfinished_runs_are_not_chained(store: Store) -> None:
    first = scan(store, day(0), {pod("web"): {LABELS: F}})
    with pytest.raises(RuntimeError), store.begin_run(RunStart(started_at=day(1))) as aborted:
        raise RuntimeError("scan failed")
    last = scan(store, day(2), {pod("web"): {LABELS: P}})
    assert store.chain_link(aborted.run_id) is None
    verdict = store.verify_chain()
    assert (verdict.ok, verdict.checked, verdict.first_run_id, verdict.last_run_id) == (True, 2, first, last)


def test_chain_prune_keeps_the_chain_verifiable(store: Store, database_url: str,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    first, middle, last = _three_runs(store)
    late = store.begin_run(RunStart(started_at=day(-1)))  # started first, finishes after the others
    late.add_policies([policy("require-labels")])
    late.finish()
    result = store.prune(keep_days=2, now=day(3, hours=12))  # first, middle (linked first) and late go
    assert result.runs == 3
    verdict = store.verify_chain()
    assert (verdict.ok, verdict.checked, verdict.anchor.run_id) == (True, 2, middle)
    late_link = store.chain_link(late.run_id)
    assert late_link is not None and late_link.pruned and store.chain_link(first) is None
    code, out, _ = _verify(capsys, database_url)
    assert code == 0 and out.startswith(f"chain verified: 2 runs, run {last} to run {late.run_id}, "
                                        f"from the anchor left by pruning run {middle}")
    newest = scan(store, day(5), {pod("web"): {LABELS: F}})
    store.prune(keep_days=2, now=day(6))  # the rest of the chain before the newest run goes
    verdict = store.verify_chain()
    assert (verdict.ok, verdict.checked, verdict.anchor.run_id) == (True, 1, late.run_id)
    _execute(store, f"UPDATE result_rows SET message = 'edited' WHERE {_OF_RUN}", run=newest)
    assert _verify(capsys, database_url)[1].startswith(f"run {newest}: results changed")


def test_chain_upgrade_chains_existing_runs(store: Store) -> None:
    first, middle, last = _three_runs(store)
    recorded = [store.chain_link(run) for run in (first, middle, last)]
    store.downgrade("0006")
    store.upgrade()
    verdict = store.verify_chain()
    assert (verdict.ok, verdict.checked, verdict.first_run_id, verdict.last_run_id) == (True, 3, first, last)
    assert [store.chain_link(run) for run in (first, middle, last)] == recorded


@pytest.mark.parametrize("order", ["in key order", "a batch before an earlier one", "a resource in two parts"])
def test_chain_results_hashed_as_written_match_the_stored_rows(store: Store, order: str) -> None:
    """The finishing writer hashes the results as it wrote them, not read back, in any order: the
    digest is the one the stored rows give (text escaped as stored), or, when one resource's
    results came in two parts, the stored rows are read after all."""
    from scanner.store import PolicyRecord, ResultRecord, SourceRecord, SourceType
    from scanner.store.chain import results_part

    pods = [pod(f"p{i}") for i in range(6)]
    messages = ["plain", "a NUL \x00 here", "the escape \u2400 itself", "", "é ünïcode", "x" * 300]
    batches = [pods[:3], pods[3:]]
    with store.begin_run(RunStart(started_at=day(0), scanner_version="0.1.0")) as run:
        run.add_source(SourceRecord(name="repo", type=SourceType.GIT, url="https://git.example/repo.git",
                                    commit_sha="c0ffee"))
        records: list[PolicyRecord] = [policy("require-labels"), policy("disallow-latest")]
        run.add_policies(records)
        if order == "a batch before an earlier one":
            run.add_resources(batches[1])  # the later pods get the earlier observation ids
        rules = [(records[1], "image"), (records[0], "labels")]
        calls = [[(resource, rule) for resource in batch for rule in rules] for batch in batches]
        if order == "a resource in two parts":  # its second rule's result with the next batch
            calls[1].insert(0, calls[0].pop())
        for call in calls:
            run.add_results(
                ResultRecord(policy=p.ref, rule=rule, resource=resource, status=RuleStatus.FAIL,
                             message=messages[i % len(messages)], path="/spec")
                for i, (resource, (p, rule)) in enumerate(call))
        written = run._written
        assert written is not None and written.usable == (order != "a resource in two parts")
        run.finish()
    with store.engine.connect() as connection:
        stored = results_part(connection, run.run_id)
        link = connection.execute(text("SELECT results_digest FROM run_chain WHERE run_id = :run"),
                                  {"run": run.run_id}).scalar_one()
        assert link == stored
        if written.usable:
            assert results_part(connection, run.run_id, written) == stored


def test_chain_rows_are_hashed_as_json_writes_them() -> None:
    """The rows of a part are hashed as ``json`` writes them (ASCII, escapes as it escapes),
    whichever encoder made the text: every character below 256, astral characters, lone
    surrogates, integers beyond 64 bits and nulls."""
    import json
    import random

    from scanner.store.chain import ascii_json

    reference = json.JSONEncoder(separators=(",", ":")).encode
    texts = [chr(c) for c in range(256)] + ["\U0001f600 astral", "lone \ud800 surrogate", "", "plain"]
    rnd = random.Random(7)
    texts += ["".join(rnd.choice(texts[:260]) for _ in range(rnd.randint(0, 12))) for _ in range(300)]
    rows = [(i, 2**70 if i == 3 else -i, None, text) for i, text in enumerate(texts)]
    for start in range(0, len(rows), 7):
        batch = rows[start:start + 7]
        assert ascii_json(batch) == reference(batch).encode("ascii")
