from __future__ import annotations

import pathlib
import shutil
import subprocess
import textwrap

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]

POLICY = """\
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: require-team
  annotations: {policies.kyverno.io/severity: high, policies.kyverno.io/title: Require team}
spec:
  validationFailureAction: Enforce
  rules:
  - name: team
    match: {any: [{resources: {kinds: [Pod]}}]}
    validate:
      message: team label required
      pattern: {metadata: {labels: {team: "?*"}}}
"""


def git(repo: pathlib.Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                   env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t",
                        "GIT_COMMITTER_EMAIL": "t@e", "HOME": str(repo), "PATH": "/usr/bin:/bin"})


def pod(name: str, team: str | None) -> str:
    labels = f"{{team: {team}}}" if team else "{}"
    return f"apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, namespace: apps, labels: {labels}}}\n" \
           "spec: {containers: [{name: c, image: nginx:1.25}]}\n"


class Project:
    """A temporary scan setup: a Git repository of manifests, policies and a config file."""

    def __init__(self, base: pathlib.Path) -> None:
        self.base = base
        self.repo = base / "repo"
        self.repo.mkdir()
        git(self.repo, "init", "-q", "-b", "main")
        (base / "policies").mkdir()
        (base / "policies" / "require-team.yaml").write_text(POLICY)
        self.db = base / "scan.db"

    def commit(self, files: dict[str, str], message: str = "change") -> None:
        for rel, text in files.items():
            path = self.repo / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        git(self.repo, "add", "-A")
        git(self.repo, "commit", "-q", "-m", message)

    def config(self, extra_sources: str = "", extra: str = "", fail_on: str = "enforce") -> pathlib.Path:
        """Write the config; ``extra_sources`` are YAML list items at column 0."""
        path = self.base / "scanner.yaml"
        sources = textwrap.indent(textwrap.dedent(extra_sources), "  ") if extra_sources else ""
        path.write_text(
            f'database: {{url: "sqlite:///{self.db}"}}\n'
            "policies: [{path: policies}]\n"
            "sources:\n"
            "  - name: gitops\n"
            "    git: {url: repo, ref: main}\n"
            f"{sources}\n"
            "reports: {out: reports, formats: [html, json]}\n"
            f"scan: {{cache_dir: cache, fail_on: {fail_on}}}\n"
            f"{extra}\n"
        )
        return path


@pytest.fixture
def project(tmp_path: pathlib.Path) -> Project:
    if shutil.which("git") is None:  # pragma: no cover - git is part of the machine
        pytest.fail("git is required")
    return Project(tmp_path)
