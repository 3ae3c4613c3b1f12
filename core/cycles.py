"""Who collects reference cycles when the engine releases memory: gc.collect on the calling thread,
unless the application says otherwise, as the window does (gui/common/garbage.py). Free of torch.
"""

import gc
from collections.abc import Callable

_collect: Callable[[], object] = gc.collect


def set_cycle_collector(collect: Callable[[], object] | None) -> None:
    """Use `collect` from now on; None: Python's own, on the calling thread."""
    global _collect
    _collect = collect or gc.collect


def collect_cycles() -> None:
    _collect()
