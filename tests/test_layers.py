"""The shape of the package (design.md §2): every module belongs to a layer, imports go down the
layers only, siblings of the middle layer do not import each other, the engine is pure, no
module is over 450 lines and no modules import each other in a cycle.

Every module must fall under a rule (``test_layers_every_module_has_a_rule``). Packages still
being formed (``scanner/scan/``, the engine's ``jmespath/``, ``cel/``, ``podsecurity/``,
``manifests/`` and ``golang/``) have their rules written already: they apply as the modules
land. What is not true yet is listed in ``PENDING`` with the reason, each entry checked to
still fail, so that the list can only shrink.
"""

from __future__ import annotations

import ast
import pathlib
import subprocess
import sys

import pytest

PACKAGE = pathlib.Path(__file__).resolve().parents[1] / "scanner"
MAX_LINES = 450

# the layers, lowest first: a module imports modules of lower layers, and of its own unit
# (the package or family it belongs to); units of one layer do not import each other
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("build", ("scanner.compiled",)),
    ("errors", ("scanner.errors",)),
    ("engine", ("scanner.engine",)),
    ("yaml", ("scanner.yamldoc",)),
    ("config", ("scanner.config",)),
    ("middle", ("scanner.sources", "scanner.policies", "scanner.store", "scanner.report", "scanner.lookup")),
    ("orchestration", ("scanner.scan", "scanner.kyvernocli")),
    ("distributed", ("scanner.distributed",)),
    ("entry", ("scanner.cli", "scanner.commands", "scanner.schedule", "scanner.__main__")),
)
# units of one layer that may import each other: the entry points call one another's commands
SHARED_LAYERS = {"entry"}
# modules named outside their unit's prefix (none now; a module moving between packages may need one)
UNIT_OF: dict[str, str] = {}
ROOT = "scanner"  # the package itself: imports nothing of its own but what picks the compiled modules
ROOT_IMPORTS = {"scanner.compiled"}

# the engine: the standard library (without I/O), these third-party packages and scanner.errors
ENGINE_THIRD_PARTY = {"jmespath", "cel_expr_python", "cryptography", "re2"}
FORBIDDEN_STDLIB_IN_ENGINE = {"os", "pathlib", "subprocess", "socket", "sqlite3", "shutil",
                              "tempfile", "io", "glob", "urllib", "http", "logging", "multiprocessing"}
# the engine's leaf packages: Go ports import no other engine module; the families do not import
# each other, only the engine's core modules and the Go ports
ENGINE_GO = "scanner.engine.golang"
ENGINE_FAMILIES = ("scanner.engine.jmespath", "scanner.engine.cel", "scanner.engine.podsecurity",
                   "scanner.engine.manifests")
# only the scan starts worker processes (design: the one orchestration path); programs (git,
# kustomize, helm) run by the sources are not workers
PROCESS_CALLS = {"fork", "forkpty", "Process", "ProcessPoolExecutor", "Pool"}
PROCESS_MODULES = {"multiprocessing", "scanner.scan.forked"}  # the scan's fork helper

# what is not true yet, and why; each entry must still fail (a fixed one is removed from here)
PENDING: dict[tuple[str, str], str] = {
    # modules over MAX_LINES, being split by the packaging of issue 34
    # processes started outside the scan: the store and the report fork for speed (issue 34 moves it)
}


def _modules() -> list[tuple[str, pathlib.Path]]:
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if "migrations" in path.relative_to(PACKAGE).parts:
            continue  # Alembic's environment and revisions (a link to the top-level folder), not modules
        rel = path.relative_to(PACKAGE.parent).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts.pop()
        out.append((".".join(parts), path))
    return out


MODULES = _modules()
NAMES = {name for name, _ in MODULES}


