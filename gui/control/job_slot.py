"""The one job the window waits on (the worker runs one at a time): which job it is, a request
waiting for the worker to be free, the job being cancelled; and the one channel from the
window's parts to the worker: a part submits an Op, and the slot hands the op's events and its
outcome to the op's handlers on the UI thread.

An outcome ends the job here first (`busy_changed` tells the rest), then the op's handler runs
(a failure is said and the live panel stopped before it), then what waited runs.
"""

from collections.abc import Callable

from PySide6.QtCore import QObject, Signal

from chattts_studio.core.services.report import Progress
from chattts_studio.gui.control.messages import Messages, error_sentence
from chattts_studio.gui.i18n import core_text, translate
from chattts_studio.gui.panels.live import LivePanel
from chattts_studio.gui.worker.host import WorkerHost
from chattts_studio.gui.worker.jobs import (
    CancelledOutcome,
    Done,
    Failure,
    Job,
    JobKind,
    Outcome,
    Started,
)
from chattts_studio.gui.worker.ops import Op

Request = Callable[[], object]

# The jobs the live panel follows (the others have their own progress: a dialog).
LIVE_KINDS = (
    JobKind.LOAD,
    JobKind.SYNTHESIZE,
    JobKind.AUDITION,
    JobKind.PROJECT,
    JobKind.RENDER,
)
# Jobs of many engine calls (or none: a check listens to takes) whose own reports drive the
# panel's bar, progress line and time left; the engine's figures show beside them. A load's
# reports reach the panel through the model control.
OWN_PROGRESS = (JobKind.PROJECT, JobKind.RENDER)


class JobSlot(QObject):
    busy_changed = Signal(bool)
    waiting_dropped = Signal()  # the request that waited will not run
    started = Signal(object)  # Job: the worker has taken it
    ended = Signal(object)  # Job: it ended, whichever way, after its op's handler

    def __init__(
        self, window: QObject, host: WorkerHost, messages: Messages, live: LivePanel
    ) -> None:
        # A child of the window: gone with it, so a report queued before it closed is dropped
        # instead of reaching panels already deleted.
        super().__init__(window)
        self.host = host
        self.messages = messages
        self.live = live
        self.current: Job | None = None
        # A synthesis or audition asked for while the worker loads a model (or winds down a
        # cancelled job): it runs as soon as the worker is free; Esc drops it.
        self.waiting: Request | None = None
        self.cancelling: Job | None = None  # cancelled and not ended yet
        self._ops: dict[int, Op] = {}  # submitted and not ended, by job number
        worker = host.worker
        # Bound methods of this QObject: Qt queues the calls onto the UI thread.
        worker.progress.connect(self._progress)
        worker.ended.connect(self._ended)

    # -- the job -----------------------------------------------------------------------------
    def submit(self, op: Op, busy: bool = True) -> Job:
        """Queue the op; it is the slot's job (the window busy while it runs, unless `busy` is
        False: a quick one that locks nothing)."""
        job = self.host.submit(op)
        self._ops[job.number] = op
        self.current = job
        if busy:
            self.busy_changed.emit(True)
        return job

    def end(self, job: Job) -> None:
        # A job with its own progress ended well: the panel says so (a failure or a cancel
        # has stopped it already, with its own word).
        if job.kind in OWN_PROGRESS and self.live.timer.isActive():
            self.live.stop(None, "done")
        if self.current == job:
            self.current = None
        if self.cancelling == job:
            self.cancelling = None
        self.busy_changed.emit(False)

    def running(self, kind: JobKind) -> bool:
        return self.current is not None and self.current.kind is kind

    def will_be_free(self) -> bool:
        """The running job is a load (the model comes next) or a job already cancelled."""
        job = self.current
        return job is not None and (job.kind is JobKind.LOAD or job is self.cancelling)

    def cancel(self) -> None:
        """Esc: drops what waits (not the load it waits for), else cancels the running job."""
        if self.waiting is not None:
            self.waiting = None
            self.waiting_dropped.emit()
            self.messages.show(translate("JobRequests", "The waiting request is cancelled."))
            return
        if self.current is not None:
            self.cancelling = self.current
            self.host.cancel()
            self.messages.show(translate("JobRequests", "Cancelling…"))

    def cancel_job(self, job: Job) -> None:
        """This job alone (one the queue or a dialog owns), running or not yet started."""
        job.cancel.cancel()
        if self.current is job:
            self.cancelling = job

    # -- what waits for the worker -------------------------------------------------------------
    def wait(self, run: Request) -> None:
        self.waiting = run

    def run_waiting(self) -> None:
        run, self.waiting = self.waiting, None
        if run is not None:
            run()

    def drop_waiting(self, reason: str) -> None:
        if self.waiting is not None:
            self.waiting = None
            self.waiting_dropped.emit()
            self.messages.show(
                translate("JobRequests", "{reason} The waiting request was not run.").format(
                    reason=reason
                )
            )

    # -- the worker's reports -----------------------------------------------------------------
    def _progress(self, job: Job, event: object) -> None:
        if isinstance(event, Started):
            if job.kind in LIVE_KINDS:
                self.live.start(job.kind.value)
            self.started.emit(job)
        elif isinstance(event, Progress) and job.kind in OWN_PROGRESS and job == self.current:
            self.live.show_job(event.stage, event.fraction, core_text(event.detail))
        op = self._ops.get(job.number)
        if op is not None and op.progress is not None:
            op.progress(job, event)

    def _ended(self, outcome: Outcome) -> None:
        job = outcome.job
        op = self._ops.pop(job.number, None)
        if isinstance(outcome, Done):
            self.end(job)
            if op is not None and op.done is not None:
                op.done(job, outcome.value)
        elif isinstance(outcome, Failure):
            self._failed(outcome, op)
        else:
            self._cancelled(outcome, op)
        self.run_waiting()
        self.ended.emit(job)

    def _failed(self, failure: Failure, op: Op | None) -> None:
        job = failure.job
        partial = failure.partial if job.kind is JobKind.SYNTHESIZE else None
        self.live.stop(partial.summary if partial else None, "error")
        self.end(job)
        self.messages.show_error(failure.error)
        if op is not None and op.failed is not None:
            op.failed(failure, error_sentence(failure.error))

    def _cancelled(self, outcome: CancelledOutcome, op: Op | None) -> None:
        job = outcome.job
        partial = outcome.partial if job.kind is JobKind.SYNTHESIZE else None
        cut = sum(1 for r in partial.results if r.partial) if partial else 0
        # The job's own figures (every step it ran); None for a job cancelled before it began.
        self.live.stop(partial.summary if partial else None, "cancelled", cut)
        self.end(job)
        if op is not None and op.cancelled is not None:
            op.cancelled(outcome)
        else:
            self.messages.show(translate("JobOutcomes", "Cancelled."))
