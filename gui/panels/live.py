"""The live VRAM / RTF panel: polls the engine's snapshot about 10 times a second while a job runs,
plots RTF and memory, and keeps the job's figures. The plots (live_plots.py) are made after first
paint.
"""

import math
import time
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QTimer
from PySide6.QtGui import QPaintEvent
from PySide6.QtWidgets import QGridLayout, QLabel, QProgressBar, QVBoxLayout, QWidget

from chattts_studio.core.engine.metrics import LiveMetrics, LiveSnapshot
from chattts_studio.core.engine.request import JobSummary, SegmentResult
from chattts_studio.gui.common.notices import MessageLabel, figure, plural
from chattts_studio.gui.common.ranges import nice_step
from chattts_studio.gui.common.theme import notifier
from chattts_studio.gui.i18n import translate
from chattts_studio.gui.panels.live_text import (
    ENDED,
    MIB,
    describe_memory,
    engine_progress,
    rate_text,
    seconds_text,
    stage_text,
)

if TYPE_CHECKING:
    import pyqtgraph as pg

    from chattts_studio.gui.panels.live_plots import LivePlots

POLL_MS = 100
PLOT_EVERY = 4  # the plots are redrawn every 4th poll (2.5 times a second)
RECENT_POINTS = 20  # the RTF axis fits the last 2 s of points (_fit_ranges)
PLOT_MIN_HEIGHT = (
    190  # two plots whose tick labels stay apart (tests/gui/window/test_window_fit.py)
)


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
        # A job that reports its own progress (a load, project takes and checks, a render):
        # its stage, fraction (negative: unknown) and detail drive the bar, the progress line
        # and the time left, so they tell one story whatever the engine does meanwhile.
        self._load: tuple[str, float, str] | None = None
        # The engine's job number that belongs to an earlier job: its figures are not shown
        # until the engine starts a job of its own for this one.
        self._stale_job: int | None = None
        self._start_stage = "idle"
        # The plots' shown ranges (x end, RTF top, memory bottom and top): they grow in nice
        # steps, not with every point, so most redraws leave the axes as they were.
        self._limits: tuple[float, float, float, float] | None = None
        self._plots: LivePlots | None = None  # made after the first paint (plots())
        self._build()
        self.timer = QTimer(self)
        self.timer.setInterval(POLL_MS)
        self.timer.timeout.connect(self.poll)

    def _build(self) -> None:
        # A stage's name can be long ("making the ONNX fp32 decode step…"): elided, it never
        # widens the window.
        self.stage = MessageLabel(stage_text("idle"))
        self.bar = QProgressBar()
        self.bar.setRange(0, 1000)
        self.bar.setAccessibleName(translate("Live", "Job progress"))
        self.progress = MessageLabel("-")
        self.segment_rtf = QLabel("-")
        self.job_rtf = QLabel("-")
        self.speed = QLabel("-")
        self.first_audio = QLabel("-")
        self.eta = QLabel("-")
        self.speaking = QLabel("-")  # a dialogue's speaker of the segment that just came
        self.speaking.setAccessibleName(translate("Live", "Speaking"))
        # Fixed heights: a long memory line or note never makes the window taller.
        self.memory = MessageLabel("-", lines=2)
        self.note = MessageLabel(lines=2)
        # Two figures a row: the plots get the height (at 1280x800 they were squeezed).
        grid = QGridLayout()
        grid.setVerticalSpacing(2)
        grid.setColumnStretch(1, 1)
        grid.setColumnStretch(3, 1)
        pairs = (
            (translate("Live", "Stage"), self.stage, translate("Live", "Time left"), self.eta),
            (
                translate("Live", "RTF (segment)"),
                self.segment_rtf,
                translate("Live", "RTF (job)"),
                self.job_rtf,
            ),
            (
                translate("Live", "Steps / s"),
                self.speed,
                translate("Live", "First audio"),
                self.first_audio,
            ),
        )
        for row, (left, left_value, right, right_value) in enumerate(pairs):
            grid.addWidget(QLabel(left), row, 0)
            grid.addWidget(left_value, row, 1)
            grid.addWidget(QLabel(right), row, 2)
            grid.addWidget(right_value, row, 3)
        # The progress line gets the panel's whole width (it says the most); who speaks (a
        # dialogue) shares the bar's row: no taller panel for it.
        at = len(pairs)
        grid.addWidget(QLabel(translate("Live", "Progress")), at, 0)
        grid.addWidget(self.progress, at, 1, 1, 3)
        grid.addWidget(self.bar, at + 1, 1)
        grid.addWidget(QLabel(translate("Live", "Speaking")), at + 1, 2)
        grid.addWidget(self.speaking, at + 1, 3)
        wide = ((translate("Live", "Memory"), self.memory), ("", self.note))
        for row, (label, widget) in enumerate(wide, start=at + 2):
            grid.addWidget(QLabel(label), row, 0)
            grid.addWidget(widget, row, 1, 1, 3)

        # The plots' place, held by a blank of their size until they are made.
        self._plot_slot = QWidget()
        self._plot_slot.setMinimumHeight(PLOT_MIN_HEIGHT)
        notifier().changed.connect(self._apply_colours)

        # No frame or title of its own: the window's "Live" tab names it.
        self._layout = QVBoxLayout(self)
        self._layout.addLayout(grid)
        self._layout.addWidget(self._plot_slot, 1)

    def paintEvent(self, event: QPaintEvent) -> None:  # Qt's name
        super().paintEvent(event)
        if self._plots is None:  # the plots come once this paint is on screen
            QTimer.singleShot(0, self, self.plots)  # none once the panel is gone

    def plots(self) -> "LivePlots":
        """The plots, made on first use in the blank's place, with the points so far."""
        if self._plots is None:
            from chattts_studio.gui.panels.live_plots import LivePlots

            self._plots = LivePlots(PLOT_MIN_HEIGHT)
            self._plots.apply_colours(self.palette())
            self._layout.replaceWidget(self._plot_slot, self._plots.widget)
            self._plot_slot.deleteLater()
            self._limits = None  # the new axes take the ranges of the points so far
            self.draw_curves()
        return self._plots

    # The plots' parts, made when first asked for (tests and the window's checks).
    @property
    def plot(self) -> "pg.GraphicsLayoutWidget":
        return self.plots().widget

    @property
    def rtf_plot(self) -> "pg.PlotItem":
        return self.plots().rtf_plot

    @property
    def memory_plot(self) -> "pg.PlotItem":
        return self.plots().memory_plot

    @property
    def rtf_curve(self) -> "pg.PlotDataItem":
        return self.plots().rtf_curve

    @property
    def memory_curve(self) -> "pg.PlotDataItem":
        return self.plots().memory_curve

    def _apply_colours(self) -> None:
        if self._plots is not None:  # made later, they take the palette then
            self._plots.apply_colours(self.palette())

    def changeEvent(self, event: QEvent) -> None:  # Qt's name
        if event.type() in (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange):
            self._apply_colours()  # the system switched between light and dark
        super().changeEvent(event)

    # -- a job's life ----------------------------------------------------------------------
    def start(self, stage: str = "starting") -> None:
        """`stage`: an English stage name (see stage_text), shown translated."""
        self._t0 = time.perf_counter()
        self._times.clear()
        self._rtfs.clear()
        self._memory.clear()
        self._limits = None
        self._last_segment_rtf = None
        self._job_note = ""
        self._load = None
        snap = self.live.snapshot()
        self._stale_job = snap.job if snap.stage in ENDED else None
        self.stage.setText(stage_text(stage))
        self._start_stage = stage
        self.note.clear()
        self.speaking.setText("-")
        for label in (self.progress, self.segment_rtf, self.job_rtf, self.speed, self.eta):
            label.setText("-")
        self.first_audio.setText("-")
        self._set_fraction(0.0)
        self.timer.start()
        self.poll()

    def show_load(self, stage: str, fraction: float) -> None:
        """A load's progress, from the worker's own reports (the one source of it)."""
        self.show_job(stage, max(0.0, min(1.0, fraction)))

    def show_job(self, stage: str, fraction: float, detail: str = "") -> None:
        """The running job's own progress (see _load): `fraction` 0..1, negative if unknown."""
        self._load = (stage, min(1.0, fraction), detail)
        self.poll()

    def segment_done(self, result: SegmentResult) -> None:
        if not result.partial:  # a cancelled segment's start has no speed of its own
            self._last_segment_rtf = result.rtf

    def stop(
        self,
        summary: JobSummary | None = None,
        stage: str = "done",
        partial: int = 0,
        audio_seconds: float | None = None,
    ) -> None:
        """Draw one last snapshot, then freeze the job's own figures. `partial`: how many of
        the summary's segments are the kept start of a cancelled one; `audio_seconds`: the
        result's length as the window shows it everywhere (pauses between segments in)."""
        if self.timer.isActive():  # a second stop keeps the first's last snapshot
            self.timer.stop()
            self.poll()
            self.draw_curves()  # the points since the last redraw
        self._load = None
        self._stale_job = None  # what comes after the job is shown as it is
        self.stage.setText(stage_text(stage))
        self.eta.setText("-")
        if stage == "done":
            self._set_fraction(1.0)
        if summary is not None:
            done = summary.segments - partial
            made = plural(done, "segment")
            if partial:
                made = translate("Live", "{made} and {partial} partial").format(
                    made=made, partial=partial
                )
            self.job_rtf.setText(figure(summary.rtf))
            self.speed.setText(rate_text(summary.steps_per_second))
            self.progress.setText(
                translate("Live", "{made} done · {steps}").format(
                    made=made, steps=plural(summary.steps, "step")
                )
            )
            self.first_audio.setText(seconds_text(summary.first_audio_seconds))
            if summary.peak_memory:
                peak = translate(
                    "Live",
                    "Peak memory of the job: {peak:.0f} MiB; {made}, {audio:.1f} s of audio in "
                    "{wall:.1f} s",
                ).format(
                    peak=summary.peak_memory / MIB,
                    made=made,
                    audio=summary.audio_seconds if audio_seconds is None else audio_seconds,
                    wall=summary.wall_seconds,
                )
                self.note.setText(f"{self._job_note}\n{peak}" if self._job_note else peak)

    # -- drawing ---------------------------------------------------------------------------
    def draw_curves(self) -> None:
        plots = self._plots
        if plots is None:  # not made yet: they draw the points when they are
            return
        plots.rtf_curve.setData(self._times, self._rtfs, connect="finite")
        plots.memory_curve.setData(self._times, self._memory)
        self._fit_ranges(plots)

    def _fit_ranges(self, plots: "LivePlots") -> None:
        """Show every point, with ranges that change only when a point leaves them: an axis
        whose range moved lays its ticks and labels out again at the next paint, the largest
        part of a redraw on the UI thread (with ranges that followed the data, every redraw).
        The RTF axis fits the recent points: the job's RTF starts high (work before the first
        audio over a little audio) and falls, and a first point of 289 kept in view left the
        rest a flat line. Higher points before run off the top; it narrows in steps too."""
        if not self._times or not self._memory:
            return
        end, low, high = self._times[-1], min(self._memory), max(self._memory)
        recent = [r for r in self._rtfs[-RECENT_POINTS:] if math.isfinite(r)]
        top = max(recent, default=0.0)
        x_end, rtf_top, mem_low, mem_high = self._limits or (0.0, 0.0, math.inf, -math.inf)
        if end > x_end:
            x_end = nice_step(end * 1.25)
            plots.rtf_plot.setXRange(0, x_end, padding=0)  # the memory plot's x is linked
        if top > rtf_top or 0 < top < rtf_top / 4:
            rtf_top = nice_step(top * 1.25)
            plots.rtf_plot.setYRange(0, rtf_top, padding=0)
        if low < mem_low or high > mem_high:
            # A step about a quarter of the span: one below the data, two above (memory
            # mostly grows), never narrower than before within the job.
            step = nice_step(max(high - low, high * 0.05, 4.0) / 4)
            mem_low = min(mem_low, max(0.0, (math.floor(low / step) - 1) * step))
            mem_high = max(mem_high, (math.ceil(high / step) + 2) * step)
            plots.memory_plot.setYRange(mem_low, mem_high, padding=0)
        self._limits = (x_end, rtf_top, mem_low, mem_high)

    def poll(self) -> None:
        self.show_snapshot(self.live.snapshot())

    def _show_own(self, stage: str, fraction: float, detail: str) -> None:
        """A job's own progress; its time left from its rate so far (its fraction over the
        time since it started), "-" until it has moved."""
        self.stage.setText(stage_text(stage))
        known = fraction >= 0
        self.progress.setText(detail or (f"{fraction:.0%}" if known else stage_text(stage)))
        self._set_fraction(fraction if known else None)
        elapsed = time.perf_counter() - self._t0
        left = elapsed * (1 - fraction) / fraction if 0.01 <= fraction < 1 else None
        self.eta.setText(figure(max(0.1, left) if left is not None else None, ".1f", " s"))

    def _set_fraction(self, fraction: float | None) -> None:
        """The bar at `fraction`, or busy (moving, no figure) while it is unknown."""
        if fraction is None:
            self.bar.setRange(0, 0)
            self.bar.setValue(0)  # no figure kept from before: none is known
            return
        self.bar.setRange(0, 1000)
        self.bar.setValue(int(fraction * 1000))

    def show_snapshot(self, snap: LiveSnapshot) -> None:
        self.updates += 1
        stale = snap.job == self._stale_job
        if self._load is not None:
            self._show_own(*self._load)
        elif stale:
            self.stage.setText(stage_text(self._start_stage))
            self._set_fraction(0.0)  # nothing of this job measured yet
        else:
            self.stage.setText(stage_text(snap.stage))
            self.progress.setText(engine_progress(snap))
            known = snap.work_left is not None or snap.fraction > 0 or snap.stage in ENDED
            self._set_fraction(snap.fraction if known else None)
            self.eta.setText(figure(snap.seconds_left, ".1f", " s"))
        rtf = None if stale else snap.rtf
        if not stale:
            self.segment_rtf.setText(figure(self._last_segment_rtf))
            self.job_rtf.setText(figure(rtf))
            self.speed.setText(rate_text(snap.steps_per_second))
            self.first_audio.setText(seconds_text(snap.first_audio_seconds))
            if snap.note:
                self._job_note = snap.note
                self.note.setText(snap.note)
        self.memory.setText(describe_memory(snap.memory))
        if self.timer.isActive():
            self._times.append(time.perf_counter() - self._t0)
            self._rtfs.append(rtf if rtf is not None else float("nan"))
            self._memory.append((snap.memory.in_use if snap.memory else 0) / MIB)
            # The figures change 10 times a second, the plots PLOT_EVERY times fewer: a
            # repaint of both plots costs tens of ms of the UI thread.
            if self.updates % PLOT_EVERY == 0:
                self.draw_curves()
