"""The speaker panel's Blend dialog: two to four speakers (library voices or voice seeds), a
weight each, the blend's spec as synth --speaker and the API take it, a preview read on the
worker (the window queues it as an audition: gui/window/audition_control.py), and Keep, which puts
the voice heard in the speaker library with a note naming its parts.

The dialog checks a blend as it is edited (core/voices/blend.py, no model needed): a cloned
voice or a malformed part is said at once, and neither Preview nor Keep runs for it."""

import numpy as np
from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QComboBox,
    QDoubleSpinBox,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from chattts_studio.core.audio.player import Player
from chattts_studio.core.errors import StudioError
from chattts_studio.core.voices.blend import blend_note, check_library_parts, format_blend
from chattts_studio.core.voices.speaker_file import SpeakerNameTaken
from chattts_studio.core.voices.voice import Voice
from chattts_studio.gui.common.job_dialog import JobDialog
from chattts_studio.gui.i18n import core_text, translate
from chattts_studio.gui.panels.speakers import SpeakerPanel
from chattts_studio.gui.resources import AUDITION_SENTENCE
from chattts_studio.gui.worker.jobs import Job

MIN_PARTS, MAX_PARTS = 2, 4


class BlendPartRow:
    """One part: who (a library speaker, or a seed typed as seed:42) and its weight."""

    def __init__(self, number: int) -> None:
        self.who = QComboBox()
        self.who.setEditable(True)
        self.who.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        line = self.who.lineEdit()
        if line is not None:
            # The example is syntax a user types, never translated.
            hint = translate("Blend", "a library speaker or {example}")
            line.setPlaceholderText(hint.format(example="seed:42"))
        self.weight = QDoubleSpinBox()
        self.weight.setRange(0.05, 10.0)
        self.weight.setSingleStep(0.05)
        self.weight.setDecimals(2)
        self.weight.setValue(0.5)
        self.share = QLabel()
        self.remove = QPushButton(translate("Blend", "Remove"))
        which = translate("Blend", "part {number}").format(number=number)
        self.who.setAccessibleName(translate("Blend", "Speaker of {part}").format(part=which))
        self.weight.setAccessibleName(translate("Blend", "Weight of {part}").format(part=which))
        self.remove.setAccessibleName(translate("Blend", "Remove {part}").format(part=which))
        self.widgets: list[QWidget] = [self.who, self.weight, self.share, self.remove]

    def source(self) -> str:
        return self.who.currentText().strip()


