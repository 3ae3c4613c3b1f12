"""Audition: several random speakers read the same sentence; play, keep or drop each one."""

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QDialog,
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

from core import SAMPLE_RATE
from core.audio import Player
from core.errors import StudioError

from . import dialogs
from .resources import AUDITION_SENTENCE
from .worker import Candidate


class AuditionDialog(QDialog):
    generate_requested = Signal(str, int)  # sentence, number of candidates
    keep_requested = Signal(str, object)  # name, Candidate
    cancel_requested = Signal()
    playing = Signal()  # the shared player is about to play a candidate
    message = Signal(str)

    def __init__(self, player: Player, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Audition speakers")
        self.player = player
        self.candidates: list[Candidate] = []
        self.rows: list[QWidget] = []
        self.sentence = QLineEdit(AUDITION_SENTENCE)
        self.count = QSpinBox()
        self.count.setRange(4, 8)
        self.count.setValue(4)
        self.generate = QPushButton("Generate candidates")
        self.cancel = QPushButton("Cancel")
        self.cancel.setEnabled(False)
        self.progress = QProgressBar()
        self.progress.setRange(0, 100)
        self.status = QLabel("Each candidate is a random seed reading the sentence.")
        self.status.setWordWrap(True)
        self.grid_host = QWidget()
        self.grid = QGridLayout(self.grid_host)
        top = QHBoxLayout()
        top.addWidget(QLabel("Candidates"))
        top.addWidget(self.count)
        top.addStretch(1)
        top.addWidget(self.generate)
        top.addWidget(self.cancel)
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel("Sample sentence"))
        layout.addWidget(self.sentence)
        layout.addLayout(top)
        layout.addWidget(self.progress)
        layout.addWidget(self.status)
        layout.addWidget(self.grid_host, 1)
        self.generate.clicked.connect(self._generate)
        self.cancel.clicked.connect(self.cancel_requested)
        self.resize(560, 360)

    @property
    def running(self) -> bool:
        return self.cancel.isEnabled()

    def reject(self) -> None:
        """Closing the dialog (Esc, the window's close button) while it generates cancels."""
        if self.running:
            self.cancel_requested.emit()
        super().reject()

    def _generate(self) -> None:
        self.generate.setEnabled(False)
        self.cancel.setEnabled(True)
        self.progress.setValue(0)
        self.status.setText("Generating…")
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
        self.status.setText(f"{len(candidates)} candidates ready: play, keep or drop each.")
        for row in self.rows:
            row.deleteLater()
        self.rows = []
        self.candidates = list(candidates)
        for number, candidate in enumerate(candidates):
            self._add_row(number, candidate)

    def _add_row(self, number: int, candidate: Candidate) -> None:
        seconds = len(candidate.audio) / SAMPLE_RATE
        label = QLabel(f"#{number + 1}  seed {candidate.seed}  ({seconds:.1f} s)")
        play = QPushButton("▶ Play")
        keep = QPushButton("Keep…")
        drop = QPushButton("Drop")
        widgets = [label, play, keep, drop]
        for column, widget in enumerate(widgets):
            self.grid.addWidget(widget, number, column)
        self.rows.extend(widgets)
        play.clicked.connect(lambda: self.play(candidate))
        keep.clicked.connect(lambda: self.keep(candidate))
        drop.clicked.connect(lambda: self.drop(candidate, widgets))

    def play(self, candidate: Candidate) -> None:
        self.playing.emit()
        try:
            self.player.play(candidate.audio)
        except StudioError as exc:
            self.status.setText(str(exc))

    def keep(self, candidate: Candidate) -> None:
        name = dialogs.ask_name(
            self, "Keep speaker", "Name for this speaker:", f"seed {candidate.seed}"
        )
        if name:
            self.keep_requested.emit(name, candidate)

    def drop(self, candidate: Candidate, widgets: list[QWidget]) -> None:
        if candidate in self.candidates:
            self.candidates.remove(candidate)
        for widget in widgets:
            widget.deleteLater()
            if widget in self.rows:
                self.rows.remove(widget)
