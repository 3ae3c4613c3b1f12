"""Every program the app and the tests run is installed by the Makefile on a bare machine, or is
one the code does without: a fresh machine keeps the README's promise that `make run` and
`make test` set everything up.

The programs are found in the code itself (the argv of subprocess calls, `shutil.which`, the
/usr/bin paths it names, `command -v` in .ci's scripts), so a new one fails here until it is
sorted into PROGRAMS: a Debian package the Makefile installs for the app or for the tests, a
console script of .venv, a program of every Debian base system, or an optional one the code
runs only where it exists (with the reason). `make run` installs only what the app needs.
"""

import ast
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import REPO


@dataclass(frozen=True)
class Deb:
    """A Debian package the Makefile installs: for the app (`make run`, and the tests too) or
    for the tests only (`make test` and `make check`)."""

    package: str
    app: bool = False


@dataclass(frozen=True)
class Venv:
    """A console script that pip puts into .venv with the locked packages."""


@dataclass(frozen=True)
class Base:
    """Part of every Debian system (essential packages)."""


@dataclass(frozen=True)
class Optional:
    """Run only where it exists; `why` says what happens without it."""

    why: str


PROGRAMS: dict[str, Deb | Venv | Base | Optional] = {
    "sox": Deb("sox"),
    "espeak-ng": Deb("espeak-ng"),
    "chromium": Deb("chromium"),
    "chromedriver": Deb("chromium-driver"),
    "java": Deb("epubcheck"),  # runs /usr/share/java/epubcheck.jar; the package brings Java
    "uv": Venv(),
    "mount": Base(),
    "umount": Base(),
    "sh": Base(),
    "unshare": Base(),
    "make": Optional("the README's commands run through it: here whenever this test is"),
    "python3.11": Optional("CI's first choice; else the Makefile takes the newest supported"),
    "nvidia-smi": Optional("no NVIDIA driver: the installer picks the CPU build"),
    "powershell": Optional("Windows only: the installer's Start-menu shortcut"),
    "update-desktop-database": Optional("the menu refreshes itself at the next login"),
    "gdb": Optional("CI's native stacks on a crash; without it the suite runs plainly"),
    "curl": Optional("install.sh fetches uv's installer with it, else with wget"),
    "wget": Optional("install.sh's second way to fetch uv's installer; else uv from PyPI"),
}

SUBPROCESS_CALLS = {"run", "Popen", "check_output", "check_call", "call"}
SCANNED = ("core", "gui", "tests", ".ci")
USR_BIN = re.compile(r"^/usr/bin/([\w.+-]+)$")
COMMAND_V = re.compile(r"command -v ([\w.+-]+)")


def _constants(tree: ast.Module) -> dict[str, ast.expr]:
    """A module's top-level NAME = value assignments, to follow argv kept in a constant."""
    found: dict[str, ast.expr] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if isinstance(target, ast.Name):
                found[target.id] = node.value
    return found


def _first_word(arg: ast.expr, constants: dict[str, ast.expr]) -> str | None:
    if isinstance(arg, ast.IfExp):
        return _first_word(arg.body, constants) or _first_word(arg.orelse, constants)
    if isinstance(arg, ast.Name) and arg.id in constants:
        arg = constants[arg.id]
    if isinstance(arg, ast.List | ast.Tuple) and arg.elts:
        first = arg.elts[0]
        if isinstance(first, ast.Constant) and isinstance(first.value, str):
            return os.path.basename(first.value)
    return None


def _called(node: ast.Call) -> tuple[str, str] | None:
    """(module or object, function) for calls such as subprocess.run(...)."""
    func = node.func
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        return func.value.id, func.attr
    return None


def _argv_values(scope: ast.AST) -> dict[str, list[ast.expr]]:
    """Every value a name is given in a function (or module): argv is often built in a local
    variable first, in either branch of an `if`."""
    values: dict[str, list[ast.expr]] = {}
    for node in ast.walk(scope):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    values.setdefault(target.id, []).append(node.value)
    return values


def programs_in_python(source: str) -> set[str]:
    """The programs a Python module runs or looks for, by name."""
    tree = ast.parse(source)
    constants = _constants(tree)
    found: set[str] = set()
    scopes = [tree, *(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef))]
    for scope in scopes:
        local = _argv_values(scope)
        for node in ast.walk(scope):
            if not (isinstance(node, ast.Call) and node.args):
                continue
            called = _called(node)
            first = node.args[0]
            runs = called is not None and (
                (called[0] in {"subprocess", "child_process"} and called[1] in SUBPROCESS_CALLS)
                or called[1] == "create_subprocess_exec"
                or (called[0] == "os" and called[1].startswith("exec"))
            )
            if not runs:
                continue
            candidates = local.get(first.id, [first]) if isinstance(first, ast.Name) else [first]
            for value in [*candidates, first]:
                if name := _first_word(value, constants):
                    found.add(name)
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and node.args:
            called = _called(node)
            first = node.args[0]
            if called == ("shutil", "which") and isinstance(first, ast.Constant):
                found.add(str(first.value))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            found.update(match.group(1) for match in [USR_BIN.match(node.value)] if match)
    return found


