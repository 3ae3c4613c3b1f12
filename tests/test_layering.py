"""The architecture as rules a change cannot break unnoticed.

- `core` is the engine and never imports Qt or `gui`: the CLI, bench and tests use it bare.
- One import root: every import of the project's own code names `chattts_studio` (a leftover
  `import core` would work from the checkout and fail from the wheel).
- No import cycle between modules, function-level imports included (found from the AST).
- No cycle between packages either: the second-level packages of core and of gui (core.engine,
  gui.voices; a top-level module such as core/errors.py is a node of its own) import each other
  one way only, so each sits above or below every other (core's order: docs/architecture.md).
- No private name (`_x`) used from another module, and no re-export shim (`__all__`, an import
  kept only to be imported again from here).
- gui uses core's services and plain data, never the decode loop, the producers or the ChatTTS
  adapter; nothing outside the engine (but the tools that measure it) imports its subpackages,
  the continuous batch's two public modules aside.
- No package folder holds more than 15 modules: the tree stays the architecture's picture.
"""

import ast
import os
import subprocess
import sys
from pathlib import Path

from conftest import REPO

ROOT_PACKAGE = "chattts_studio"
FOLDERS = {"core": f"{ROOT_PACKAGE}.core", "gui": f"{ROOT_PACKAGE}.gui"}
# What gui may not import from core: the engine's inside (gui holds an Engine and asks it).
ENGINE_INSIDE = (
    f"{ROOT_PACKAGE}.core.engine.decode",
    f"{ROOT_PACKAGE}.core.engine.chattts",
    f"{ROOT_PACKAGE}.core.engine.producers",
)
MAX_MODULES_PER_FOLDER = 15


def _modules() -> dict[str, Path]:
    """Every module of core/ and gui/ by its installed dotted name."""
    found: dict[str, Path] = {}
    for folder, package in FOLDERS.items():
        for path in sorted((REPO / folder).rglob("*.py")):
            parts = path.relative_to(REPO / folder).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join((package, *parts))] = path
    return found


MODULES = _modules()


def _is_package(name: str) -> bool:
    return MODULES[name].name == "__init__.py"


