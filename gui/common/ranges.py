"""Round steps for the plots' ranges and ticks: 1, 2, 2.5 or 5 times a power of ten.

Apart from pyqtgraph (gui/common/plot_axis.py) so that the panels can size their ranges without
importing it while the window is built."""

import math

STEPS = (1.0, 2.0, 2.5, 5.0, 10.0)


def nice_step(least: float) -> float:
    """The smallest 1, 2, 2.5 or 5 times a power of ten that is at least `least`."""
    if least <= 0 or not math.isfinite(least):
        return 1.0
    power = 10.0 ** math.floor(math.log10(least))
    return next(step * power for step in STEPS if step * power >= least * (1 - 1e-9))
