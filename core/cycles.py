"""Who collects reference cycles when the engine releases memory (a model unloaded): Python's
gc.collect on the calling thread, unless an application says otherwise, as the window does
(gui/common/garbage.py: Qt objects must be collected on the UI thread). Free of torch, so the
window can set it before torch is imported."""

import gc
from collections.abc import Callable

_collect: Callable[[], object] = gc.collect


def set_cycle_collector(collect: Callable[[], object] | None) -> None:
    """Use `collect` from now on; None: Python's own, on the calling thread."""
    global _collect
    _collect = collect or gc.collect


def collect_cycles() -> None:
    _collect()
