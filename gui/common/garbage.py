"""Garbage collection on the UI thread only, while a worker thread exists.

A reference cycle holding a Qt object, collected on the worker thread, deletes that object off its
thread and PySide deadlocks. So, as pyqtgraph recommends, automatic collection is off while a
worker exists and a timer collects on the UI thread (pyqtgraph's GarbageCollector's logic, kept
here so that starting the window need not import pyqtgraph); when the engine frees a model the
worker asks the UI thread to collect and waits, briefly. The imports' objects are frozen
(gc.freeze) so that a collection stays short. Figures: docs/performance.md."""

import gc
import threading
from collections.abc import Callable

from PySide6.QtCore import QObject, Qt, QThread, QTimer, Signal, Slot

from chattts_studio.core.cycles import set_cycle_collector

WAIT_S = 10.0  # a worker waits this long at most for the UI thread's collection (a full
# collection of a process holding torch takes a second or more on a busy 2-core machine)
INTERVAL_S = 1.0  # the UI thread's collection timer


class _Request:
    """Work for the UI thread that a thread waits for; abandoned once it stops waiting, and
    then not done at all (it could come at a worse moment: a freeze in the middle of a load)."""

    def __init__(self, work: Callable[[], object]) -> None:
        self.work = work
        self.done = threading.Event()
        self.lock = threading.Lock()
        self.abandoned = False

    def run(self) -> None:
        with self.lock:
            if not self.abandoned:
                self.work()
                self.done.set()

    def wait(self, seconds: float) -> bool:
        finished = self.done.wait(seconds)
        with self.lock:  # a run under way ends first
            self.abandoned = True
            return self.done.is_set() or finished


class PeriodicCollector:
    """Automatic collection off; on a timer, each generation whose count passed Python's own
    threshold is collected (as pyqtgraph's GarbageCollector does)."""

    def __init__(self, interval: float) -> None:
        self.threshold = gc.get_threshold()
        self.timer = QTimer()
        self.timer.timeout.connect(self.check)
        gc.disable()
        self.timer.start(int(interval * 1000))

    def check(self) -> None:
        young, middle, old = gc.get_count()
        if young > self.threshold[0]:
            gc.collect(0)
            if middle > self.threshold[1]:
                gc.collect(1)
                if old > self.threshold[2]:
                    gc.collect(2)


class UiGarbage(QObject):
    """Lives on the UI thread and collects there, on a timer and when asked from any thread."""

    _requested = Signal(object)  # _Request

    def __init__(self) -> None:
        super().__init__()
        self._periodic = PeriodicCollector(INTERVAL_S)  # disables automatic gc
        self._requested.connect(self._run_here, Qt.ConnectionType.QueuedConnection)

    def on_ui_thread(self, work: Callable[[], object]) -> bool:
        """Run `work` on the UI thread, from any thread; True when it was done. From another
        thread this waits for the UI thread at most WAIT_S (the UI thread may be waiting for
        this one, e.g. while the window closes): then it is not done."""
        if QThread.currentThread() == self.thread():
            work()
            return True
        request = _Request(work)
        self._requested.emit(request)
        return request.wait(WAIT_S)

    def collect(self) -> bool:
        """Collect every generation on the UI thread (see on_ui_thread)."""
        return self.on_ui_thread(gc.collect)

    @Slot(object)
    def _run_here(self, request: _Request) -> None:
        request.run()

    def end(self) -> None:
        """Back to Python's own collection of everything, starting with one here."""
        self._periodic.timer.stop()
        gc.unfreeze()
        gc.enable()
        gc.collect()


_garbage: UiGarbage | None = None
_holders = 0


def hold() -> None:
    """On the UI thread, before a worker thread starts: collect only here from now on."""
    global _garbage, _holders
    _holders += 1
    if _garbage is None:
        _garbage = UiGarbage()
        set_cycle_collector(_garbage.collect)


def let_go() -> None:
    """On the UI thread, after the worker thread ended: the last one back to Python's own."""
    global _garbage, _holders
    _holders = max(0, _holders - 1)
    if _holders == 0 and _garbage is not None:
        garbage, _garbage = _garbage, None
        set_cycle_collector(None)
        garbage.end()


def collecting_on_ui_thread() -> bool:
    return _garbage is not None and not gc.isenabled()


def freeze_imports() -> bool:
    """From the worker, once the engine is imported and before any model is loaded: leave
    what exists now (the imported modules, nearly all of it) out of later collections, done on
    the UI thread (never in the middle of a collection there). Garbage that exists now stays
    too, until the worker ends: import-time leftovers, small. True when frozen."""
    garbage = _garbage
    return garbage is not None and garbage.on_ui_thread(gc.freeze)
