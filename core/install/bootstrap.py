"""Runs the installer from the source tree, before the app is installed: makes the package
names resolve to this checkout without running the app's own package code, then calls main."""

import sys
import types
from pathlib import Path

if __name__ == "__main__":
    core = Path(__file__).resolve().parents[1]
    for name, path in (("chattts_studio", []), ("chattts_studio.core", [str(core)])):
        module = types.ModuleType(name)
        module.__path__ = path
        sys.modules.setdefault(name, module)
    from chattts_studio.core.install.main import main

    sys.exit(main())
