"""Dialogue script mode: the editor's lines are `Name: text` turns (core.dialogue), coloured by
speaker, checked against the speaker library as the user types."""

import zlib
from collections.abc import Callable

from PySide6.QtGui import QColor, QSyntaxHighlighter, QTextCharFormat, QTextDocument

from core.dialogue import Turn, parse_script, voices_for
from core.errors import StudioError
from core.voice import Voice

from .i18n import core_text


def speaker_colour(name: str) -> QColor:
    """One stable colour per name (the same name is the same colour in every script)."""
    hue = zlib.crc32(name.encode()) % 360
    return QColor.fromHsl(hue, 170, 110)


class ScriptHighlighter(QSyntaxHighlighter):
    """Colours each `Name: text` line by its speaker; an unknown name is underlined in red."""

    def __init__(self, document: QTextDocument, known: Callable[[], set[str]]) -> None:
        super().__init__(document)
        self.known = known

    def highlightBlock(self, text: str) -> None:  # Qt's name
        if not text.strip() or text[0] in " \t\u3000" or text.lstrip().startswith("#"):
            return
        name, colon, _rest = text.replace("：", ":").partition(":")
        if not colon or not name.strip():
            return
        form = QTextCharFormat()
        form.setForeground(speaker_colour(name.strip()))
        if name.strip() not in self.known():
            form.setUnderlineStyle(QTextCharFormat.UnderlineStyle.WaveUnderline)
            form.setUnderlineColor(QColor("red"))
        else:
            form.setFontWeight(700)
        self.setFormat(0, len(name) + 1, form)
        rest = QTextCharFormat()
        rest.setForeground(speaker_colour(name.strip()))
        self.setFormat(len(name) + 1, len(text) - len(name) - 1, rest)


def check_script(text: str, library: dict[str, Voice]) -> tuple[list[Turn], dict[str, Voice]]:
    """The turns and each speaker's voice; StudioError (ScriptError) naming the line."""
    turns = parse_script(text)
    return turns, voices_for(turns, library)


def script_problem(text: str, library: dict[str, Voice]) -> str:
    """ "" when the script can be spoken, else its one sentence (with the line number)."""
    try:
        check_script(text, library)
    except StudioError as exc:
        return core_text(exc)
    return ""