def _imports(name: str) -> list[tuple[str, list[str], int]]:
    """(imported module, names taken from it, line) for each import of the project's code in a
    module, wherever it sits (top level, function or TYPE_CHECKING block)."""
    found = []
    for node in ast.walk(ast.parse(MODULES[name].read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(alias.name, [], node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"{name}:{node.lineno}: relative import (name the module)"
            names = [alias.name for alias in node.names]
            found.append((node.module or "", names, node.lineno))
    return found


def _targets(module: str, names: list[str]) -> list[str]:
    """The project's modules an import statement loads: `from P import m` loads P.m when it is
    a module; anything else loads P itself."""
    out = [f"{module}.{n}" for n in names if f"{module}.{n}" in MODULES]
    if len(out) < len(names) or not names:
        out.append(module)
    return [m for m in out if m in MODULES]


def _graph() -> dict[str, set[str]]:
    """Module -> the project's modules it imports; a package's own __init__ (a docstring
    only) is left out, since it imports nothing back."""
    graph: dict[str, set[str]] = {}
    for name in MODULES:
        edges = set()
        for module, names, _ in _imports(name):
            edges |= {m for m in _targets(module, names) if not _is_package(m)}
        graph[name] = edges - {name}
    return graph


def test_every_import_of_the_project_names_its_one_root() -> None:
    wrong = [
        f"{name}:{line} imports {module}"
        for name in MODULES
        for module, _, line in _imports(name)
        if module.split(".")[0] in FOLDERS
    ]
    assert not wrong, wrong


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components: each one of more than one node is a cycle."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10 * len(graph)))

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph[node]:
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for node in graph:
        if node not in index:
            visit(node)
    return cycles


def test_the_cycle_finder_finds_cycles_and_only_cycles() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a", "e"}, "e": set(), "f": {"g"}}
    graph |= {"g": {"f"}}
    assert sorted(_cycles(graph)) == [["a", "b", "c"], ["f", "g"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycle() -> None:
    """A function-level import only hides a cycle until run time, so it counts too."""
    graph = _graph()
    assert {"chattts_studio.core.cli.main", "chattts_studio.core.weights.models"} <= set(graph)
    assert not _cycles(graph), f"import cycles: {_cycles(graph)}"


def _package(module: str) -> str:
    """The second-level package a module belongs to (chattts_studio.core.engine for
    chattts_studio.core.engine.chattts.chat); a top-level module is its own."""
    return ".".join(module.split(".")[:3])


def _packages(
    graph: dict[str, set[str]],
) -> tuple[dict[str, set[str]], dict[tuple[str, str], set[tuple[str, str]]]]:
    """The module graph collapsed to packages: package -> the packages it imports, and for each
    package edge the (importer, imported) module pairs that make it."""
    packages: dict[str, set[str]] = {_package(name): set() for name in graph}
    pairs: dict[tuple[str, str], set[tuple[str, str]]] = {}
    for name, imported in graph.items():
        for other in imported:
            edge = (_package(name), _package(other))
            if edge[0] != edge[1]:
                packages[edge[0]].add(edge[1])
                packages.setdefault(edge[1], set())
                pairs.setdefault(edge, set()).add((name, other))
    return packages, pairs


def _package_cycles(graph: dict[str, set[str]]) -> list[str]:
    """Each cycle between packages: its packages, then each of its package edges with the
    module imports that make it."""
    packages, pairs = _packages(graph)
    found = []
    for cycle in _cycles(packages):
        lines = [" <-> ".join(cycle)]
        for (a, b), modules in sorted(pairs.items()):
            if a in cycle and b in cycle:
                made = ", ".join(f"{m} imports {n}" for m, n in sorted(modules))
                lines.append(f"  {a} -> {b}: {made}")
        found.append("\n".join(lines))
    return found


def test_the_package_collapse_finds_a_cycle_the_modules_do_not_have() -> None:
    core = f"{ROOT_PACKAGE}.core"
    graph = {
        f"{core}.a.x": {f"{core}.b.y", f"{core}.a.w"},
        f"{core}.a.w": {f"{core}.errors"},
        f"{core}.b.y": set(),
        f"{core}.b.deep.z": {f"{core}.a.w"},
        f"{core}.errors": set(),
    }
    assert _cycles(graph) == []
    packages, pairs = _packages(graph)
    assert packages == {
        f"{core}.a": {f"{core}.b", f"{core}.errors"},
        f"{core}.b": {f"{core}.a"},
        f"{core}.errors": set(),
    }
    assert pairs[(f"{core}.b", f"{core}.a")] == {(f"{core}.b.deep.z", f"{core}.a.w")}
    assert _package_cycles(graph) == [
        f"{core}.a <-> {core}.b\n"
        f"  {core}.a -> {core}.b: {core}.a.x imports {core}.b.y\n"
        f"  {core}.b -> {core}.a: {core}.b.deep.z imports {core}.a.w"
    ]
    del graph[f"{core}.b.deep.z"]
    assert _package_cycles(graph) == []


def test_packages_import_each_other_one_way_only() -> None:
    """core's and gui's packages form layers: a package that needs one above it is a move
    waiting to happen (the needing part goes up, or what it needs comes down)."""
    graph = _graph()
    packages, _ = _packages(graph)
    known = {"engine", "text", "voices", "services", "errors"}
    assert {f"{ROOT_PACKAGE}.core.{name}" for name in known} <= set(packages)
    assert f"{ROOT_PACKAGE}.gui.voices" in packages
    cycles = _package_cycles(graph)
    assert not cycles, "packages that import each other:\n" + "\n".join(cycles)


def test_no_private_name_crosses_a_module() -> None:
    """`from m import _x` and `m._x` on an imported project module are both refused: a name
    with an underscore is its module's own business."""
    wrong = []
    for name, path in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        bound: set[str] = set()  # local names bound to the project's modules
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module:
                for alias in node.names:
                    if alias.name.startswith("_") and not alias.name.startswith("__"):
                        wrong.append(f"{name}:{node.lineno} imports {node.module}.{alias.name}")
                    if f"{node.module}.{alias.name}" in MODULES:
                        bound.add(alias.asname or alias.name)
            elif isinstance(node, ast.Import):
                bound |= {a.asname for a in node.names if a.asname and a.name in MODULES}
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id in bound
                and node.attr.startswith("_")
                and not node.attr.startswith("__")
            ):
                wrong.append(f"{name}:{node.lineno} uses {node.value.id}.{node.attr}")
    assert not wrong, wrong


def test_no_re_export_shim() -> None:
    """A module defines what it exports: no `__all__` lists of borrowed names, no import kept
    unused (noqa F401) so that others import it from here."""
    wrong = []
    for name, path in MODULES.items():
        text = path.read_text(encoding="utf-8")
        if "__all__" in text:
            wrong.append(f"{name} has __all__")
        if "noqa: F401" in text:
            wrong.append(f"{name} keeps an unused import (noqa: F401)")
    assert not wrong, wrong


def _defined(name: str) -> set[str]:
    """The names a module defines itself (functions, classes, assignments), wherever they sit:
    not the names it imports."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(MODULES[name].read_text(encoding="utf-8"))):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            found.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            found |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return found


def test_every_name_is_imported_from_the_module_that_defines_it() -> None:
    """`from m import X` takes X from where it is written: a module that merely imported X
    is no place to get it from (that is a re-export in all but name, and it hides who owns X)."""
    defined = {name: _defined(name) for name in MODULES}
    wrong = [
        f"{name}:{line} takes {taken} from {module}"
        for name in MODULES
        for module, names, line in _imports(name)
        if module in MODULES
        for taken in names
        if f"{module}.{taken}" not in MODULES and taken not in defined[module]
    ]
    assert not wrong, wrong


def test_gui_uses_core_services_not_the_engine_inside() -> None:
    wrong = [
        f"{name}:{line} imports {module}"
        for name in MODULES
        if name.startswith(f"{ROOT_PACKAGE}.gui")
        for module, _, line in _imports(name)
        if module.startswith(ENGINE_INSIDE)
    ]
    assert not wrong, wrong


# The engine's subpackages are its inside: the rest of core imports the engine's top-level
# modules (the Engine, requests and their settings, takes, engine choice), and the continuous
# batch through its two public modules. The tools that measure the inside may reach in.
ENGINE_FACE = (
    f"{ROOT_PACKAGE}.core.engine.batch.batcher",
    f"{ROOT_PACKAGE}.core.engine.batch.tickets",
)
ENGINE_SUBPACKAGES = tuple(
    f"{ROOT_PACKAGE}.core.engine.{p.name}"
    for p in (REPO / "core" / "engine").iterdir()
    if (p / "__init__.py").exists()
)
MEASURING_TOOLS = (f"{ROOT_PACKAGE}.core.devtools", f"{ROOT_PACKAGE}.core.benchmarks")


def _inside(module: str, packages: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(f"{p}.") for p in packages)


def test_only_the_engine_and_its_measuring_tools_import_its_inside() -> None:
    assert f"{ROOT_PACKAGE}.core.engine.decode" in ENGINE_SUBPACKAGES  # the rule sees them
    wrong = [
        f"{name}:{line} imports {target}"
        for name in MODULES
        if not _inside(name, (f"{ROOT_PACKAGE}.core.engine", *MEASURING_TOOLS))
        for module, names, line in _imports(name)
        for target in _targets(module, names) or [module]
        if _inside(target, ENGINE_SUBPACKAGES) and target not in ENGINE_FACE
    ]
    assert not wrong, wrong


def test_no_folder_holds_more_than_15_modules() -> None:
    crowded = {}
    for folder in ("core", "gui"):
        for directory in [REPO / folder, *(REPO / folder).rglob("*/")]:
            if "__pycache__" in directory.parts:
                continue
            count = len([p for p in directory.glob("*.py") if p.name != "__init__.py"])
            if count > MAX_MODULES_PER_FOLDER:
                crowded[str(directory.relative_to(REPO))] = count
    assert not crowded, crowded


def test_core_imports_with_qt_and_gui_blocked() -> None:
    modules = sorted(name for name in MODULES if name.startswith(f"{ROOT_PACKAGE}.core"))
    assert {
        "chattts_studio.core.engine.engine",
        "chattts_studio.core.cli.main",
        "chattts_studio.core.engine.decode.loop",
        "chattts_studio.core.benchmarks.bench",
    } <= set(modules)
    code = (
        "import sys\n"
        "for blocked in ('PySide6', 'shiboken6', 'pyqtgraph', 'chattts_studio.gui'):\n"
        "    sys.modules[blocked] = None  # importing it now raises ImportError\n"
        f"import importlib\nfor name in {modules!r}:\n    importlib.import_module(name)\n"
        "print('ok')\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=REPO
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip().endswith("ok")


# Importing the model registry or the downloader must not pull in the engine's heavy world: the
# CLI's `model status`, the window's Models dialog and tests read hashes and folders only.
HEAVY = ("torch", "ChatTTS", "transformers", "safetensors", "huggingface_hub", "numpy")


def test_models_and_download_import_nothing_heavy(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from chattts_studio.core.weights import download, models\n"
        "models.status(), models.official_hashes()  # absent models: nothing built\n"
        f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))\n"
    )
    env = {**os.environ, "CHATTTS_STUDIO_HOME": str(tmp_path)}
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=REPO, env=env
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "[]", f"models or download imported {proc.stdout.strip()}"
