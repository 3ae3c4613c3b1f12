"""Dialogue script mode: the editor's lines are `Name: text` turns
(chattts_studio.core.text.dialogue), coloured by
speaker, checked against the speaker library as the user types; the pause between turns is set
beside the editor while the mode is on."""

import zlib
from collections.abc import Callable

from PySide6.QtGui import QColor, QSyntaxHighlighter, QTextCharFormat, QTextDocument
from PySide6.QtWidgets import QDoubleSpinBox, QHBoxLayout, QLabel, QWidget

from chattts_studio.core.engine.request import SynthesisRequest
from chattts_studio.core.errors import StudioError
from chattts_studio.core.text.dialogue import Turn, parse_script, voices_for
from chattts_studio.core.voices.voice import Voice
from chattts_studio.gui.i18n import core_text, translate

TURN_PAUSE_RANGE = (0.0, 5.0)  # seconds, as SynthesisRequest.validate allows


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


class TurnPause(QWidget):
    """The silence put between two turns of a dialogue (where the speaking line changes), in
    seconds; the segment pause (Advanced tab) stays the one inside a long turn. Shown and
    enabled only in script mode: a plain text has no turns."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.box = QDoubleSpinBox()
        self.box.setRange(*TURN_PAUSE_RANGE)
        self.box.setSingleStep(0.1)
        self.box.setDecimals(1)
        self.box.setSuffix(" s")
        self.box.setValue(SynthesisRequest(text="").turn_pause_seconds)
        self.box.setAccessibleName(translate("Voices", "Pause between turns"))
        self.box.setToolTip(
            translate(
                "Voices",
                "Silence put between two lines of a dialogue script, where the speaker's line "
                "changes (the pause between segments applies inside one line).",
            )
        )
        label = QLabel(translate("Voices", "Pause between &turns:"))
        label.setBuddy(self.box)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(label)
        layout.addWidget(self.box)
        layout.addStretch(1)
        self.set_shown(False)

    def set_shown(self, on: bool) -> None:
        self.box.setEnabled(on)
        self.setVisible(on)
