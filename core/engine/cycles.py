"""Who collects reference cycles when the engine releases memory (a model unloaded).

Python's own gc.collect, on the calling thread, unless an application says otherwise: a Qt
window does while it is open (gui/common/garbage.py), because a cycle holding a Qt object must be
collected on the UI thread, and a collection on the worker thread that reaches one deadlocks
PySide. Kept free of torch so that the window can set it before torch is imported."""

import gc
from collections.abc import Callable

_collect: Callable[[], object] = gc.collect


def set_cycle_collector(collect: Callable[[], object] | None) -> None:
    """Use `collect` from now on; None: Python's own, on the calling thread."""
    global _collect
    _collect = collect or gc.collect


def collect_cycles() -> None:
    _collect()
