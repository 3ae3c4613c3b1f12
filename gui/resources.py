"""Finds the app's data files (icon, desktop entry, sample texts) with importlib.resources: the
top-level resources/ folder, installed as the package `chattts_studio.resources`, or the folder
beside gui/ in a bare checkout. A missing file is a warning: the app still opens."""

import atexit
import contextlib
import functools
import importlib.resources
import logging
from importlib.resources.abc import Traversable
from pathlib import Path

from PySide6.QtGui import QIcon

PACKAGE = "chattts_studio.resources"
CHECKOUT = Path(__file__).resolve().parent.parent / "resources"  # in a source tree
AUDITION_SENTENCE = "四川美食确实以辣闻名，但也有不辣的选择。[uv_break]Nice to meet you."
FALLBACK_SAMPLE = "你好，欢迎使用 ChatTTS Studio。[uv_break]Hello, welcome."

log = logging.getLogger("chattts_studio")


@functools.cache
def resources_dir() -> Path | None:
    """The folder holding the data files, or None (logged) when there is none."""
    try:
        root: Traversable | None = importlib.resources.files(PACKAGE)
    except ModuleNotFoundError:
        # A source checkout run without installing: the folder is a sibling of gui/.
        root = CHECKOUT if (CHECKOUT / "__init__.py").is_file() else None
    if root is None:
        log.warning(
            "ChatTTS Studio's resources (package %s) are not installed: no icon or sample "
            "texts. Reinstall the app (pip install chattts-studio, or pip install -e . in a "
            "source checkout).",
            PACKAGE,
        )
        return None
    if isinstance(root, Path):
        return root
    # Installed somewhere that is not a plain folder (a zip): extract once for the session.
    stack = contextlib.ExitStack()
    atexit.register(stack.close)
    return Path(stack.enter_context(importlib.resources.as_file(root)))


def resource_path(name: str) -> Path:
    """The path of a data file such as 'icon.svg' or 'samples/mixed.txt' (it may not exist:
    `existing_resource` says so)."""
    root = resources_dir()
    return (root if root is not None else Path(__file__).resolve().parent / "missing") / name


def existing_resource(name: str) -> Path | None:
    """The data file's path, or None with a logged warning when it is missing."""
    path = resource_path(name)
    if path.is_file():
        return path
    if resources_dir() is not None:  # a missing package was reported already
        log.warning("ChatTTS Studio's resource file %s is missing (looked in %s).", name, path)
    return None


def app_icon() -> QIcon:
    path = existing_resource("icon.svg") or existing_resource("icon.png")
    return QIcon(str(path)) if path is not None else QIcon()


def sample_text(name: str = "mixed.txt") -> str:
    """A sample text from resources/samples; a built-in line (logged) when it is missing."""
    path = existing_resource(f"samples/{name}")
    if path is not None:
        try:
            return path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            log.warning("Cannot read the sample text %s: %s.", path, exc)
    return FALLBACK_SAMPLE
