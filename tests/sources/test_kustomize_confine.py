"""Kustomize inputs stay inside their source: remote resources and paths leading out are refused
before any renderer runs, as a located error, unless a host is allowed."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from scanner.sources.directory import DirectorySource
from scanner.sources.kustomize.confine import Confinement, remote_host
from scanner.sources.provenance import ErrorRecord, Resource
from scanner.sources.tree import TreeOptions
from tests.programs import need_program
from tests.sources.conftest import TREE_KINDS, tree_of

CM = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s}\n"


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


@pytest.mark.parametrize(("entry", "host"), [
    pytest.param("https://example.com/x.yaml", "example.com", id="https-url"),
    pytest.param("http://127.0.0.1:8080/x.yaml", "127.0.0.1", id="http-url-with-port"),
    pytest.param("git::https://GitLab.com/org/repo//app?ref=v1", "gitlab.com", id="go-getter-url"),
    pytest.param("ssh://git@github.com/org/repo", "github.com", id="ssh-url"),
    pytest.param("git@github.com:org/repo.git", "github.com", id="scp-form"),
    pytest.param("github.com/org/repo/app?ref=v1.2", "github.com", id="host-path"),
    pytest.param("file:///etc/kubernetes", "", id="file-url"),
    pytest.param("../base", None, id="relative-folder"),
    pytest.param("deploy.yaml", None, id="file"),
    pytest.param("config.d/x.yaml", None, id="dotted-folder"),
])
def test_remote_host(entry: str, host: str | None) -> None:
    assert remote_host(entry) == host


OUTSIDE_CASES = [
    pytest.param({"app/kustomization.yaml": "resources:\n- cm.yaml\n- https://example.com/x.yaml\n"},
                 {}, ("app/kustomization.yaml", 3, "remote resource on host 'example.com'"), id="remote-url"),
    pytest.param({"app/kustomization.yaml": "resources: [cm.yaml]\ncomponents:\n- github.com/org/c?ref=v1\n"},
                 {}, ("app/kustomization.yaml", 3, "remote resource on host 'github.com'"), id="remote-component"),
    pytest.param({"app/kustomization.yaml": "resources:\n- ../../../outside\n"},
                 {}, ("app/kustomization.yaml", 2, "leads outside the source"), id="dot-dot-beyond-root"),
    pytest.param({"app/kustomization.yaml": "resources: [../mid]\n",
                  "mid/kustomization.yaml": "resources: [cm.yaml]\npatches:\n- path: ../../p.yaml\n"},
                 {}, ("mid/kustomization.yaml", 3, "leads outside the source"), id="patch-of-a-base-beyond-root"),
    pytest.param({"app/kustomization.yaml": "resources: [linked]\n"},
                 {"app/linked": "OUTSIDE"}, ("app/kustomization.yaml", 1, "leads outside the source"),
                 id="symlinked-folder-outside"),
    pytest.param({"app/kustomization.yaml": "resources: [cm.yaml, linked.yaml]\n"},
                 {"app/linked.yaml": "OUTSIDE/cm.yaml"}, ("app/kustomization.yaml", 1, "leads outside the source"),
                 id="symlinked-file-outside"),
    pytest.param({"app/kustomization.yaml": "configMapGenerator:\n- name: g\n  files: [key=../../../etc/x]\n"},
                 {}, ("app/kustomization.yaml", 3, "leads outside the source"), id="generator-file-beyond-root"),
    pytest.param({"app/kustomization.yaml": "resources: [file:///etc/kubernetes]\n"},
                 {}, ("app/kustomization.yaml", 1, "file:// URL"), id="file-url"),
]


@pytest.mark.parametrize("kind", TREE_KINDS)
@pytest.mark.parametrize(("files", "links", "expected"), OUTSIDE_CASES)
def test_confinement_refuses_what_leads_out(tmp_path: Path, kind: str, files: dict[str, str],
                                            links: dict[str, str], expected: tuple[str, int, str]) -> None:
    outside = tmp_path / "outside"
    write(outside, {"kustomization.yaml": "resources: [cm.yaml]\n", "cm.yaml": CM % "secret-of-host"})
    root = tmp_path / "repo"
    write(root, {"app/cm.yaml": CM % "app", "mid/cm.yaml": CM % "mid", **files})
    for name, target in links.items():
        (root / name).symlink_to(target.replace("OUTSIDE", str(outside)))
    refusal = Confinement(tree_of(root, kind)).check("app")
    assert refusal is not None
    assert (refusal.kustomization, refusal.line) == expected[:2]
    assert expected[2] in refusal.reason


INSIDE_CASES = [
    pytest.param({"app/kustomization.yaml": "resources: [cm.yaml, ../mid]\n",
                  "mid/kustomization.yaml": "resources: [cm.yaml]\n"}, {}, id="sibling-folder"),
    pytest.param({"app/kustomization.yaml": "resources: [cm.yaml, linked]\n",
                  "mid/kustomization.yaml": "resources: [cm.yaml]\n"}, {"app/linked": "../mid"},
                 id="symlinked-folder-inside"),
    pytest.param({"app/kustomization.yaml": "resources: [my.app/cm.yaml]\n", "app/my.app/cm.yaml": CM % "x"},
                 {}, id="local-folder-named-like-a-host"),
    pytest.param({"app/kustomization.yaml": "resources: [cm.yaml]\npatches:\n- patch: |\n    kind: ConfigMap\n"},
                 {}, id="inline-patch"),
]


@pytest.mark.parametrize("kind", TREE_KINDS)
@pytest.mark.parametrize(("files", "links"), INSIDE_CASES)
def test_confinement_accepts_what_stays_inside(tmp_path: Path, kind: str, files: dict[str, str],
                                               links: dict[str, str]) -> None:
    root = tmp_path / "repo"
    write(root, {"app/cm.yaml": CM % "app", "mid/cm.yaml": CM % "mid", **files})
    for name, target in links.items():
        (root / name).symlink_to(target)
    assert Confinement(tree_of(root, kind)).check("app") is None


def test_allowed_host_passes_and_file_urls_never_do(tmp_path: Path) -> None:
    write(tmp_path, {"app/kustomization.yaml": "resources:\n- https://GitHub.com/org/repo/x.yaml\n- file:///etc\n",
                     "b/kustomization.yaml": "resources: [git@github.com:org/repo]\n"})
    tree = tree_of(tmp_path, "disk")
    refusal = Confinement(tree, ("github.com",)).check("app")
    assert refusal is not None and (refusal.line, refusal.entry) == (3, "file:///etc")
    assert Confinement(tree, ("github.com",)).check("b") is None
    assert Confinement(tree, ("gitlab.com",)).check("b") is not None


class _Counter(http.server.BaseHTTPRequestHandler):
    requests = 0

    def do_GET(self) -> None:
        type(self).requests += 1
        body = (CM % "fetched").encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def http_server() -> Iterator[str]:
    server = http.server.HTTPServer(("127.0.0.1", 0), _Counter)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    _Counter.requests = 0
    yield f"http://127.0.0.1:{server.server_address[1]}/x.yaml"
    server.shutdown()
    server.server_close()


def test_scan_refuses_a_remote_resource_without_fetching_it(tmp_path: Path, http_server: str) -> None:
    need_program("kubectl", "kubectl v1.32 (kustomize v5.5.0) on PATH")
    root = tmp_path / "repo"
    write(root, {"app/kustomization.yaml": f"resources:\n- cm.yaml\n- {http_server}\n", "app/cm.yaml": CM % "app",
                 "ok/kustomization.yaml": "resources: [cm.yaml]\n", "ok/cm.yaml": CM % "ok",
                 "up/kustomization.yaml": "resources: [../../outside]\n"})
    write(tmp_path / "outside", {"kustomization.yaml": "resources: [cm.yaml]\n", "cm.yaml": CM % "host-file"})
    items = list(DirectorySource("d", str(root), TreeOptions()).iter_items())
    errors = [(i.kind, str(i.location), i.message) for i in items if isinstance(i, ErrorRecord)]
    names = sorted(i.identity.name or "" for i in items if isinstance(i, Resource))
    assert names == ["ok"]
    assert _Counter.requests == 0
    assert [(kind, where) for kind, where, _ in errors] == [("read", "app/kustomization.yaml:3"),
                                                             ("read", "up/kustomization.yaml:1")]
    assert "remote resource on host '127.0.0.1'" in errors[0][2]
    assert "leads outside the source" in errors[1][2]
