"""A project's segments as a Qt table model: one row per segment with its chosen take's length,
place among the takes, flags, checks (heard, voice) and lock. Rows are worked out once per
project given (flags are judged project-wide) and cached, so `data` is a lookup and a view of
1,000 segments asks only for the rows it shows. The model never changes the project: an edit
made in a cell is a signal for the window, which changes the project and gives the model the
new one."""

from enum import IntEnum

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
    Signal,
)
from PySide6.QtGui import QColor, QFont

# Core's marker (Qt's own is typed as returning object): lupdate finds either by its name.
from chattts_studio.core.messages import QT_TRANSLATE_NOOP
from chattts_studio.core.project.model import Project, Segment
from chattts_studio.core.project.reading import Lexicon
from chattts_studio.gui.i18n import translate
from chattts_studio.gui.project.rows import SegmentRow, build_rows

STALE_COLOUR = QColor(128, 128, 128)

Index = QModelIndex | QPersistentModelIndex


class Column(IntEnum):
    NUMBER = 0
    TEXT = 1
    SPEAKER = 2
    DURATION = 3
    TAKE = 4
    FLAGS = 5
    HEARD = 6
    VOICE = 7
    LOCK = 8


# The Text cell's word being spoken, while takes play: (first, last, estimated), or None.
SPOKEN_ROLE = Qt.ItemDataRole.UserRole + 1
Spoken = tuple[int, int, int, bool]  # segment number (0: none), first, last, estimated

HEADERS = {
    Column.NUMBER: QT_TRANSLATE_NOOP("Segments", "#"),
    Column.TEXT: QT_TRANSLATE_NOOP("Segments", "Text"),
    Column.SPEAKER: QT_TRANSLATE_NOOP("Segments", "Speaker"),
    Column.DURATION: QT_TRANSLATE_NOOP("Segments", "Length"),
    Column.TAKE: QT_TRANSLATE_NOOP("Segments", "Take"),
    Column.FLAGS: QT_TRANSLATE_NOOP("Segments", "Flags"),
    Column.HEARD: QT_TRANSLATE_NOOP("Segments", "Heard"),
    Column.VOICE: QT_TRANSLATE_NOOP("Segments", "Voice"),
    Column.LOCK: QT_TRANSLATE_NOOP("Segments", "Locked"),
}


