"""The segments' table with keyboard review: Space plays or stops the current segment, R
re-rolls, 1-9 pick a take, L locks or unlocks, Enter or F2 edits the text in place. The view
only says what was asked (signals); the window does it and gives the model the new project."""

from PySide6.QtCore import (
    QAbstractItemModel,
    QModelIndex,
    QPersistentModelIndex,
    QRect,
    Qt,
    Signal,
)
from PySide6.QtGui import QColor, QKeyEvent, QPainter, QPalette
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QHeaderView,
    QLineEdit,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTableView,
    QWidget,
)

from chattts_studio.gui.i18n import translate
from chattts_studio.gui.panels.editor import ESTIMATED_ALPHA, SPOKEN_ALPHA
from chattts_studio.gui.project.segment_model import SPOKEN_ROLE, Column, SegmentModel
from chattts_studio.gui.project.take_picker import TakePicker

TEXT_LINES = 2  # every row this many lines high: wrapped text, the rest elided
# Widths of the narrow columns, as sample texts in the view's font (measuring the rows'
# contents would read every row: 1,000 segments would open slowly).
SAMPLES = {
    Column.NUMBER: "00000",
    Column.SPEAKER: "Speaker name",
    Column.DURATION: "000.0 s",
    Column.TAKE: "16/16",
    Column.FLAGS: "clipped · silence",
    Column.HEARD: ">100% (demo)",
    Column.VOICE: "0.00 ⚠ (demo)",
    Column.LOCK: "Locked",
}
DIGITS = {getattr(Qt.Key, f"Key_{n}"): n for n in range(1, 10)}


class TextDelegate(QStyledItemDelegate):
    """The text cell's editor, a line edit kept at hand while open (a split cuts at its
    cursor); and the word being spoken marked over the cell's text while takes play."""

    def paint(
        self,
        painter: QPainter,
        option: QStyleOptionViewItem,
        index: QModelIndex | QPersistentModelIndex,
    ) -> None:
        super().paint(painter, option, index)
        spoken = index.data(SPOKEN_ROLE)
        if not spoken:
            return
        first, last, estimated = spoken
        place = self.spoken_rect(option, index, first, last)
        if place is None:
            return
        colour = QColor(option.palette.color(QPalette.ColorRole.Highlight))  # type: ignore[attr-defined]
        colour.setAlpha(ESTIMATED_ALPHA if estimated else SPOKEN_ALPHA)
        painter.fillRect(place, colour)

    def spoken_rect(
        self,
        option: QStyleOptionViewItem,
        index: QModelIndex | QPersistentModelIndex,
        first: int,
        last: int,
    ) -> QRect | None:
        """Where characters `first` to `last` of the cell's text are drawn; None when the
        cell's width cuts them off (the text is elided there)."""
        item = QStyleOptionViewItem(option)
        self.initStyleOption(item, index)
        widget = item.widget  # type: ignore[attr-defined]
        style = widget.style() if widget is not None else QApplication.style()
        text_rect = style.subElementRect(QStyle.SubElement.SE_ItemViewItemText, item, widget)
        margin = style.pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin, None, widget) + 1
        text, metrics = item.text, item.fontMetrics  # type: ignore[attr-defined]
        left = text_rect.left() + margin + metrics.horizontalAdvance(text[:first])
        right = text_rect.left() + margin + metrics.horizontalAdvance(text[:last])
        room = text_rect.width() - 2 * margin
        if metrics.horizontalAdvance(text) > room:  # elided: its end cut, an ellipsis drawn
            room -= metrics.horizontalAdvance("…")
        if right - (text_rect.left() + margin) > room:
            return None
        return QRect(left, text_rect.top(), right - left, text_rect.height())

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.editor: QLineEdit | None = None

    def createEditor(
        self,
        parent: QWidget,
        option: QStyleOptionViewItem,
        index: QModelIndex | QPersistentModelIndex,
    ) -> QWidget:
        editor = QLineEdit(parent)
        editor.setAccessibleName(translate("Segments", "Segment text"))
        editor.destroyed.connect(self._gone)
        self.editor = editor
        return editor

    def destroyEditor(self, editor: QWidget, index: QModelIndex | QPersistentModelIndex) -> None:
        if editor is self.editor:
            self.editor = None
        super().destroyEditor(editor, index)

    def _gone(self) -> None:
        self.editor = None


