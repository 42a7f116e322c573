"""Load every policy file of a policy library (a checkout of kyverno/policies, say) and say how many
load and which are refused, and why.

    .venv/bin/python scripts/policy_library_sweep.py PATH [--hidden]

Every ``.yaml``/``.yml``/``.json`` file under PATH is read (``.git`` left out; hidden folders such
as ``.chainsaw-test`` only with ``--hidden``). Prints one summary line, then each refusal as
``file:line: message``. Exit status 1 when a policy was refused, 0 otherwise.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from scanner.policies import YAML_SUFFIXES, load_policy_text


def policy_files(root: Path, hidden: bool) -> list[Path]:
    found: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d != ".git" and (hidden or not d.startswith(".")))
        found += [Path(dirpath) / name for name in sorted(filenames) if name.endswith(YAML_SUFFIXES)]
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", type=Path)
    parser.add_argument("--hidden", action="store_true", help="read hidden folders too")
    args = parser.parse_args(argv)
    files = policy_files(args.path, args.hidden)
    with_policies = loaded = refused_policies = 0
    refused: list[str] = []
    refused_files: set[str] = set()
    for path in files:
        found = load_policy_text(path.read_bytes(), str(path))
        if found.policies or found.errors:
            with_policies += 1
        loaded += len(found.policies)
        refused_policies += len(found.invalid_names)
        for error in found.errors:
            refused_files.add(str(path))
            line = error.location.line if error.location and error.location.line else "?"
            refused.append(f"{path}:{line}: {error.message}")
    print(f"{len(files)} files read, {with_policies} with policies: {loaded} policies loaded, "
          f"{refused_policies} refused in {len(refused_files)} files ({len(refused)} problems)")
    for text in refused:
        print(text)
    return 1 if refused else 0


if __name__ == "__main__":
    sys.exit(main())
