"""A project's segments as a Qt table model: one row per segment with its chosen take's length,
place among the takes, flags and lock. Rows are worked out once per project given (flags are
judged project-wide) and cached, so `data` is a lookup and a view of 1,000 segments asks only
for the rows it shows. The model never changes the project: an edit made in a cell is a
signal for the window, which changes the project and gives the model the new one."""

from dataclasses import dataclass
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
from chattts_studio.core.asr.score import AsrCheck
from chattts_studio.core.messages import QT_TRANSLATE_NOOP
from chattts_studio.core.project import reading
from chattts_studio.core.project.flags import Flag
from chattts_studio.core.project.model import Project, Segment
from chattts_studio.core.project.reading import Lexicon
from chattts_studio.gui.i18n import core_text, translate

Index = QModelIndex | QPersistentModelIndex


class Column(IntEnum):
    NUMBER = 0
    TEXT = 1
    SPEAKER = 2
    DURATION = 3
    TAKE = 4
    FLAGS = 5
    HEARD = 6
    LOCK = 7


HEADERS = {
    Column.NUMBER: QT_TRANSLATE_NOOP("Segments", "#"),
    Column.TEXT: QT_TRANSLATE_NOOP("Segments", "Text"),
    Column.SPEAKER: QT_TRANSLATE_NOOP("Segments", "Speaker"),
    Column.DURATION: QT_TRANSLATE_NOOP("Segments", "Length"),
    Column.TAKE: QT_TRANSLATE_NOOP("Segments", "Take"),
    Column.FLAGS: QT_TRANSLATE_NOOP("Segments", "Flags"),
    Column.HEARD: QT_TRANSLATE_NOOP("Segments", "Heard"),
    Column.LOCK: QT_TRANSLATE_NOOP("Segments", "Locked"),
}
# A flag's kind (core/project/flags.py KINDS) as a badge short enough for a narrow column; the
# tooltip gives each flag's whole sentence.
BADGES = {
    "nonfinite": QT_TRANSLATE_NOOP("Segments", "invalid"),
    "cap": QT_TRANSLATE_NOOP("Segments", "cut off"),
    "short": QT_TRANSLATE_NOOP("Segments", "fast"),
    "long": QT_TRANSLATE_NOOP("Segments", "slow"),
    "silence": QT_TRANSLATE_NOOP("Segments", "silence"),
    "clipping": QT_TRANSLATE_NOOP("Segments", "clipped"),
    "loudness": QT_TRANSLATE_NOOP("Segments", "level"),
    "asr": QT_TRANSLATE_NOOP("Segments", "ASR"),
}
NONE = "-"  # a segment with no take yet: no length, no take
STALE_COLOUR = QColor(128, 128, 128)


@dataclass(frozen=True)
class TakeInfo:
    """What a take picker shows of one take."""

    id: int
    seed: int
    seconds: float


@dataclass(frozen=True)
class SegmentRow:
    """One segment as shown, every cell's text ready (data() only looks them up)."""

    number: int
    text: str
    speaker: str
    takes: tuple[TakeInfo, ...]
    chosen: int | None  # the chosen take's id
    duration: str
    take: str  # "2/3": the chosen take's place among the takes / their count
    badges: str
    why: str  # each flag's sentence, one a line
    heard: str  # the chosen take's speech recognition error rate ("4%"); "" unchecked
    transcript: str  # what speech recognition heard, and what it missed
    stale: bool  # the chosen take reads an older text (or voice, or dictionary)
    picked: bool
    locked: bool


def _heard(check: AsrCheck) -> str:
    lines = [translate("Segments", "Heard: {transcript}").format(transcript=check.transcript)]
    if check.missing:
        missing = "、".join(check.missing)
        lines.append(translate("Segments", "Not heard: {words}").format(words=missing))
    if check.extra:
        extra = "、".join(check.extra)
        lines.append(translate("Segments", "Heard but not written: {words}").format(words=extra))
    return "\n".join(lines)


def _row(
    number: int,
    segment: Segment,
    found: dict[tuple[int, int], list[Flag]],
    lexicon: Lexicon | None,
    words: dict[str, str],
) -> SegmentRow:
    take = segment.chosen_take
    takes = tuple(TakeInfo(t.id, t.seed, t.measures.seconds) for t in segment.takes)
    if take is None:
        return SegmentRow(
            number=number,
            text=segment.text,
            speaker=segment.speaker,
            takes=takes,
            chosen=None,
            duration=NONE,
            take=NONE,
            badges="",
            why="",
            heard="",
            transcript="",
            stale=False,
            picked=segment.picked,
            locked=segment.locked,
        )
    marks = found.get((segment.id, take.id), [])
    spoken = None if lexicon is None else reading.spoken(segment.text, lexicon)
    place = [t.id for t in segment.takes].index(take.id) + 1
    return SegmentRow(
        number=number,
        text=segment.text,
        speaker=segment.speaker,
        takes=takes,
        chosen=take.id,
        duration=words["seconds"].format(seconds=f"{take.measures.seconds:.1f}"),
        take=f"{place}/{len(segment.takes)}",
        badges=" · ".join(words.get(f.kind, f.kind) for f in marks),
        why="\n".join(core_text(f.sentence) for f in marks),
        heard="" if take.asr is None else f"{take.asr.score:.0%}",
        transcript="" if take.asr is None else _heard(take.asr),
        stale=not segment.current(take, spoken),
        picked=segment.picked,
        locked=segment.locked,
    )


def _words() -> dict[str, str]:
    """The translated words rows are made of, looked up once per build rather than per row."""
    words = {kind: translate("Segments", badge) for kind, badge in BADGES.items()}
    words["seconds"] = translate("Segments", "{seconds} s")
    return words


def build_rows(
    project: Project, lexicon: Lexicon | None, rows: list[int] | None = None
) -> list[SegmentRow]:
    """Rows `rows` of `project` (all when None), from any thread (translate is thread-safe).
    Flags are judged against the whole project's takes (reading.take_flags, what `project
    list` shows); their sentences stay Sentences so they are said in the interface's
    language."""
    found = reading.take_flags(project)
    words = _words()
    chosen = range(len(project.segments)) if rows is None else rows
    return [_row(r + 1, project.segments[r], found, lexicon, words) for r in chosen]


class SegmentModel(QAbstractTableModel):
    text_edited = Signal(int, str)  # segment number, its new text (typed in the text cell)
    lock_edited = Signal(int, bool)  # segment number, locked (the lock cell's box clicked)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.project: Project | None = None
        self.lexicon: Lexicon | None = None
        self._rows: list[SegmentRow] = []

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

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> object:
        if not index.isValid():
            return None
        row, column = self._rows[index.row()], index.column()
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.EditRole):
            return self._text(row, column)
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
        }
        return texts.get(Column(column))

    def _tooltip(self, row: SegmentRow, column: int) -> str | None:
        if column == Column.FLAGS:
            return row.why or None
        if column == Column.HEARD:
            return row.transcript or translate(
                "Segments", "Not checked by speech recognition yet (Check all)."
            )
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
