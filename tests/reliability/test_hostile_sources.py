"""Hostile sources, run through ``scanner scan`` end to end (issue 33, items 2, 4, 5, 7, 8, 9, 19, 20).

Each test plants a hostile input or a fault in real Git repositories and folders made in
``tmp_path``, runs the scanner as a user would (its own process, its exit status, its
stderr) and checks the fixed behaviour: a located error or warning, the scan goes on,
nothing lost (every good resource reported), nothing leaked (the planted secret is in no
output, no report, not in the SQLite database, not in the Git cache), nothing read from
outside the source. Run alone with ``pytest -m reliability``.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path
from urllib.parse import quote

import pytest
import yaml

import scanner.yamldoc.lists as yamllists
from scanner.sources.export import ExportSource
from scanner.sources.provenance import Resource
from tests.sources.git_http import git_http_server

pytestmark = pytest.mark.reliability

SCANNER = str(Path(sys.executable).with_name("scanner"))
POLICY = """\
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: require-team}
spec:
  validationFailureAction: Enforce
  rules:
  - name: team
    match: {any: [{resources: {kinds: [ConfigMap]}}]}
    validate:
      message: team label required
      pattern: {metadata: {labels: {team: "?*"}}}
"""
GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@e",
           "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
SECRET = "Sup3r:s3cret@pw/1"  # planted: must be in no output


def configmap(name: str, extra: str = "") -> str:
    return f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n  labels: {{team: a}}\n{extra}"


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True,
                          env={**os.environ, **GIT_ENV}).stdout.strip()


def make_repo(path: Path, files: dict[str, str]) -> Path:
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    write(path, files)
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "manifests")
    return path


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


class Scan:
    """One ``scanner scan`` run: exit status, output, its JSON report and its database."""

    def __init__(self, base: Path, sources: str, name: str = "scan") -> None:
        self.base, self.name = base, name
        self.config = base / f"{name}.yaml"
        self.db = base / f"{name}.db"
        self.reports = base / f"{name}-reports"
        self.config.write_text(
            f'database: {{url: "sqlite:///{self.db}"}}\npolicies: [{{path: policies}}]\n'
            f"sources:\n{textwrap.indent(textwrap.dedent(sources), '  ')}\n"
            f"reports: {{out: {self.reports}, formats: [html, json]}}\nscan: {{cache_dir: cache, jobs: 2}}\n")
        (base / "policies").mkdir(exist_ok=True)
        (base / "policies" / "require-team.yaml").write_text(POLICY)

    def start(self) -> subprocess.Popen:
        return subprocess.Popen([SCANNER, "scan", "--config", str(self.config)], cwd=self.base,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def run(self, timeout: float = 120) -> Scan:
        proc = self.start()
        self.out, self.err = proc.communicate(timeout=timeout)  # a hang fails here
        self.code = proc.returncode
        assert "Traceback" not in self.err, self.err
        report = sorted(self.reports.glob("*.json"))[-1]
        self.report_text = report.read_text()
        self.report = json.loads(self.report_text)
        return self

    def resources(self) -> list[tuple[str, str]]:
        """(path, name) of each resource the last run stored."""
        with sqlite3.connect(self.db) as db:
            return sorted(db.execute(
                "SELECT o.path, r.name FROM resource_observations o JOIN resources r USING (resource_id) "
                "WHERE o.run_id = (SELECT max(run_id) FROM runs)").fetchall())

    def errors(self) -> list[tuple[str, str]]:
        return sorted((e["location"], e["message"]) for e in self.report["errors"])

    def everything(self) -> str:
        """Every output of the run: stdout, stderr, each report, the database dumped as SQL."""
        texts = [self.out, self.err, *(p.read_text(errors="replace") for p in self.reports.iterdir())]
        with sqlite3.connect(self.db) as db:
            texts.extend(db.iterdump())
        return "\n".join(texts)


HUGE = "1" * 5000


@pytest.mark.parametrize("kind", ["directory", "git"])
def test_huge_integer_is_read_as_kyverno_reads_it_and_the_files_after_it_are_read(tmp_path, kind):
    """Item 4: a 5,000-digit integer (beyond Python's int-string limit) no longer aborts its source."""
    files = {"a.yaml": configmap("a"), "b-huge.yaml": configmap("huge", f"data:\n  n: {HUGE}\n"),
             "c.yaml": configmap("c")}
    if kind == "git":
        make_repo(tmp_path / "repo", files)
        source = "- name: src\n  git: {url: repo, ref: main}\n"
    else:
        write(tmp_path / "dir", files)
        source = "- name: src\n  directory: {path: dir}\n"
    scan = Scan(tmp_path, source).run()
    assert scan.code == 0, scan.err
    assert scan.resources() == [("a.yaml", "a"), ("b-huge.yaml", "huge"), ("c.yaml", "c")]
    assert scan.errors() == []


def test_huge_integer_in_apply_is_no_traceback(tmp_path):
    (tmp_path / "policy.yaml").write_text(POLICY)
    (tmp_path / "cm.yaml").write_text(configmap("huge", f"data:\n  n: {HUGE}\n") + "---\n" + configmap("b"))
    proc = subprocess.run([SCANNER, "apply", str(tmp_path / "policy.yaml"), "--resource", str(tmp_path / "cm.yaml")],
                          capture_output=True, text=True, timeout=120)
    assert "Traceback" not in proc.stderr and proc.returncode == 0, proc.stderr
    assert "pass: 2" in proc.stdout, proc.stdout


def test_fifo_named_yaml_is_skipped_and_recorded_without_blocking(tmp_path):
    """Item 5: only regular files are read; the scan does not wait on a FIFO (a hang fails ``run``)."""
    write(tmp_path / "dir", {"a.yaml": configmap("a"), "z.yaml": configmap("z")})
    os.mkfifo(tmp_path / "dir" / "m-pipe.yaml")
    scan = Scan(tmp_path, "- name: src\n  directory: {path: dir}\n").run(timeout=60)
    assert scan.resources() == [("a.yaml", "a"), ("z.yaml", "z")]
    assert scan.errors() == [("m-pipe.yaml", "cannot read file: not a regular file (a FIFO)")]
    assert scan.code == 1  # an unread input fails the gate (fail_on: enforce)


@pytest.mark.parametrize("kind", ["directory", "git"])
def test_links_leading_outside_the_source_are_not_read(tmp_path, kind):
    """Item 2 (files and folders): a link to a file or folder outside the root is refused and located."""
    outside = tmp_path / "host"
    write(outside, {"planted.yaml": configmap("planted-outside")})
    files = {"a.yaml": configmap("a"), "inside/b.yaml": configmap("b")}
    root = make_repo(tmp_path / "repo", files) if kind == "git" else tmp_path / "repo"
    if kind == "directory":
        write(root, files)
    (root / "leak.yaml").symlink_to(outside / "planted.yaml")
    (root / "leak-folder").symlink_to(outside)
    (root / "inside-link.yaml").symlink_to("a.yaml")  # a link inside the source is fine
    if kind == "git":
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", "links")
        source = "- name: src\n  git: {url: repo, ref: main}\n"
    else:
        source = "- name: src\n  directory: {path: repo}\n"
    scan = Scan(tmp_path, source).run()
    assert scan.resources() == [("a.yaml", "a"), ("inside-link.yaml", "a"), ("inside/b.yaml", "b")]
    assert scan.errors() == [
        ("leak-folder", "cannot read folder: a symbolic link leading outside the source"),
        ("leak.yaml", "cannot read file: a symbolic link leading outside the source")]
    assert "planted-outside" not in scan.everything()


def _clone(tmp_path: Path) -> Path:
    [clone] = [p for p in (tmp_path / "cache" / "git").iterdir() if p.is_dir()]
    return clone


@pytest.mark.parametrize("damage", [
    pytest.param(lambda c: (c / ".git" / "HEAD").write_text("garbage"), id="garbage-head"),
    pytest.param(lambda c: [p.unlink() if p.is_file() else None for p in (c / ".git").iterdir()], id="emptied-git"),
    pytest.param(lambda c: (c / ".git" / "packed-refs").write_text("junk\n"), id="bad-packed-refs"),
    pytest.param(lambda c: (c / ".git" / "config.lock").write_text(""), id="stale-config-lock"),
    pytest.param(lambda c: (c / ".git" / "refs" / "remotes" / "origin" / "main.lock").write_text(""),
                 id="stale-ref-lock"),
])
def test_a_damaged_git_cache_heals_on_the_next_run(tmp_path, damage):
    """Item 7: the next run repairs the cache (cloning again when needed) and reads the new commit."""
    repo = make_repo(tmp_path / "repo", {"a.yaml": configmap("a")})
    scan = Scan(tmp_path, "- name: src\n  git: {url: repo, ref: main}\n")
    assert scan.run().resources() == [("a.yaml", "a")]
    damage(_clone(tmp_path))
    write(repo, {"b.yaml": configmap("b")})
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "b")
    scan.run()
    assert scan.code == 0, scan.err
    assert scan.resources() == [("a.yaml", "a"), ("b.yaml", "b")]
    assert scan.run().code == 0 and "unusable" not in scan.err  # healed for good


