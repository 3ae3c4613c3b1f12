"""A pyqtgraph axis whose tick labels never crowd: ticks are spaced by the size of their text, since
pyqtgraph spaces them by the axis length alone and labels touch on a short plot.
"""

import pyqtgraph as pg

from chattts_studio.gui.common.ranges import nice_step

GAP = 1.6  # a label's room along the axis, in label sizes (text plus a gap of 0.6 of it)


class ReadableAxis(pg.AxisItem):
    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        # An SI prefix re-lays out the label on every range change (a paint costs more on
        # the UI thread for nothing: seconds, MiB and RTF read fine without one).
        self.enableAutoSIPrefix(False)

    def label_extent(self) -> float:
        """Room one tick label takes along the axis, in pixels."""
        metrics = pg.QtGui.QFontMetricsF(self.style["tickFont"] or self.font())
        if self.orientation in ("left", "right"):
            return metrics.height()
        return metrics.horizontalAdvance("00000")  # "0.25", "1000", "12.5": up to five

    def tickSpacing(  # pyqtgraph's name
        self, minVal: float, maxVal: float, size: float
    ) -> list[tuple[float, float]]:
        span = abs(maxVal - minVal)
        if span == 0 or size <= 0:
            return super().tickSpacing(minVal, maxVal, size)
        most = max(1, int(size / (self.label_extent() * GAP)))  # labels that fit
        levels = [
            (spacing, offset)
            for spacing, offset in super().tickSpacing(minVal, maxVal, size)
            if span / spacing <= most
        ]
        if not levels:  # even pyqtgraph's widest spacing is too dense for this length
            levels = [(nice_step(span / most), 0)]
        return levels[:1]  # labelled major ticks only: minor ones would fill the gaps again