class BlendDialog(JobDialog):
    """The job it runs is the preview; closing the dialog cancels it (JobDialog)."""

    preview_requested = Signal(str, str)  # spec, sentence: read on the worker by the window
    playing = Signal()  # the shared player is about to play the preview
    message = Signal(str)  # for the window's status line

    def __init__(
        self, speakers: SpeakerPanel, player: Player, parent: QWidget | None = None
    ) -> None:
        super().__init__(translate("Blend", "Cancel"), parent)
        self.setWindowTitle(translate("Blend", "Blend speakers"))
        self.speakers = speakers
        self.player = player
        self.job: Job | None = None  # the preview the worker runs (set by the window)
        self.asked = ""  # the spec of that preview
        self.heard: tuple[str, str, np.ndarray] | None = None  # spec, embedding, audio
        self.rows: list[BlendPartRow] = []
        self._build()
        for _ in range(MIN_PARTS):
            self.add_part()
        self.speakers.library_changed.connect(self._library_changed)
        self.resize(520, 320)

    def _build(self) -> None:
        self.grid_host = QWidget()
        self.grid = QGridLayout(self.grid_host)
        self.grid.setContentsMargins(0, 0, 0, 0)
        self.add_button = QPushButton(translate("Blend", "Add a part"))
        self.spec = QLineEdit()
        self.spec.setReadOnly(True)
        self.spec.setToolTip(
            translate("Blend", "The blend as synth --speaker, manifests and the speech API take it")
        )
        self.sentence = QLineEdit(AUDITION_SENTENCE)
        self.preview = QPushButton(translate("Blend", "&Preview"))
        self.play = QPushButton(translate("Blend", "▶ Play"))
        self.play.setEnabled(False)
        self.progress = QProgressBar()
        self.progress.setRange(0, 100)
        self.status = QLabel(translate("Blend", "Pick the speakers to mix and their weights."))
        self.status.setWordWrap(True)
        self.name = QLineEdit()
        self.name.setPlaceholderText(translate("Blend", "Name for the blend"))
        self.keep = QPushButton(translate("Blend", "&Keep"))
        self.keep.setToolTip(translate("Blend", "Keep the voice heard in the speaker library"))

        spec_label = QLabel(translate("Blend", "Blend"))
        spec_label.setBuddy(self.spec)
        sentence_label = QLabel(translate("Blend", "&Sample sentence"))
        sentence_label.setBuddy(self.sentence)
        spec_row = QHBoxLayout()
        spec_row.addWidget(spec_label)
        spec_row.addWidget(self.spec, 1)
        spec_row.addWidget(self.add_button)
        run_row = QHBoxLayout()
        run_row.addWidget(self.preview)
        run_row.addWidget(self.play)
        run_row.addWidget(self.cancel)
        run_row.addStretch(1)
        keep_row = QHBoxLayout()
        keep_row.addWidget(self.name, 1)
        keep_row.addWidget(self.keep)
        layout = QVBoxLayout(self)
        layout.addWidget(self.grid_host)
        layout.addLayout(spec_row)
        layout.addWidget(sentence_label)
        layout.addWidget(self.sentence)
        layout.addLayout(run_row)
        layout.addWidget(self.progress)
        layout.addWidget(self.status)
        layout.addLayout(keep_row)

        self.add_button.clicked.connect(self.add_part)
        self.preview.clicked.connect(self._preview)
        self.play.clicked.connect(self._play)
        self.keep.clicked.connect(self._keep)
        self.name.returnPressed.connect(self._keep)
        for widget, name in (
            (self.spec, translate("Blend", "Blend")),
            (self.sentence, translate("Blend", "Sample sentence")),
            (self.progress, translate("Blend", "Preview progress")),
            (self.name, translate("Blend", "Name for the blend")),
        ):
            widget.setAccessibleName(name)
        for button in (self.add_button, self.preview, self.play, self.cancel, self.keep):
            button.setAccessibleName(button.text().replace("&", "").replace("▶ ", ""))

    # -- the parts -------------------------------------------------------------------------
    def _choices(self) -> list[str]:
        return self.speakers.library.names()

    def _voices(self) -> dict[str, Voice]:
        return {e.name: e.voice for e in self.speakers.library.entries}

    def add_part(self) -> None:
        if len(self.rows) >= MAX_PARTS:
            return
        row = BlendPartRow(len(self.rows) + 1)
        names = self._choices()
        row.who.addItems(names)
        # Different voices to start with: the next library speaker, else the next seed.
        index = len(self.rows)
        row.who.setCurrentText(names[index] if index < len(names) else f"seed:{index + 1}")
        for column, widget in enumerate(row.widgets):
            self.grid.addWidget(widget, index, column)
        row.who.currentTextChanged.connect(lambda _text: self._changed())
        row.weight.valueChanged.connect(lambda _value: self._changed())
        row.remove.clicked.connect(lambda: self.remove_part(row))
        self.rows.append(row)
        self._changed()

    def remove_part(self, row: BlendPartRow) -> None:
        if len(self.rows) <= MIN_PARTS or row not in self.rows:
            return
        self.rows.remove(row)
        for widget in row.widgets:
            self.grid.removeWidget(widget)
            widget.deleteLater()
        for index, kept in enumerate(self.rows):  # close the gap
            for column, widget in enumerate(kept.widgets):
                self.grid.addWidget(widget, index, column)
        self._changed()

    def set_parts(self, parts: list[tuple[str, float]]) -> None:
        """Two to four (speaker, weight) parts, as if picked (for a restored or scripted blend)."""
        while len(self.rows) < min(len(parts), MAX_PARTS):
            self.add_part()
        while len(self.rows) > max(len(parts), MIN_PARTS):
            self.remove_part(self.rows[-1])
        for row, (source, weight) in zip(self.rows, parts, strict=False):
            row.who.setCurrentText(source)
            row.weight.setValue(weight)

    def _library_changed(self) -> None:
        names = self._choices()
        for row in self.rows:
            chosen = row.who.currentText()
            row.who.blockSignals(True)
            row.who.clear()
            row.who.addItems(names)
            row.who.setCurrentText(chosen)
            row.who.blockSignals(False)
        self._changed()

    def spec_text(self) -> str:
        """The blend as picked: "Ann*0.5+seed:42*0.5" (weights as given; core normalises)."""
        return format_blend([(row.source(), row.weight.value()) for row in self.rows])

    def problem(self) -> str:
        """Why the blend as picked cannot be heard or kept (one sentence), or ""."""
        if any(not row.source() for row in self.rows):
            return translate("Blend", "Choose a speaker for each part.")
        try:
            check_library_parts(self.spec_text(), self._voices())
        except StudioError as exc:
            return core_text(exc)
        return ""

    def _changed(self) -> None:
        total = sum(row.weight.value() for row in self.rows)
        for row in self.rows:
            row.share.setText(f"{row.weight.value() / total:.0%}" if total else "")
            row.remove.setEnabled(len(self.rows) > MIN_PARTS)
        self.add_button.setEnabled(len(self.rows) < MAX_PARTS)
        self.spec.setText(self.spec_text())
        problem = self.problem()
        self.preview.setEnabled(not problem and not self.running)
        self.keep.setEnabled(not problem)
        if problem:
            self.status.setText(problem)
        elif self.heard is not None and self.heard[0] != self.spec_text():
            self.status.setText(translate("Blend", "The blend changed: preview it again."))
        else:
            self.status.setText(translate("Blend", "Preview the blend, then keep it."))

    # -- preview ---------------------------------------------------------------------------
    def _preview(self) -> None:
        problem = self.problem()
        if problem:
            self.status.setText(problem)
            return
        self.asked = self.spec_text()
        self.preview.setEnabled(False)
        self.cancel.setEnabled(True)
        self.progress.setValue(0)
        self.status.setText(translate("Blend", "Reading the sentence with the blend…"))
        self.preview_requested.emit(self.asked, self.sentence.text())

    def set_progress(self, fraction: float, detail: str) -> None:
        self.progress.setValue(int(max(0.0, fraction) * 100))
        if detail:
            self.status.setText(detail)

    def failed(self, text: str) -> None:
        """The preview did not run or failed: `text` says why."""
        self.job = None
        self.cancel.setEnabled(False)
        self.preview.setEnabled(not self.problem())
        self.status.setText(text)

    def previewed(self, embedding: str, audio: np.ndarray) -> None:
        """The worker read the sentence with the blend asked for: play it, offer to keep it."""
        self.job = None
        self.cancel.setEnabled(False)
        self.progress.setValue(100)
        self.heard = (self.asked, embedding, audio)
        self.play.setEnabled(True)
        self._changed()
        if self.heard[0] == self.spec_text():
            self.status.setText(translate("Blend", "Ready: play it, or name it and keep it."))
        self._play()

    def _play(self) -> None:
        if self.heard is None:
            return
        self.playing.emit()
        try:
            self.player.play(self.heard[2])
        except StudioError as exc:
            self.status.setText(core_text(exc))

    # -- keep ------------------------------------------------------------------------------
    def _keep(self) -> None:
        """The voice heard into the library; a taken name, or a blend not heard as it is now,
        keeps nothing and says so."""
        spec, problem = self.spec_text(), self.problem()
        name = self.name.text().strip()
        if problem:
            self._said(problem)
            return
        if self.heard is None or self.heard[0] != spec:
            self._said(translate("Blend", "Preview this blend first: Keep saves the voice heard."))
            return
        if not name:
            self._said(translate("Blend", "Give the blend a name to keep it under."))
            return
        try:
            entry = self.speakers.store(name, self.heard[1], None, note=blend_note(spec))
        except SpeakerNameTaken as taken:
            self._said(
                translate(
                    "Blend",
                    "Not kept: the library already has a speaker named '{name}'; choose "
                    "another name.",
                ).format(name=taken.name)
            )
            return
        except StudioError as exc:
            self._said(translate("Blend", "Not kept: {reason}").format(reason=core_text(exc)))
            return
        self._said(
            translate("Blend", "Kept the blend in the library as '{name}'.").format(name=entry.name)
        )

    def _said(self, text: str) -> None:
        self.status.setText(text)
        self.message.emit(text)
