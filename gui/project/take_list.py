"""The current segment's takes side by side: each take's seed, length, flags, what speech
recognition heard and how alike its voice is to its voice's reference, the chosen one and the
reference marked, so the user can compare them, play any one, pick it or mark it as the
reference. A small table model over the segment's row (rows.py); picking, playing and marking
are signals for the window, which changes the project and hands the new row back."""

from enum import IntEnum

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
    Signal,
)
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from chattts_studio.core.messages import QT_TRANSLATE_NOOP
from chattts_studio.gui.i18n import translate
from chattts_studio.gui.project.rows import SegmentRow, TakeInfo

Index = QModelIndex | QPersistentModelIndex
CHOSEN_MARK = "✓"
REFERENCE_MARK = "★"  # the take its voice's other takes are compared with


class TakeColumn(IntEnum):
    NUMBER = 0
    SEED = 1
    LENGTH = 2
    FLAGS = 3
    HEARD = 4
    VOICE = 5


TAKE_HEADERS = {
    TakeColumn.NUMBER: QT_TRANSLATE_NOOP("Segments", "Take"),
    TakeColumn.SEED: QT_TRANSLATE_NOOP("Segments", "Seed"),
    TakeColumn.LENGTH: QT_TRANSLATE_NOOP("Segments", "Length"),
    TakeColumn.FLAGS: QT_TRANSLATE_NOOP("Segments", "Flags"),
    TakeColumn.HEARD: QT_TRANSLATE_NOOP("Segments", "Heard"),
    TakeColumn.VOICE: QT_TRANSLATE_NOOP("Segments", "Voice"),
}


