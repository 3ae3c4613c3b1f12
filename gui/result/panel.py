"""The result panel: play while generating, play, stop and seek on a waveform, save (saving.py) and
the history (history.py). A job's audio goes to a ResultStore file, never whole into memory; the
waveform is made after first paint.
"""

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np
from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QPaintEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QPushButton,
    QSlider,
    QVBoxLayout,
    QWidget,
)

from chattts_studio.core import SAMPLE_RATE
from chattts_studio.core.audio.player import Player, output_available
from chattts_studio.core.audio.stream_writer import pause_samples
from chattts_studio.core.engine.request import AudioChunk, JobPlan, SegmentResult
from chattts_studio.core.results.history import HistoryStore
from chattts_studio.core.results.result_store import ResultStore
from chattts_studio.core.services.synthesize import SynthesisOutcome
from chattts_studio.gui.common.notices import MessageLabel, notes_box
from chattts_studio.gui.common.ranges import nice_step
from chattts_studio.gui.common.theme import notifier, warning_colour
from chattts_studio.gui.i18n import core_text
from chattts_studio.gui.result.history import HistoryEntry, ResultHistory
from chattts_studio.gui.result.playback import ResultPlayback
from chattts_studio.gui.result.saving import ResultSaving

if TYPE_CHECKING:
    import pyqtgraph as pg

    from chattts_studio.gui.result.waveform import Waveform

WAVEFORM_HEIGHTS = (70, 140)  # least and most
# What a finished segment keeps of its audio in memory: nothing (its samples are in the store).
NO_AUDIO = np.zeros(0, dtype=np.float32)
NO_AUDIO.flags.writeable = False