def _found() -> dict[str, list[str]]:
    """Program -> the files that run it, over core, gui, tests and .ci."""
    where: dict[str, list[str]] = {}
    for folder in SCANNED:
        for path in sorted((REPO / folder).rglob("*")):
            if path.suffix == ".py":
                names = programs_in_python(path.read_text(encoding="utf-8"))
            elif path.suffix == ".sh" or (path.name == "run" and path.parent.name == ".ci"):
                names = set(COMMAND_V.findall(path.read_text(encoding="utf-8")))
            else:
                continue
            for name in names:
                where.setdefault(name, []).append(str(path.relative_to(REPO)))
    for script in (REPO / "resources" / "install").glob("*.sh"):
        for name in COMMAND_V.findall(script.read_text(encoding="utf-8")):
            where.setdefault(name, []).append(str(script.relative_to(REPO)))
    return where


FOUND = _found()


def make_debs() -> dict[str, list[str]]:
    """The Debian packages `make run` and `make test` install, as the Makefile says them."""
    done = subprocess.run(
        ["make", "--no-print-directory", "-s", "debs-list"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    lists: dict[str, list[str]] = {}
    for line in done.stdout.splitlines():
        tier, _, packages = line.partition(":")
        lists[tier.strip()] = packages.split()
    return lists


def test_every_program_the_code_runs_is_sorted() -> None:
    unsorted = {name: files for name, files in FOUND.items() if name not in PROGRAMS}
    assert not unsorted, (
        f"programs run but not sorted into PROGRAMS: {unsorted}; add the Debian package that "
        f"provides each to the Makefile (TEST_DEBS, or APP_DEBS when the app runs it) and here"
    )


def test_every_sorted_program_is_still_run() -> None:
    stale = sorted(set(PROGRAMS) - set(FOUND))
    assert not stale, f"PROGRAMS lists programs nothing runs any more: {stale}"


def test_the_makefile_installs_each_programs_package_for_its_tier() -> None:
    lists = make_debs()
    assert set(lists) == {"run", "test"}, lists
    for name, kind in PROGRAMS.items():
        if isinstance(kind, Deb):
            assert kind.package in lists["test"], f"make test does not install {kind.package}"
            assert (kind.package in lists["run"]) == kind.app, (
                f"{kind.package} ({name}) is {'an app' if kind.app else 'a test-only'} package "
                f"but make run {'does not install' if kind.app else 'installs'} it"
            )


def test_make_run_installs_nothing_the_tests_alone_need() -> None:
    lists = make_debs()
    test_only = {k.package for k in PROGRAMS.values() if isinstance(k, Deb) and not k.app}
    assert not test_only & set(lists["run"]), test_only & set(lists["run"])
    # The app's libraries are the tests' too (the suite opens the window offscreen and plays
    # sound); only a real window's X11 libraries are make run's alone.
    window = {p for p in lists["run"] if p.startswith(("libxcb", "libxkbcommon-x11"))}
    assert window and set(lists["run"]) - set(lists["test"]) == window


@pytest.mark.parametrize("name", sorted(n for n, k in PROGRAMS.items() if isinstance(k, Deb)))
def test_each_package_program_is_installed_here(name: str) -> None:
    """After make's install step: what the Makefile installs is really on this machine."""
    kind = PROGRAMS[name]
    assert isinstance(kind, Deb)
    assert shutil.which(name) or Path("/usr/bin", name).exists(), (
        f"{name} is missing: make test installs it (Debian package {kind.package})"
    )


@pytest.mark.parametrize("name", sorted(n for n, k in PROGRAMS.items() if isinstance(k, Venv)))
def test_each_venv_program_is_in_the_environment(name: str) -> None:
    assert (Path(sys.executable).parent / name).exists(), f"{name} is not in .venv's bin"


@pytest.mark.parametrize("name", sorted(n for n, k in PROGRAMS.items() if isinstance(k, Base)))
def test_each_base_program_is_here(name: str) -> None:
    assert shutil.which(name), f"{name} is missing, although every Debian system has it"


def test_the_finder_sees_each_way_a_program_is_run() -> None:
    # The names are made here, not written out, so that a scan of this file for programs run
    # (this test's own finder, or another) does not take the sample for real calls.
    a, b, c, d, e, f = (f"stand-in-{n}" for n in "abcdef")
    source = (
        "import shutil, subprocess\n"
        f"QUERY = ('{a}', '--x')\n"
        f"subprocess.run(['{b}', 'x'])\n"
        "subprocess.Popen(QUERY)\n"
        f"shutil.which('{c}')\n"
        f"PATH = '/usr/bin/{d}'\n"
        f"child_process.run(['/opt/bin/{e}'])\n"
        "subprocess.run([sys.executable, '-c', ''])\n"
        "def f(root):\n"
        f"    command = ['{f}', '-m'] if root else [sys.executable]\n"
        "    subprocess.run(command)\n"
    )
    assert programs_in_python(source) == {a, b, c, d, e, f}
