"""The window on a small screen, in light and dark, and by keyboard: it fits 1280x800,
the live plots' tick labels never collide, the colours it draws itself stay readable in both
schemes, and Tab reaches every control, each with a name a screen reader can say."""

import itertools

import pytest
from conftest import window_maker
from PySide6.QtCore import Qt
from PySide6.QtGui import QAccessible, QFontMetricsF, QImage, QPainter
from PySide6.QtTest import QTest
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractItemView,
    QAbstractSlider,
    QAbstractSpinBox,
    QApplication,
    QComboBox,
    QLineEdit,
    QPlainTextEdit,
    QRadioButton,
    QTabBar,
    QWidget,
)

from chattts_studio.gui.app import application
from chattts_studio.gui.common.theme import apply_scheme, contrast, plot_colours, strip_colours

SCREEN = (1280, 800)
ROOM_FOR_PANELS = 60  # a title bar and a desktop panel take about this much of the height
INTERACTIVE = (
    QAbstractButton,
    QComboBox,
    QAbstractSlider,
    QAbstractSpinBox,
    QLineEdit,
    QPlainTextEdit,
    QAbstractItemView,
    QTabBar,
)


@pytest.fixture
def window(qtbot, private_home):  # type: ignore[no-untyped-def]
    """The real window, shown, once the worker has found the devices (all controls exist)."""
    maker = window_maker(qtbot, lambda w: True)
    make = next(maker)
    shown = make(None, wait=False)
    qtbot.waitUntil(lambda: shown.controls.ready, timeout=120_000)
    yield shown
    next(maker, None)


def test_the_window_fits_a_1280x800_screen(window) -> None:  # type: ignore[no-untyped-def]
    window.messages.warn(
        "A problem found at start stays in view."
    )  # the alert strip, as tall as it gets
    assert window.model.banner.isVisible() and window.messages.alert.isVisible()
    hint = window.minimumSizeHint()
    assert hint.width() <= SCREEN[0], hint
    assert hint.height() <= SCREEN[1] - ROOM_FOR_PANELS, hint
    window.resize(hint)
    QApplication.processEvents()
    assert window.height() <= SCREEN[1] - ROOM_FOR_PANELS


def _label_rects(axis):  # type: ignore[no-untyped-def]
    image = QImage(10, 10, QImage.Format.Format_ARGB32)
    painter = QPainter(image)
    try:
        _axis_spec, _ticks, texts = axis.generateDrawSpecs(painter)
    finally:
        painter.end()
    return [(rect, text) for rect, _flags, text in texts]


def _assert_labels_apart(axis, where: str) -> None:  # type: ignore[no-untyped-def]
    """Labels in full font height (pyqtgraph measures 0.8 of it), with a gap between them."""
    metrics = QFontMetricsF(axis.style["tickFont"] or axis.font())
    labels = _label_rects(axis)
    vertical = axis.orientation in ("left", "right")
    centres = sorted(
        (rect.center().y() if vertical else rect.center().x(), rect.width(), text)
        for rect, text in labels
    )
    for (a, width_a, text_a), (b, width_b, text_b) in itertools.pairwise(centres):
        # Apart by a line and a third: touching lines of digits read as one number.
        room = (
            metrics.height() * 1.3
            if vertical
            else (width_a + width_b) / 2 + 2 * metrics.averageCharWidth()
        )
        assert b - a >= room, f"{where}: {text_a!r} and {text_b!r} overlap ({b - a:.1f} px)"
    return None


@pytest.mark.parametrize("size", ["screen", "minimum"])
def test_live_plot_tick_labels_never_overlap(window, size: str) -> None:  # type: ignore[no-untyped-def]
    live = window.live
    times = [i * 0.3 for i in range(100)]
    live.rtf_curve.setData(times, [0.2 + 0.002 * i for i in range(100)])
    live.memory_curve.setData(times, [850 + i for i in range(100)])
    window.resize(*SCREEN) if size == "screen" else window.resize(window.minimumSizeHint())
    for _ in range(5):
        QApplication.processEvents()
    for plot, name in ((live.rtf_plot, "RTF"), (live.memory_plot, "memory")):
        left = plot.getAxis("left")
        # A scale to read: two values on a screen, at least one in the smallest window.
        least = 2 if size == "screen" else 1
        assert len(_label_rects(left)) >= least, f"{name}: no scale to read at {size}"
        _assert_labels_apart(left, f"{name} left axis at {size}")
        _assert_labels_apart(plot.getAxis("bottom"), f"{name} time axis at {size}")
    assert len(_label_rects(live.memory_plot.getAxis("bottom"))) >= 2


