"""Scans that reuse stored results store what a scan from scratch of the same inputs stores, on
every backend: unchanged, after a commit, after a policy change, with a policy reading the time."""

from __future__ import annotations

import pathlib
import textwrap
from typing import Any

import pytest
from sqlalchemy import text

from scanner import scan
from scanner.config import load_config
from scanner.engine.types import RuleStatus
from scanner.scan.runner import ScanOutcome
from scanner.store import Store
from scanner.store.result_cache import TOUCH_AFTER, prune_entries, read_entries, write_entries
from tests.scan.conftest import POLICY, git, pod
from tests.store import scan_helpers
from tests.store.conftest import day

SERVICE_POLICY = """\
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: no-node-port}
spec:
  validationFailureAction: Audit
  rules:
  - name: type
    match: {any: [{resources: {kinds: [Service]}}]}
    validate:
      message: "{message}"
      pattern: {spec: {=(type): "!NodePort"}}
"""

CLOCK_POLICY = """\
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: clock}
spec:
  rules:
  - name: now
    match: {any: [{resources: {kinds: [ConfigMap]}}]}
    validate:
      message: "checked at {{ time_now_utc() }}"
      deny: {conditions: {all: [{key: "{{ time_now_utc() }}", operator: Equals, value: never}]}}
"""


def service(name: str, kind: str = "ClusterIP") -> str:
    return f"apiVersion: v1\nkind: Service\nmetadata: {{name: {name}, namespace: apps}}\nspec: {{type: {kind}}}\n"


def config_map(name: str) -> str:
    return f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: {name}, namespace: apps}}\ndata: {{a: b}}\n"


class Estate:
    """A Git repository and an export folder of manifests, policies, and a config per database."""

    def __init__(self, base: pathlib.Path) -> None:
        self.base = base
        self.repo = base / "repo"
        self.repo.mkdir()
        git(self.repo, "init", "-q", "-b", "main")
        self.policies = base / "policies"
        self.policies.mkdir()
        (self.policies / "require-team.yaml").write_text(POLICY)
        self.service_policy("Service type NodePort is not allowed")
        exports = base / "exports"
        exports.mkdir()
        (exports / "live.yaml").write_text(pod("live-a", "ops") + "---\n" + service("live-svc", "NodePort"))
        files = {f"apps/pod-{i}.yaml": pod(f"p{i}", "team" if i % 3 else None) for i in range(12)}
        files |= {f"apps/svc-{i}.yaml": service(f"s{i}", "NodePort" if i % 2 else "ClusterIP") for i in range(6)}
        files["apps/both.yaml"] = pod("both", None) + "---\n" + service("both") + "---\n" + config_map("cm")
        self.commit(files)

    def service_policy(self, message: str) -> None:
        (self.policies / "no-node-port.yaml").write_text(SERVICE_POLICY.replace("{message}", message))

    def commit(self, files: dict[str, str]) -> None:
        for rel, content in files.items():
            (self.repo / rel).parent.mkdir(parents=True, exist_ok=True)
            (self.repo / rel).write_text(content)
        git(self.repo, "add", "-A")
        git(self.repo, "commit", "-q", "-m", "change")

    def scan(self, url: str, name: str, *, tree: str = "git", jobs: int = 1, reuse: bool = True) -> ScanOutcome:
        """Scan the repository (as a Git source, or its working tree as a directory) and the export."""
        folder = self.base / name
        folder.mkdir(exist_ok=True)
        path = folder / "scanner.yaml"
        source = f"git: {{url: {self.repo}, ref: main}}" if tree == "git" else f"directory: {{path: {self.repo}}}"
        path.write_text(textwrap.dedent(f"""\
            database: {{url: "{url}"}}
            policies: [{{path: {self.policies}}}]
            sources:
              - name: gitops
                {source}
              - name: live
                export: {{path: {self.base / "exports"}}}
            reports: {{out: {folder / "reports"}, formats: []}}
            scan: {{cache_dir: {folder / "cache"}, fail_on: never, reuse: {str(reuse).lower()}}}
            """))
        return scan.run(load_config(str(path)), jobs=jobs)


def stored(url: str, run_id: int) -> tuple[list[str], list[str]]:
    """A run's results and errors as comparable text, without database ids."""
    with Store(url) as store:
        results = sorted(repr(r) for r in store.iter_run_results(run_id))
        errors = sorted(repr(e) for e in store.run_errors(run_id))
        assert store.verify_chain().ok
    return results, errors


def from_scratch(estate: Estate, url: str, name: str, **options: Any) -> tuple[list[str], list[str]]:
    """What a scan of the same inputs into a database without any earlier run stores."""
    with Store(url) as store, store.engine.begin() as connection:
        for table in ("result_cache", "shard_cache"):
            connection.execute(text(f"DELETE FROM {table}"))
    outcome = estate.scan(url, name, **options)
    assert (outcome.reused, outcome.replayed) == (0, 0)
    return stored(url, outcome.run_id)


