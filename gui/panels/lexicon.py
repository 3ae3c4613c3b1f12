"""The pronunciation dictionary tab: its entries (word -> replacement), add and remove, and a
live preview of what the model will read for the editor's text
(chattts_studio.core.engine.text_preview.preview, on the thread pool: ChatTTS's normaliser is
not instant)."""

from PySide6.QtCore import QTimer, Signal
from PySide6.QtWidgets import (
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from chattts_studio.core.engine.text_preview import preview
from chattts_studio.core.errors import StudioError
from chattts_studio.core.text.lexicon import LexiconStore, lexicon_file
from chattts_studio.gui.common.file_watch import FileWatch
from chattts_studio.gui.common.tasks import in_background
from chattts_studio.gui.i18n import core_text, translate

PREVIEW_DELAY_MS = 300
PREVIEW_CHARS = 2000  # the preview shows the text's start: enough to check a word


class LexiconPanel(QWidget):
    message = Signal(str)
    changed = Signal()
    previewed = Signal(str)  # the preview's text, once shown

    def __init__(self, text: object = None, parent: QWidget | None = None) -> None:
        """`text`: a callable giving the editor's text (for the preview)."""
        super().__init__(parent)
        self.text = text if callable(text) else (lambda: "")
        self.problem = ""
        try:
            self.store = LexiconStore()
        except StudioError as exc:  # damaged or newer: refused, never overwritten
            self.problem = core_text(exc)
            self.store = LexiconStore.__new__(LexiconStore)  # empty; add/remove refused
            self.store.path, self.store.entries = lexicon_file(), {}
        # The command line changes the dictionary too: shown (and used) as soon as it does.
        self.watch = FileWatch(self.store.path, self)
        self._previews = 0
        self.timer = QTimer(self)
        self.timer.setSingleShot(True)
        self.timer.setInterval(PREVIEW_DELAY_MS)
        self._build()
        self._connect()
        self.refresh()

    def _build(self) -> None:
        self.table = QTableWidget(0, 2)
        self.table.setHorizontalHeaderLabels(
            [translate("Lexicon", "Word"), translate("Lexicon", "Read as")]
        )
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.setMinimumHeight(60)
        self.table.setMaximumHeight(120)
        self.word = QLineEdit()
        self.word.setPlaceholderText(translate("Lexicon", "Word"))
        self.replacement = QLineEdit()
        self.replacement.setPlaceholderText(translate("Lexicon", "Read as"))
        self.add_button = QPushButton(translate("Lexicon", "Add"))
        self.remove_button = QPushButton(translate("Lexicon", "Remove"))
        self.preview = QPlainTextEdit()
        self.preview.setReadOnly(True)
        self.preview.setMaximumHeight(90)
        self.preview.setTabChangesFocus(True)
        for widget, name in (
            (self.table, translate("Lexicon", "Dictionary entries")),
            (self.word, translate("Lexicon", "Word")),
            (self.replacement, translate("Lexicon", "Read as")),
            (self.add_button, translate("Lexicon", "Add entry")),
            (self.remove_button, translate("Lexicon", "Remove entry")),
            (self.preview, translate("Lexicon", "What the model will read")),
        ):
            widget.setAccessibleName(name)
        self.word.setToolTip(translate("Lexicon", "A word as it is written in the text"))
        self.replacement.setToolTip(
            translate(
                "Lexicon",
                "How to read it: characters that read the intended way, or words spelled out",
            )
        )
        row = QHBoxLayout()
        row.addWidget(self.word, 1)
        row.addWidget(self.replacement, 1)
        row.addWidget(self.add_button)
        row.addWidget(self.remove_button)
        group = QGroupBox(translate("Lexicon", "Pronunciation dictionary"))
        inner = QVBoxLayout(group)
        inner.addWidget(self.table)
        inner.addLayout(row)
        inner.addWidget(
            QLabel(translate("Lexicon", "What the model will read (the editor's text):"))
        )
        inner.addWidget(self.preview)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(group)

    def _connect(self) -> None:
        self.add_button.clicked.connect(self.add)
        self.replacement.returnPressed.connect(self.add)
        self.remove_button.clicked.connect(self.remove)
        self.timer.timeout.connect(self.update_preview)
        self.watch.changed.connect(self.reload)

    def entries(self) -> tuple[tuple[str, str], ...]:
        return self.store.lexicon().entries

    def reload(self) -> None:
        """The dictionary as another process left it: read again, and usable again once a
        damaged file was fixed or moved away."""
        try:
            changed = self.store.reload()
        except StudioError as exc:  # damaged or newer now: refused; the entries shown stay
            self.problem = core_text(exc)
            self.message.emit(self.problem)
            return
        self.problem = ""
        if changed:
            self.refresh()
            self.changed.emit()

    def refresh(self) -> None:
        items = sorted(self.store.entries.items())
        self.table.setRowCount(len(items))
        for row, (word, replacement) in enumerate(items):
            self.table.setItem(row, 0, QTableWidgetItem(word))
            self.table.setItem(row, 1, QTableWidgetItem(replacement))
        self.preview_soon()

    def add(self) -> None:
        if self.problem:
            self.message.emit(self.problem)
            return
        try:
            word, new = self.store.add(self.word.text(), self.replacement.text())
        except StudioError as exc:
            self.message.emit(core_text(exc))
            return
        said = (
            translate("Lexicon", "Added '{word}' to the dictionary.")
            if new
            else translate("Lexicon", "Changed '{word}'.")
        )
        self.word.clear()
        self.replacement.clear()
        self.refresh()
        self.changed.emit()
        self.message.emit(said.format(word=word))

    def remove(self) -> None:
        row = self.table.currentRow()
        item = self.table.item(row, 0) if row >= 0 else None
        if item is None:
            self.message.emit(translate("Lexicon", "Select an entry in the dictionary first."))
            return
        word = item.text()
        try:
            self.store.remove(word)
        except StudioError as exc:
            self.message.emit(core_text(exc))
            return
        self.refresh()
        self.changed.emit()
        self.message.emit(
            translate("Lexicon", "Removed '{word}' from the dictionary.").format(word=word)
        )

    # -- the preview -----------------------------------------------------------------------
    def preview_soon(self) -> None:
        self.timer.start()

    def update_preview(self) -> None:
        self.timer.stop()
        self._previews += 1
        number, text, lexicon = self._previews, self.text()[:PREVIEW_CHARS], self.store.lexicon()
        if not text.strip():
            self._show(number, "")
            return

        def work() -> str:
            try:
                return "\n".join(line.model_text for line in preview(text, lexicon))
            except StudioError as exc:
                return core_text(exc)

        in_background(work, lambda shown: self._show(number, shown), owner=self)

    def _show(self, number: int, shown: str) -> None:
        if number == self._previews:  # else the text or the dictionary changed since
            self.preview.setPlainText(shown)
            self.previewed.emit(shown)
