"""The live plots, and the result's waveform while audio arrives, keep every point in view with
ranges that grow in steps: a range that moves makes its axis lay out its ticks again at the
next paint (the largest part of a redraw on the UI thread), so a run of many redraws re-lays
the axes out only a few times."""

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6.QtWidgets import QApplication

from chattts_studio.core import SAMPLE_RATE
from chattts_studio.core.engine.metrics import LiveMetrics
from chattts_studio.core.engine.request import AudioChunk
from chattts_studio.gui.panels.live import LivePanel
from chattts_studio.gui.result.panel import ResultPanel


@pytest.fixture
def layouts(monkeypatch: pytest.MonkeyPatch) -> list[pg.AxisItem]:
    """Each axis laid out, once per layout (pyqtgraph's generateDrawSpecs)."""
    laid_out: list[pg.AxisItem] = []
    real = pg.AxisItem.generateDrawSpecs

    def counted(self, painter):  # type: ignore[no-untyped-def]
        laid_out.append(self)
        return real(self, painter)

    monkeypatch.setattr(pg.AxisItem, "generateDrawSpecs", counted)
    return laid_out


def test_every_point_stays_in_view_and_the_axes_rarely_move(qtbot, layouts) -> None:  # type: ignore[no-untyped-def]
    panel = LivePanel(LiveMetrics())
    qtbot.addWidget(panel)
    panel.resize(600, 300)
    panel.show()
    panel.start()
    panel.timer.stop()  # the test draws, not the timer
    QApplication.processEvents()
    redraws = 120
    layouts.clear()
    for n in range(1, redraws + 1):  # a 48 s run, one redraw every 0.4 s
        panel._times.append(0.4 * n)
        panel._rtfs.append(float("nan") if n < 3 else 0.3 + 0.001 * n)  # no RTF at first
        panel._memory.append(2400.0 + 2.0 * n)  # memory creeping up
        panel.draw_curves()
        QApplication.processEvents()  # paint, as the event loop would
        for plot, values in ((panel.rtf_plot, panel._rtfs), (panel.memory_plot, panel._memory)):
            (x0, x1), (y0, y1) = plot.viewRange()
            assert x0 <= 0 and x1 >= panel._times[-1]
            finite = [v for v in values if v == v]
            assert all(y0 <= v <= y1 for v in finite), (plot, y0, y1)
    # Four axes (two plots, left and bottom). With ranges that followed the data each was laid
    # out again at every redraw (478 layouts measured); in steps, 16.
    assert 0 < len(layouts) <= 40, len(layouts)
    panel.stop()  # a new job starts with ranges of its own
    panel.start()
    assert panel._limits is None


def test_the_waveform_time_axis_grows_in_steps_while_audio_arrives(qtbot, layouts) -> None:  # type: ignore[no-untyped-def]
    panel = ResultPanel()
    qtbot.addWidget(panel)
    panel.stream_box.setChecked(False)  # drawn, not played
    panel.resize(700, 300)
    panel.show()
    panel.timer.stop()  # the test draws, not the timer
    panel.begin(0.0)
    time_axis = panel.waveform.getPlotItem().getAxis("bottom")
    layouts.clear()
    rng = np.random.default_rng(5)
    chunks = 60  # 15 s arriving a quarter second at a time, a redraw after each
    for n in range(chunks):
        piece = rng.uniform(-0.5, 0.5, SAMPLE_RATE // 4).astype(np.float32)
        panel.add_chunk(AudioChunk(0, piece, n == chunks - 1))
        panel._tick()
        QApplication.processEvents()
        (_x0, x1), _ = panel.waveform.viewRange()
        assert x1 >= panel.length / SAMPLE_RATE - 1e-9  # every sample in view
    # Following the length, the time axis was laid out again at 59 of the 60 redraws; in
    # steps, 6 (measured).
    assert 0 < layouts.count(time_axis) <= 12, layouts.count(time_axis)
    panel.end(None)
    QApplication.processEvents()
    (_x0, x1), _ = panel.waveform.viewRange()
    assert x1 == panel.length / SAMPLE_RATE  # the finished result fits exactly
