"""The result's waveform (pyqtgraph): the audio's envelope and a cursor that seeks, made at the
panel's first paint (gui/result/panel.py), since importing pyqtgraph costs most of a second.
"""

from typing import TYPE_CHECKING

import numpy as np
import pyqtgraph as pg

if TYPE_CHECKING:
    from chattts_studio.core.results.result_store import ResultStore


class Waveform:
    """The plot widget, its curve and its cursor (the playing position, in seconds)."""

    def __init__(self, min_height: int, max_height: int) -> None:
        self.widget = pg.PlotWidget()
        self.widget.setMinimumHeight(min_height)
        self.widget.setMaximumHeight(max_height)
        self.widget.setMouseEnabled(x=False, y=False)
        self.widget.hideAxis("left")
        self.widget.setYRange(-1, 1)
        self.curve = self.widget.plot(pen=pg.mkPen("#16a085"))
        self.cursor = pg.InfiniteLine(0, movable=True, pen=pg.mkPen("#c0392b", width=2))
        self.widget.addItem(self.cursor)

    def draw(self, store: "ResultStore | None", seconds: float) -> None:
        """The store's envelope over `seconds` of time axis, the height fitted to its peak."""
        if store is None:
            times, values = np.zeros(0), np.zeros(0, dtype=np.float32)
            peak = 1.0
        else:
            times, values = store.envelope.points()
            peak = store.envelope.peak() or 1.0
        self.curve.setData(times, values)
        # The envelope keeps every bucket's extremes: its peak is the audio's, read cheaply.
        peak = max(peak, 0.01)
        self.widget.setYRange(-peak, peak, padding=0.05)
        self.widget.setXRange(0, seconds, padding=0)
