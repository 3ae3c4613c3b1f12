"""The segment editor's row of checks: Check all (speech recognition), Check voices (the voice
check), the tries and Re-roll flagged until clean, Best of N, and whether those two compare
voices too. Only widgets: the panel wires their clicks to its signals."""

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QCheckBox, QHBoxLayout, QPushButton, QSpinBox, QWidget

from chattts_studio.core.project.edits import MAX_TRIES
from chattts_studio.gui.i18n import translate

DEFAULT_TRIES = 3  # "Tries:" at first, as `project reroll --until-clean` without --max-tries


def panel_button(text: str, tip: str) -> QPushButton:
    """A button of the segment editor's panel: a click leaves the focus in the table (and its
    text editor open: a split cuts at the editor's cursor)."""
    made = QPushButton(text)
    made.setToolTip(tip)
    made.setFocusPolicy(Qt.FocusPolicy.TabFocus)
    return made


class HearingBar(QWidget):
    """The checks' row, its controls named for the panel that wires them."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.check_button = panel_button(
            translate("Segments", "Check all"),
            translate(
                "Segments",
                "Hear every chosen take with speech recognition: a take that drops or adds "
                "words is flagged ASR",
            ),
        )
        self.voice_button = panel_button(
            translate("Segments", "Check voices"),
            translate(
                "Segments",
                "Compare every chosen take's voice with its voice's reference (a take marked as "
                "the reference, else the library's recording, else the voice's most typical "
                "take): a take whose voice drifts is flagged voice",
            ),
        )
        self.tries_box = QSpinBox()
        self.tries_box.setRange(1, MAX_TRIES)
        self.tries_box.setValue(DEFAULT_TRIES)
        self.tries_box.setPrefix(translate("Segments", "Tries: "))
        self.tries_box.setToolTip(
            translate("Segments", "How many new takes of a segment until clean makes at most")
        )
        self.clean_button = panel_button(
            translate("Segments", "Re-roll flagged until clean"),
            translate(
                "Segments",
                "New takes of each flagged segment, one at a time, each heard, until one is "
                "clean; every take is kept",
            ),
        )
        self.best_button = panel_button(
            translate("Segments", "Best of N"),
            translate(
                "Segments",
                "Give each segment as many takes as Takes says, hear them all and choose the "
                "one heard best (a take chosen by hand or locked stays)",
            ),
        )
        self.voice_box = QCheckBox(translate("Segments", "Compare voices too"))
        self.voice_box.setToolTip(
            translate(
                "Segments",
                "Until clean and Best of N also compare each take's voice with its reference: "
                "a drifting voice counts as a flag, and the closest voice weighs in the choice",
            )
        )
        self.voice_box.setFocusPolicy(Qt.FocusPolicy.TabFocus)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        for widget in self.widgets():
            layout.addWidget(widget)
        layout.addStretch(1)

    def widgets(self) -> tuple[QWidget, ...]:
        """Every control of the row: each needs a project and no job changing it."""
        return (
            self.check_button,
            self.voice_button,
            self.tries_box,
            self.clean_button,
            self.best_button,
            self.voice_box,
        )