def test_a_cache_path_that_is_a_file_is_cloned_again_with_a_message(tmp_path):
    make_repo(tmp_path / "repo", {"a.yaml": configmap("a")})
    scan = Scan(tmp_path, "- name: src\n  git: {url: repo, ref: main}\n")
    scan.run()
    clone = _clone(tmp_path)
    subprocess.run(["rm", "-rf", str(clone)], check=True)
    clone.write_text("not a clone")
    scan.run()
    assert scan.code == 0 and scan.resources() == [("a.yaml", "a")]
    assert f"the Git cache {clone} was unusable (it is not a folder): it is cloned again" in scan.err


def test_two_scans_sharing_a_cache_both_succeed(tmp_path):
    """Item 8: concurrent scans of one repository with one cache_dir take turns on the clone."""
    repo = make_repo(tmp_path / "repo", {f"m{i}.yaml": configmap(f"m{i}") for i in range(40)})
    source = "- name: src\n  git: {url: repo, ref: main}\n"
    for round_ in range(2):  # clone at once, then fetch at once
        scans = [Scan(tmp_path, source, f"scan{i}-{round_}") for i in range(3)]
        procs = [s.start() for s in scans]
        outputs = [p.communicate(timeout=300) for p in procs]
        assert [p.returncode for p in procs] == [0, 0, 0], outputs
        write(repo, {f"n{round_}.yaml": configmap(f"n{round_}")})
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", "more")


