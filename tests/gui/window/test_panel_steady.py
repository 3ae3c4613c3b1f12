"""The live panel and the run row while jobs come and go: the RTF plot fits the recent points
(a first point of 289 no longer flattens the curve), the status line under the editor is
cleared when a synthesis starts (the last job's "Done" is not this one's), and a long stage
text during a load never widens the window. The real window, offscreen, on the stand-in engine
(tests/standin_engine.py), and the live panel alone."""

import math

import pytest
from PySide6.QtWidgets import QApplication

from chattts_studio.core.engine.metrics import LiveMetrics
from chattts_studio.gui.panels.live import LivePanel

pytestmark = pytest.mark.window(engine="standin")


def test_the_rtf_axis_follows_the_recent_points_not_the_first(qtbot) -> None:  # type: ignore[no-untyped-def]
    panel = LivePanel(LiveMetrics())
    qtbot.addWidget(panel)
    panel.resize(600, 300)
    panel.show()
    panel.start()
    panel.timer.stop()  # the test draws, not the timer
    QApplication.processEvents()
    # A job's RTF as the window saw it: nothing before the first audio (at 10 s), then 289
    # (the work so far over a little audio), falling towards 0.5 as audio is made.
    for n in range(1, 601):
        t = 0.1 * n
        panel._times.append(t)
        panel._rtfs.append(math.nan if t < 10 else 0.5 + 288.5 / (1 + 20 * (t - 10)))
        panel._memory.append(900.0)
        if n % 4 == 0:
            panel.draw_curves()
    recent = panel._rtfs[-20:]
    _x, (bottom, top) = panel.rtf_plot.viewRange()
    assert bottom <= min(recent) and max(recent) <= top
    # The recent curve fills a quarter of the height at least: before, the axis kept 500.
    assert top <= 4 * max(recent), top


def test_the_plots_drawn_later_show_the_points_collected_before(qtbot) -> None:  # type: ignore[no-untyped-def]
    panel = LivePanel(LiveMetrics())
    qtbot.addWidget(panel)
    panel.start()  # never shown: no plots yet, the points are kept
    panel.timer.stop()
    for n in range(1, 9):
        panel._times.append(0.4 * n)
        panel._rtfs.append(0.5)
        panel._memory.append(800.0 + n)
        panel.draw_curves()
    assert panel._plots is None
    times, values = panel.memory_curve.getData()  # asking for a plot makes them
    assert list(times) == panel._times and list(values) == panel._memory
    _x, (low, high) = panel.memory_plot.viewRange()
    assert low <= 801 and high >= 808


def test_a_synthesis_clears_the_last_job_s_status_line(qtbot, make_window) -> None:  # type: ignore[no-untyped-def]
    window = make_window()
    window.editor.set_text("你好。")
    window.result.stream_box.setChecked(False)
    window.synthesis.synthesize()
    qtbot.waitUntil(lambda: window.jobs.current is None)
    assert window.messages.notice.text().startswith("Done"), window.messages.notice.text()
    at_start: list[str] = []
    window.jobs.started.connect(lambda _job: at_start.append(window.messages.notice.text()))
    window.synthesis.synthesize()
    qtbot.waitUntil(lambda: window.jobs.current is None)
    assert at_start and not at_start[0].startswith("Done"), at_start


def test_a_long_stage_text_never_widens_the_window(qtbot, make_window) -> None:  # type: ignore[no-untyped-def]
    window = make_window()
    window.resize(1200, 760)
    window.settings_tabs.setCurrentWidget(window.live)
    QApplication.processEvents()
    width = window.width()
    window.live.start("load")
    for stage in (
        "making the ONNX fp32 decode step (once per model)",
        "making the ONNX int8 decode step (once per model)",
        "starting ONNX Runtime",
    ):
        window.live.show_load(stage, 0.6)
        window.model.progress.setVisible(True)
        window.messages.show(f"Loading demo: {stage}")
        QApplication.processEvents()
        assert window.width() == width, (stage, window.width())
    window.live.stop(None, "done")
