"""Faults and hostile values at the store, reproduced with real SQLite files and a real
PostgreSQL server (SCANNER_TEST_POSTGRES_URL), and the behaviour that fixes them (issue 33):
NUL characters in stored text, control characters in reports, a full disk, a frozen or
restarting server, a read-only database folder, run ids after a prune, passwords in the
database URL, the bound on jobs, and SIGTERM ending the whole process tree."""

from __future__ import annotations

import json
import os
import pathlib
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from scanner.errors import DatabaseLostError
from scanner.scan.pool import JOBS_PER_CPU, worker_count
from scanner.scan.processes import usable_cpus
from scanner.sources.git_tree import failure_cause
from scanner.store import RunStart, RunStatus, SourceRecord, SourceType, Store
from scanner.store.connect import describe, parse_url, redact_text
from scanner.store.storedtext import ESCAPE
from tests.reliability.tcpproxy import TcpProxy
from tests.store.conftest import POSTGRES_URL, fresh_schema
from tests.store.scan_helpers import pod, policy

pytestmark = pytest.mark.reliability

ROOT = pathlib.Path(__file__).resolve().parents[2]
PLANTED = "Pl4ntedS3cretXyz"
IS_ROOT = os.geteuid() == 0
NEEDS_ROOT = pytest.mark.skipif(not IS_ROOT, reason="mounts a small tmpfs (needs root)")
BACKENDS = [pytest.param("sqlite", id="sqlite"),
            pytest.param("postgres", id="postgres", marks=pytest.mark.postgres)]

POLICY = """\
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: require-team
spec:
  validationFailureAction: Enforce
  rules:
  - name: team
    match: {any: [{resources: {kinds: [Pod]}}]}
    validate:
      message: "team label required\\0 here \\e[31m"
      pattern: {metadata: {labels: {team: "?*"}}}
"""

# an ambiguous alternation under a star: exponential backtracking in Python's re
SLOW_POLICY = """\
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: slow
spec:
  validationFailureAction: Audit
  rules:
  - name: slow
    match: {any: [{resources: {kinds: [ConfigMap]}}]}
    validate:
      message: slow
      foreach:
      - list: request.object.spec.items
        foreach:
        - list: request.object.spec.items
          deny:
            conditions:
              any:
              - key: "{{ element }}"
                operator: Equals
                value: -1
"""


def pod_yaml(name: str, team: str | None = None) -> str:
    labels = f"{{team: {team}}}" if team else "{}"
    return (f'apiVersion: v1\nkind: Pod\nmetadata: {{name: "{name}", namespace: apps, labels: {labels}}}\n'
            "spec: {containers: [{name: c, image: nginx:1.25}]}\n")


def cli(*args: str, timeout: float = 120, **kwargs: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "scanner.cli", *args], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT, check=False, **kwargs)  # type: ignore[call-overload]