def test_a_password_in_a_git_url_is_leaked_nowhere(tmp_path, monkeypatch):
    """Item 9: the password reaches the server (as a header) and is in no output, report, database
    row, command line (GIT_TRACE) or file of the cache."""
    origin = make_repo(tmp_path / "origin", {"a.yaml": configmap("a")})
    served = tmp_path / "served"
    served.mkdir()
    subprocess.run(["git", "clone", "-q", "--bare", str(origin), str(served / "repo.git")], check=True)
    trace = tmp_path / "git-trace.log"
    monkeypatch.setenv("GIT_TRACE", str(trace))
    with git_http_server(served, "alice", SECRET) as server:
        url = server.url("repo.git").replace("http://", f"http://alice:{quote(SECRET, safe='')}@")
        good = Scan(tmp_path, f"- name: src\n  git: {{url: '{url}', ref: main}}\n", "good").run()
        bad_url = url.replace(quote(SECRET, safe=""), quote(SECRET[::-1], safe=""))
        bad = Scan(tmp_path, f"- name: src\n  git: {{url: '{bad_url}', ref: main}}\n", "bad").run()
    assert good.code == 0 and good.resources() == [("a.yaml", "a")]
    assert server.expected in server.authorizations
    assert bad.code == 3 and "http://127.0.0.1" in bad.everything()  # the failure names the server
    cache = "\n".join(p.read_text(errors="replace") for p in (tmp_path / "cache").rglob("*")
                      if p.is_file() and "objects" not in p.parts)
    for text in (good.everything(), bad.everything(), trace.read_text(), cache):
        for form in (SECRET, quote(SECRET, safe=""), SECRET[::-1], quote(SECRET[::-1], safe="")):
            assert form not in text


def test_list_items_ending_in_block_scalars_keep_their_final_line_break(tmp_path, monkeypatch):
    """Item 19: a large export List (split item by item) gives each value as the whole parse does."""
    items = [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"cm{i}"},
              "data": {"script": "echo " + "x" * (i % 50) + "\n" + ("\n" if i % 3 == 0 else "")}} for i in range(3000)]

    class Literal(yaml.SafeDumper):
        pass

    Literal.add_representer(str, lambda d, v: d.represent_scalar("tag:yaml.org,2002:str", v,
                                                                  style="|" if "\n" in v else None))
    text = yaml.dump({"apiVersion": "v1", "items": items, "kind": "List"}, Dumper=Literal, sort_keys=False)
    assert len(text) > yamllists.SPLIT_MIN_BYTES  # the splitter's size
    (tmp_path / "export.yaml").write_text(text)
    read = [i.data for i in ExportSource("e", [str(tmp_path / "export.yaml")]).iter_items() if isinstance(i, Resource)]
    assert [r["data"] for r in read] == [item["data"] for item in items]


def test_repeated_key_is_read_as_kyverno_reads_it_with_a_located_warning(tmp_path):
    """Item 20: last value kept, a located warning recorded, the gate not failed by it."""
    write(tmp_path / "dir", {
        "a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: first\n  labels: {team: a}\n  name: second\n",
        "b.yaml": configmap("b")})
    scan = Scan(tmp_path, "- name: src\n  directory: {path: dir}\n").run()
    assert scan.resources() == [("a.yaml", "second"), ("b.yaml", "b")]
    assert scan.errors() == [("a.yaml:6", 'mapping key "name" already defined: its last value is used')]
    assert scan.code == 0, scan.err


def test_repeated_key_in_apply_is_read_with_a_warning(tmp_path):
    (tmp_path / "policy.yaml").write_text(POLICY)
    (tmp_path / "cm.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: first\n  labels: {team: a}\n  name: second\n")
    proc = subprocess.run([SCANNER, "apply", str(tmp_path / "policy.yaml"), "-r", str(tmp_path / "cm.yaml"),
                           "-o", "json"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    assert [r["resource"]["name"] for r in json.loads(proc.stdout)] == ["second"]
    assert proc.stderr == (f'warning: {tmp_path / "cm.yaml"}:6:3: mapping key "name" already defined: '
                           "its last value is used\n")