def _imports(path: pathlib.Path) -> set[str]:
    """Modules imported anywhere in the file (lazy imports in functions included), each named
    as precisely as the file names it: ``from scanner.a import b`` is ``scanner.a.b`` when that
    is a module."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                names.add(full if full in NAMES else node.module)
    return names


def _within(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def _unit(module: str) -> tuple[int, str] | None:
    """(layer rank, unit) of a module, or None when no rule covers it."""
    module_unit = next((unit for name, unit in UNIT_OF.items() if _within(module, name)), None)
    for rank, (_, units) in enumerate(LAYERS):
        for unit in units:
            if module_unit == unit or (module_unit is None and _within(module, unit)):
                return rank, unit
    return None


def _layer_problems(module: str, imported: set[str]) -> list[str]:
    if module == ROOT:
        return [f"{module} imports {name}" for name in imported if _within(name, ROOT) and name not in ROOT_IMPORTS]
    own = _unit(module)
    assert own is not None
    problems = []
    for name in sorted(imported):
        if not _within(name, ROOT) or name == ROOT:
            continue
        other = _unit(name)
        if other is None:
            problems.append(f"{module} imports {name}, which no rule covers")
        elif other[1] != own[1] and (other[0] > own[0] or (
                other[0] == own[0] and LAYERS[own[0]][0] not in SHARED_LAYERS)):
            problems.append(f"{module} ({LAYERS[own[0]][0]}) imports {name} ({LAYERS[other[0]][0]})")
    return problems


def _engine_problems(module: str, imported: set[str]) -> list[str]:
    problems = []
    for name in sorted(imported):
        top = name.split(".")[0]
        if top == "scanner":
            if not (_within(name, "scanner.engine") or name == "scanner.errors"):
                problems.append(f"{module} imports {name}")
            elif _within(module, ENGINE_GO) and not (_within(name, ENGINE_GO) or name == "scanner.errors"):
                problems.append(f"{module} (a Go port) imports {name}")
            else:
                family = next((f for f in ENGINE_FAMILIES if _within(module, f)), None)
                other = next((f for f in ENGINE_FAMILIES if _within(name, f)), None)
                if family is not None and other is not None and other != family:
                    problems.append(f"{module} imports {name}: engine families do not import each other")
        elif top in FORBIDDEN_STDLIB_IN_ENGINE:
            problems.append(f"{module} imports {name} (I/O)")
        elif top != "__future__" and top not in ENGINE_THIRD_PARTY and top not in sys.stdlib_module_names:
            problems.append(f"{module} imports third-party {name}")
    return problems


def _process_calls(path: pathlib.Path) -> set[str]:
    """How the file starts worker processes: the calls and modules it uses for that."""
    found = {name for name in _imports(path) if name.split(".")[0] == "multiprocessing" or name in PROCESS_MODULES}
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            if name in PROCESS_CALLS:
                found.add(name)
    return found


def _cycles() -> list[list[str]]:
    """The import cycles between modules (strongly connected components of more than one)."""
    graph = {name: sorted(n for n in _imports(path) if n in NAMES and n != name) for name, path in MODULES}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(graph[start]))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(graph[child])))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def _pending(check: str, module: str) -> str | None:
    return next((why for (kind, prefix), why in PENDING.items() if kind == check and _within(module, prefix)), None)


def _cycle_key(cycle: list[str]) -> str:
    """The PENDING name of a cycle: the longest module prefix its members share."""
    common = cycle[0].split(".")
    for member in cycle[1:]:
        parts = member.split(".")
        while common and parts[:len(common)] != common:
            common.pop()
    name = ".".join(common)
    # a family still spread over prefixed modules (engine/jmespath_*.py) is named as its package
    family = next((f for f in ENGINE_FAMILIES if all(m.startswith(f + "_") or _within(m, f) for m in cycle)), None)
    return family or name


IDS = [name for name, _ in MODULES]


@pytest.mark.parametrize(("module", "path"), MODULES, ids=IDS)
def test_layers_every_module_has_a_rule(module: str, path: pathlib.Path) -> None:
    assert module == ROOT or _unit(module) is not None, f"{module}: no layer rule covers it (add it to LAYERS)"


@pytest.mark.parametrize(("module", "path"), MODULES, ids=IDS)
def test_layers_imports_go_down_the_layers(module: str, path: pathlib.Path) -> None:
    problems = _layer_problems(module, _imports(path))
    if _pending("layers", module) is not None:
        assert problems, f"{module} follows the layers now: remove its PENDING entry"
        return
    assert problems == []


@pytest.mark.parametrize(("module", "path"), [(m, p) for m, p in MODULES if _within(m, "scanner.engine")],
                         ids=[m for m, _ in MODULES if _within(m, "scanner.engine")])
def test_layers_the_engine_is_pure(module: str, path: pathlib.Path) -> None:
    assert _engine_problems(module, _imports(path)) == []


@pytest.mark.parametrize(("module", "path"), MODULES, ids=IDS)
def test_layers_no_module_is_over_the_line_limit(module: str, path: pathlib.Path) -> None:
    lines = len(path.read_text(encoding="utf-8").splitlines())
    if _pending("lines", module) is not None:
        assert lines > MAX_LINES, f"{module} is {lines} lines now: remove its PENDING entry"
        return
    assert lines <= MAX_LINES, f"{module}: {lines} lines (limit {MAX_LINES}): split it by what it owns"


@pytest.mark.parametrize(("module", "path"), MODULES, ids=IDS)
def test_layers_only_the_scan_starts_processes(module: str, path: pathlib.Path) -> None:
    calls = _process_calls(path)
    if _unit(module) == _unit("scanner.scan"):
        return
    if _pending("processes", module) is not None:
        assert calls, f"{module} starts no process now: remove its PENDING entry"
        return
    assert not calls, f"{module} starts processes ({', '.join(sorted(calls))}): only scanner.scan decides on them"


def test_layers_no_import_cycle() -> None:
    cycles = _cycles()
    unexpected = [c for c in cycles if _pending("cycle", _cycle_key(c)) is None]
    assert unexpected == [], f"import cycles: {unexpected}"
    for (kind, prefix) in PENDING:
        if kind == "cycle":
            assert any(_cycle_key(c) == prefix for c in cycles), f"no cycle in {prefix} now: remove its PENDING entry"


@pytest.mark.parametrize(("imported", "module", "expected"), [
    pytest.param({"scanner.store.records"}, "scanner.report.data", ["scanner.report.data (middle) imports "
                                                                    "scanner.store.records (middle)"],
                 id="middle-siblings-do-not-import-each-other"),
    pytest.param({"scanner.scan"}, "scanner.sources.tree", ["scanner.sources.tree (middle) imports "
                                                            "scanner.scan (orchestration)"],
                 id="upward-import-refused"),
    pytest.param({"scanner.scan.pool"}, "scanner.scan.workers", [], id="scan-package-imports-itself"),
    pytest.param({"scanner.store", "scanner.yamldoc", "scanner.engine.types"}, "scanner.scan.collect", [],
                 id="scan-imports-the-layers-below"),
    pytest.param({"scanner.kyvernocli.apply"}, "scanner.scan.workers", [
        "scanner.scan.workers (orchestration) imports scanner.kyvernocli.apply (orchestration)"],
                 id="scan-and-kyvernocli-are-siblings"),
    pytest.param({"scanner.commands.scan", "scanner.schedule"}, "scanner.cli", [], id="entry-points-share"),
    pytest.param({"scanner.config"}, "scanner.yamldoc.reader", ["scanner.yamldoc.reader (yaml) imports "
                                                                "scanner.config (config)"],
                 id="yamldoc-below-config"),
])
def test_layers_rules_apply_to_packages_still_forming(imported: set[str], module: str, expected: list[str]) -> None:
    assert _layer_problems(module, imported) == expected


@pytest.mark.parametrize(("module", "imported", "expected"), [
    pytest.param("scanner.engine.golang.duration", {"scanner.engine.types"},
                 ["scanner.engine.golang.duration (a Go port) imports scanner.engine.types"], id="go-ports-are-leaves"),
    pytest.param("scanner.engine.cel.env", {"scanner.engine.jmespath.functions"},
                 ["scanner.engine.cel.env imports scanner.engine.jmespath.functions: engine families do not "
                  "import each other"], id="families-do-not-import-each-other"),
    pytest.param("scanner.engine.jmespath.functions", {"scanner.engine.golang.time", "scanner.engine.types"}, [],
                 id="families-use-go-ports-and-core"),
    pytest.param("scanner.engine.evaluate", {"scanner.yamldoc"}, ["scanner.engine.evaluate imports scanner.yamldoc"],
                 id="engine-reads-no-yaml"),
])
def test_layers_engine_rules_apply_to_its_packages(module: str, imported: set[str], expected: list[str]) -> None:
    assert _engine_problems(module, imported) == expected


def test_the_store_writes_and_reads_with_core_alone() -> None:
    """A scan and its reports load SQLAlchemy Core only: the typed models (and the ORM, several
    times Core's import cost) are for the migrations and for code that maps rows to objects."""
    program = ("import sys, scanner.scan.runner, scanner.scan.report_data, scanner.store.store, scanner.store.writer; "
               "print(sorted(m for m in sys.modules if m.startswith(('sqlalchemy.orm', 'scanner.store.models'))))")
    out = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, check=True, timeout=120)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr
