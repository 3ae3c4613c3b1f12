"""The text editor: CJK-capable font, counts and estimate, control-token inserts, .txt drops and the
word being spoken marked. A long text is counted on the thread pool, so neither typing nor a paste
waits.
"""

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QMimeData, Qt, QTimer, Signal
from PySide6.QtGui import (
    QColor,
    QDragEnterEvent,
    QDragMoveEvent,
    QDropEvent,
    QFont,
    QMouseEvent,
    QPalette,
    QTextCharFormat,
    QTextCursor,
    QTextFormat,
)
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QMenu,
    QPlainTextEdit,
    QTextEdit,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from chattts_studio.core.errors import StudioError
from chattts_studio.core.text.prepare import Segment, split_segments
from chattts_studio.gui.common.notices import MessageLabel, plural
from chattts_studio.gui.common.tasks import in_background
from chattts_studio.gui.i18n import translate

# Fonts with both Han and Latin glyphs, best first; Qt falls back per glyph if none is there.
CJK_FONTS = [
    "Noto Sans CJK SC",
    "WenQuanYi Micro Hei",
    "Microsoft YaHei",
    "PingFang SC",
    "Source Han Sans SC",
    "Sans Serif",
]
QUICK_TOKENS = ("[uv_break]", "[laugh]", "[lbreak]")
# Counting segments reads the whole text: it waits until typing pauses, longer on a long text,
# so a keystroke in a 100,000-character text costs no more than in a short one.
COUNT_DELAY_MS = 300
LONG_TEXT = 20_000
LONG_COUNT_DELAY_MS = 1_000
INLINE_COUNT = 5_000  # characters counted on the UI thread (a few ms); longer: in the pool
# The spoken word's mark: the selection colour, strong for a measured time; faint and underlined
# with dots for an estimated one (interpolated, not heard). The property tells them apart.
SPOKEN_ALPHA, ESTIMATED_ALPHA = 120, 45
ESTIMATED_PROPERTY = QTextFormat.Property.UserProperty + 1


def _text_file(mime: QMimeData) -> Path | None:
    for url in mime.urls():
        if url.isLocalFile() and url.toLocalFile().lower().endswith(".txt"):
            return Path(url.toLocalFile())
    return None


class TextEditor(QPlainTextEdit):
    """Accepts a dropped .txt file as a file to open instead of pasting its path."""

    file_dropped = Signal(Path)
    clicked = Signal(int)  # a plain left click that selected nothing: the cursor's position

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:  # Qt's name
        super().mouseReleaseEvent(event)
        plain = event.modifiers() == Qt.KeyboardModifier.NoModifier
        left = event.button() == Qt.MouseButton.LeftButton
        if left and plain and not self.textCursor().hasSelection():  # a drag selects: no click
            self.clicked.emit(self.cursorForPosition(event.position().toPoint()).position())

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if _text_file(event.mimeData()):
            event.acceptProposedAction()
        else:
            super().dragEnterEvent(event)

    def dragMoveEvent(self, event: QDragMoveEvent) -> None:  # Qt's name
        if _text_file(event.mimeData()):
            event.acceptProposedAction()
        else:
            super().dragMoveEvent(event)

    def dropEvent(self, event: QDropEvent) -> None:
        path = _text_file(event.mimeData())
        if path:
            event.acceptProposedAction()
            self.file_dropped.emit(path)
        else:
            super().dropEvent(event)


