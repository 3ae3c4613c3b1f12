"""The worker's host on the UI thread: owns the worker's QThread, numbers the jobs and hands each op
to the worker through a queued signal. Inline (tests only), the worker stays on the UI thread and
its thread never starts.
"""

import sys

from PySide6.QtCore import QCoreApplication, QEvent, QObject, Qt, QThread, Signal

from chattts_studio.core.engine.metrics import LiveMetrics
from chattts_studio.gui.common import garbage
from chattts_studio.gui.worker.jobs import Job, Outcome
from chattts_studio.gui.worker.ops import Op
from chattts_studio.gui.worker.worker import EngineFactory, Worker

# While the worker thread runs, a thread that wants the GIL gets it within 1 ms instead of
# Python's 5 ms: the UI thread takes it back each time it returns from Qt, and each wait for a
# busy worker would otherwise stall it (docs/performance.md).
GIL_SWITCH_S = 0.001


class WorkerHost(QObject):
    """Lives on the UI thread: owns the QThread, numbers the jobs and forwards ops."""

    _probe = Signal()
    _run = Signal(object, object)
    _end_serving = Signal()

    def __init__(
        self,
        parent: QObject | None = None,
        *,
        inline: bool = False,
        engine_factory: EngineFactory | None = None,
    ) -> None:
        super().__init__(parent)
        self.inline = inline
        self.worker_thread = QThread()  # never started when inline
        self.worker_thread.setObjectName("chattts-worker")
        self.worker = Worker(engine_factory=engine_factory)
        if not inline:
            self.worker.moveToThread(self.worker_thread)
        queued = Qt.ConnectionType.QueuedConnection  # what Qt picks across threads anyway
        self._probe.connect(self.worker.probe, queued)
        self._run.connect(self.worker.run, queued)
        self._end_serving.connect(self.worker.end_serving, queued)
        self._count = 0
        self._released = False
        self._holding_garbage = False
        self._switch_interval = sys.getswitchinterval()
        self._open: dict[int, Job] = {}  # queued or running, by number
        self.worker.ended.connect(self._ended)
        # First in the worker's queue: every job after it finds the engine made. The thread
        # itself starts once the window is on screen (start()): importing torch meanwhile
        # would slow the window down (the GIL), and the jobs asked for wait in the queue.
        self._probe.emit()

    def start(self) -> None:
        """Start the worker thread: the probe, then the jobs queued so far, run."""
        if self.inline:
            return  # they run at the event loop's next turn
        if not self._released and not self.worker_thread.isRunning():
            if not self._holding_garbage:  # from now on cycles are collected on this thread
                garbage.hold()
                self._holding_garbage = True
                self._switch_interval = sys.getswitchinterval()
                sys.setswitchinterval(min(GIL_SWITCH_S, self._switch_interval))
            self.worker_thread.start()

    @property
    def live(self) -> LiveMetrics:
        return self.worker.live

    def submit(self, op: Op) -> Job:
        """Queue the op behind what the worker has to do; its Job says which it is."""
        self._count += 1
        job = Job(op.kind, self._count)
        self._open[job.number] = job
        self._run.emit(job, op)
        return job

    def end_serving(self) -> None:
        """Queued behind what the worker has to do; serving_ended says when it is done."""
        self._end_serving.emit()

    def cancel(self) -> None:
        """Cancel every job not ended yet: the one running and those waiting behind it."""
        for job in list(self._open.values()):
            job.cancel.cancel()

    def _ended(self, outcome: Outcome) -> None:
        self._open.pop(outcome.job.number, None)

    def stop(self, timeout_ms: int = 30_000) -> bool:
        """Cancel what runs, let the thread finish its slot, and wait for it; True when gone."""
        if self.inline:  # nothing runs now; what is queued is dropped, as a quit thread does
            self.cancel()
            QCoreApplication.removePostedEvents(self.worker, QEvent.Type.MetaCall)
            return True
        if not self.worker_thread.isRunning():
            return True
        self.cancel()
        self.worker_thread.quit()
        return bool(self.worker_thread.wait(timeout_ms))

    def release(self) -> None:
        """After stop(): drop the model and every connection while Qt and torch are both alive,
        instead of leaving it to the interpreter's exit."""
        if self._released:
            return
        self._released = True
        worker = self.worker
        for signal in (
            worker.progress,
            worker.ended,
            worker.probed,
            worker.probe_failed,
            worker.serving_ended,
        ):
            try:
                signal.disconnect()
            except (RuntimeError, TypeError):
                pass  # nothing was connected
        # The worker thread has ended: the API's threads are stopped from here.
        worker.end_serving(quiet=True)
        if worker.engine is not None:
            worker.engine.unload()
        if self._holding_garbage:
            self._holding_garbage = False
            garbage.let_go()
            sys.setswitchinterval(self._switch_interval)
