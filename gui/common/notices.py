"""Messages that never resize the window: a label that wraps to a fixed number of lines and
elides the rest (the whole text in its tooltip), a place that notes share, the first-run banner
and the alert strip."""

import math

from PySide6.QtCore import QT_TRANSLATE_NOOP, QSize, Qt, Signal
from PySide6.QtGui import QResizeEvent, QTextLayout
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QSizePolicy, QWidget

from chattts_studio.gui.common.theme import is_dark, notifier, strip_style
from chattts_studio.gui.i18n import translate
from chattts_studio.gui.settings import Key, Settings

# The nouns `plural` counts, for the translators: a translation is the counted form ("个片段"),
# the same for one and many (Chinese has no plural).
COUNTED = (
    QT_TRANSLATE_NOOP("Plural", "segment"),
    QT_TRANSLATE_NOOP("Plural", "character"),
    QT_TRANSLATE_NOOP("Plural", "step"),
    QT_TRANSLATE_NOOP("Plural", "file"),
    QT_TRANSLATE_NOOP("Plural", "finished segment"),
    QT_TRANSLATE_NOOP("Plural", "candidate"),
    QT_TRANSLATE_NOOP("Plural", "request"),
    QT_TRANSLATE_NOOP("Plural", "take"),
)


def figure(value: float | None, spec: str = ".2f", unit: str = "") -> str:
    """A figure as text, or "-" where there is none: never "inf" or "nan" on screen."""
    if value is None or not math.isfinite(value):
        return "-"
    return f"{value:{spec}}{unit}"


def plural(count: int, word: str) -> str:
    """'1 segment', '2 segments'; in Chinese '2 个片段' (a noun of COUNTED, translated)."""
    counted = translate("Plural", word)
    if counted != word:
        return f"{count} {counted}"
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


class MessageLabel(QLabel):
    """Plain text in at most `lines` lines of the width it is given: it never asks its layout
    for more room, so no message can widen or heighten the window. What does not fit ends in
    an ellipsis and the whole text is the tooltip. `text()` is always the whole text."""

    def __init__(
        self,
        text: str = "",
        lines: int = 1,
        parent: QWidget | None = None,
        hide_when_empty: bool = False,
    ) -> None:
        super().__init__(parent)
        self.lines = lines
        self._full = ""
        # Hidden while empty, its room kept: nothing around it moves when a message comes.
        self._hide_when_empty = hide_when_empty
        self.setTextFormat(Qt.TextFormat.PlainText)
        policy = QSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
        policy.setRetainSizeWhenHidden(True)
        self.setSizePolicy(policy)
        self.setFixedHeight(self._height())
        self.setText(text)

    def _height(self) -> int:
        margins = self.contentsMargins()
        return self.fontMetrics().lineSpacing() * self.lines + margins.top() + margins.bottom() + 2

    def text(self) -> str:
        return self._full

    def setText(self, text: str) -> None:
        self._full = text or ""
        self._fit()
        if self._hide_when_empty:
            self.setVisible(bool(self._full))

    def clear(self) -> None:
        self.setText("")

    def sizeHint(self) -> QSize:
        natural = self.fontMetrics().horizontalAdvance(self._full.split("\n")[0]) + 8
        return QSize(min(natural, 400), self._height())

    def minimumSizeHint(self) -> QSize:
        return QSize(16, self._height())

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._fit()

    def _fit(self) -> None:
        width = max(16, self.contentsRect().width())
        shown = self._wrapped(width)
        super().setText(shown)
        self.setToolTip(self._full if shown != self._full else "")

    def _wrapped(self, width: int) -> str:
        """The text broken into lines that fit `width`, the last one elided when it overflows."""
        metrics = self.fontMetrics()
        out: list[str] = []
        paragraphs = self._full.split("\n")
        for number, paragraph in enumerate(paragraphs):
            layout = QTextLayout(paragraph, self.font())
            layout.beginLayout()
            starts: list[tuple[int, int]] = []
            while True:
                line = layout.createLine()
                if not line.isValid():
                    break
                line.setLineWidth(width)
                starts.append((line.textStart(), line.textLength()))
            layout.endLayout()
            for index, (start, length) in enumerate(starts or [(0, 0)]):
                last_line = len(out) == self.lines - 1
                more = index < len(starts) - 1 or number < len(paragraphs) - 1
                if last_line and more:
                    rest = " ".join(p for p in [paragraph[start:], *paragraphs[number + 1 :]] if p)
                    out.append(metrics.elidedText(rest, Qt.TextElideMode.ElideRight, width))
                    return "\n".join(out)
                out.append(paragraph[start : start + length].rstrip())
        return "\n".join(out)


def notes_box(*notes: MessageLabel) -> QWidget:
    """One place for `notes` (MessageLabels hidden while empty): its height is kept while all
    are empty, and the ones shown share its width (a note alone gets all of it)."""
    box = QWidget()
    row = QHBoxLayout(box)
    row.setContentsMargins(0, 0, 0, 0)
    for note in notes:
        policy = note.sizePolicy()
        policy.setRetainSizeWhenHidden(False)
        note.setSizePolicy(policy)
        row.addWidget(note, 1)
    box.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
    box.setFixedHeight(max(note.height() for note in notes))
    return box


class Notice(QFrame):
    """A coloured strip with a message and a close button (the banner and the alert)."""

    closed = Signal()

    def __init__(self, name: str, lines: int, parent: QWidget | None = None) -> None:
        """`name`: "banner" or "alert" (its colours in theme.py, for light and dark)."""
        super().__init__(parent)
        self.setObjectName(name)
        self._restyle()
        notifier().changed.connect(self._restyle)
        self.text = MessageLabel(lines=lines)
        self.close_button = QPushButton("✕")
        self.close_button.setFlat(True)
        self.close_button.setToolTip(translate("Notices", "Dismiss this message"))
        self.close_button.setAccessibleName(translate("Notices", "Dismiss"))
        self.row = QHBoxLayout(self)
        self.row.addWidget(self.text, 1)
        self.row.addWidget(self.close_button)
        self.close_button.clicked.connect(self._close)

    def _restyle(self) -> None:
        style = strip_style(self.objectName(), is_dark())
        if style != self.styleSheet():  # a new style sheet is itself a palette change
            self.setStyleSheet(style)

    def add_button(self, button: QPushButton) -> None:
        self.row.insertWidget(self.row.count() - 1, button)

    def _close(self) -> None:
        self.hide()
        self.closed.emit()


# -- the banner's dismissal, kept in the preferences file ----------------------------------
def banner_dismissed(settings: Settings) -> str:
    """The situation the banner was dismissed in ('' when it was not)."""
    return settings.text(Key.BANNER_DISMISSED)


def set_banner_dismissed(settings: Settings, situation: str) -> None:
    settings.set(Key.BANNER_DISMISSED, situation)
    settings.sync()