class SegmentModel(QAbstractTableModel):
    text_edited = Signal(int, str)  # segment number, its new text (typed in the text cell)
    lock_edited = Signal(int, bool)  # segment number, locked (the lock cell's box clicked)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.project: Project | None = None
        self.lexicon: Lexicon | None = None
        self._rows: list[SegmentRow] = []
        self.spoken: Spoken = (0, 0, 0, False)  # the word spoken while takes play

    # -- the project ----------------------------------------------------------------------
    def set_project(
        self,
        project: Project | None,
        lexicon: Lexicon | None = None,
        rows: list[SegmentRow] | None = None,
    ) -> None:
        """Show `project` (None: nothing); every row is made again, nothing of the last kept,
        unless `rows` are its rows made already (build_rows, off the UI thread: 1,000 segments
        take ~15 ms). `lexicon`: today's pronunciation dictionary, so a take it now reads
        otherwise shows stale."""
        if rows is None:
            rows = build_rows(project, lexicon) if project is not None else []
        self.beginResetModel()
        self.project, self.lexicon = project, lexicon
        self._rows = rows
        self.endResetModel()

    def update_segments(self, project: Project, numbers: list[int]) -> None:
        """The project after a change to segments `numbers` (1-based): only their rows are
        made again and repainted. A change in the segment count (a split, a merge) moves every
        later row, so that resets the whole model."""
        if self.project is None or len(project.segments) != len(self._rows):
            self.set_project(project, self.lexicon)
            return
        self.project = project
        rows = sorted({n - 1 for n in numbers if 1 <= n <= len(self._rows)})
        for row, made in zip(rows, self._build(project, rows), strict=True):
            self._rows[row] = made
        last = self.columnCount() - 1
        for row in rows:
            self.dataChanged.emit(self.index(row, 0), self.index(row, last))

    def _build(self, project: Project, rows: list[int]) -> list[SegmentRow]:
        return build_rows(project, self.lexicon, rows)

    # -- what the window asks -------------------------------------------------------------
    def segment_at(self, row: int) -> Segment:
        assert self.project is not None
        return self.project.segments[row]

    def row_at(self, row: int) -> SegmentRow:
        return self._rows[row]

    def take_ids(self, row: int) -> list[int]:
        """The segment's take ids in their order (key n picks the n-th)."""
        return [t.id for t in self._rows[row].takes]

    def flagged_count(self) -> int:
        """Segments whose chosen take has a flag, locked ones left out (as reading.
        flagged_numbers, which "re-roll flagged" uses)."""
        return sum(1 for r in self._rows if r.badges and not r.locked)

    # -- Qt's side ------------------------------------------------------------------------
    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 (Qt's signature)
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(Column)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> object:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return translate("Segments", HEADERS[Column(section)])
        return None

    def flags(self, index: Index) -> Qt.ItemFlag:
        base = super().flags(index)
        if not index.isValid():
            return base
        if index.column() == Column.LOCK:
            return base | Qt.ItemFlag.ItemIsUserCheckable
        row = self._rows[index.row()]
        # A locked segment is never edited nor its take replaced (core refuses it too).
        if row.locked:
            return base
        if index.column() == Column.TEXT or (index.column() == Column.TAKE and row.takes):
            return base | Qt.ItemFlag.ItemIsEditable  # the take's editor: take_picker.py
        return base

    def set_spoken(self, number: int, first: int, last: int, estimated: bool) -> None:
        """Mark the word spoken in segment `number`'s text (0: none); only its cells repaint."""
        before, self.spoken = self.spoken, (number, first, last, estimated)
        for mark in {before[0], number} - {0}:
            if 0 < mark <= len(self._rows):
                cell = self.index(mark - 1, Column.TEXT)
                self.dataChanged.emit(cell, cell, [SPOKEN_ROLE])

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> object:
        if not index.isValid():
            return None
        row, column = self._rows[index.row()], index.column()
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.EditRole):
            return self._text(row, column)
        if role == SPOKEN_ROLE:
            number, first, last, estimated = self.spoken
            spoken = column == Column.TEXT and row.number == number and not row.stale
            return (first, last, estimated) if spoken else None
        if role == Qt.ItemDataRole.ToolTipRole:
            return self._tooltip(row, column)
        if role == Qt.ItemDataRole.CheckStateRole and column == Column.LOCK:
            return Qt.CheckState.Checked if row.locked else Qt.CheckState.Unchecked
        if row.stale and column in (Column.TEXT, Column.DURATION, Column.TAKE):
            if role == Qt.ItemDataRole.FontRole:
                font = QFont()
                font.setItalic(True)
                return font
            if role == Qt.ItemDataRole.ForegroundRole:
                return STALE_COLOUR
        if role == Qt.ItemDataRole.TextAlignmentRole and column in (
            Column.NUMBER,
            Column.DURATION,
            Column.TAKE,
            Column.HEARD,
            Column.VOICE,
        ):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    def _text(self, row: SegmentRow, column: int) -> str | None:
        texts = {
            Column.NUMBER: str(row.number),
            Column.TEXT: row.text,
            Column.SPEAKER: row.speaker,
            Column.DURATION: row.duration,
            Column.TAKE: row.take,
            Column.FLAGS: row.badges,
            Column.HEARD: row.heard,
            Column.VOICE: row.voice,
        }
        return texts.get(Column(column))

    def _tooltip(self, row: SegmentRow, column: int) -> str | None:
        if column == Column.FLAGS:
            return row.why or None
        if column == Column.HEARD:
            return row.transcript or translate(
                "Segments", "Not checked by speech recognition yet (Check all)."
            )
        if column == Column.VOICE:
            return row.voice_tip or None
        if column == Column.LOCK:
            return translate("Segments", "A locked segment is never re-rolled, edited or replaced.")
        if column == Column.TAKE and row.picked:
            return translate("Segments", "Chosen by hand: re-rolls add takes but keep this one.")
        if row.stale and column in (Column.TEXT, Column.DURATION, Column.TAKE):
            return translate(
                "Segments", "This take reads the segment's old text: re-roll to hear the new one."
            )
        return row.text if column == Column.TEXT else None

    def setData(self, index: Index, value: object, role: int = Qt.ItemDataRole.EditRole) -> bool:
        """Asks for the change (a signal) and changes nothing: the project is changed by the
        window's job, which gives the model the new project. So this returns False: the cell
        shows the project as it is until then."""
        if not index.isValid():
            return False
        row = self._rows[index.row()]
        if index.column() == Column.TEXT and role == Qt.ItemDataRole.EditRole:
            text = str(value).strip()
            if text and text != row.text:
                self.text_edited.emit(row.number, text)
        elif index.column() == Column.LOCK and role == Qt.ItemDataRole.CheckStateRole:
            locked = value in (Qt.CheckState.Checked, Qt.CheckState.Checked.value)
            if locked != row.locked:
                self.lock_edited.emit(row.number, locked)
        return False
