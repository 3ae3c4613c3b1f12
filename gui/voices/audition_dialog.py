"""Audition: several random speakers read the same sentence; play, keep or drop each one. Asked for,
each candidate is also rated for stability, its score in its row, and the steadiest can be put
first.
"""

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QDialogButtonBox,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from chattts_studio.core import SAMPLE_RATE
from chattts_studio.core.audio.player import Player
from chattts_studio.core.errors import StudioError
from chattts_studio.core.services.audition import Candidate
from chattts_studio.core.speaker.stability import LINES
from chattts_studio.gui.common import dialogs
from chattts_studio.gui.common.job_dialog import JobDialog
from chattts_studio.gui.common.notices import plural
from chattts_studio.gui.i18n import core_text, translate
from chattts_studio.gui.resources import AUDITION_SENTENCE
from chattts_studio.gui.voices.stability_text import stability_text, steadiness

LABEL, SCORE, PLAY, KEEP, DROP = range(5)  # a candidate's row, column by column


class AuditionDialog(JobDialog):
    """The job it runs makes the candidates; closing the dialog cancels it (JobDialog)."""

    # sentence, number of candidates (rated for stability too while `rate` is checked)
    generate_requested = Signal(str, int)
    # name, Candidate, replace: give a speaker already of that name this voice
    keep_requested = Signal(str, object, bool)
    playing = Signal()  # the shared player is about to play a candidate
    message = Signal(str)

    def __init__(self, player: Player, parent: QWidget | None = None) -> None:
        super().__init__(translate("Audition", "Cancel"), parent)
        self.setWindowTitle(translate("Audition", "Audition speakers"))
        self.player = player
        self.candidates: list[Candidate] = []
        self.rows: list[QWidget] = []  # each candidate's label, play, keep and drop
        # Each shown candidate, the number it came with and its widgets by grid column.
        self._placed: list[tuple[Candidate, int, dict[int, QWidget]]] = []
        # Each candidate's label and Keep button, marked when the library keeps its voice.
        self._marks: list[tuple[Candidate, QLabel, QPushButton, str]] = []
        self.sentence = QLineEdit(AUDITION_SENTENCE)
        self.count = QSpinBox()
        self.count.setRange(4, 8)
        self.count.setValue(4)
        self.generate = QPushButton(translate("Audition", "&Generate candidates"))
        self.rate = QCheckBox(
            translate("Audition", "&Rate stability (slower: {lines} more lines each)").format(
                lines=len(LINES["en"])
            )
        )
        self.rate.setToolTip(
            translate(
                "Audition",
                "Each candidate also reads a few short lines; how alike its voice sounds across "
                "them (the voice check's speaker model) is its stability score.",
            )
        )
        self.sort = QCheckBox(translate("Audition", "S&ort by stability"))
        self.sort.setToolTip(translate("Audition", "The steadiest voices first."))
        self.sort.setEnabled(False)  # until candidates are rated
        self.progress = QProgressBar()
        self.progress.setRange(0, 100)
        self.status = QLabel(
            translate("Audition", "Each candidate is a random voice seed reading the sentence.")
        )
        self.status.setWordWrap(True)
        # Shown when a name to keep a voice under is taken: replace that speaker, or rename.
        self.taken: tuple[str, Candidate, str] | None = None  # name, candidate, free name
        self.replace_button = QPushButton(translate("Audition", "Replace it"))
        self.another_name = QPushButton(translate("Audition", "Another name…"))
        self.taken_row = QWidget()
        taken_layout = QHBoxLayout(self.taken_row)
        taken_layout.setContentsMargins(0, 0, 0, 0)
        taken_layout.addWidget(self.replace_button)
        taken_layout.addWidget(self.another_name)
        taken_layout.addStretch(1)
        self.taken_row.setVisible(False)
        self.grid_host = QWidget()
        self.grid = QGridLayout(self.grid_host)
        top = QHBoxLayout()
        count_label = QLabel(translate("Audition", "&Candidates"))
        count_label.setBuddy(self.count)
        top.addWidget(count_label)
        top.addWidget(self.count)
        top.addStretch(1)
        top.addWidget(self.generate)
        top.addWidget(self.cancel)
        layout = QVBoxLayout(self)
        sentence_label = QLabel(translate("Audition", "&Sample sentence"))
        sentence_label.setBuddy(self.sentence)
        layout.addWidget(sentence_label)
        layout.addWidget(self.sentence)
        layout.addLayout(top)
        stable = QHBoxLayout()
        stable.addWidget(self.rate)
        stable.addWidget(self.sort)
        stable.addStretch(1)
        layout.addLayout(stable)
        layout.addWidget(self.progress)
        layout.addWidget(self.status)
        layout.addWidget(self.taken_row)
        layout.addWidget(self.grid_host, 1)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        self.buttons.rejected.connect(self.reject)  # as Esc: a running generation is cancelled
        layout.addWidget(self.buttons)
        self.generate.clicked.connect(self._generate)
        self.sort.toggled.connect(self._arrange)
        self.replace_button.clicked.connect(self._replace_taken)
        self.another_name.clicked.connect(self._rename_taken)
        self.sentence.setAccessibleName(translate("Audition", "Sample sentence"))
        self.count.setAccessibleName(translate("Audition", "Number of candidates"))
        self.progress.setAccessibleName(translate("Audition", "Audition progress"))
        self.resize(560, 360)

    def _generate(self) -> None:
        self._clear_taken()
        self.generate.setEnabled(False)
        self.cancel.setEnabled(True)
        self.progress.setValue(0)
        self.status.setText(translate("Audition", "Generating…"))
        self.generate_requested.emit(self.sentence.text(), self.count.value())

    def set_progress(self, fraction: float, detail: str) -> None:
        self.progress.setValue(int(fraction * 100))
        self.status.setText(detail)

    def failed(self, text: str) -> None:
        self.generate.setEnabled(True)
        self.cancel.setEnabled(False)
        self.status.setText(text)

    def show_candidates(self, candidates: list[Candidate]) -> None:
        self.generate.setEnabled(True)
        self.cancel.setEnabled(False)
        self.progress.setValue(100)
        self._clear_taken()
        rated = any(candidate.rated for candidate in candidates)
        ready = (
            translate("Audition", "{count} ready, rated for stability: play, keep or drop each.")
            if rated
            else translate("Audition", "{count} ready: play, keep or drop each.")
        )
        self.status.setText(ready.format(count=plural(len(candidates), "candidate")))
        for row in self.rows:
            row.deleteLater()
        for _candidate, _number, columns in self._placed:
            if SCORE in columns:
                columns[SCORE].deleteLater()
        self.rows = []
        self._marks = []
        self._placed = []
        self.candidates = list(candidates)
        for number, candidate in enumerate(candidates):
            self._add_row(number, candidate)
        self.sort.setEnabled(rated)
        self._arrange()

    def _add_row(self, number: int, candidate: Candidate) -> None:
        seconds = len(candidate.audio) / SAMPLE_RATE
        label = QLabel(
            translate("Audition", "#{number}  voice seed {seed}  ({seconds:.1f} s)").format(
                number=number + 1, seed=candidate.seed, seconds=seconds
            )
        )
        play = QPushButton(translate("Audition", "▶ Play"))
        keep = QPushButton(translate("Audition", "Keep…"))
        drop = QPushButton(translate("Audition", "Drop"))
        which = translate("Audition", "candidate {number}").format(number=number + 1)
        for button, action in (
            (play, translate("Audition", "Play")),
            (keep, translate("Audition", "Keep")),
            (drop, translate("Audition", "Drop")),
        ):
            button.setAccessibleName(f"{action} {which}")
        widgets = [label, play, keep, drop]
        columns: dict[int, QWidget] = {LABEL: label, PLAY: play, KEEP: keep, DROP: drop}
        if candidate.rated:
            shown, explained = stability_text(candidate)
            score = QLabel(shown)
            score.setToolTip(explained)
            score.setAccessibleName(
                translate("Audition", "Stability of {which}").format(which=which)
            )
            columns[SCORE] = score
        for column, widget in columns.items():
            self.grid.addWidget(widget, number, column)
        self.rows.extend(widgets)
        self._placed.append((candidate, number, columns))
        self._marks.append((candidate, label, keep, label.text()))
        play.clicked.connect(lambda: self.play(candidate))
        keep.clicked.connect(lambda: self.keep(candidate))
        drop.clicked.connect(lambda: self.drop(candidate, widgets))

    def score_of(self, candidate: Candidate) -> QLabel | None:
        """The stability label of a shown candidate's row (None: not rated)."""
        for shown, _number, columns in self._placed:
            if shown is candidate:
                score = columns.get(SCORE)
                return score if isinstance(score, QLabel) else None
        return None

    def _arrange(self) -> None:
        """Lay the rows out: in the order the candidates came, or the steadiest first while
        Sort by stability is on; `candidates` follows the order shown."""
        placed = sorted(self._placed, key=lambda entry: entry[1])
        if self.sort.isChecked():
            placed.sort(key=lambda entry: steadiness(entry[0]))  # stable: ties keep their order
        for _candidate, _number, columns in placed:
            for widget in columns.values():
                self.grid.removeWidget(widget)
        for row, (_candidate, _number, columns) in enumerate(placed):
            for column, widget in columns.items():
                self.grid.addWidget(widget, row, column)
        self._placed = placed
        self.candidates = [candidate for candidate, _n, _w in placed]

    def play(self, candidate: Candidate) -> None:
        self.playing.emit()
        try:
            self.player.play(candidate.audio)
        except StudioError as exc:
            self.status.setText(core_text(exc))

    def keep(self, candidate: Candidate, suggested: str = "") -> None:
        name = dialogs.ask_name(
            self,
            translate("Audition", "Keep speaker"),
            translate("Audition", "Name for this speaker:"),
            suggested or translate("Audition", "voice seed {seed}").format(seed=candidate.seed),
        )
        if name:
            self._clear_taken()
            self.keep_requested.emit(name, candidate, False)

    # -- what the library did with a voice to keep (called by the window) ------------------
    def name_taken(self, name: str, candidate: Candidate, free_name: str) -> None:
        """Nothing was kept: offer to replace that speaker's voice, or another name."""
        self.taken = (name, candidate, free_name)
        self.status.setText(
            translate(
                "Audition",
                "Not kept: the library already has a speaker named '{name}'. Replace its voice "
                "with voice seed {seed}, or keep this voice under another name.",
            ).format(name=name, seed=candidate.seed)
        )
        self.replace_button.setToolTip(
            translate("Audition", "'{name}' gets the voice of voice seed {seed}").format(
                name=name, seed=candidate.seed
            )
        )
        self.another_name.setToolTip(
            translate("Audition", "Suggested: '{name}'").format(name=free_name)
        )
        self.taken_row.setVisible(True)

    def kept(self, name: str, candidate: Candidate, replaced: bool) -> str:
        """Say what was kept; the sentence, for the window's status line too."""
        self._clear_taken()
        text = (
            translate(
                "Audition", "Replaced the voice of '{name}' in the library with voice seed {seed}."
            )
            if replaced
            else translate("Audition", "Kept voice seed {seed} in the library as '{name}'.")
        ).format(name=name, seed=candidate.seed)
        self.status.setText(text)
        self._mark_kept(name, candidate)
        return text

    def _mark_kept(self, name: str, candidate: Candidate) -> None:
        """The kept candidate's row: its Keep button disabled and saying the name, its label
        marked, so each kept voice shows at a glance (and is not kept twice by mistake)."""
        for shown, label, keep, text in self._marks:
            if shown is not candidate:
                continue
            kept_as = translate("Audition", "Kept as '{name}'").format(name=name)
            keep.setText(kept_as)
            keep.setEnabled(False)
            keep.setToolTip(
                translate("Audition", "This voice is in the speaker library as '{name}'.").format(
                    name=name
                )
            )
            label.setText(f"{text}  ✓ {kept_as}")

    def keep_failed(self, text: str) -> None:
        self._clear_taken()
        self.status.setText(translate("Audition", "Not kept: {reason}").format(reason=text))

    def _replace_taken(self) -> None:
        if self.taken is not None:
            name, candidate, _free = self.taken
            self.keep_requested.emit(name, candidate, True)

    def _rename_taken(self) -> None:
        if self.taken is not None:
            _name, candidate, free = self.taken
            self.keep(candidate, free)

    def _clear_taken(self) -> None:
        self.taken = None
        self.taken_row.setVisible(False)

    def drop(self, candidate: Candidate, widgets: list[QWidget]) -> None:
        if self.taken is not None and self.taken[1] is candidate:
            self._clear_taken()
        if candidate in self.candidates:
            self.candidates.remove(candidate)
        self._marks = [mark for mark in self._marks if mark[0] is not candidate]
        for shown, _number, columns in self._placed:
            if shown is candidate and SCORE in columns:
                columns[SCORE].deleteLater()
        self._placed = [entry for entry in self._placed if entry[0] is not candidate]
        for widget in widgets:
            widget.deleteLater()
            if widget in self.rows:
                self.rows.remove(widget)