class Workspace:
    """A directory source of manifests, a policy folder, a report folder and a config file."""

    def __init__(self, base: pathlib.Path, database_url: str) -> None:
        self.base = base
        self.database_url = database_url
        (base / "manifests").mkdir(parents=True, exist_ok=True)
        (base / "policies").mkdir(exist_ok=True)
        (base / "policies" / "require-team.yaml").write_text(POLICY)
        self.reports = base / "reports"

    def manifests(self, files: dict[str, str]) -> None:
        for name, body in files.items():
            (self.base / "manifests" / name).write_text(body)

    def config(self, extra: str = "", jobs: int | None = None) -> pathlib.Path:
        path = self.base / "scanner.yaml"
        scan = f"scan: {{jobs: {jobs}}}\n" if jobs else ""
        path.write_text(textwrap.dedent(f"""\
            database: {{url: "{self.database_url}"}}
            policies: [{{path: policies}}]
            sources:
            - name: files
              directory: {{path: manifests}}
            reports: {{out: reports, formats: [html, json]}}
            """) + scan + extra)
        return path

    def scan(self, *args: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
        return cli("scan", "--config", str(self.config()), "-q", *args, timeout=timeout)


@pytest.fixture
def postgres_url() -> Iterator[str]:
    """A fresh schema on the test server (dropped afterwards)."""
    with fresh_schema("scanner_rel") as url:
        yield url


@pytest.fixture(params=BACKENDS)
def database_url(request: pytest.FixtureRequest, tmp_path: pathlib.Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path}/db/scanner.db"
        return
    yield request.getfixturevalue("postgres_url")


@pytest.fixture
def workspace(tmp_path: pathlib.Path, database_url: str) -> Workspace:
    (tmp_path / "db").mkdir(exist_ok=True)
    space = Workspace(tmp_path / "ws", database_url)
    if database_url.startswith("postgresql"):
        Store(database_url, check_schema=False).upgrade()
    return space


def stored_names(url: str) -> list[str]:
    engine = create_engine(url)
    try:
        with engine.connect() as connection:
            return sorted(connection.execute(text("SELECT name FROM resources")).scalars())
    finally:
        engine.dispose()


# -- item 3 and 16: NUL and control characters ------------------------------------------------
def test_nul_in_names_and_messages_is_stored_and_reported(workspace: Workspace) -> None:
    workspace.manifests({"a.yaml": pod_yaml("web\\0evil"), "b.yaml": pod_yaml("ok", "x")})
    done = workspace.scan()
    assert done.returncode == 1, done.stderr  # an Enforce failure: the scan stored everything
    assert stored_names(workspace.database_url) == ["ok", f"web{ESCAPE}0evil"]
    [report_json] = workspace.reports.glob("scanner-run-*.json")
    document = json.loads(report_json.read_text())
    text_of = json.dumps(document)
    assert "web\\u0000evil" in text_of and "team label required\\u0000 here \\u001b[31m" in text_of
    [html] = workspace.reports.glob("scanner-run-*.html")
    page = html.read_text()
    assert "\x00" not in page and "\x1b" not in page
    assert "web\u2400evil" in page and "team label required\u2400 here \u241b[31m" in page


def test_nul_is_stored_alike_on_both_backends(tmp_path: pathlib.Path, postgres_url: str) -> None:
    values = []
    for url in (f"sqlite:///{tmp_path}/a.db", postgres_url):
        Store(url, check_schema=False).upgrade()
        with Store(url) as store, store.begin_run(RunStart(started_at=_now())) as run:
            run.add_source(SourceRecord(name="s", type=SourceType.DIRECTORY))
            run.add_policies([policy("require-labels")])
            run.add_resources([pod("a\x00b", source="s")])
        values.append(stored_names(url))
    assert values[0] == values[1] == [f"a{ESCAPE}0b"]


@pytest.mark.parametrize(("stderr", "cause"), [
    pytest.param("fatal: Could not read from remote repository.\n\nPlease make sure you have the correct "
                 "access rights\nand the repository exists.\n", "fatal: Could not read from remote repository.",
                 id="advice-after-fatal-is-not-the-cause"),
    pytest.param("warning: redirecting\nerror: pathspec 'x' did not match\n", "error: pathspec 'x' did not match",
                 id="error-line-over-warning"),
    pytest.param("something odd\n", "something odd", id="no-fatal-line-takes-last"),
    pytest.param("", None, id="nothing-said"),
])
def test_git_failure_messages_keep_their_subject(stderr: str, cause: str | None) -> None:
    assert failure_cause(stderr) == cause


def test_empty_string_config_value_is_named(tmp_path: pathlib.Path) -> None:
    config = tmp_path / "c.yaml"
    config.write_text('database: {url: "sqlite:///x.db"}\npolicies: [{path: p}]\nsources:\n- name: ""\n'
                      "  directory: {path: m}\n")
    done = cli("scan", "--config", str(config))
    assert done.returncode == 2
    assert "not a string" not in done.stderr and "must be a non-empty string, not an empty string" in done.stderr


def _now() -> datetime:
    return datetime.now(UTC)


# -- item 11: a full disk --------------------------------------------------------------------
@NEEDS_ROOT
def test_disk_full_leaves_reads_and_prune_working_and_reclaims_partial_rows(tmp_path: pathlib.Path) -> None:
    mount = tmp_path / "small"
    mount.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1200k", "tmpfs", str(mount)], check=True)
    try:
        space = Workspace(tmp_path / "ws", f"sqlite:///{mount}/scanner.db")
        space.manifests({"a.yaml": pod_yaml("a", "x")})
        assert space.scan().returncode == 0
        filler = mount / "filler"
        # many resources with long names: the run's rows do not fit in what is left
        space.manifests({f"p{i}.yaml": "---\n".join(pod_yaml(f"p{i}-{j}-" + "n" * 200) for j in range(50))
                         for i in range(40)})
        subprocess.run(["dd", "if=/dev/zero", f"of={filler}", "bs=64k", "count=8"], capture_output=True, check=False)
        failures = [space.scan() for _ in range(3)]
        assert all(f.returncode != 0 for f in failures)
        assert any("disk is full" in f.stderr for f in failures), failures[-1].stderr
        size_after_failures = (mount / "scanner.db").stat().st_size
        listed = cli("runs", "list", "--database", space.database_url)
        assert listed.returncode == 0, listed.stderr
        assert listed.stdout.splitlines()[1].split()[0] in {"1", "2", "3", "4"}
        report = cli("report", "--database", space.database_url, "--run", "1", "--format", "json", "--out", "-")
        assert report.returncode == 0, report.stderr
        filler.unlink()
        pruned = cli("db", "prune", "--keep-days", "30", "--database", space.database_url)
        assert pruned.returncode == 0, pruned.stderr
        with Store(space.database_url, read_only=True) as store:
            runs = store.list_runs(limit=10)
            assert [r.status for r in runs if r.run_id > 1] and all(
                r.status in (RunStatus.FAILED, RunStatus.INTERRUPTED) for r in runs if r.run_id > 1)
        connection = sqlite3.connect(f"{mount}/scanner.db")
        leftover = connection.execute("SELECT count(*) FROM resource_observations WHERE run_id > 1").fetchone()[0]
        connection.close()
        assert leftover == 0
        # retries reuse the freed pages: the file does not grow with each failed run
        subprocess.run(["dd", "if=/dev/zero", f"of={filler}", "bs=64k", "count=8"], capture_output=True, check=False)
        for _ in range(2):
            space.scan()
        assert (mount / "scanner.db").stat().st_size <= max(size_after_failures, 1) * 1.1 + 65536
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def test_failed_run_loses_its_partial_rows(database_url: str, tmp_path: pathlib.Path) -> None:
    (tmp_path / "db").mkdir(exist_ok=True)
    Store(database_url, check_schema=False).upgrade()
    with Store(database_url) as store:
        with pytest.raises(RuntimeError), store.begin_run(RunStart(started_at=_now())) as run:
            run.add_source(SourceRecord(name="s", type=SourceType.DIRECTORY))
            run.add_policies([policy("require-labels")])
            run.add_resources([pod("a", source="s"), pod("b", source="s")])
            raise RuntimeError("the scan failed")
        assert store.find_run(run.run_id).status == RunStatus.FAILED
        with store.engine.connect() as connection:
            left = connection.execute(text("SELECT count(*) FROM resource_observations")).scalar_one()
        assert left == 0


# -- item 12: a frozen or restarting PostgreSQL ------------------------------------------------
def _through(proxy: TcpProxy, url: str, **query: str) -> str:
    parsed = make_url(url).set(host="127.0.0.1", port=proxy.port)
    return parsed.update_query_dict(query).render_as_string(hide_password=False)


@pytest.fixture
def proxy() -> Iterator[TcpProxy]:
    target = make_url(POSTGRES_URL)
    running = TcpProxy(target.host or "127.0.0.1", target.port or 5432)
    yield running
    running.close()


@pytest.mark.postgres
def test_frozen_postgres_fails_fast_as_a_lost_database(postgres_url: str, proxy: TcpProxy) -> None:
    Store(postgres_url, check_schema=False).upgrade()
    url = _through(proxy, postgres_url, statement_timeout="1", connect_timeout="1", reconnect_for="2")
    with Store(url) as store:
        store.list_runs()
        proxy.freeze()
        started = time.monotonic()
        with pytest.raises(DatabaseLostError, match=r"did not answer|unreachable|check that the server"):
            store.list_runs()
        assert time.monotonic() - started < 15


@pytest.mark.postgres
def test_restarted_postgres_is_reconnected_and_the_run_finishes(postgres_url: str, proxy: TcpProxy) -> None:
    Store(postgres_url, check_schema=False).upgrade()
    url = _through(proxy, postgres_url, reconnect_for="20", connect_timeout="2")
    with Store(url, heartbeat_interval=0.2) as store:
        with store.begin_run(RunStart(started_at=_now())) as run:
            run.add_source(SourceRecord(name="s", type=SourceType.DIRECTORY))
            run.add_policies([policy("require-labels")])
            proxy.restart(down_for=2.0)  # between two writes, as while the workers evaluate
            time.sleep(0.5)
            run.add_resources([pod("a", source="s")])
            status = run.finish()
        assert status == RunStatus.SUCCEEDED
        assert store.summarize_run(run.run_id) is not None


@pytest.mark.postgres
def test_unreachable_database_exits_4_not_2(tmp_path: pathlib.Path, proxy: TcpProxy) -> None:
    proxy.restart(down_for=3600)
    url = _through(proxy, POSTGRES_URL, reconnect_for="1", connect_timeout="1")
    space = Workspace(tmp_path, url)
    space.manifests({"a.yaml": pod_yaml("a", "x")})
    done = space.scan()
    assert done.returncode == 4, done.stderr
    assert "check that the server is running" in done.stderr
    listed = cli("runs", "list", "--database", url)
    assert listed.returncode == 4


# -- item 13: a read-only database folder ------------------------------------------------------
@NEEDS_ROOT
def test_read_only_folder_still_lists_and_reports(tmp_path: pathlib.Path) -> None:
    folder = tmp_path / "db"
    space = Workspace(tmp_path / "ws", f"sqlite:///{folder}/scanner.db")
    folder.mkdir()
    space.manifests({"a.yaml": pod_yaml("a", "x")})
    assert space.scan().returncode == 0
    view = tmp_path / "ro"
    view.mkdir()
    subprocess.run(["mount", "--bind", str(folder), str(view)], check=True)
    try:
        subprocess.run(["mount", "-o", "remount,bind,ro", str(view)], check=True)
        url = f"sqlite:///{view}/scanner.db"
        listed = cli("runs", "list", "--database", url)
        assert listed.returncode == 0, listed.stderr
        assert listed.stdout.splitlines()[1].split()[0] == "1"
        shown = cli("report", "--database", url, "--run", "latest", "--format", "json", "--out", "-")
        assert shown.returncode == 0, shown.stderr
        assert json.loads(shown.stdout)["run"]["id"] == 1
        assert sorted(p.name for p in view.iterdir()) == ["scanner.db"]
    finally:
        subprocess.run(["umount", str(view)], check=False)


# -- item 15: run ids after a prune ------------------------------------------------------------
def test_run_ids_are_not_reused_after_prune(workspace: Workspace) -> None:
    workspace.manifests({"a.yaml": pod_yaml("a", "x")})
    assert workspace.scan().returncode == 0
    assert workspace.scan().returncode == 0
    pruned = cli("db", "prune", "--keep-days", "0", "--database", workspace.database_url)
    assert pruned.returncode == 0, pruned.stderr
    assert workspace.scan().returncode == 0
    with Store(workspace.database_url, read_only=True) as store:
        assert [r.run_id for r in store.list_runs()] == [3]
    assert sorted(p.name for p in workspace.reports.glob("*.json")) == [
        "scanner-run-1.json", "scanner-run-2.json", "scanner-run-3.json"]


# -- item 9: passwords in the database URL -----------------------------------------------------
@pytest.mark.parametrize("url", [
    pytest.param(f"postgresql+psycopg://bob:{PLANTED}@127.0.0.1:1/db?reconnect_for=0", id="userinfo"),
    pytest.param(f"postgresql+psycopg://bob@127.0.0.1:1/db?password={PLANTED}&reconnect_for=0", id="query"),
    pytest.param(f"postgresql://bob:{PLANTED}@127.0.0.1:1/db?password={PLANTED}&sslpassword={PLANTED}"
                 "&reconnect_for=0", id="both-and-sslpassword"),
])
def test_database_password_never_printed(url: str, tmp_path: pathlib.Path) -> None:
    space = Workspace(tmp_path, url)
    space.manifests({"a.yaml": pod_yaml("a", "x")})
    outputs = [space.scan(), cli("runs", "list", "--database", url), cli("db", "current", "--database", url),
               cli("db", "prune", "--keep-days", "1", "--database", url), cli("scan", "--config", str(space.config()))]
    for done in outputs:
        assert done.returncode in (2, 4)
        assert PLANTED not in done.stdout + done.stderr
        assert "***" in done.stderr
    assert PLANTED not in describe(parse_url(url))


@pytest.mark.parametrize(("text_in", "shown"), [
    pytest.param(f"x postgresql://u:{PLANTED}@h/db y", "x postgresql://u:***@h/db y", id="url-userinfo"),
    pytest.param(f"host=h password={PLANTED} user=u", "host=h password=*** user=u", id="conninfo"),
    pytest.param(f"host=h password='{PLANTED} x' user=u", "host=h password=*** user=u", id="conninfo-quoted"),
    pytest.param(f"...db?sslmode=require&PASSWORD={PLANTED}&a=b", "...db?sslmode=require&PASSWORD=***&a=b",
                 id="query-any-case"),
])
def test_redact_text_every_form(text_in: str, shown: str) -> None:
    assert redact_text(text_in) == shown


@pytest.mark.postgres
def test_planted_password_absent_from_logs_reports_and_dumps(tmp_path: pathlib.Path, postgres_url: str) -> None:
    """Trust authentication ignores the password: the scan succeeds with it in the URL."""
    Store(postgres_url, check_schema=False).upgrade()
    url = make_url(postgres_url).set(password=PLANTED).update_query_dict({"password": PLANTED})
    rendered = url.render_as_string(hide_password=False)
    space = Workspace(tmp_path, rendered)
    space.manifests({"a.yaml": pod_yaml("a\\0", "x")})
    done = space.scan("-v")
    listed = cli("runs", "show", "latest", "--database", rendered)
    assert done.returncode == 0 and listed.returncode == 0, done.stderr + listed.stderr
    seen = done.stdout + done.stderr + listed.stdout + listed.stderr
    seen += "".join(p.read_text(errors="replace") for p in space.reports.iterdir())
    target = make_url(POSTGRES_URL)
    dump = subprocess.run(["pg_dump", "-h", target.host or "127.0.0.1", "-p", str(target.port or 5432),
                           "-U", target.username or "postgres", target.database or ""],
                          capture_output=True, text=True, check=True).stdout
    assert PLANTED not in seen and PLANTED not in dump
    assert "a\u24000" in dump  # the NUL stored escaped


# -- item 6: jobs ---------------------------------------------------------------------------------
def test_jobs_beyond_the_maximum_are_refused(tmp_path: pathlib.Path) -> None:
    space = Workspace(tmp_path, f"sqlite:///{tmp_path}/s.db")
    space.manifests({"a.yaml": pod_yaml("a", "x")})
    config = space.config(jobs=100000)
    done = cli("scan", "--config", str(config))
    assert done.returncode == 2 and "scan.jobs: must be at most 256, not 100000" in done.stderr
    flag = cli("scan", "--config", str(space.config()), "--jobs", "100000")
    assert flag.returncode == 2 and "--jobs" in flag.stderr


@pytest.mark.parametrize(("asked", "started"), [
    pytest.param(None, "cpus", id="default-one-per-cpu"),
    pytest.param(1, 1, id="one-is-one"),
    pytest.param(256, "cap", id="many-capped-per-cpu"),
])
def test_worker_count_is_bounded_per_cpu(asked: int | None, started: object) -> None:
    cpus = usable_cpus()
    expected = {"cpus": cpus, "cap": min(256, JOBS_PER_CPU * cpus)}.get(started, started)  # type: ignore[call-overload]
    assert worker_count(asked) == expected


# -- item 17: SIGTERM ends the whole process tree ----------------------------------------------
def _descendants(pid: int) -> set[int]:
    found: set[int] = set()
    frontier = [pid]
    while frontier:
        parent = frontier.pop()
        for entry in pathlib.Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == parent and int(entry.name) not in found and fields[0] != "Z":
                found.add(int(entry.name))
                frontier.append(int(entry.name))
    return found


def _cpu_ticks(pid: int) -> int:
    fields = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def _alive(pid: int) -> bool:
    try:
        state = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_sigterm_ends_the_scan_and_its_busy_workers(tmp_path: pathlib.Path) -> None:
    space = Workspace(tmp_path, f"sqlite:///{tmp_path}/s.db")
    (space.base / "policies" / "slow.yaml").write_text(SLOW_POLICY)
    # a nested foreach of 90,000 elements per object (within the rule's step budget): both
    # workers evaluate for many seconds
    items = ", ".join(str(k) for k in range(300))
    space.manifests({f"c{i}.yaml": "".join(f"---\napiVersion: v1\nkind: ConfigMap\nmetadata: {{name: c{i}-{j}, "
                                           f"namespace: x}}\nspec: {{items: [{items}]}}\n" for j in range(100))
                     for i in range(2)})
    scan = subprocess.Popen([sys.executable, "-m", "scanner.cli", "scan", "--config", str(space.config()), "-q",
                             "--jobs", "2"], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    busy: set[int] = set()
    tree: set[int] = set()
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not busy:
            time.sleep(0.5)
            for child in _descendants(scan.pid):
                try:
                    if _cpu_ticks(child) >= 100:  # a second of CPU time in one evaluation
                        busy.add(child)
                except OSError:
                    continue
        assert busy, "no worker became busy evaluating"
        tree = _descendants(scan.pid)
        scan.send_signal(signal.SIGTERM)  # the scan's process alone, as `kill` does
        _, errors = scan.communicate(timeout=30)  # (read: a full pipe would block the scan)
        code = scan.returncode
        end = time.monotonic() + 10
        while time.monotonic() < end and any(_alive(p) for p in tree):
            time.sleep(0.2)
        assert [p for p in tree if _alive(p)] == []
        assert code == 128 + signal.SIGTERM, errors
        with Store(f"sqlite:///{tmp_path}/s.db", read_only=True) as store:
            assert [r.status for r in store.list_runs()] in ([], [RunStatus.INTERRUPTED])
    finally:  # nothing left behind, whatever happened (workers ignore SIGTERM)
        if scan.poll() is None:
            scan.kill()
        for p in tree | busy:
            if _alive(p):
                os.kill(p, signal.SIGKILL)
