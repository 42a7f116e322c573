"""The queue's test project: six folders of Pods (one unreadable file each), two policies, and
a config per database; the scanner run as a separate process, as on another machine."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

SOURCES = 6
SHARDS = 2
POLICY = """\
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: require-team}
spec:
  validationFailureAction: Enforce
  rules:
  - name: team
    match: {any: [{resources: {kinds: [Pod, Deployment]}}]}
    validate:
      message: team label required
      pattern: {metadata: {labels: {team: "?*"}}}
---
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: no-latest}
spec:
  validationFailureAction: Audit
  rules:
  - name: tag
    match: {any: [{resources: {kinds: [Pod]}}]}
    validate:
      message: no latest tag
      pattern: {spec: {containers: [{image: "!*:latest"}]}}
"""

def write_project(base: pathlib.Path) -> None:
    (base / "policies").mkdir()
    (base / "policies" / "policies.yaml").write_text(POLICY)
    for s in range(SOURCES):
        folder = base / f"src{s}"
        folder.mkdir()
        for f in range(12):
            docs = []
            for d in range(5):
                labels = "{team: a}" if (f + d + s) % 3 else "{}"
                image = "nginx:latest" if d % 2 else "nginx:1.25"
                docs.append(f"apiVersion: v1\nkind: Pod\nmetadata: {{name: p{f}-{d}, namespace: ns{s % 2}, "
                            f"labels: {labels}}}\nspec: {{containers: [{{name: c, image: '{image}'}}]}}\n")
            (folder / f"pods{f}.yaml").write_text("---\n".join(docs))
        (folder / "broken.yaml").write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: [unclosed\n")


def write_config(base: pathlib.Path, name: str, url: str) -> pathlib.Path:
    sources = "".join(f"  - name: s{s}\n    directory: {{path: src{s}}}\n" for s in range(SOURCES))
    path = base / f"{name}.yaml"
    path.write_text(f"database: {{url: '{url}'}}\npolicies: [{{path: policies}}]\nsources:\n{sources}"
                    f"reports: {{out: reports-{name}, formats: [json]}}\nscan: {{jobs: 2}}\n")
    return path


def scanner(base: pathlib.Path, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", "from scanner.cli import run; run()", *args], cwd=base,
                            env={**os.environ, **(env or {})}, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)


def libpq(url: str) -> str:
    return url.replace("postgresql+psycopg://", "postgresql://", 1)




def scan_and_enqueue(base: pathlib.Path, scan_url: str, queue_url: str, shards: int = SHARDS) -> tuple[str, int]:
    """The project written, scanned on one machine into ``scan_url`` (to compare with) and
    enqueued into ``queue_url`` in ``shards`` shards a source: the queue's config and the run."""
    write_project(base)
    scan = scanner(base, "scan", "--config", str(write_config(base, "scan", scan_url)), "-q")
    out, _ = scan.communicate(timeout=120)
    assert scan.returncode == 1, out  # enforce failures: the gate fails
    queue_config = str(write_config(base, "queue", queue_url))
    enqueue = scanner(base, "enqueue", "--config", queue_config, "--shards", str(shards))
    out, _ = enqueue.communicate(timeout=120)
    assert enqueue.returncode == 0 and f"{SOURCES * shards} jobs enqueued" in out, out
    return queue_config, int(out.split()[1].rstrip(":"))
