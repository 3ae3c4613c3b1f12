"""Finds the files in resources/ (icon, sample texts) relative to this package, never the cwd."""

from pathlib import Path

from PySide6.QtGui import QIcon

RESOURCES = Path(__file__).resolve().parent.parent / "resources"
AUDITION_SENTENCE = "四川美食确实以辣闻名，但也有不辣的选择。[uv_break]Nice to meet you."


def resource_path(name: str) -> Path:
    return RESOURCES / name


def app_icon() -> QIcon:
    for name in ("icon.svg", "icon.png"):
        path = resource_path(name)
        if path.is_file():
            return QIcon(str(path))
    return QIcon()


def sample_text(name: str = "mixed.txt") -> str:
    """A sample text from resources/samples; a built-in line when the file is missing."""
    path = resource_path("samples") / name
    try:
        return path.read_text(encoding="utf-8")
    except OSError:
        return "你好，欢迎使用 ChatTTS Studio。[uv_break]Hello, welcome."
