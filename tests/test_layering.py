"""`core` is the engine and never imports Qt or `gui`: the CLI, bench and tests use it bare."""

import os
import pkgutil
import subprocess
import sys
from pathlib import Path

import core


def test_core_imports_with_qt_and_gui_blocked() -> None:
    modules = sorted(m.name for m in pkgutil.walk_packages(core.__path__, "core."))
    assert {"core.engine", "core.cli", "core.decode", "core.devtools.bench"} <= set(modules)
    code = (
        "import sys\n"
        "for blocked in ('PySide6', 'shiboken6', 'pyqtgraph', 'gui'):\n"
        "    sys.modules[blocked] = None  # importing it now raises ImportError\n"
        f"import importlib\nfor name in {modules!r}:\n    importlib.import_module(name)\n"
        "print('ok')\n"
    )
    root = Path(core.__file__).resolve().parent.parent
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=root
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip().endswith("ok")


# Importing the model registry or the downloader must not pull in the engine's heavy world: the
# CLI's `model status`, the window's Models dialog and tests read hashes and folders only.
HEAVY = ("torch", "ChatTTS", "transformers", "safetensors", "huggingface_hub", "numpy")


def test_models_and_download_import_nothing_heavy(tmp_path: Path) -> None:
    code = (
        "import sys\nimport core.models, core.download\n"
        "core.models.status(), core.models.official_hashes()  # absent models: nothing built\n"
        f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))\n"
    )
    root = Path(core.__file__).resolve().parent.parent
    env = {**os.environ, "CHATTTS_STUDIO_HOME": str(tmp_path)}
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=root, env=env
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "[]", (
        f"core.models or core.download imported {proc.stdout.strip()}"
    )