@pytest.mark.parametrize("scheme", [Qt.ColorScheme.Dark, Qt.ColorScheme.Light])
def test_light_and_dark_schemes_keep_every_drawn_colour_readable(window, scheme) -> None:  # type: ignore[no-untyped-def]
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    try:
        # As the desktop's switch would: the signal the window follows.
        app.styleHints().colorSchemeChanged.emit(scheme)
        QApplication.processEvents()
        dark = scheme == Qt.ColorScheme.Dark
        application()  # what every later window does first: it keeps the scheme
        palette = window.palette()
        assert (palette.color(palette.ColorRole.Window).lightness() < 128) == dark
        colours = plot_colours(palette)
        live = window.live
        assert live.plot.backgroundBrush().color() == colours.background
        assert contrast(colours.text, colours.background) >= 4.5
        axis = live.rtf_plot.getAxis("left")
        assert contrast(axis.textPen().color(), colours.background) >= 4.5
        for curve in (live.rtf_curve, live.memory_curve):
            assert contrast(curve.opts["pen"].color(), colours.background) >= 3.0
        for kind, strip in (("banner", window.model.banner), ("alert", window.messages.alert)):
            background, text = strip_colours(kind, dark)
            assert contrast(text, background) >= 4.5, kind
            assert background.name() in strip.styleSheet(), f"{kind} did not follow the scheme"
    finally:
        apply_scheme(app, Qt.ColorScheme.Light)


def _reachable(window) -> list[QWidget]:  # type: ignore[no-untyped-def]
    """Every control a person could use now: visible, enabled, taking focus by Tab."""
    found = []
    for widget in window.findChildren(QWidget):
        if widget.window() is not window or not isinstance(widget, INTERACTIVE):
            continue
        if not (widget.isVisible() and widget.isEnabled()):
            continue
        if not widget.focusPolicy() & Qt.FocusPolicy.TabFocus:
            continue
        if isinstance(widget.parent(), QAbstractSpinBox | QComboBox):
            continue  # the line edit inside a spin box or combo box is part of it
        found.append(widget)
    return found


def _tab_through(window, start: QWidget, limit: int = 200) -> set[QWidget]:  # type: ignore[no-untyped-def]
    start.setFocus(Qt.FocusReason.OtherFocusReason)
    seen: set[QWidget] = set()
    for _ in range(limit):
        current = window.focusWidget()
        assert current is not None, "the focus left the window"
        if current in seen:
            break
        seen.add(current)
        QTest.keyClick(current, Qt.Key.Key_Tab)
    return seen


def _named(widget: QWidget) -> bool:
    if widget.accessibleName().strip():
        return True
    interface = QAccessible.queryAccessibleInterface(widget)
    said = interface.text(QAccessible.Text.Name) if interface is not None else ""
    # A button says its own text; other controls need a name of their own (Qt otherwise
    # borrows the surrounding group box's title, which names nothing).
    return isinstance(widget, QAbstractButton) and any(c.isalpha() for c in said)


def test_tab_reaches_every_control_and_each_has_a_name(window, qtbot, tmp_path) -> None:  # type: ignore[no-untyped-def]
    # The render queue dock shown, with a job row (added quietly: no render starts).
    queue = window.render_jobs.queue
    queue.folder = tmp_path
    queue.blockSignals(True)
    try:
        assert queue.add(None, "A chapter to render.", "Chapter") is not None
    finally:
        queue.blockSignals(False)
    window.render_jobs.show_queue()
    window.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window, timeout=5_000)
    assert queue.isVisible() and queue.cancel_button.isEnabled()
    dock_controls = {queue.jobs, queue.format_box, queue.cancel_button, queue.add_text_button}
    tabs = window.settings_tabs
    missed, unnamed = [], []
    for index in range(tabs.count()):
        tabs.setCurrentIndex(index)
        QApplication.processEvents()
        reached = _tab_through(window, window.editor.editor)
        reachable = _reachable(window)
        assert dock_controls <= set(reachable), "the dock's controls are not in the walk"
        for widget in reachable:
            # Radio buttons of one group are one stop: arrows move between them.
            group = widget.group() if isinstance(widget, QRadioButton) else None
            one_stop = group is not None and any(b in reached for b in group.buttons())
            if widget not in reached and not one_stop:
                missed.append(f"{type(widget).__name__} {widget.accessibleName() or widget}")
            if not _named(widget):
                unnamed.append(f"{type(widget).__name__} {widget.objectName() or widget}")
    assert not missed, f"Tab never reaches: {missed}"
    assert not unnamed, f"no accessible name: {unnamed}"
    assert len(reached) >= 15  # the walk really went through the window


@pytest.mark.parametrize("height", [60, 90, 140])
def test_a_short_plot_spaces_its_tick_labels(qtbot, height: int) -> None:  # type: ignore[no-untyped-def]
    """Where pyqtgraph's own axis stacks three or four labels edge to edge (the RTF plot at
    an older default size), the readable axis keeps them apart."""
    import pyqtgraph as pg

    from chattts_studio.gui.common.plot_axis import ReadableAxis

    widget = pg.PlotWidget(axisItems={"left": ReadableAxis("left")})
    qtbot.addWidget(widget)
    widget.plot([0, 10, 20, 30], [0.2, 0.4, 0.25, 0.35])
    widget.resize(300, height)
    widget.show()
    for _ in range(3):
        QApplication.processEvents()
    axis = widget.getPlotItem().getAxis("left")
    assert len(_label_rects(axis)) >= 1
    _assert_labels_apart(axis, f"a plot {height} px high")
