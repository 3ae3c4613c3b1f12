"""Helpers for the interface tests: every user-visible string of a window (texts, titles,
tooltips, placeholders, menus, plot titles), and what counts as still English."""

import re
from collections.abc import Iterator

from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractSpinBox,
    QComboBox,
    QGroupBox,
    QLabel,
    QLineEdit,
    QListWidget,
    QMenu,
    QPlainTextEdit,
    QTabWidget,
    QWidget,
)

# Words that are not English but names, units and formats, the same in every language: the
# engine's figures (RTF, VRAM), precisions, model and program names, key names, file types,
# and each language's own name in the language menu (people look for their own).
NOT_LANGUAGE = {
    *("RTF", "VRAM", "MiB", "GB", "fp32", "fp16", "bf16", "int8", "Top", "ChatTTS", "Studio"),
    *("CPU", "CUDA", "GPU", "MPS", "demo", "full", "official", "chattts", "studio", "cli"),
    *("pip", "pipx", "Ctrl", "Alt", "Shift", "Enter", "Return", "Esc", "Tab", "F2"),
    *("WAV", "FLAC", "OGG", "Vorbis", "MP3", "json", "txt", "md", "epub", "m4b", "SRT"),
    *(
        "LUFS",
        "dB",
        "Hz",
        "Linux",
        "BSD",
        "English",
        "flac",
        "wav",
        "mp3",
        "ogg",
        "opus",
        "MB",
        "KB",
        "KiB",
    ),
    # device ids, and the names of libraries, GPU generations and the vendors' platforms
    *("cpu", "cuda", "mps", "PyTorch", "GPT", "Pascal", "Ampere", "Apple", "PortAudio", "NUL"),
    *("ONNX", "onnx", "onnxruntime", "onnxscript", "torch"),  # the engines and their packages
    "PyPI",  # the package registry a model can come from
    "SenseVoice",  # the speech recognition model's name
    "libportaudio2",
    "sha256",  # a hash's name
    *("API", "ASCII", "EPUB"),  # names Chinese text uses as they are
}
# Control tokens ([uv_break], [speed_5]), placeholders of numbers, file patterns (*.txt),
# key sequences, paths and commands to type are not language either.
IGNORED = re.compile(
    r"pipx? install(?: -e)? \.|chattts-studio-cli(?: [a-z-]+)+"
    r"|\[[a-z_0-9N-]+\]|\*\.\w+|(?:Ctrl|Alt|Shift)\+\S+"
    r"|(?:/[\w.-]+)+|https?://\S+|\b[\w.]+\.(?:txt|json|onnx)|\.\w+\b|\b2Noise\b"
    r"|Authorization: Bearer KEY"  # a header to send as it is
    r"|\bseed:\d+|\bsynth --[a-z-]+"  # a voice seed and a command's option, as typed
)
WORD = re.compile(r"[A-Za-z][A-Za-z0-9]+")  # "mp3" is one word


def english_words(text: str) -> list[str]:
    """The words of `text` that are English (empty: nothing left to translate)."""
    return [w for w in WORD.findall(IGNORED.sub(" ", text)) if w not in NOT_LANGUAGE]


def _menu_strings(menu: QMenu, where: str) -> Iterator[tuple[str, str]]:
    yield f"{where} menu title", menu.title()
    for action in menu.actions():
        if action.isSeparator():
            continue
        yield f"{where} > {action.text()}", action.text()
        yield f"{where} > {action.text()} tooltip", action.toolTip()
        yield f"{where} > {action.text()} status tip", action.statusTip()
        if action.menu() is not None:
            yield from _menu_strings(action.menu(), f"{where} > {action.text()}")


def widget_strings(widget: QWidget) -> Iterator[tuple[str, str]]:
    """(where, text) for everything a person can read on one widget."""
    name = f"{type(widget).__name__} {widget.objectName()}".strip()
    if widget.isWindow():
        yield f"{name} window title", widget.windowTitle()
    for kind, text in (
        ("tooltip", widget.toolTip()),
        ("accessible name", widget.accessibleName()),
        ("accessible description", widget.accessibleDescription()),
        ("status tip", widget.statusTip()),
        ("what's this", widget.whatsThis()),
    ):
        yield f"{name} {kind}", text
    if isinstance(widget, QLabel | QAbstractButton):
        yield f"{name} text", widget.text()
    elif isinstance(widget, QGroupBox):
        yield f"{name} title", widget.title()
    elif isinstance(widget, QLineEdit | QPlainTextEdit):
        yield f"{name} placeholder", widget.placeholderText()  # their text is the user's
    elif isinstance(widget, QComboBox):
        for row in range(widget.count()):
            yield f"{name} item {row}", widget.itemText(row)
    elif isinstance(widget, QTabWidget):
        for index in range(widget.count()):
            yield f"{name} tab {index}", widget.tabText(index)
            yield f"{name} tab {index} tooltip", widget.tabToolTip(index)
    elif isinstance(widget, QListWidget):
        for row in range(widget.count()):
            yield f"{name} row {row}", widget.item(row).text()
    if isinstance(widget, QAbstractSpinBox):
        yield f"{name} special value", widget.specialValueText()
        yield f"{name} suffix", getattr(widget, "suffix", lambda: "")()
    if isinstance(widget, QMenu):
        yield from _menu_strings(widget, name)


def plot_strings(plot_item, where: str) -> Iterator[tuple[str, str]]:  # type: ignore[no-untyped-def]
    """A pyqtgraph PlotItem's title and axis labels."""
    yield f"{where} title", plot_item.titleLabel.text or ""
    for side in ("left", "bottom"):
        axis = plot_item.getAxis(side)
        yield f"{where} {side} label", axis.labelText or ""


def window_strings(window: QWidget) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    for widget in [window, *window.findChildren(QWidget)]:
        found.extend(widget_strings(widget))
    menu_bar = getattr(window, "menuBar", None)
    if menu_bar is not None:
        for action in menu_bar().actions():
            if action.menu() is not None:
                found.extend(_menu_strings(action.menu(), "menu bar"))
    return [(where, text) for where, text in found if text]
