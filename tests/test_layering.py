"""`core` is the engine and never imports Qt or `gui`: the CLI, bench and tests use it bare."""

import pkgutil
import subprocess
import sys
from pathlib import Path

import core


def test_core_imports_with_qt_and_gui_blocked() -> None:
    modules = sorted(f"core.{m.name}" for m in pkgutil.iter_modules(core.__path__))
    assert {"core.engine", "core.cli", "core.decode", "core.bench"} <= set(modules)
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
