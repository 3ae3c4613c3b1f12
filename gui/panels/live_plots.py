"""The live panel's two plots (RTF and memory over time), drawn with pyqtgraph, made at the panel's
first paint (gui/panels/live.py), since importing pyqtgraph costs most of a second.
"""

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QPalette

from chattts_studio.gui.common.plot_axis import ReadableAxis
from chattts_studio.gui.common.theme import plot_colours
from chattts_studio.gui.i18n import translate

AXIS_WIDTH = 44


class LivePlots:
    """The plots' widget, their two plot items and a curve in each."""

    def __init__(self, min_height: int) -> None:
        pg.setConfigOptions(antialias=True)
        self.widget = pg.GraphicsLayoutWidget()
        self.widget.setMinimumHeight(min_height)
        self.widget.setAccessibleName(translate("Live", "RTF and memory over time"))
        self.widget.setToolTip(
            translate("Live", "RTF (lower is faster)") + "\n" + translate("Live", "Memory (MiB)")
        )
        self.widget.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # a picture: nothing to do with keys
        self.rtf_plot = self.widget.addPlot(
            row=0, col=0, axisItems={"left": ReadableAxis("left"), "bottom": ReadableAxis("bottom")}
        )
        self.memory_plot = self.widget.addPlot(
            row=1, col=0, axisItems={"left": ReadableAxis("left"), "bottom": ReadableAxis("bottom")}
        )
        self.memory_plot.setXLink(self.rtf_plot)
        # One time axis, under the lower plot: the upper one's would collide with its title.
        self.rtf_plot.getAxis("bottom").setStyle(showValues=False)
        for item in (self.rtf_plot, self.memory_plot):
            item.setMouseEnabled(x=False, y=False)
            item.hideButtons()
            item.getAxis("left").setWidth(AXIS_WIDTH)  # both plots' data areas line up
        self.rtf_curve = self.rtf_plot.plot()
        self.memory_curve = self.memory_plot.plot()

    def apply_colours(self, palette: QPalette) -> None:
        """The plots in the palette's colours (light or dark), curves readable on them."""
        colours = plot_colours(palette)
        self.widget.setBackground(colours.background)
        # Short axis names, not titles: a title line per plot took the height the tick labels
        # need on a 1280x800 screen. The long names are the plot's tooltip.
        names = ((self.rtf_plot, "RTF"), (self.memory_plot, "MiB"))
        for item, name in names:
            item.setLabel("left", name, color=colours.text.name())
            for side in ("left", "bottom"):
                axis = item.getAxis(side)
                axis.setPen(colours.text)
                axis.setTextPen(colours.text)
        self.memory_plot.setLabel("bottom", translate("Live", "seconds"), color=colours.text.name())
        self.rtf_curve.setPen(pg.mkPen(colours.rtf, width=2))
        self.memory_curve.setPen(pg.mkPen(colours.memory, width=2))