def test_reuse_every_mode_stores_what_a_scan_from_scratch_stores(databases: tuple[str, str],
                                                                 tmp_path: pathlib.Path) -> None:
    reuse, scratch = databases
    estate = Estate(tmp_path)
    first = estate.scan(reuse, "first")
    assert first.reused == 0 and first.evaluated > 0 and first.replayed == 0
    assert stored(reuse, first.run_id) == from_scratch(estate, scratch, "scratch-first")

    unchanged = estate.scan(reuse, "unchanged")  # every shard sent again, nothing read or evaluated
    assert (unchanged.replayed, unchanged.evaluated) == (2, 0)
    assert stored(reuse, unchanged.run_id) == stored(reuse, first.run_id)

    estate.commit({"apps/pod-1.yaml": pod("p1", None), "apps/pod-new.yaml": pod("new", "team")})
    changed = estate.scan(reuse, "commit")  # the export is sent again; of the tree, two Pods evaluated
    assert (changed.replayed, changed.evaluated) == (1, 2)
    assert stored(reuse, changed.run_id) == from_scratch(estate, scratch, "scratch-commit")

    estate.service_policy("NodePort Services are not allowed")
    reworded = estate.scan(reuse, "policy")  # only the changed policy, for the 8 Services
    assert (reworded.replayed, reworded.evaluated) == (0, 8)
    assert reworded.reused > 0
    assert stored(reuse, reworded.run_id) == from_scratch(estate, scratch, "scratch-policy")


def test_reuse_is_off_unless_the_config_asks(databases: tuple[str, str], tmp_path: pathlib.Path) -> None:
    url, _ = databases
    estate = Estate(tmp_path)
    first = estate.scan(url, "first", reuse=False)
    again = estate.scan(url, "again", reuse=False)  # evaluated again, nothing stored for reuse
    assert (again.reused, again.replayed) == (0, 0) and again.evaluated == first.evaluated == 0
    with Store(url) as store, store.engine.connect() as connection:
        assert [connection.execute(text(f"SELECT count(*) FROM {t}")).scalar_one()
                for t in ("result_cache", "shard_cache")] == [0, 0]
    assert stored(url, again.run_id) == stored(url, first.run_id)


def test_reuse_directory_is_read_again_but_not_evaluated_with_workers(databases: tuple[str, str],
                                                                      tmp_path: pathlib.Path) -> None:
    reuse, scratch = databases
    estate = Estate(tmp_path)
    estate.scan(reuse, "first", tree="directory", jobs=2)
    again = estate.scan(reuse, "again", tree="directory", jobs=2)
    # the export's two shards are sent again; the directory is read, and nothing evaluated
    assert (again.replayed, again.evaluated) == (2, 0) and again.reused > 0
    assert stored(reuse, again.run_id) == from_scratch(estate, scratch, "scratch", tree="directory", jobs=2)


def test_reuse_never_keeps_what_a_policy_reading_the_time_gave(databases: tuple[str, str],
                                                               tmp_path: pathlib.Path) -> None:
    reuse, scratch = databases
    estate = Estate(tmp_path)
    (estate.policies / "clock.yaml").write_text(CLOCK_POLICY)
    estate.scan(reuse, "first")
    again = estate.scan(reuse, "again")
    # no shard is sent again; the ConfigMap meets the clock policy anew, the rest is reused
    assert (again.replayed, again.evaluated) == (0, 1)
    assert again.reused > 0
    assert stored(reuse, again.run_id) == from_scratch(estate, scratch, "scratch")


def test_reuse_cache_rows_go_with_the_runs_that_used_them(databases: tuple[str, str],
                                                          tmp_path: pathlib.Path) -> None:
    reuse, _ = databases
    estate = Estate(tmp_path)
    estate.scan(reuse, "first")
    with Store(reuse) as store:
        with store.engine.connect() as connection:
            counts = [connection.execute(text(f"SELECT COUNT(*) FROM {table}")).scalar_one()
                      for table in ("result_cache", "shard_cache")]
        assert counts[0] > 0 and counts[1] == 4  # two shards: the output of each, and its footprint
        store.prune(0)  # every run older than now: the rows they used go with them
        with store.engine.connect() as connection:
            assert [connection.execute(text(f"SELECT COUNT(*) FROM {table}")).scalar_one()
                    for table in ("result_cache", "shard_cache")] == [0, 0]
    assert estate.scan(reuse, "after").reused == 0


@pytest.mark.parametrize(("reused_by", "last_run"), [
    (5, 1),
    (TOUCH_AFTER + 1, 1),
    (TOUCH_AFTER + 2, TOUCH_AFTER + 2),
], ids=["reused-soon-after-is-not-written-again", "reused-at-the-limit-is-not-written-again",
        "reused-later-moves-to-the-run"])
def test_reuse_rows_reused_move_to_the_run_now_and_then(store: Store, reused_by: int, last_run: int) -> None:
    with store.engine.begin() as connection:
        write_entries(connection, 1, {"d1": b"one"}, [])
        write_entries(connection, reused_by, {"d2": b"two"}, ["d1"])
        rows = dict(connection.execute(text("SELECT document_digest, last_run_id FROM result_cache")).all())
        assert rows == {"d1": last_run, "d2": reused_by}
        assert read_entries(connection, ["d1", "d2", "d3"]) == {"d1": b"one", "d2": b"two"}
        assert prune_entries(connection) == 2  # no run is left: nothing is kept


def test_reuse_migration_keeps_every_past_run_as_it_was(database_url: str) -> None:
    """Revisions 0010 and 0011 change no stored run: each link's content digest, and the chain,
    verify the same before and after downgrading below them and upgrading again."""
    with Store(database_url, check_schema=False) as store:
        store.upgrade()
        outcome = {scan_helpers.pod("a"): {("require-labels", "check"): RuleStatus.FAIL},
                   scan_helpers.pod("b"): {("require-labels", "check"): RuleStatus.PASS}}
        runs = [scan_helpers.scan(store, day(n), outcome) for n in (1, 2)]
        before = [store.chain_link(run) for run in runs]
        store.downgrade("0009")
        assert [store.chain_link(run) for run in runs] == before and store.verify_chain().ok
        store.upgrade()
        assert [store.chain_link(run) for run in runs] == before and store.verify_chain().ok
