"""The wheel is a complete app: every package folder, the resources (icon, desktop entry,
sample texts) and every imported distribution declared; installed into a fresh environment it
synthesizes with the CLI and opens the window offscreen, away from the source tree."""

import ast
import importlib.metadata
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import textwrap
import tomllib
import zipfile
from pathlib import Path

from chattts_studio.core.paths import models_dir

ROOT = Path(__file__).resolve().parent.parent
OWN = {"chattts_studio"}  # the only import root the project installs
PIP = [sys.executable, "-m", "pip"]
DEMO_ON_CPU = ["--model", "demo", "--device", "cpu", "--no-refine"]
RESOURCE_FILES = [
    "icon.png",
    "icon.svg",
    "chattts-studio.desktop",
    "samples/chinese.txt",
    "samples/english.txt",
    "samples/mixed.txt",
    "i18n/chattts_studio_zh_CN.qm",
]


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _declared(*more: str) -> set[str]:
    """The dependencies, and the `cluster`, `onnx` and `asr` extras' (core/render/manifest/
    cluster.py imports ray only when a cluster render runs, core/engine/onnxrt onnxruntime only
    when the ONNX engine loads, core/asr jiwer and zhconv only when a check runs; without them
    --ray and --engine onnx say how to install them), and those of the extras named in `more`."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extras = project["optional-dependencies"]
    names = [*project["dependencies"], *extras["cluster"], *extras["onnx"], *extras["asr"]]
    names += [d for extra in more for d in extras[extra]]
    return {_normal(re.match(r"[A-Za-z0-9._-]+", d)[0]) for d in names}  # type: ignore[index]


def _imported_modules(devtools: bool = False) -> dict[str, str]:
    """Top-level module -> a file of core/ or gui/ that imports it (third-party only): of the
    shipped modules, or with `devtools` of the developer tools (out of the wheel)."""
    found: dict[str, str] = {}
    for path in sorted([*ROOT.glob("core/**/*.py"), *ROOT.glob("gui/**/*.py")]):
        if ("devtools" in path.relative_to(ROOT).parts) != devtools:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top not in sys.stdlib_module_names and top not in OWN:
                    found.setdefault(top, str(path.relative_to(ROOT)))
    return found


def test_every_imported_distribution_is_declared() -> None:
    """The shipped modules import what the dependencies and extras declare; the developer tools
    (core/devtools, gui/devtools) may also import the dev extra's."""
    owners = importlib.metadata.packages_distributions()
    missing = []
    for declared, modules in (
        (_declared(), _imported_modules()),
        (_declared("dev"), _imported_modules(devtools=True)),
    ):
        for module, where in modules.items():
            distributions = {_normal(d) for d in owners.get(module, [])}
            if not distributions & declared:
                missing.append(f"{module} ({where}; distribution {sorted(distributions) or '?'})")
    assert not missing, f"imported but not in pyproject's dependencies: {missing}"


def _locked() -> dict[str, str]:
    """constraints.txt: normalised name -> the version pinned here (the lines whose PEP 508
    markers hold on this platform and Python; the lock covers the others too)."""
    from packaging.markers import default_environment

    from chattts_studio.core.devtools.lockcheck import pins_for

    lock = (ROOT / "constraints.txt").read_text(encoding="utf-8")
    pins = pins_for(lock, default_environment())  # raises on a line that is no exact pin
    twice = {name: versions for name, versions in pins.items() if len(versions) > 1}
    assert not twice, f"constraints.txt pins these more than once here: {twice}"
    return {name: versions[0] for name, versions in pins.items()}


def test_the_lock_pins_every_declared_dependency_within_its_range() -> None:
    """Every requirement of pyproject.toml (extras too) has an exact pin in constraints.txt that
    its range admits, and the pins are what this environment runs: a dependency added or a
    range moved without `make lock` fails here instead of resolving afresh on each machine."""
    from packaging.requirements import Requirement

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    wanted = [*project["dependencies"]]
    for extra in project["optional-dependencies"].values():
        wanted += extra
    pins = _locked()
    for text in wanted:
        requirement = Requirement(text)
        name = _normal(requirement.name)
        assert name in pins, f"{name} is declared but not locked: run make lock"
        assert requirement.specifier.contains(pins[name], prereleases=True), (text, pins[name])
    for name, version in pins.items():
        try:
            installed = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue  # locked for another Python or platform only
        assert installed == version, f"{name} {installed} is installed, {version} is locked"


def _package_folders() -> set[str]:
    """Every folder of core/ and gui/ with Python files, as its installed package name; the
    developer tools' folders (devtools/) excepted: they stay out of the wheel."""
    return {
        ".".join(("chattts_studio", *path.parent.relative_to(ROOT).parts))
        for path in [*ROOT.glob("core/**/*.py"), *ROOT.glob("gui/**/*.py")]
        if "__pycache__" not in path.parts and "devtools" not in path.parts
    }


def test_the_editable_install_maps_one_root_onto_the_checkout() -> None:
    """`pip install -e` (make install) maps chattts_studio.core, .gui and .resources onto the
    top-level folders, developer tools included, and installs no other import root."""
    import chattts_studio
    from chattts_studio import core, gui, resources
    from chattts_studio.core.devtools import gpucheck

    for module, folder in ((core, "core"), (gui, "gui"), (resources, "resources")):
        assert Path(module.__file__).resolve() == ROOT / folder / "__init__.py"
    assert Path(gpucheck.__file__).resolve().is_relative_to(ROOT / "core" / "devtools")
    assert not hasattr(chattts_studio, "__file__") or chattts_studio.__file__ is None  # namespace
    roots = importlib.metadata.packages_distributions()
    ours = sorted(top for top, dists in roots.items() if "chattts-studio" in dists)
    assert ours == ["chattts_studio"], ours


