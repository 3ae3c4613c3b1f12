"""The result's waveform (pyqtgraph): the audio's envelope and a cursor that seeks, made at the
panel's first paint (gui/result/panel.py), since importing pyqtgraph costs most of a second.
"""

import pyqtgraph as pg


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
