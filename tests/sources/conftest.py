"""Real Git repositories built in tmp_path with the git CLI."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from scanner.sources.file_tree import DiskTree, FileTree
from scanner.sources.git_tree import GitTree

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Tester", "GIT_AUTHOR_EMAIL": "t@example.test",
    "GIT_COMMITTER_NAME": "Tester", "GIT_COMMITTER_EMAIL": "t@example.test",
    "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1",
}


class Repo:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.git("init", "-q", "-b", "main")

    def git(self, *args: str, date: str = "2026-01-15T12:00:00Z") -> str:
        env = {**os.environ, **GIT_ENV, "GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}
        return subprocess.run(["git", "-C", str(self.path), "-c", "commit.gpgsign=false", *args],
                              env=env, check=True, capture_output=True, text=True).stdout.strip()

    def write(self, rel: str, text: str) -> None:
        p = self.path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)

    def remove(self, rel: str) -> None:
        (self.path / rel).unlink()

    def commit(self, message: str, date: str = "2026-01-15T12:00:00Z") -> str:
        self.git("add", "-A")
        self.git("commit", "-q", "-m", message, date=date)
        return self.git("rev-parse", "HEAD")


@pytest.fixture
def make_repo(tmp_path: Path):
    def make(name: str = "origin") -> Repo:
        path = tmp_path / name
        path.mkdir()
        return Repo(path)
    return make


def deployment(name: str, namespace: str | None = None, image: str = "nginx:1.27") -> str:
    ns = f"\n  namespace: {namespace}" if namespace else ""
    return (f"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {name}{ns}\n"
            f"spec:\n  template:\n    spec:\n      containers:\n      - name: app\n"
            f"        image: {image}\n")


TREE_KINDS = ["disk", "git-loose-objects", "git-packed-objects"]


def tree_of(root: Path, kind: str) -> FileTree:
    """The files under ``root`` as a tree on disk or, committed, as a Git commit's objects, loose
    or packed (its working files deleted, so that only the objects can be read)."""
    if kind == "disk":
        return DiskTree(str(root))
    repo = Repo(root)
    sha = repo.commit("tree")
    if kind == "git-packed-objects":
        repo.git("repack", "-a", "-d", "-q")
        repo.git("prune-packed")
        assert repo.git("count-objects").startswith("0 objects")
    for entry in root.iterdir():
        if entry.name != ".git":
            shutil.rmtree(entry) if entry.is_dir() and not entry.is_symlink() else entry.unlink()
    return GitTree(str(root), sha)


def overlay_folder(resource: Any) -> str | None:
    """The overlay a rendered resource names, without the renderer: ``o (in-process)`` -> ``o``."""
    overlay = resource.provenance.overlay
    return overlay.rsplit(" (", 1)[0] if overlay and overlay.endswith(")") else overlay


def renderer_of(resource: Any) -> str:
    """The renderer a rendered resource's overlay names: ``in-process``, ``kubectl kustomize v5.5.0``."""
    overlay = resource.provenance.overlay or ""
    return overlay.rsplit(" (", 1)[1].removesuffix(")") if overlay.endswith(")") else ""