class SegmentView(QTableView):
    play_toggled = Signal(int)  # segment number: play it, or stop it when it plays
    reroll_wanted = Signal(list)  # list[int]: segment numbers to make new takes of
    pick_wanted = Signal(int, int)  # segment number, take id
    lock_wanted = Signal(list, bool)  # list[int] segment numbers, locked

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.busy = False  # a job changes the project: nothing may ask for another change
        self._kept_row = -1
        self.text_delegate = TextDelegate(self)
        self.take_picker = TakePicker(self)
        self.take_picker.picked.connect(self.pick_wanted)
        self._build()

    def _build(self) -> None:
        self.setItemDelegateForColumn(Column.TEXT, self.text_delegate)
        self.setItemDelegateForColumn(Column.TAKE, self.take_picker)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setEditTriggers(QAbstractItemView.EditTrigger.DoubleClicked)
        self.setWordWrap(True)
        self.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.setAlternatingRowColors(True)
        self.setAccessibleName(translate("Segments", "Segments"))
        rows = self.verticalHeader()
        rows.hide()
        # One fixed height for every row: sizing each row to its text reads all of them.
        rows.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        metrics = self.fontMetrics()
        rows.setDefaultSectionSize(TEXT_LINES * metrics.lineSpacing() + 8)
        columns = self.horizontalHeader()
        columns.setHighlightSections(False)
        columns.setMinimumSectionSize(metrics.horizontalAdvance("000"))
        self._widths = {c: metrics.horizontalAdvance(s) + 16 for c, s in SAMPLES.items()}

    def setModel(self, model: QAbstractItemModel | None) -> None:
        super().setModel(model)
        if model is None:
            return
        columns = self.horizontalHeader()
        for column in Column:
            mode = QHeaderView.ResizeMode.Stretch if column == Column.TEXT else None
            if mode is not None:
                columns.setSectionResizeMode(column, mode)
            else:
                columns.setSectionResizeMode(column, QHeaderView.ResizeMode.Interactive)
                self.setColumnWidth(column, self._widths[column])
        # A new project (a reset) keeps the place the user was at: after a split or a job
        # the same segment number is still current.
        model.modelAboutToBeReset.connect(self._keep_place)
        model.modelReset.connect(self._restore_place)
        model.dataChanged.connect(self._show_new_speakers)
        self._restore_place()

    def segment_model(self) -> SegmentModel | None:
        model = self.model()
        return model if isinstance(model, SegmentModel) else None

    # -- where the user is ----------------------------------------------------------------
    def current_number(self) -> int | None:
        row = self.currentIndex().row()
        return row + 1 if row >= 0 else None

    def selected_numbers(self) -> list[int]:
        """The selected segments' numbers in order; the current one when none is selected."""
        selection = self.selectionModel()
        rows = sorted({i.row() for i in selection.selectedRows()}) if selection else []
        if not rows and self.currentIndex().isValid():
            rows = [self.currentIndex().row()]
        return [r + 1 for r in rows]

    def go_to(self, number: int) -> None:
        model = self.model()
        if model is not None and 1 <= number <= model.rowCount():
            self.setCurrentIndex(model.index(number - 1, Column.TEXT))

    def _keep_place(self) -> None:
        self._kept_row = self.currentIndex().row()

    def _restore_place(self) -> None:
        model = self.model()
        if model is None or model.rowCount() == 0:
            return
        self.setCurrentIndex(model.index(min(max(self._kept_row, 0), model.rowCount() - 1), 0))
        self._hide_unused_columns()

    def _hide_unused_columns(self) -> None:
        """The speaker column only for a dialogue (a project whose segments name speakers)."""
        model = self.segment_model()
        if model is not None and model.project is not None:
            spoken = any(s.speaker for s in model.project.segments)
            self.setColumnHidden(Column.SPEAKER, not spoken)

    def _show_new_speakers(self, top: QModelIndex, bottom: QModelIndex, *_: object) -> None:
        """A changed row that names a speaker shows the column (only those rows are read)."""
        model = self.segment_model()
        if model is None or not self.isColumnHidden(Column.SPEAKER):
            return
        if any(model.row_at(r).speaker for r in range(top.row(), bottom.row() + 1)):
            self.setColumnHidden(Column.SPEAKER, False)

    # -- editing --------------------------------------------------------------------------
    def set_busy(self, busy: bool) -> None:
        self.busy = busy
        triggers = QAbstractItemView.EditTrigger
        self.setEditTriggers(triggers.NoEditTriggers if busy else triggers.DoubleClicked)

    def editing(self) -> bool:
        return self.state() == QAbstractItemView.State.EditingState

    def edit_text(self) -> bool:
        """Opens the current segment's text for editing in place."""
        model = self.model()
        row = self.currentIndex().row()
        if self.busy or model is None or row < 0:
            return False
        index = model.index(row, Column.TEXT)
        self.setCurrentIndex(index)
        self.edit(index)
        return self.editing()

    def cursor_in_text(self) -> int | None:
        """Where the cursor is in the open text editor (None when none is open)."""
        editor = self.text_delegate.editor
        return editor.cursorPosition() if editor is not None and self.editing() else None

    # -- review keys ----------------------------------------------------------------------
    def keyPressEvent(self, event: QKeyEvent) -> None:
        # The open editor takes its own keys; one that reaches the view while it is open (the
        # editor ignored it) must not re-roll or pick behind the user's back.
        plain = (event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier) == (
            Qt.KeyboardModifier.NoModifier
        )
        if self.editing() or not plain or self._review(event.key()) is None:
            super().keyPressEvent(event)
            return
        event.accept()

    def _review(self, key: int) -> bool | None:
        """Acts on a review key (True when it asked for something, False when it did not
        apply); None when `key` is no review key."""
        model = self.segment_model()
        number = self.current_number()
        if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter, Qt.Key.Key_F2):
            return self.edit_text()
        if key not in DIGITS and key not in (Qt.Key.Key_Space, Qt.Key.Key_R, Qt.Key.Key_L):
            return None
        # Letters and digits are review keys even when they do nothing now: passed on, they
        # would jump to a row by its first letter (the table's keyboard search).
        if model is None or number is None:
            return False
        if key == Qt.Key.Key_Space:
            self.play_toggled.emit(number)
            return True
        if self.busy:
            return False
        if key == Qt.Key.Key_L:
            self.lock_wanted.emit([number], not model.row_at(number - 1).locked)
            return True
        # A locked segment is never re-rolled nor given another take (core refuses it too).
        if key == Qt.Key.Key_R:
            unlocked = [n for n in self.selected_numbers() if not model.row_at(n - 1).locked]
            if unlocked:
                self.reroll_wanted.emit(unlocked)
            return bool(unlocked)
        takes = model.take_ids(number - 1)
        if model.row_at(number - 1).locked or DIGITS[key] > len(takes):
            return False
        self.pick_wanted.emit(number, takes[DIGITS[key] - 1])
        return True