class EditorPanel(QWidget):
    error = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.segment_size = 50
        self._detail = ""  # the last segment count, shown until the next one is ready
        self._counts = 0  # the number of the newest count asked for; older answers are dropped
        self.count_timer = QTimer(self)
        self.count_timer.setSingleShot(True)
        self.count_timer.timeout.connect(self.update_counts)
        self._build()

    def _build(self) -> None:
        self.editor = TextEditor()
        font = QFont()
        font.setFamilies(CJK_FONTS)
        font.setPointSize(12)
        self.editor.setFont(font)
        self.editor.setPlaceholderText(
            translate(
                "Editor", "Type or paste text (Chinese and English), or drop a .txt file here."
            )
        )
        self.editor.setAccessibleName(translate("Editor", "Text to synthesize"))
        self.editor.setAccessibleDescription(
            translate("Editor", "Chinese and English text, with control tokens such as [uv_break]")
        )
        # Tab moves the focus on, so the keyboard path goes through the window (a tab
        # character means nothing to ChatTTS).
        self.editor.setTabChangesFocus(True)
        self.editor.file_dropped.connect(self.open_file)
        # Two lines at most: an unknown token's sentence wraps or elides, never widens the window.
        self.counts = MessageLabel(lines=2)
        self.counts.setObjectName("counts")
        self.counts.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)

        tokens = QHBoxLayout()
        tokens.addWidget(QLabel(translate("Editor", "Insert:")))
        for token in QUICK_TOKENS:
            button = QToolButton()
            button.setText(token)
            button.setToolTip(
                translate("Editor", "Insert {token} at the cursor").format(token=token)
            )
            button.setAccessibleName(translate("Editor", "Insert {token}").format(token=token))
            button.clicked.connect(lambda _=False, t=token: self.insert_token(t))
            tokens.addWidget(button)
        speed = QToolButton()
        speed.setText("[speed_N]")
        speed.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        speed.setMenu(self.token_menu())
        speed.setToolTip(translate("Editor", "Insert a speed token, from [speed_0] to [speed_9]"))
        speed.setAccessibleName(translate("Editor", "Insert a speed token"))
        tokens.addWidget(speed)
        tokens.addWidget(self.counts, 1)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.editor, 1)
        layout.addLayout(tokens)
        self.editor.textChanged.connect(self._text_changed)
        self.update_counts()

    def token_menu(self) -> QMenu:
        menu = QMenu(translate("Editor", "Insert &token"), self)
        for token in (*QUICK_TOKENS, "[v_break]", "[llbreak]"):
            menu.addAction(token, self._inserter(token))
        speed = menu.addMenu(translate("Editor", "&Speed"))
        for n in range(10):
            speed.addAction(f"[speed_{n}]", self._inserter(f"[speed_{n}]"))
        return menu

    def _inserter(self, token: str) -> Callable[[], None]:
        return lambda: self.insert_token(token)

    def insert_token(self, token: str) -> None:
        self.editor.insertPlainText(token)
        self.editor.setFocus()

    def text(self) -> str:
        return self.editor.toPlainText()

    def set_text(self, text: str) -> None:
        """Replace the whole text (a file, a sample, the restored draft): counted at once."""
        self.editor.setPlainText(text)
        self.update_counts()

    def mark_spoken(self, first: int, last: int, estimated: bool) -> None:
        """Mark characters `first` to `last` (exclusive) as the word being spoken; the text,
        the cursor and the undo steps stay as they are."""
        colour = QColor(self.editor.palette().color(QPalette.ColorRole.Highlight))
        colour.setAlpha(ESTIMATED_ALPHA if estimated else SPOKEN_ALPHA)
        mark = QTextCharFormat()
        mark.setBackground(colour)
        if estimated:
            mark.setUnderlineStyle(QTextCharFormat.UnderlineStyle.DotLine)
        mark.setProperty(ESTIMATED_PROPERTY, estimated)
        cursor = QTextCursor(self.editor.document())
        cursor.setPosition(first)
        cursor.setPosition(last, QTextCursor.MoveMode.KeepAnchor)
        selection = QTextEdit.ExtraSelection()
        selection.cursor, selection.format = cursor, mark  # type: ignore[misc]
        self.editor.setExtraSelections([selection])
        self._show_place(cursor)

    def _show_place(self, cursor: QTextCursor) -> None:
        """Scroll a word out of sight into the upper third of the view (the user's own cursor
        stays where it is). The plain editor scrolls by lines: the word's line is found from
        its paragraph's first line, since lines far from the view are not laid out yet."""
        view = self.editor.viewport().height()
        place = self.editor.cursorRect(cursor)
        if place.top() >= 0 and place.bottom() <= view:
            return
        block = cursor.block()
        line = block.firstLineNumber()
        layout = block.layout()
        if layout is not None and layout.lineCount():
            line += layout.lineForTextPosition(cursor.position() - block.position()).lineNumber()
        shown = view // max(1, self.editor.fontMetrics().lineSpacing())
        self.editor.verticalScrollBar().setValue(max(0, line - shown // 3))

    def clear_spoken(self) -> None:
        if self.editor.extraSelections():
            self.editor.setExtraSelections([])

    def set_segment_size(self, size: int) -> None:
        self.segment_size = size
        self.update_counts()

    def _text_changed(self) -> None:
        """Every keystroke: only the character count now, the segments once typing pauses."""
        length = len(self.text())
        self._counts += 1  # a count under way is of the text before this change
        self.counts.setText(f"{plural(length, 'character')}{self._detail}")
        self.count_timer.start(COUNT_DELAY_MS if length < LONG_TEXT else LONG_COUNT_DELAY_MS)

    def update_counts(self) -> None:
        """Count the segments now (a short text) or on the thread pool (a long one)."""
        self.count_timer.stop()
        self._counts += 1
        number, text, size = self._counts, self.text(), self.segment_size
        if not text.strip():
            self._detail = ""
            self.counts.setText(plural(0, "character"))
            return

        def count() -> list[Segment] | StudioError:
            try:
                return split_segments(text, size, first_apart=True)
            except StudioError as exc:
                return exc

        if len(text) <= INLINE_COUNT:
            self._show_count(number, text, count())
        else:
            in_background(count, lambda found: self._show_count(number, text, found), owner=self)

    def _show_count(self, number: int, text: str, found: list[Segment] | StudioError) -> None:
        if number != self._counts:
            return  # the text or the segment size changed since: a newer count follows
        if isinstance(found, StudioError):
            self._detail = ""
            self.counts.setText(f"{plural(len(text), 'character')} · {found}")
            return
        seconds = sum(s.est_seconds for s in found)
        self._detail = " · " + translate("Editor", "{segments} · ~{seconds:.0f} s of audio").format(
            segments=plural(len(found), "segment"), seconds=seconds
        )
        self.counts.setText(f"{plural(len(text), 'character')}{self._detail}")

    def open_file(self, path: Path) -> bool:
        try:
            text = Path(path).read_text(encoding="utf-8-sig")
        except (OSError, UnicodeDecodeError) as exc:
            reason = getattr(exc, "strerror", None) or exc
            self.error.emit(
                translate("Editor", "Cannot open {path}: {reason}.").format(
                    path=path, reason=reason
                )
            )
            return False
        self.set_text(text)
        return True