class TakeModel(QAbstractTableModel):
    """One segment's takes, in their order (the n-th row is what key n picks)."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.row: SegmentRow | None = None

    def set_row(self, row: SegmentRow | None) -> None:
        self.beginResetModel()
        self.row = row
        self.endResetModel()

    def take_at(self, place: int) -> TakeInfo:
        assert self.row is not None
        return self.row.takes[place]

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 (Qt's signature)
        return 0 if parent.isValid() or self.row is None else len(self.row.takes)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(TakeColumn)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> object:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return translate("Segments", TAKE_HEADERS[TakeColumn(section)])
        return None

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> object:
        if not index.isValid() or self.row is None:
            return None
        take, column = self.row.takes[index.row()], TakeColumn(index.column())
        chosen = take.id == self.row.chosen
        if role == Qt.ItemDataRole.DisplayRole:
            return self._text(index.row(), take, column, chosen)
        if role == Qt.ItemDataRole.ToolTipRole:
            return self._tooltip(take, column, chosen)
        if role == Qt.ItemDataRole.FontRole and chosen:
            font = QFont()
            font.setBold(True)
            return font
        if role == Qt.ItemDataRole.TextAlignmentRole and column != TakeColumn.FLAGS:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    def _text(self, place: int, take: TakeInfo, column: TakeColumn, chosen: bool) -> str:
        if column == TakeColumn.NUMBER:
            return f"{CHOSEN_MARK} {place + 1}" if chosen else str(place + 1)
        if column == TakeColumn.SEED:
            return str(take.seed)
        if column == TakeColumn.LENGTH:
            return translate("Segments", "{seconds} s").format(seconds=f"{take.seconds:.1f}")
        if column == TakeColumn.FLAGS:
            return take.badges
        if column == TakeColumn.VOICE:
            return f"{REFERENCE_MARK} {take.voice}" if take.reference else take.voice
        return take.heard

    def _tooltip(self, take: TakeInfo, column: TakeColumn, chosen: bool) -> str | None:
        if column == TakeColumn.FLAGS:
            return take.why or None
        if column == TakeColumn.HEARD:
            return take.transcript or translate(
                "Segments", "Not checked by speech recognition yet (Check all)."
            )
        if column == TakeColumn.VOICE and take.reference:
            marked = translate(
                "Segments",
                "Its voice's reference: Check voices compares the voice's other takes with it.",
            )
            return f"{marked}\n{take.voice_tip}" if take.voice_tip else marked
        if column == TakeColumn.VOICE:
            return take.voice_tip or None
        if column == TakeColumn.NUMBER and chosen:
            return translate("Segments", "The chosen take: the one played and exported.")
        if take.stale:
            return translate(
                "Segments", "This take reads the segment's old text: re-roll to hear the new one."
            )
        return None


class TakeList(QWidget):
    """The take table with Play take, Pick take and Mark as voice reference; double-clicking a
    take picks it too."""

    play_wanted = Signal(int, int)  # segment number, take id
    pick_wanted = Signal(int, int)  # segment number, take id
    reference_wanted = Signal(int, int)  # segment number, take id: its voice's reference

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.busy = False
        self.model = TakeModel(self)
        self._build()
        self._connect()
        self.show_row(None)

    def _build(self) -> None:
        self.title = QLabel()
        self.view = QTableView()
        self.view.setModel(self.model)
        self.view.setAccessibleName(translate("Segments", "Takes"))
        self.view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.view.verticalHeader().hide()
        columns = self.view.horizontalHeader()
        columns.setHighlightSections(False)
        columns.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        columns.setSectionResizeMode(TakeColumn.FLAGS, QHeaderView.ResizeMode.Stretch)
        self.play_button = QPushButton(translate("Segments", "Play take"))
        self.play_button.setToolTip(translate("Segments", "Play the take selected in this list"))
        self.pick_button = QPushButton(translate("Segments", "Pick take"))
        self.pick_button.setToolTip(
            translate(
                "Segments",
                "Make the selected take the segment's chosen one (double-click a take, or press "
                "its number in the segments table)",
            )
        )
        self.reference_button = QPushButton(translate("Segments", "Mark as voice reference"))
        self.reference_button.setToolTip(
            translate(
                "Segments",
                "Compare every take of this voice with the selected take from now on (Check "
                "voices): a take whose voice drifts from it is flagged",
            )
        )
        buttons = QVBoxLayout()
        for button in (self.play_button, self.pick_button, self.reference_button):
            button.setFocusPolicy(Qt.FocusPolicy.TabFocus)
            buttons.addWidget(button)
        buttons.addStretch(1)
        body = QHBoxLayout()
        body.addWidget(self.view, 1)
        body.addLayout(buttons)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.title)
        layout.addLayout(body, 1)

    def _connect(self) -> None:
        self.play_button.clicked.connect(lambda: self._ask(pick=False))
        self.pick_button.clicked.connect(lambda: self._ask(pick=True))
        self.reference_button.clicked.connect(self._mark)
        self.view.doubleClicked.connect(lambda _index: self._ask(pick=True))
        self.view.selectionModel().currentRowChanged.connect(lambda *_: self._update_actions())

    def show_row(self, row: SegmentRow | None) -> None:
        """The takes of segment `row` (None: no segment), the chosen one selected."""
        self.model.set_row(row)
        if row is None:
            self.title.setText(translate("Segments", "Takes"))
        else:
            self.title.setText(
                translate("Segments", "Takes of segment {number}").format(number=row.number)
            )
            ids = [t.id for t in row.takes]
            place = ids.index(row.chosen) if row.chosen in ids else 0
            if ids:
                self.view.setCurrentIndex(self.model.index(place, 0))
        self._update_actions()

    def set_busy(self, busy: bool) -> None:
        self.busy = busy
        self._update_actions()

    def selected(self) -> TakeInfo | None:
        place = self.view.currentIndex().row()
        return self.model.take_at(place) if 0 <= place < self.model.rowCount() else None

    def _ask(self, pick: bool) -> None:
        row, take = self.model.row, self.selected()
        if row is None or take is None:
            return
        if not pick:
            self.play_wanted.emit(row.number, take.id)
        elif self._pickable(take):
            self.pick_wanted.emit(row.number, take.id)

    def _mark(self) -> None:
        row, take = self.model.row, self.selected()
        if row is not None and take is not None and not self.busy and not take.reference:
            self.reference_wanted.emit(row.number, take.id)

    def _pickable(self, take: TakeInfo | None) -> bool:
        row = self.model.row
        return (
            not self.busy
            and row is not None
            and take is not None
            and not row.locked
            and take.id != row.chosen
        )

    def _update_actions(self) -> None:
        take = self.selected()
        self.play_button.setEnabled(take is not None)
        self.pick_button.setEnabled(self._pickable(take))
        self.reference_button.setEnabled(not self.busy and take is not None and not take.reference)
