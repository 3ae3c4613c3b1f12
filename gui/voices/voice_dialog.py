"""New voice from a recording: open an audio file or record one, type what is said, audition it and
keep it in the speaker library. The worker reads, checks and clones the clip; this dialog only
asks.
"""

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from PySide6.QtCore import QTimer, Signal
from PySide6.QtGui import QCloseEvent
from PySide6.QtWidgets import (
    QDialog,
    QFileDialog,
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
from chattts_studio.core.voices.clone import MAX_SECONDS, MIN_SECONDS
from chattts_studio.gui.i18n import core_text, translate

if TYPE_CHECKING:  # imported where a take starts (record)
    from chattts_studio.core.voices.recorder import Recorder

POLL_MS = 66  # about 15 Hz: the meter and the seconds follow the recorder's shared state
AUDITION_TEXT = "你好，这是我的新声音。Hello, this is my new voice."


def open_recording(parent: QWidget | None) -> Path | None:
    """The reference recording to open (a small function: tests replace it)."""
    path, _ = QFileDialog.getOpenFileName(
        parent,
        translate("VoiceDialog", "Open a recording"),
        str(Path.home()),
        translate("VoiceDialog", "Audio files (*.wav *.flac *.ogg *.mp3)"),
    )
    return Path(path) if path else None


@dataclass(frozen=True)
class Recording:
    """What the voice is made from: a file, or a microphone take at `rate`."""

    source: Path | None = None
    take: np.ndarray | None = None
    rate: int = 0


class VoiceDialog(QDialog):
    audition_requested = Signal(object, str, str)  # Recording, transcript, sentence
    keep_requested = Signal(object, str, str)  # Recording, transcript, name
    cancel_requested = Signal()  # the running audition or keep is to stop (nothing is kept)
    playing = Signal()

    max_seconds = MAX_SECONDS  # the longest take (a test records a shorter one)
    rate: int | None = None  # None: the input device's default rate (resampled later)

    def __init__(self, player: Player | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.player = player
        self.recording: Recording | None = None
        self.busy = False  # an audition or keep asked for and not ended yet
        self.recorder: Recorder | None = None  # while recording
        self.audio: np.ndarray | None = None  # the last audition
        self.timer = QTimer(self)
        self.timer.setInterval(POLL_MS)
        self._build()
        self._connect()
        self.set_busy(False)

    def _build(self) -> None:
        self.setWindowTitle(translate("VoiceDialog", "New voice from a recording"))
        self.open_button = QPushButton(translate("VoiceDialog", "Open audio file…"))
        self.record_button = QPushButton(translate("VoiceDialog", "Record"))
        self.meter = QProgressBar()
        self.meter.setRange(0, 100)
        self.meter.setTextVisible(False)
        self.seconds = QLabel(translate("VoiceDialog", "{seconds:.1f} s").format(seconds=0.0))
        self.source_label = QLabel(translate("VoiceDialog", "No recording yet."))
        self.source_label.setWordWrap(True)
        self.transcript = QLineEdit()
        self.transcript.setPlaceholderText(
            translate("VoiceDialog", "Exactly what is said in the recording")
        )
        self.sentence = QLineEdit(AUDITION_TEXT)
        self.audition_button = QPushButton(translate("VoiceDialog", "Audition"))
        self.play_button = QPushButton(translate("VoiceDialog", "Play audition"))
        self.name = QLineEdit()
        self.name.setPlaceholderText(translate("VoiceDialog", "Name in the library"))
        self.keep_button = QPushButton(translate("VoiceDialog", "Keep"))
        self.cancel_button = QPushButton(translate("VoiceDialog", "Cancel"))
        self.status = QLabel()
        self.status.setWordWrap(True)
        for widget, name in (
            (self.open_button, translate("VoiceDialog", "Open audio file")),
            (self.record_button, translate("VoiceDialog", "Record")),
            (self.meter, translate("VoiceDialog", "Input level")),
            (self.seconds, translate("VoiceDialog", "Seconds recorded")),
            (self.source_label, translate("VoiceDialog", "Recording")),
            (self.transcript, translate("VoiceDialog", "Transcript")),
            (self.sentence, translate("VoiceDialog", "Audition sentence")),
            (self.audition_button, translate("VoiceDialog", "Audition")),
            (self.play_button, translate("VoiceDialog", "Play audition")),
            (self.name, translate("VoiceDialog", "Speaker name")),
            (self.keep_button, translate("VoiceDialog", "Keep")),
            (self.cancel_button, translate("VoiceDialog", "Cancel")),
            (self.status, translate("VoiceDialog", "Voice status")),
        ):
            widget.setAccessibleName(name)

        source_row = QHBoxLayout()
        source_row.addWidget(self.open_button)
        source_row.addWidget(self.record_button)
        source_row.addWidget(self.meter, 1)
        source_row.addWidget(self.seconds)
        form = QGridLayout()
        rows: list[tuple[str, QWidget, QWidget | None]] = [
            (translate("VoiceDialog", "Transcript:"), self.transcript, None),
            (translate("VoiceDialog", "Sentence:"), self.sentence, self.audition_button),
            (translate("VoiceDialog", "Name:"), self.name, self.keep_button),
        ]
        for row, (label, field, button) in enumerate(rows):
            title = QLabel(label)
            title.setBuddy(field)
            form.addWidget(title, row, 0)
            form.addWidget(field, row, 1)
            if button is not None:
                form.addWidget(button, row, 2)
        form.addWidget(self.play_button, 1, 3)
        form.addWidget(self.cancel_button, 2, 3)
        hint = QLabel(
            translate(
                "VoiceDialog",
                "A clip of {low:g}-{high:g} seconds of one person speaking clearly; the "
                "library keeps its encoded sample and transcript, not the recording.",
            ).format(low=MIN_SECONDS, high=MAX_SECONDS)
        )
        hint.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.addWidget(hint)
        layout.addLayout(source_row)
        layout.addWidget(self.source_label)
        layout.addLayout(form)
        layout.addWidget(self.status)

    def _connect(self) -> None:
        self.open_button.clicked.connect(self.open_file)
        self.record_button.clicked.connect(self.toggle_recording)
        self.timer.timeout.connect(self.poll)
        self.audition_button.clicked.connect(self._audition)
        self.play_button.clicked.connect(self.play)
        self.keep_button.clicked.connect(self._keep)
        self.cancel_button.clicked.connect(self.cancel_requested)

    # -- the recording ---------------------------------------------------------------------
    def open_file(self) -> None:
        path = open_recording(self)
        if path is None:
            return
        self.use(
            Recording(source=path),
            translate("VoiceDialog", "Recording: {file}").format(file=path.name),
        )

    def use(self, recording: Recording, said: str) -> None:
        self.recording = recording
        self.audio = None
        self.source_label.setText(said)
        self.status.setText("")
        self.set_busy(False)

    def toggle_recording(self) -> None:
        if self.recorder is not None:
            self.stop_recording()
            return
        from chattts_studio.core.voices.recorder import Recorder

        recorder = Recorder(rate=self.rate, max_seconds=self.max_seconds)
        try:
            recorder.start()  # opening the device is quick; the audio arrives on its thread
        except StudioError as exc:
            self.status.setText(core_text(exc))
            return
        self.recorder = recorder
        self.record_button.setText(translate("VoiceDialog", "Stop"))
        self.record_button.setAccessibleName(translate("VoiceDialog", "Stop recording"))
        self.status.setText(translate("VoiceDialog", "Recording…"))
        self.timer.start()

    def poll(self) -> None:
        recorder = self.recorder
        if recorder is None:
            return
        self.meter.setValue(int(min(1.0, recorder.level) * 100))
        self.seconds.setText(
            translate("VoiceDialog", "{seconds:.1f} s").format(seconds=recorder.seconds)
        )
        if recorder.full:
            self.stop_recording()

    def stop_recording(self) -> None:
        recorder, self.recorder = self.recorder, None
        self.timer.stop()
        self.record_button.setText(translate("VoiceDialog", "Record"))
        self.record_button.setAccessibleName(translate("VoiceDialog", "Record"))
        if recorder is None:
            return
        take = recorder.stop()
        seconds = recorder.seconds
        self.seconds.setText(translate("VoiceDialog", "{seconds:.1f} s").format(seconds=seconds))
        said = translate("VoiceDialog", "Recording: {seconds:.1f} s from the microphone").format(
            seconds=seconds
        )
        self.use(Recording(take=take, rate=recorder.rate or 0), said)

    # -- audition and keep -----------------------------------------------------------------
    def _ready(self) -> bool:
        if self.recording is None:
            self.status.setText(translate("VoiceDialog", "Open an audio file or record one first."))
            return False
        if not self.transcript.text().strip():
            self.status.setText(
                translate("VoiceDialog", "Type what is said in the recording first.")
            )
            return False
        return True

    def _audition(self) -> None:
        if self._ready() and self.sentence.text().strip():
            self.set_busy(True)
            self.status.setText(translate("VoiceDialog", "Auditioning…"))
            self.audition_requested.emit(
                self.recording, self.transcript.text().strip(), self.sentence.text().strip()
            )

    def _keep(self) -> None:
        if not self._ready():
            return
        name = self.name.text().strip()
        if not name:
            self.status.setText(translate("VoiceDialog", "Give the voice a name first."))
            return
        self.set_busy(True)
        self.status.setText(
            translate("VoiceDialog", "Cloning and keeping '{name}'…").format(name=name)
        )
        self.keep_requested.emit(self.recording, self.transcript.text().strip(), name)

    def set_busy(self, busy: bool) -> None:
        self.busy = busy
        self.cancel_button.setEnabled(busy)
        for button in (self.audition_button, self.keep_button, self.open_button):
            button.setEnabled(not busy)
        self.play_button.setEnabled(not busy and self.audio is not None)

    def auditioned(self, audio: np.ndarray) -> None:
        self.audio = audio
        self.set_busy(False)
        self.status.setText(translate("VoiceDialog", "Auditioned: press Play audition to hear it."))
        self.play()

    def play(self) -> None:
        if self.audio is not None and self.player is not None:
            self.playing.emit()
            try:
                self.player.play(self.audio)
            except StudioError as exc:  # no output device: say so, the voice is still here
                self.status.setText(core_text(exc))

    def kept(self, name: str) -> str:
        self.set_busy(False)
        said = translate("VoiceDialog", "Kept the voice in the library as '{name}'.").format(
            name=name
        )
        self.status.setText(said)
        return said

    def failed(self, sentence: str) -> None:
        self.set_busy(False)
        self.status.setText(sentence)

    def reject(self) -> None:
        """Closing the dialog (Esc, the close button) stops a take and cancels the running
        audition or keep: nothing is added to the library."""
        self._stop_all()
        super().reject()

    def closeEvent(self, event: QCloseEvent) -> None:  # Qt's name
        if self.recorder is not None:
            self.stop_recording()
        super().closeEvent(event)  # QDialog's calls reject() while it is shown

    def _stop_all(self) -> None:
        if self.recorder is not None:
            self.stop_recording()
        if self.busy:
            self.cancel_requested.emit()