def _build_wheel(tmp_path: Path) -> Path:
    """Build from a copy of the tree, so the shared checkout gets no build/ or egg-info."""
    source = tmp_path / "source"
    source.mkdir()
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in ("core", "gui", "resources"):
        shutil.copytree(ROOT / name, source / name, ignore=ignore)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, source / name)
    dist = tmp_path / "dist"
    command = [*PIP, "wheel", "-q", "--no-deps", "-w", str(dist)]
    built = subprocess.run([*command, "--no-build-isolation", str(source)], capture_output=True)
    assert built.returncode == 0, built.stderr.decode(errors="replace")[-3000:]
    (wheel,) = dist.glob("chattts_studio-*.whl")
    return wheel


def _fresh_environment(tmp_path: Path, wheel: Path) -> Path:
    """A new venv with only the wheel installed; the dependencies are the test environment's,
    made visible through a .pth file (nothing is downloaded)."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    ours = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    # Lines of a .pth only extend sys.path: the editable install's own .pth (which maps core
    # and gui onto the source tree) is not run from there.
    (Path(site) / "chattts_studio_test_deps.pth").write_text("\n".join(sorted(ours)) + "\n")
    installed = subprocess.run(
        [*PIP, "--python", str(python), "install", "-q", "--no-deps", "--no-index", str(wheel)],
        capture_output=True,
        text=True,
    )
    assert installed.returncode == 0, installed.stderr[-3000:]
    return venv


WINDOW_CHECK = textwrap.dedent(
    """
    import sys
    from pathlib import Path

    from PySide6.QtCore import QTimer

    import chattts_studio
    from chattts_studio import core, gui, resources as data
    from chattts_studio.gui import resources
    from chattts_studio.gui.app import application, build_window

    venv = Path(sys.argv[1]).resolve()
    for module in (core, gui, data):
        assert Path(module.__file__).resolve().is_relative_to(venv), module.__file__
    (root,) = chattts_studio.__path__  # one import root, a namespace package from the wheel
    assert Path(root).resolve().is_relative_to(venv), root
    folder = resources.resources_dir()
    assert folder is not None and folder.resolve().is_relative_to(venv), folder
    for name in ("icon.svg", "icon.png", "chattts-studio.desktop"):
        assert resources.existing_resource(name) is not None, name
    sample = (folder / "samples" / "mixed.txt").read_text(encoding="utf-8")
    assert resources.sample_text() == sample != resources.FALLBACK_SAMPLE
    app = application()
    assert not app.windowIcon().isNull()
    window = build_window(None)
    window.show()
    assert window.isVisible() and not window.windowIcon().isNull()
    QTimer.singleShot(300, window.close)
    app.exec()  # closing finishes in the event loop, as in main()
    window.host.worker_thread.wait()
    window.host.release()
    assert window.host.worker_thread.isFinished(), "the worker thread outlived the window"
    print("window ok from", Path(gui.__file__).parent)
    """
)


def test_wheel_installs_and_runs_away_from_the_source_tree(tmp_path: Path, demo_model: str) -> None:
    wheel = _build_wheel(tmp_path)
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        metadata = archive.read(
            next(n for n in names if n.endswith(".dist-info/METADATA"))
        ).decode()
    for package in _package_folders():
        assert f"{package.replace('.', '/')}/__init__.py" in names, f"{package} not in the wheel"
    for name in RESOURCE_FILES:
        assert f"chattts_studio/resources/{name}" in names, f"{name} not in the wheel"
    assert "chattts_studio/resources/screenshot.png" not in names  # the README's, not the app's
    roots = {name.split("/")[0] for name in names if ".dist-info/" not in name}
    assert roots == {"chattts_studio"}, roots  # one import root, named after the product
    assert not any("/devtools/" in name for name in names)  # developer tools stay out
    assert "chattts_studio/__init__.py" not in names  # a namespace root: nothing of its own
    requires = {
        _normal(re.findall(r"[A-Za-z0-9._-]+", line.split(":", 1)[1])[0])
        for line in metadata.splitlines()
        if line.startswith("Requires-Dist:") and "extra ==" not in line
    }
    assert {"pybase16384", "vocos", "tokenizers"} <= requires

    venv = _fresh_environment(tmp_path, wheel)
    work = tmp_path / "work"  # not the source tree: nothing of it is on sys.path
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    # A fresh data folder sharing the session's demo weights (.ci/smoke.sh builds them anew).
    home = tmp_path / "home"
    home.mkdir()
    (home / "models").symlink_to(models_dir())
    env |= {
        "CHATTTS_STUDIO_HOME": str(home),
        "HF_HUB_OFFLINE": "1",
        "QT_QPA_PLATFORM": "offscreen",
    }
    synth = subprocess.run(
        [venv / "bin" / "chattts-studio-cli", "synth", "你好。", "-o", "out.wav", *DEMO_ON_CPU],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert synth.returncode == 0, synth.stdout + synth.stderr
    assert (work / "out.wav").stat().st_size > 1000
    window = subprocess.run(
        [venv / "bin" / "python", "-c", WINDOW_CHECK, str(venv)],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert window.returncode == 0, window.stdout + window.stderr
    assert "window ok from" in window.stdout
    assert (venv / "bin" / "chattts-studio").is_file()  # the gui-scripts launcher
