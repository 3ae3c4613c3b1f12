"""The live VRAM / RTF panel: polls the engine's thread-safe snapshot about 10 times a second
while a job runs, plots RTF and memory over time, and keeps the job's figures afterwards."""

import time

import pyqtgraph as pg
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QFormLayout, QGroupBox, QLabel, QProgressBar, QVBoxLayout, QWidget

from core.metrics import LiveMetrics, LiveSnapshot, MemorySnapshot
from core.request import JobSummary, SegmentResult

POLL_MS = 100
MIB = 2**20


def describe_memory(memory: MemorySnapshot | None) -> str:
    if memory is None:
        return "-"
    if memory.device.startswith("mps"):
        return memory.describe()  # Metal's figures and the process's, labelled as such
    if memory.allocated is not None:
        return (
            f"VRAM allocated {memory.allocated / MIB:.0f} MiB · reserved "
            f"{(memory.reserved or 0) / MIB:.0f} MiB · peak {(memory.peak or 0) / MIB:.0f} "
            f"MiB · total {(memory.total or 0) / MIB:.0f} MiB"
        )
    return f"process memory (CPU) {(memory.rss or 0) / MIB:.0f} MiB"


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f} s"


class LivePanel(QWidget):
    def __init__(self, live: LiveMetrics, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.live = live
        self.updates = 0  # how many snapshots were drawn (tests and curiosity)
        self._t0 = 0.0
        self._times: list[float] = []
        self._rtfs: list[float] = []
        self._memory: list[float] = []
        self._last_segment_rtf: float | None = None
        self._job_note = ""  # core's note on this job (a lowered batch), kept after it ends
        self._build()
        self.timer = QTimer(self)
        self.timer.setInterval(POLL_MS)
        self.timer.timeout.connect(self.poll)

    def _build(self) -> None:
        self.stage = QLabel("idle")
        self.bar = QProgressBar()
        self.bar.setRange(0, 1000)
        self.progress = QLabel("-")
        self.segment_rtf = QLabel("-")
        self.job_rtf = QLabel("-")
        self.speed = QLabel("-")
        self.first_audio = QLabel("-")
        self.eta = QLabel("-")
        self.memory = QLabel("-")
        self.memory.setWordWrap(True)
        self.note = QLabel()
        self.note.setWordWrap(True)
        form = QFormLayout()
        form.addRow("Stage", self.stage)
        form.addRow("Progress", self.progress)
        form.addRow("", self.bar)
        form.addRow("RTF (segment)", self.segment_rtf)
        form.addRow("RTF (job)", self.job_rtf)
        form.addRow("Steps / s", self.speed)
        form.addRow("First audio", self.first_audio)
        form.addRow("Time left", self.eta)
        form.addRow("Memory", self.memory)
        form.addRow("", self.note)

        pg.setConfigOptions(antialias=True)
        self.plot = pg.GraphicsLayoutWidget()
        self.plot.setMinimumHeight(200)
        self.rtf_plot = self.plot.addPlot(row=0, col=0, title="RTF (lower is faster)")
        self.memory_plot = self.plot.addPlot(row=1, col=0, title="Memory (MiB)")
        self.memory_plot.setXLink(self.rtf_plot)
        self.memory_plot.setLabel("bottom", "seconds")
        self.rtf_curve = self.rtf_plot.plot(pen=pg.mkPen("#e67e22", width=2))
        self.memory_curve = self.memory_plot.plot(pen=pg.mkPen("#2980b9", width=2))

        group = QGroupBox("Live")
        inner = QVBoxLayout(group)
        inner.addLayout(form)
        inner.addWidget(self.plot, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(group)

    # -- a job's life ----------------------------------------------------------------------
    def start(self, stage: str = "starting") -> None:
        self._t0 = time.perf_counter()
        self._times.clear()
        self._rtfs.clear()
        self._memory.clear()
        self._last_segment_rtf = None
        self._job_note = ""
        self.stage.setText(stage)
        self.note.clear()
        self.timer.start()
        self.poll()

    def segment_done(self, result: SegmentResult) -> None:
        self._last_segment_rtf = result.rtf

    def stop(self, summary: JobSummary | None = None, stage: str = "done") -> None:
        """Draw one last snapshot, then freeze the job's own figures."""
        self.timer.stop()
        self.poll()
        self.stage.setText(stage)
        self.eta.setText("-")
        if summary is not None:
            self.job_rtf.setText(f"{summary.rtf:.2f}")
            self.speed.setText(f"{summary.steps_per_second:.1f}")
            self.progress.setText(f"{summary.segments} segments done · {summary.steps} steps")
            self.first_audio.setText(_seconds(summary.first_audio_seconds))
            if summary.peak_memory:
                peak = (
                    f"Peak memory of the job: {summary.peak_memory / MIB:.0f} MiB; "
                    f"{summary.segments} segments, {summary.audio_seconds:.1f} s "
                    f"of audio in {summary.wall_seconds:.1f} s"
                )
                self.note.setText(f"{self._job_note}\n{peak}" if self._job_note else peak)

    # -- drawing ---------------------------------------------------------------------------
    def poll(self) -> None:
        self.show_snapshot(self.live.snapshot())

    def show_snapshot(self, snap: LiveSnapshot) -> None:
        self.updates += 1
        self.stage.setText(snap.stage)
        if snap.segments:
            self.progress.setText(
                f"segment {snap.segment} of {snap.segments} · steps "
                f"{snap.steps_done} of {snap.steps_planned}"
            )
        self.bar.setValue(int(snap.fraction * 1000))
        self.segment_rtf.setText(
            "-" if self._last_segment_rtf is None else f"{self._last_segment_rtf:.2f}"
        )
        self.job_rtf.setText("-" if snap.rtf is None else f"{snap.rtf:.2f}")
        self.speed.setText(f"{snap.steps_per_second:.1f}")
        self.first_audio.setText(_seconds(snap.first_audio_seconds))
        left = snap.seconds_left
        self.eta.setText("-" if left is None else f"{left:.1f} s")
        self.memory.setText(describe_memory(snap.memory))
        if snap.note:
            self._job_note = snap.note
            self.note.setText(snap.note)
        if self.timer.isActive():
            self._times.append(time.perf_counter() - self._t0)
            self._rtfs.append(snap.rtf if snap.rtf is not None else float("nan"))
            self._memory.append((snap.memory.in_use if snap.memory else 0) / MIB)
            self.rtf_curve.setData(self._times, self._rtfs, connect="finite")
            self.memory_curve.setData(self._times, self._memory)
