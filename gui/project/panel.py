"""The segment editor's panel: the open project's name and counts, its segments, and the
actions on the current segment (play, re-roll, edit, split, merge, speaker, lock), on a take
(pick, mark as its voice's reference) or on the whole project (re-roll the flagged or unlocked
ones, the checks: hearing_bar.py, export). Every action is a signal with plain arguments; the
window runs it (in the worker when it needs the model) and hands back the changed project."""

from pathlib import Path

from PySide6.QtCore import QModelIndex, Qt, Signal, SignalInstance
from PySide6.QtWidgets import (
    QHBoxLayout,
    QInputDialog,
    QLabel,
    QPushButton,
    QSpinBox,
    QSplitter,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from chattts_studio.core.project.edits import MAX_TAKES
from chattts_studio.core.project.model import Project
from chattts_studio.core.project.reading import Lexicon
from chattts_studio.gui.common.notices import plural
from chattts_studio.gui.i18n import translate
from chattts_studio.gui.project.hearing_bar import HearingBar, panel_button
from chattts_studio.gui.project.rows import SegmentRow
from chattts_studio.gui.project.segment_model import SegmentModel
from chattts_studio.gui.project.segment_view import SegmentView
from chattts_studio.gui.project.take_list import TakeList

# Where a cut sounds natural: after a sentence's end, else after a clause's.
BREAKS = ("。！？；.!?;…", "，、：,:")


def split_point(text: str) -> int:
    """A first guess at where to cut `text` in two: after the sentence end (else the clause
    break) nearest its middle, or at its middle when it has neither inside."""
    middle = len(text) // 2
    for marks in BREAKS:
        ends = [i + 1 for i, ch in enumerate(text[:-1]) if ch in marks]
        if ends:
            return min(ends, key=lambda at: abs(at - middle))
    return max(1, middle)


def ask_split_at(parent: QWidget, text: str, at: int) -> int | None:
    """How many characters of `text` stay in the first part (a dialog; tests replace this
    function); None when cancelled."""
    shown = f"{text[:at]} | {text[at:]}"
    chosen, ok = QInputDialog.getInt(
        parent,
        translate("Segments", "Split the segment"),
        translate("Segments", "Cut after this many characters ({shown}):").format(shown=shown),
        at,
        1,
        len(text) - 1,
    )
    return chosen if ok else None


class ProjectPanel(QWidget):
    play_toggled = Signal(int)  # segment number: play it, or stop it when it plays (Space)
    play_segment_wanted = Signal(int)  # segment number
    play_from_wanted = Signal(int)  # segment number: it and every later one, in order
    play_take_wanted = Signal(int, int)  # segment number, take id: that take alone
    reroll_wanted = Signal(list, int)  # list[int] segment numbers, takes to make of each
    reroll_flagged_wanted = Signal(int)  # takes to make of each flagged, unlocked segment
    reroll_unlocked_wanted = Signal(int)  # takes to make of each unlocked segment
    check_wanted = Signal()  # every chosen take heard by speech recognition
    voice_check_wanted = Signal()  # every chosen take's voice compared with its reference
    clean_wanted = Signal(int)  # the flagged re-rolled until clean: new takes at most each
    best_wanted = Signal(int)  # best of N: takes each segment has
    pick_wanted = Signal(int, int)  # segment number, take id
    reference_wanted = Signal(int, int)  # segment number, take id: its voice's reference
    lock_wanted = Signal(list, bool)  # list[int] segment numbers, locked
    text_edited = Signal(int, str)  # segment number, its new text
    split_wanted = Signal(int, int)  # segment number, characters kept in its first part
    merge_wanted = Signal(int)  # segment number: joined with the next one
    speaker_wanted = Signal(list)  # list[int] segment numbers: ask which voice reads them
    export_wanted = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.folder: Path | None = None
        self.busy = False
        self.model = SegmentModel(self)
        self._build()
        self._connect()
        self._update_actions()

    def _build(self) -> None:
        self.title = QLabel()
        self.title.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.empty = QLabel(
            translate(
                "Segments",
                "No project is open. Make one from the editor's text with Project > New from "
                "text, or open one with Project > Open.",
            )
        )
        self.empty.setWordWrap(True)
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.view = SegmentView()
        self.view.setModel(self.model)
        self.take_list = TakeList()
        # The segments above, the current one's takes below (the segments get the room).
        self.split = QSplitter(Qt.Orientation.Vertical)
        self.split.addWidget(self.view)
        self.split.addWidget(self.take_list)
        self.split.setStretchFactor(0, 3)
        self.split.setStretchFactor(1, 1)
        self.split.setChildrenCollapsible(False)
        self.pages = QStackedWidget()
        self.pages.addWidget(self.empty)
        self.pages.addWidget(self.split)
        button = panel_button
        self.play_button = button(
            translate("Segments", "Play segment (Space)"),
            translate("Segments", "Play the current segment, or stop it (Space)"),
        )
        self.play_from_button = button(
            translate("Segments", "Play from here"),
            translate("Segments", "Play from the current segment on"),
        )
        self.reroll_button = button(
            translate("Segments", "Re-roll (R)"),
            translate("Segments", "Make new takes of the current segment (R)"),
        )
        self.takes_box = QSpinBox()
        self.takes_box.setRange(1, MAX_TAKES)
        self.takes_box.setPrefix(translate("Segments", "Takes: "))
        self.takes_box.setToolTip(translate("Segments", "How many takes each re-roll makes"))
        self.reroll_flagged_button = button(
            translate("Segments", "Re-roll flagged"),
            translate("Segments", "Make new takes of every segment whose take is flagged"),
        )
        self.reroll_unlocked_button = button(
            translate("Segments", "Re-roll unlocked"),
            translate("Segments", "Make new takes of every segment that is not locked"),
        )
        self.hearing = hearing = HearingBar()
        self.check_button, self.voice_button = hearing.check_button, hearing.voice_button
        self.tries_box, self.voice_box = hearing.tries_box, hearing.voice_box
        self.clean_button, self.best_button = hearing.clean_button, hearing.best_button
        self.edit_button = button(
            translate("Segments", "Edit text… (F2)"),
            translate("Segments", "Edit the current segment's text (Enter or F2)"),
        )
        self.split_button = button(
            translate("Segments", "Split…"),
            translate("Segments", "Cut the current segment in two"),
        )
        self.merge_button = button(
            translate("Segments", "Merge with next"),
            translate("Segments", "Join the current segment and the next"),
        )
        self.speaker_button = button(
            translate("Segments", "Speaker…"),
            translate("Segments", "Read the segment in the voice chosen in the Speaker tab"),
        )
        self.lock_button = button(
            translate("Segments", "Lock (L)"),
            translate("Segments", "Lock or unlock the current segment (L)"),
        )
        self.export_button = button(
            translate("Segments", "Export…"),
            translate("Segments", "Save the chosen takes as one audio file"),
        )

        review = QHBoxLayout()
        for widget in (self.play_button, self.play_from_button, self.reroll_button):
            review.addWidget(widget)
        review.addWidget(self.takes_box)
        review.addWidget(self.reroll_flagged_button)
        review.addWidget(self.reroll_unlocked_button)
        review.addStretch(1)
        edits = QHBoxLayout()
        for widget in self.edit_buttons():
            edits.addWidget(widget)
        edits.addStretch(1)
        edits.addWidget(self.export_button)
        layout = QVBoxLayout(self)
        layout.addWidget(self.title)
        layout.addWidget(self.pages, 1)
        layout.addLayout(review)
        layout.addWidget(self.hearing)
        layout.addLayout(edits)

    def edit_buttons(self) -> tuple[QPushButton, ...]:
        return (
            self.edit_button,
            self.split_button,
            self.merge_button,
            self.speaker_button,
            self.lock_button,
        )

    def _connect(self) -> None:
        view, model = self.view, self.model
        view.play_toggled.connect(self.play_toggled)
        view.pick_wanted.connect(self.pick_wanted)
        self.take_list.pick_wanted.connect(self.pick_wanted)
        self.take_list.play_wanted.connect(self.play_take_wanted)
        self.take_list.reference_wanted.connect(self.reference_wanted)
        model.dataChanged.connect(self._row_changed)
        view.lock_wanted.connect(self.lock_wanted)
        view.reroll_wanted.connect(lambda numbers: self.reroll_wanted.emit(numbers, self.takes))
        model.text_edited.connect(self.text_edited)
        model.lock_edited.connect(self._lock_clicked)
        view.selectionModel().currentRowChanged.connect(lambda *_: self._update_actions())
        model.modelReset.connect(self._update_actions)

        def on_current(signal: SignalInstance) -> None:
            number = self.current_number()
            if number is not None:
                signal.emit(number)

        self.play_button.clicked.connect(lambda: on_current(self.play_segment_wanted))
        self.play_from_button.clicked.connect(lambda: on_current(self.play_from_wanted))
        self.merge_button.clicked.connect(lambda: on_current(self.merge_wanted))
        self.reroll_button.clicked.connect(
            lambda: self.reroll_wanted.emit(self.view.selected_numbers(), self.takes)
        )
        self.reroll_flagged_button.clicked.connect(
            lambda: self.reroll_flagged_wanted.emit(self.takes)
        )
        self.check_button.clicked.connect(self.check_wanted.emit)
        self.voice_button.clicked.connect(self.voice_check_wanted.emit)
        self.clean_button.clicked.connect(lambda: self.clean_wanted.emit(self.tries_box.value()))
        self.best_button.clicked.connect(lambda: self.best_wanted.emit(self.takes))
        self.reroll_unlocked_button.clicked.connect(
            lambda: self.reroll_unlocked_wanted.emit(self.takes)
        )
        self.edit_button.clicked.connect(self.view.edit_text)
        self.split_button.clicked.connect(self.split_current)
        self.speaker_button.clicked.connect(
            lambda: self.speaker_wanted.emit(self.view.selected_numbers())
        )
        self.lock_button.clicked.connect(self.toggle_lock)
        self.export_button.clicked.connect(self.export_wanted)

    # -- the window's side ----------------------------------------------------------------
    @property
    def takes(self) -> int:
        return self.takes_box.value()

    @property
    def with_voice(self) -> bool:
        """Until clean and Best of N compare voices too."""
        return self.voice_box.isChecked()

    def show_project(
        self,
        project: Project | None,
        folder: Path | None,
        lexicon: Lexicon | None = None,
        rows: list[SegmentRow] | None = None,
    ) -> None:
        """Show `project` (kept in `folder`), with its `rows` when they were made already;
        None shows how to start one."""
        self.folder = folder if project is not None else None
        self.model.set_project(project, lexicon, rows)
        self.pages.setCurrentWidget(self.split if project is not None else self.empty)
        self._update_actions()

    def update_segments(self, project: Project, numbers: list[int]) -> None:
        """The project after a change to segments `numbers`: their rows repainted."""
        self.model.update_segments(project, numbers)
        self._update_actions()

    def set_busy(self, busy: bool) -> None:
        """While a job changes the project, nothing else may: navigation and playback stay."""
        self.busy = busy
        self.view.set_busy(busy)
        self.take_list.set_busy(busy)
        self._update_actions()

    def current_number(self) -> int | None:
        return self.view.current_number() if self.model.project is not None else None

    # -- actions --------------------------------------------------------------------------
    def split_current(self) -> None:
        number = self.current_number()
        if number is None or self.busy:
            return
        text = self.model.segment_at(number - 1).text
        if len(text) < 2:
            return
        cursor = self.view.cursor_in_text()
        guess = cursor if cursor is not None and 0 < cursor < len(text) else split_point(text)
        at = ask_split_at(self, text, guess)
        if at is not None and 0 < at < len(text):
            self.split_wanted.emit(number, at)

    def toggle_lock(self) -> None:
        number = self.current_number()
        if number is not None and not self.busy:
            self.lock_wanted.emit([number], not self.model.row_at(number - 1).locked)

    def _lock_clicked(self, number: int, locked: bool) -> None:
        if not self.busy:
            self.lock_wanted.emit([number], locked)

    def _row_changed(self, top: QModelIndex, bottom: QModelIndex, *_: object) -> None:
        """A repainted row that is the current one: its takes shown again."""
        number = self.current_number()
        if number is not None and top.row() <= number - 1 <= bottom.row():
            self._update_actions()

    def _update_actions(self) -> None:
        project = self.model.project
        number = self.current_number()
        row = self.model.row_at(number - 1) if number is not None else None
        if row is not self.take_list.model.row:
            self.take_list.show_row(row)
        if project is None:
            self.title.setText(translate("Segments", "Segments"))
        else:
            self.title.setText(
                translate("Segments", "{title}: {segments}, {flagged} flagged").format(
                    title=project.title or (self.folder.stem if self.folder else ""),
                    segments=plural(len(project.segments), "segment"),
                    flagged=self.model.flagged_count(),
                )
            )
        free = not self.busy
        has_take = row is not None and row.chosen is not None
        # What the core refuses for a locked segment is not offered (edits.refuse_locked).
        changeable = free and row is not None and not row.locked
        after = (
            self.model.row_at(number)
            if project and number and number < len(project.segments)
            else None
        )
        mergeable = changeable and after is not None and not after.locked
        enabled: dict[QWidget, bool] = {
            self.play_button: has_take,
            self.play_from_button: has_take,
            self.reroll_button: changeable,
            self.reroll_flagged_button: free and project is not None,
            self.reroll_unlocked_button: free and project is not None,
            **{widget: free and project is not None for widget in self.hearing.widgets()},
            self.edit_button: changeable,
            self.split_button: changeable,
            self.merge_button: mergeable,
            self.speaker_button: changeable,
            self.lock_button: free and row is not None,
            self.export_button: free and project is not None,
        }
        for widget, on in enabled.items():
            widget.setEnabled(on)
        locked = row is not None and row.locked
        self.lock_button.setText(
            translate("Segments", "Unlock (L)") if locked else translate("Segments", "Lock (L)")
        )
