"""The live VRAM / RTF panel: polls the engine's thread-safe snapshot about 10 times a second
while a job runs, plots RTF and memory over time, and keeps the job's figures afterwards."""

import time

import pyqtgraph as pg
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QFormLayout, QGroupBox, QLabel, QProgressBar, QVBoxLayout, QWidget

from core.metrics import LiveMetrics, LiveSnapshot, MemorySnapshot
from core.request import JobSummary, SegmentResult

from .notices import MessageLabel, figure, plural

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
    return figure(value, ".2f", " s")


def _rate(value: float) -> str:
    """Steps per second; "-" while nothing runs (0.0 would read as a stalled job)."""
    return figure(value, ".1f") if value > 0 else "-"


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
        # While a model loads: the load's own fraction and stage (the engine's snapshot has
        # no figures then), so the bar and the progress line tell one story.
        self._load: tuple[str, float] | None = None
        self._build()
        self.timer = QTimer(self)
        self.timer.setInterval(POLL_MS)
        self.timer.timeout.connect(self.poll)

    def _build(self) -> None:
        self.stage = QLabel("idle")
        self.bar = QProgressBar()
        self.bar.setRange(0, 1000)
        self.progress = MessageLabel("-")
        self.segment_rtf = QLabel("-")
        self.job_rtf = QLabel("-")
        self.speed = QLabel("-")
        self.first_audio = QLabel("-")
        self.eta = QLabel("-")
        # Fixed heights: a long memory line or note never makes the window taller.
        self.memory = MessageLabel("-", lines=2)
        self.note = MessageLabel(lines=2)
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
        self.plot.setMinimumHeight(150)
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
        self._load = None
        self.stage.setText(stage)
        self.note.clear()
        self.timer.start()
        self.poll()

    def show_load(self, stage: str, fraction: float) -> None:
        """A load's progress, from the worker's own reports (the one source of it)."""
        self._load = (stage, max(0.0, min(1.0, fraction)))
        self.poll()

    def segment_done(self, result: SegmentResult) -> None:
        if not result.partial:  # a cancelled segment's start has no speed of its own
            self._last_segment_rtf = result.rtf

    def stop(
        self, summary: JobSummary | None = None, stage: str = "done", partial: int = 0
    ) -> None:
        """Draw one last snapshot, then freeze the job's own figures. `partial`: how many of
        the summary's segments are the kept start of a cancelled one."""
        self.timer.stop()
        self.poll()
        self._load = None
        self.stage.setText(stage)
        self.eta.setText("-")
        if summary is not None:
            done = summary.segments - partial
            made = plural(done, "segment") + (f" and {partial} partial" if partial else "")
            self.job_rtf.setText(figure(summary.rtf))
            self.speed.setText(_rate(summary.steps_per_second))
            self.progress.setText(f"{made} done · {plural(summary.steps, 'step')}")
            self.first_audio.setText(_seconds(summary.first_audio_seconds))
            if summary.peak_memory:
                peak = (
                    f"Peak memory of the job: {summary.peak_memory / MIB:.0f} MiB; "
                    f"{made}, {summary.audio_seconds:.1f} s "
                    f"of audio in {summary.wall_seconds:.1f} s"
                )
                self.note.setText(f"{self._job_note}\n{peak}" if self._job_note else peak)

    # -- drawing ---------------------------------------------------------------------------
    def poll(self) -> None:
        self.show_snapshot(self.live.snapshot())

    def show_snapshot(self, snap: LiveSnapshot) -> None:
        self.updates += 1
        self.stage.setText(snap.stage)
        fraction = snap.fraction
        if self._load is not None:
            stage, fraction = self._load
            self.progress.setText(f"{stage} · {fraction:.0%}")
        elif snap.stage == "refine" and snap.segments:
            # Read with getattr: a core without refine counts still draws the panel.
            refined = getattr(snap, "refined", 0)
            self.progress.setText(
                f"refine {refined} of {snap.segments}"
                + (f" · steps {snap.steps_done} of {snap.steps_planned}" if snap.steps_done else "")
            )
        elif snap.segments:
            self.progress.setText(
                f"segment {snap.segment} of {snap.segments} · steps "
                f"{snap.steps_done} of {snap.steps_planned}"
            )
        self.bar.setValue(int(fraction * 1000))
        self.segment_rtf.setText(figure(self._last_segment_rtf))
        self.job_rtf.setText(figure(snap.rtf))
        self.speed.setText(_rate(snap.steps_per_second))
        self.first_audio.setText(_seconds(snap.first_audio_seconds))
        self.eta.setText(figure(snap.seconds_left, ".1f", " s"))
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
