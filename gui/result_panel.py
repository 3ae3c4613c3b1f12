"""The result: play while generating, play / stop / seek with a waveform, save in any format
(optionally one file per segment; result_saving.py), and the history of this session's
results (result_history.py)."""

import sys

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QPushButton,
    QSlider,
    QVBoxLayout,
    QWidget,
)

from core import SAMPLE_RATE
from core.audio import Player, output_available
from core.errors import StudioError
from core.request import AudioChunk, SegmentResult

from .notices import MessageLabel
from .result_history import HistoryEntry, ResultHistory
from .result_saving import ResultSaving
from .worker import SynthesisOutcome

WAVEFORM_POINTS = 4000
# Room for a run's audio, reserved at its first chunk: only the pages written are ever used.
GROWING_SAMPLES = 30 * 60 * SAMPLE_RATE
# _play_end of a stream that is still being fed: any end before end_of_stream is a lost device.
STREAM_OPEN = sys.maxsize


def envelope(audio: np.ndarray, points: int = WAVEFORM_POINTS) -> tuple[np.ndarray, np.ndarray]:
    """Min/max pairs per bucket, so a long result draws fast and still shows its peaks."""
    if len(audio) <= points:
        return np.arange(len(audio)) / SAMPLE_RATE, audio
    buckets = len(audio) // (points // 2)
    trimmed = audio[: buckets * (points // 2)].reshape(points // 2, buckets)
    values = np.empty(points, dtype=np.float32)
    values[0::2], values[1::2] = trimmed.min(axis=1), trimmed.max(axis=1)
    times = np.repeat(np.arange(points // 2) * buckets / SAMPLE_RATE, 2)
    return times, values


class ResultPanel(QWidget, ResultHistory, ResultSaving):
    message = Signal(str)
    folder_used = Signal(str)

    def __init__(self, player: Player | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.player = player or Player()
        self.audio = np.zeros(0, dtype=np.float32)
        # Room the audio of a run grows into (see _append); None when audio is a whole result.
        self._growing: np.ndarray | None = None
        self._wave_stale = False
        self.results: list[SegmentResult] = []
        self.pause_seconds = 0.25
        self.history: list[HistoryEntry] = []
        self.last_folder = ""
        self.running = False
        self._silenced = False  # Stop pressed during this run: nothing more streams until Play
        self._streamed = 0  # samples of the growing result already handed to the player
        # The player's continuous stream is this run's: new audio is fed to it.
        self._live = False
        # Where the audio this panel handed to the player ends (STREAM_OPEN while it is still
        # fed); None when the player is not ours or was stopped on purpose. A stream that ends
        # before it lost its device.
        self._play_end: int | None = None
        self._chunk_segment = 0
        self._segment_start: dict[int, int] = {}
        self.output_problem = output_available()
        self._build()
        self._connect()
        self.timer = QTimer(self)
        self.timer.setInterval(100)
        self.timer.timeout.connect(self._tick)
        self.timer.start()
        self._show_audio()

    def _build(self) -> None:
        self.stream_box = QCheckBox("Play segments as soon as they are ready")
        self.stream_box.setChecked(True)
        self.play_button = QPushButton("▶ Play")
        self.stop_button = QPushButton("■ Stop")
        self.stop_button.setEnabled(False)  # only while something plays
        self.seek = QSlider(Qt.Orientation.Horizontal)
        self.time_label = QLabel("0.0 / 0.0 s")
        self.per_segment = QCheckBox("One file per segment")
        self.save_button = QPushButton("Save…")
        # Playback's problems beside Play, saving's beside Save: fixed lines whose room is kept
        # while they are empty, so a message never moves or resizes anything.
        self.output_note = MessageLabel(self.output_problem or "", 2, hide_when_empty=True)
        self.output_note.setStyleSheet("color: #b03a2e")
        self.save_note = MessageLabel(lines=2, hide_when_empty=True)
        self.waveform = pg.PlotWidget()
        self.waveform.setMinimumHeight(70)
        self.waveform.setMaximumHeight(140)
        self.waveform.setMouseEnabled(x=False, y=False)
        self.waveform.hideAxis("left")
        self.waveform.setYRange(-1, 1)
        self.wave_curve = self.waveform.plot(pen=pg.mkPen("#16a085"))
        self.cursor = pg.InfiniteLine(0, movable=True, pen=pg.mkPen("#c0392b", width=2))
        self.waveform.addItem(self.cursor)
        # Every result of the session, newest last, scrolling; each names its device and
        # precision, so a bf16 and an int8 run of the same text tell apart.
        self.history_list = QListWidget()
        self.history_list.setMinimumHeight(50)
        self.history_list.setWordWrap(True)  # both lines of an entry, wrapped, never cut off
        self.history_list.setAlternatingRowColors(True)
        self.history_list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)

        controls = QHBoxLayout()
        for widget in (self.play_button, self.stop_button):
            controls.addWidget(widget)
        controls.addWidget(self.seek, 2)
        controls.addWidget(self.time_label)
        controls.addWidget(self.output_note, 1)
        save_row = QHBoxLayout()
        save_row.addWidget(self.stream_box)
        save_row.addWidget(self.save_note, 1)
        save_row.addWidget(self.per_segment)
        save_row.addWidget(self.save_button)
        player = QVBoxLayout()
        player.addWidget(self.waveform, 1)
        player.addLayout(controls)
        player.addLayout(save_row)
        history = QVBoxLayout()
        history.addWidget(QLabel("History (select one to replay or save it)"))
        history.addWidget(self.history_list, 1)
        group = QGroupBox("Result")
        inner = QHBoxLayout(group)
        inner.addLayout(player, 3)
        inner.addLayout(history, 2)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(group)

    def _connect(self) -> None:
        self.play_button.clicked.connect(self.play)
        self.stop_button.clicked.connect(self.user_stop)
        self.seek.sliderReleased.connect(lambda: self.play(self.seek.value()))
        self.cursor.sigPositionChangeFinished.connect(
            lambda line: self.play(int(line.value() * SAMPLE_RATE))
        )
        self.save_button.clicked.connect(self.save_dialog)
        self.history_list.currentRowChanged.connect(self.select_history)

    # -- a run -----------------------------------------------------------------------------
    def begin(self, pause_seconds: float) -> None:
        self.stop()
        self.running = True
        self._silenced = False
        self.results = []
        self.pause_seconds = pause_seconds
        self._streamed = 0
        self._chunk_segment = 0  # the segment the last chunk belonged to
        self._segment_start: dict[int, int] = {}  # where each streamed segment's audio begins
        self._set_audio(np.zeros(0, dtype=np.float32))

    def add_segment(self, result: SegmentResult) -> None:
        """A finished segment; its audio already arrived piece by piece through add_chunk."""
        self.results.append(result)

    def add_chunk(self, chunk: AudioChunk) -> None:
        """Playable audio as it is made: appended (after the pause that separates segments)
        and fed to the player's one continuous stream, so listening starts after a few dozen
        GPT steps and goes on without a gap between pieces."""
        if chunk.index > self._chunk_segment:
            self._append(np.zeros(round(self.pause_seconds * SAMPLE_RATE), dtype=np.float32))
            self._chunk_segment = chunk.index
        self._segment_start.setdefault(chunk.index, len(self.audio))
        self._append(chunk.audio)
        self._stream()

    def _append(self, piece: np.ndarray) -> None:
        """Append to the growing result in place: a chunk costs its own size, not the whole
        result's (a fresh 50 MB array per chunk is page faults the UI thread waits for)."""
        end = len(self.audio)
        size = end + len(piece)
        if self._growing is None or size > len(self._growing):
            room = np.empty(max(2 * size, GROWING_SAMPLES), dtype=np.float32)
            room[:end] = self.audio
            self._growing = room
        self._growing[end:size] = piece
        self.audio = self._growing[:size]
        self.seek.setRange(0, size)
        self._wave_stale = True  # drawn on the next tick, not once per chunk

    def restart_segment(self, index: int) -> None:
        """The engine makes the segment again (out of memory): what was streamed of it is
        dropped, so nothing plays or saves twice; its new audio streams from its start."""
        start = self._segment_start.pop(index, None)
        if start is None:
            return
        if self._live:
            if self.player.truncate(start) > start:
                self.stop()  # part of it was heard: the next chunk plays it from its start
        elif self.player.playing and self._streamed > start:
            self.stop()
        self._streamed = min(self._streamed, start)
        self._set_audio(self.audio[:start].copy())

    def end(
        self, outcome: SynthesisOutcome | None, cancelled: bool = False, failed: bool = False
    ) -> None:
        """The run is over: the result is its segments, ready to play and save. A cancelled run
        keeps its finished segments and the start of the one in progress that was already
        streamed (a result marked partial); a failed run keeps its finished segments."""
        self.running = False
        if outcome is None or not outcome.results:
            if cancelled or failed:
                self.stop()
                self.results = []
                self._set_audio(np.zeros(0, dtype=np.float32))
            self._finish_stream()
            return
        self.results = list(outcome.results)
        if cancelled or failed:
            self.stop()  # Esc or an error ends the sound with the run
        self._set_audio(outcome.audio)
        self._feed_new()
        self._finish_stream()  # the stream stops after the run's last sample
        self._remember(outcome, cancelled, failed)

    # -- playback --------------------------------------------------------------------------
    def _stream(self) -> None:
        """During a run: the first new audio opens one continuous stream, and everything new
        after it is fed to that stream (it plays silence, not a gap, while it waits)."""
        self._check_playback()
        if (
            not (self.running and self.stream_box.isChecked())
            or self.output_problem
            or self._silenced
        ):
            self._finish_stream()  # unticked: what is queued still plays to its end
            return
        if len(self.audio) <= self._streamed:
            return
        if self._live:
            self._feed_new()
        elif not self.player.playing:  # else someone else's sound (or a whole buffer) plays
            self._open_stream(self._streamed)

    def _feed_new(self) -> None:
        if not self._live or len(self.audio) <= self._streamed:
            return
        if self.player.feed(self.audio[self._streamed :]):
            self._streamed = len(self.audio)
        else:
            self._live = False  # the stream is gone: _check_playback says why on the next tick

    def _open_stream(self, start: int) -> None:
        """Play the buffer from `start` on a stream that takes this run's later audio too."""
        self._live = False
        try:
            self.player.open_stream(SAMPLE_RATE, self.audio[start:], start)
        except StudioError as exc:
            self._playback_failed(exc)
            return
        self._streamed = len(self.audio)
        self._live = True
        self._play_end = STREAM_OPEN
        self.stop_button.setEnabled(True)

    def _finish_stream(self) -> None:
        """No more audio for the stream: it stops after what it has."""
        if not self._live:
            return
        self._live = False
        self.player.end_of_stream()
        if self._play_end is not None:
            self._play_end = self._streamed

    def _say_play(self, text: str) -> None:
        """A playback outcome: beside Play, and to the window."""
        self.output_note.setText(text)
        self.message.emit(text)

    def _say_save(self, text: str) -> None:
        """A saving outcome: beside Save, and to the window."""
        self.save_note.setText(text)
        self.message.emit(text)

    def play(self, start: int = 0) -> None:
        if not len(self.audio):
            self._say_play("There is no audio to play yet.")
            return
        if self.output_problem:
            # Asked again by the user: a device that came back (plugged in again) is used.
            self.output_problem = output_available()
            self.output_note.setText(self.output_problem or "")
            if self.output_problem:
                self._say_play(self.output_problem)
                return
        self._silenced = False
        start = max(0, min(int(start) if start else 0, len(self.audio)))
        if self.running and self.stream_box.isChecked():
            self._open_stream(start)  # from the buffer, then on with the rest of the run
            return
        self._streamed = len(self.audio)  # a manual play replaces the streaming
        self._play_from(start)

    def _play_from(self, start: int) -> None:
        self._live = False
        try:
            self.player.play(self.audio, SAMPLE_RATE, start)
        except StudioError as exc:
            self._playback_failed(exc)
            return
        self._play_end = len(self.audio)
        self.stop_button.setEnabled(True)

    def _playback_failed(self, exc: StudioError) -> None:
        # Remembered, so streaming does not retry on every tick; play() checks again.
        self._play_end = None
        self.output_problem = str(exc)
        self._say_play(self.output_problem)

    def stop(self) -> None:
        self._play_end = None
        self._live = False
        self.player.stop()
        self.stop_button.setEnabled(False)

    def user_stop(self) -> None:
        """Stop pressed: silence for the rest of this run too, not only until the next chunk
        (Play starts listening again)."""
        if self.running:
            self._silenced = True
        self.stop()

    def forget_playback(self) -> None:
        """Someone else (the audition dialog) takes the shared player over."""
        self._play_end = None
        self._live = False

    def _check_playback(self) -> None:
        """A stream that ended before its last sample lost its device (unplugged, or the sound
        server went away): say so, instead of a silent stop."""
        if self._play_end is None or self.player.playing:
            return
        end, self._play_end = self._play_end, None
        self._live = False
        if self.player.position < end:
            self._say_play(
                f"Playback stopped at {self.player.position / SAMPLE_RATE:.1f} s: the audio "
                "device stopped responding. The audio can still be saved."
            )

    def _tick(self) -> None:
        if self._wave_stale:
            self._show_audio()
        self._check_playback()
        self._stream()
        self.stop_button.setEnabled(self.player.playing or self._live)
        position = (
            min(self.player.position, len(self.audio)) if self.player.playing else self.seek.value()
        )
        if not self.seek.isSliderDown():
            self.seek.setValue(position)
        self.cursor.setValue(position / SAMPLE_RATE)
        self.time_label.setText(
            f"{position / SAMPLE_RATE:.1f} / {len(self.audio) / SAMPLE_RATE:.1f} s"
        )

    def _set_audio(self, audio: np.ndarray) -> None:
        """A new result (or a cut one): shown now, and never written to in place."""
        self.audio = audio
        self._growing = None
        self.seek.setRange(0, max(0, len(audio)))
        self._show_audio()

    def _show_audio(self) -> None:
        self._wave_stale = False
        times, values = envelope(self.audio)
        self.wave_curve.setData(times, values)
        # The envelope keeps every bucket's extremes: its peak is the audio's, read cheaply.
        peak = max(float(np.abs(values).max()) if len(values) else 1.0, 0.01)
        self.waveform.setYRange(-peak, peak, padding=0.05)
        self.waveform.setXRange(0, max(1.0, len(self.audio) / SAMPLE_RATE), padding=0)
        has_audio = bool(len(self.audio))
        self.save_button.setEnabled(has_audio or self.exporting)  # Save, or cancel the save
        self.play_button.setEnabled(has_audio)