class ResultPanel(ResultPlayback, ResultHistory, ResultSaving):
    def __init__(
        self,
        player: Player | None = None,
        parent: QWidget | None = None,
        history: HistoryStore | None = None,
    ) -> None:
        super().__init__(parent)
        self.player = player or Player()
        self.store: ResultStore | None = None  # the result shown: the one running, or chosen
        self.results: list[SegmentResult] = []
        self.pause_seconds = 0.25
        # The running job's silence before each segment (JobPlan.pause_before: a dialogue's
        # turn pause between its lines); None: `pause_seconds` everywhere.
        self._pause_before: Callable[[int], float] | None = None
        self.history: list[HistoryEntry] = []
        self.history_store = history or HistoryStore()
        self.last_folder = ""
        self.running = False
        self.shown_text = ""
        self._played_at = -1  # the position last sent through `played_at`
        self._x_end = 0.0  # the time axis's end while a result arrives
        self._chunk_segment = 0
        self._segment_start: dict[int, int] = {}
        self._drawn: tuple[ResultStore | None, int] = (
            None,
            -1,
        )  # (store, envelope version) last drawn
        self._init_playback()
        self.output_problem = core_text(output_available()) or None
        self._build()
        self._connect()
        self.timer = QTimer(self)
        self.timer.setInterval(100)
        self.timer.timeout.connect(self._tick)
        self.timer.start()
        self.restore_history()
        self._show_audio()

    def _build(self) -> None:
        self.stream_box = QCheckBox(self.tr("Play segments as soon as they are ready"))
        self.stream_box.setChecked(True)
        # Off by default: timing the words costs CPU time (docs/window.md, "Results and saving").
        self.words_box = QCheckBox(self.tr("Follow words"))
        self.words_box.setAccessibleName(self.tr("Follow the words in the text"))
        self.words_box.setToolTip(
            self.tr(
                "While the result plays, the word being spoken is marked in the text; click a "
                "word to play from it. The words are timed once per result, off the window's "
                "thread."
            )
        )
        self.play_button = QPushButton(self.tr("▶ Play"))
        self.stop_button = QPushButton(self.tr("■ Stop"))
        self.stop_button.setEnabled(False)  # only while something plays
        self.seek = QSlider(Qt.Orientation.Horizontal)
        self.seek.setAccessibleName(self.tr("Playback position"))
        self.time_label = QLabel("0.0 / 0.0 s")
        self.per_segment = QCheckBox(self.tr("One file per segment"))
        self.subtitles_box = QCheckBox(self.tr("Subtitles"))
        self.subtitles_box.setAccessibleName(self.tr("Also save subtitles"))
        self.subtitles_box.setToolTip(
            self.tr("Save also writes subtitles beside the audio: one cue a sentence.")
        )
        self.subtitle_format = QComboBox()
        self.subtitle_format.addItem(".srt", "srt")
        self.subtitle_format.addItem(".vtt", "vtt")
        self.subtitle_format.setAccessibleName(self.tr("Subtitle format"))
        self.subtitle_format.setEnabled(False)  # with the box ticked
        self.save_button = QPushButton(self.tr("Save…"))
        # Playback's and saving's problems (an outcome goes to the window's status line):
        # two lines left of Save whose room is kept while they are empty, so a message never
        # moves or resizes anything; one note alone has all of it.
        self.output_note = MessageLabel(self.output_problem or "", 2, hide_when_empty=True)
        self.restyle_warnings()
        self.save_note = MessageLabel(lines=2, hide_when_empty=True)
        self.notes = notes_box(self.output_note, self.save_note)
        # The waveform's place, held by a blank of its size until it is made (waveform()).
        self._wave: Waveform | None = None
        self._wave_slot = QWidget()
        self._wave_slot.setMinimumHeight(WAVEFORM_HEIGHTS[0])
        self._wave_slot.setMaximumHeight(WAVEFORM_HEIGHTS[1])
        # Every result kept, newest last, scrolling; each names its device and precision, so
        # a bf16 and an int8 run of the same text tell apart.
        self.history_list = QListWidget()
        self.history_list.setAccessibleName(self.tr("Result history"))
        self.history_list.setMinimumHeight(50)
        self.history_list.setWordWrap(True)  # both lines of an entry, wrapped, never cut off
        self.history_list.setAlternatingRowColors(True)
        self.history_list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self._build_usage()

        # Playing on one row; the notes (with the room the row leaves) and saving on the next.
        controls, save_row = QHBoxLayout(), QHBoxLayout()
        playing: tuple[QWidget, ...] = (self.play_button, self.stop_button, self.seek)
        playing += (self.time_label, self.stream_box, self.words_box)
        saving: tuple[QWidget, ...] = (self.notes, self.per_segment, self.subtitles_box)
        saving += (self.subtitle_format, self.save_button)
        for row, widgets in ((controls, playing), (save_row, saving)):
            for widget in widgets:
                row.addWidget(widget, 1 if widget in (self.seek, self.notes) else 0)
        player = self._player_layout = QVBoxLayout()
        player.addWidget(self._wave_slot, 1)
        player.addLayout(controls)
        player.addLayout(save_row)
        history = QVBoxLayout()
        history.addWidget(QLabel(self.tr("History (select one to replay or save it)")))
        history.addWidget(self.history_list, 1)
        history.addLayout(self.usage_row)
        group = QGroupBox(self.tr("Result"))
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
        self.save_button.clicked.connect(self.save_dialog)
        self.subtitles_box.toggled.connect(self.subtitle_format.setEnabled)
        self.history_list.currentRowChanged.connect(self.select_history)
        self._connect_usage()
        notifier().changed.connect(self.restyle_warnings)  # light or dark: a readable red

    def paintEvent(self, event: QPaintEvent) -> None:  # Qt's name
        super().paintEvent(event)
        if self._wave is None:  # the waveform comes once this paint is on screen
            QTimer.singleShot(0, self, self.wave)  # none once the panel is gone

    def wave(self) -> "Waveform":
        """The waveform, made on first use in the blank's place, showing the result."""
        if self._wave is None:
            from chattts_studio.gui.result.waveform import Waveform

            self._wave = Waveform(*WAVEFORM_HEIGHTS)
            self._player_layout.replaceWidget(self._wave_slot, self._wave.widget)
            self._wave_slot.deleteLater()
            self._wave.cursor.sigPositionChangeFinished.connect(
                lambda line: self.play(int(line.value() * SAMPLE_RATE))
            )
            self._drawn = (None, -2)  # drawn now, whatever was drawn before
            self._show_audio()
            self._wave.cursor.setValue(self.seek.value() / SAMPLE_RATE)
        return self._wave

    # The waveform's parts, made when first asked for (tests and scripts).
    @property
    def waveform(self) -> "pg.PlotWidget":
        return self.wave().widget

    @property
    def wave_curve(self) -> "pg.PlotDataItem":
        return self.wave().curve

    @property
    def wave_cursor(self) -> "pg.InfiniteLine":
        return self.wave().cursor

    def restyle_warnings(self) -> None:
        """Playback's problems in a red readable on the scheme's window."""
        self.output_note.setStyleSheet(f"color: {warning_colour(self.palette()).name()}")

    @property
    def length(self) -> int:
        """Samples of the result shown."""
        return self.store.length if self.store is not None else 0

    @property
    def audio(self) -> np.ndarray:
        """The result shown, as a read-only view of its file (for scripts and tests: nothing
        in the window reads it whole)."""
        return self.store.samples() if self.store is not None else NO_AUDIO

    # -- a run -----------------------------------------------------------------------------
    def begin(self, pause_seconds: float) -> None:
        self.stop()
        self.running = True
        self.shown_text = ""  # no words to follow until the run is over
        self._silenced = False
        self.save_note.clear()  # a problem saving the last result is not this one's
        self._pause_before = None  # until the job's plan arrives (set_plan)
        self._open_store(pause_seconds)

    def set_plan(self, plan: JobPlan) -> None:
        """The running job's plan, before its first chunk: the silence before each segment
        is the plan's, as JobPlan.join and the CLI put it (a dialogue's turn pause)."""
        self._pause_before = plan.pause_before

    def _open_store(self, pause_seconds: float) -> None:
        """A fresh store in the history's folder for the result about to arrive."""
        self.results = []
        self.pause_seconds = pause_seconds
        self._handed = 0
        self._chunk_segment = 0  # the segment the last chunk belonged to
        self._segment_start = {}  # where each streamed segment's audio begins
        self.store = self._running_store = self.history_store.new()
        self._show_audio()
        self.shown_changed.emit()

    def _place(self, index: int, audio: np.ndarray) -> None:
        """Append a segment's audio (after the pause that separates segments) to the store:
        a chunk costs its own size, never the whole result's."""
        store = self.store
        assert store is not None, "begin() opens the store"
        if index > self._chunk_segment:
            pause = self._pause_before(index) if self._pause_before else self.pause_seconds
            store.append_silence(pause_samples(pause))
            self._chunk_segment = index
        self._segment_start.setdefault(index, store.length)
        store.append(audio)
        self.seek.setRange(0, store.length)

    def add_chunk(self, chunk: AudioChunk) -> None:
        """Playable audio as it is made: into the store, from which the player's one
        continuous stream is fed, so listening starts after a few dozen GPT steps and goes
        on without a gap between pieces."""
        self._place(chunk.index, chunk.audio)
        self._stream()

    def add_segment(self, result: SegmentResult) -> None:
        """A finished segment. Its audio already arrived piece by piece through add_chunk
        (when it did not, it is placed now); only its figures are kept in memory."""
        if self.store is None:
            return
        if result.index not in self._segment_start and len(result.audio):
            self._place(result.index, result.audio)
        start = self._segment_start.get(result.index, self.store.length)
        self.store.mark_segment(result.index, start, self.store.length)
        self.results = [r for r in self.results if r.index != result.index]
        self.results.append(replace(result, audio=NO_AUDIO))

    def restart_segment(self, index: int) -> None:
        """The engine makes the segment again (out of memory): what was streamed of it is
        dropped, so nothing plays or saves twice; its new audio streams from its start."""
        start = self._segment_start.pop(index, None)
        if start is None or self.store is None:
            return
        store = self.store
        feeder = self._feeder
        if feeder is not None and feeder.alive:
            if feeder.cut(start, lambda: store.truncate(start)) > start:
                self.stop()  # part of it was heard: the next chunk plays it from its start
        else:
            if self.player.playing and self._streamed > start:
                self.stop()
            store.truncate(start)
        self._handed = min(self._handed, start)
        self.seek.setRange(0, store.length)

    def end(
        self, outcome: SynthesisOutcome | None, cancelled: bool = False, failed: bool = False
    ) -> None:
        """The run is over: the result is its segments, ready to play and save. A cancelled run
        keeps its finished segments and the start of the one in progress that was already
        streamed (a result marked partial); a failed run keeps its finished segments."""
        self.running = False
        try:
            self._end(outcome, cancelled, failed)
        finally:
            self._pause_before = None  # the next run's plan comes with it
        if self.results and outcome is not None:
            self.shown_text = outcome.job.request.text
        self.shown_changed.emit()

    def _end(self, outcome: SynthesisOutcome | None, cancelled: bool, failed: bool) -> None:
        if outcome is not None and outcome.results and self._running_store is None:
            self.stop()
            self._open_store(outcome.job.request.pause_seconds)  # it did not stream through here
        if outcome is not None and self.store is not None:
            for result in sorted(outcome.results, key=lambda r: r.index):
                if result.index not in self.store.segments:
                    self.add_segment(result)  # a result the panel did not see arrive
        if outcome is None or not self.results:
            if cancelled or failed:
                self.stop()
                self._drop_store()
            self._finish_stream()
            self._running_store = None
            self._show_audio()  # what is kept fits the time axis exactly now
            return
        if cancelled or failed:
            self.stop()  # Esc or an error ends the sound with the run
        self._finish_stream()  # the stream stops after the run's last sample
        store = self.store
        assert store is not None
        self.results = self._viewed(sorted(self.results, key=lambda r: r.index), store)
        whole = replace(outcome, results=list(self.results), store=store)
        self._running_store = None
        self._remember(whole, cancelled, failed)
        self._show_audio()

    def _drop_store(self) -> None:
        """Nothing worth keeping was made: its folder goes."""
        store, self.store = self.store, None
        self.results = []
        self.shown_text = ""
        if store is not None and all(e.store is not store for e in self.history):
            store.delete()
        self.seek.setRange(0, 0)
        self._show_audio()

    @staticmethod
    def _viewed(results: list[SegmentResult], store: ResultStore) -> list[SegmentResult]:
        """The results with their audio as views of the store's file (read only when used)."""
        samples = store.samples()
        viewed = []
        for r in results:
            start, end = store.segments.get(r.index, (0, 0))
            viewed.append(replace(r, audio=samples[start:end]))
        return viewed

    # -- playing (the rest is gui/result/playback.py) ------------------------------------------
    def play(self, start: int = 0) -> None:
        """Play the result from `start` (a sample), fed from its store."""
        if not self.length:
            self._say_play(self.tr("There is no audio to play yet."))
            return
        if self.output_problem:
            # Asked again by the user: a device that came back (plugged in again) is used.
            self.output_problem = core_text(output_available()) or None
            self.output_note.setText(self.output_problem or "")
            if self.output_problem:
                self._say_play(self.output_problem)
                return
        self._silenced = False
        start = max(0, min(int(start) if start else 0, self.length))
        if not self._open_stream(start):
            return
        if not (self.running and self.stream_box.isChecked()):
            # A finished result plays to its end; during a run without streaming, what there
            # is now (a manual play replaces the streaming).
            self._finish_stream(cap=self.running)

    # -- showing ---------------------------------------------------------------------------
    def _tick(self) -> None:
        self._show_audio(only_if_changed=True)
        self._check_playback()
        self._stream()
        self.stop_button.setEnabled(self.player.playing or self._feeding)
        length = self.length
        position = min(self.player.position, length) if self.player.playing else self.seek.value()
        if not self.seek.isSliderDown():
            self.seek.setValue(position)
        if self._wave is not None:
            self._wave.cursor.setValue(position / SAMPLE_RATE)
        if position != self._played_at:
            self._played_at = position
            self.played_at.emit(position)
        self.time_label.setText(f"{position / SAMPLE_RATE:.1f} / {length / SAMPLE_RATE:.1f} s")

    def _show_audio(self, only_if_changed: bool = False) -> None:
        """The waveform from the store's envelope: a few thousand points whatever the length,
        redrawn on a tick only when a chunk changed it (never per chunk)."""
        store = self.store
        version = store.envelope.version if store is not None else -1
        if only_if_changed and self._drawn == (store, version):
            return
        self._drawn = (store, version)
        seconds = max(1.0, self.length / SAMPLE_RATE)
        if self.running:
            # While audio arrives the time axis grows in steps, not with every chunk: an axis
            # whose range moved lays its ticks out again at the next paint, on the UI thread
            # (as the live panel's, gui/panels/live.py). The finished result fits exactly.
            if seconds > self._x_end:
                self._x_end = nice_step(seconds * 1.25)
            seconds = self._x_end
        else:
            self._x_end = 0.0
        if self._wave is not None:  # not made yet: it draws the result when it is
            self._wave.draw(self.store, seconds)
        self.seek.setRange(0, self.length)
        has_audio = bool(self.length)
        self.save_button.setEnabled(has_audio or self.exporting)  # Save, or cancel the save
        self.play_button.setEnabled(has_audio)
