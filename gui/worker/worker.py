"""The one long-lived worker: a QObject on its own QThread that owns the Engine and its model.

Ops arrive through a queued signal, so no engine work runs on the UI thread. Its first job
imports the engine (torch, ChatTTS) and probes the devices, so the window is on screen before
any of that is imported. Every op's events leave through `progress` and its outcome through
`ended`; a failure carries the exception itself. Its engine is the real Engine, or what an
`engine_factory` makes (a test's stand-in).
"""

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Signal, Slot

from chattts_studio.core.engine.metrics import LiveMetrics
from chattts_studio.core.errors import Cancelled
from chattts_studio.core.services.report import Partial
from chattts_studio.core.services.serve_session import ModelServing, ServeSession
from chattts_studio.gui.common import garbage
from chattts_studio.gui.worker.jobs import (
    CancelledOutcome,
    Done,
    Failure,
    Job,
    Outcome,
    Started,
)
from chattts_studio.gui.worker.ops import ModelUse, Op

if TYPE_CHECKING:  # imported by the worker thread, never by the window's import chain
    from chattts_studio.core.engine.engine import Engine
    from chattts_studio.core.engine.loading import LoadedModel

EngineFactory = Callable[[], "Engine"]


class Worker(QObject):
    progress = Signal(object, object)  # Job, an event: Started, a Progress, or the job's own
    ended = Signal(object)  # Done, Failure or CancelledOutcome: a job's last word
    probed = Signal(object)  # DeviceProbe: the engine is imported and the devices known
    probe_failed = Signal(object)  # Exception: the engine cannot be imported (a broken install)
    serving_ended = Signal()  # the speech API stopped; the model is the worker's again

    def __init__(
        self, live: LiveMetrics | None = None, engine_factory: EngineFactory | None = None
    ) -> None:
        super().__init__()
        # Made on the UI thread, where the live panel reads it; the engine writes to it.
        self.live = live or LiveMetrics()
        self.engine: Engine | None = None  # made by the first job, on the worker thread
        self._engine_factory = engine_factory  # None: the real Engine
        self.devices: Any = None  # the DeviceProbe, once found
        self._broken: Exception | None = None  # why the engine could not be imported
        # While a ServeSession lives, its Batcher owns the model: ops that use it are refused
        # and a load stops the session first. Both are decided on this thread, so no window
        # job ever runs beside the server's batches.
        self.session: ServeSession | None = None

    @property
    def loaded_model(self) -> "LoadedModel | None":
        """What the engine holds now (None before it exists)."""
        return self.engine.loaded if self.engine is not None else None

    def _engine(self) -> "Engine":
        """The engine, imported and made on first use (the probe, normally)."""
        if self.engine is None:
            if self._broken is not None:
                raise self._broken
            if self._engine_factory is not None:
                engine = self._engine_factory()
            else:
                from chattts_studio.core.engine.engine import Engine

                engine = Engine()
            engine.live = self.live
            self.engine = engine
        return self.engine

    @Slot()
    def probe(self) -> None:
        """The first job: import torch and ChatTTS, make the engine, look at the devices (once:
        said through probed, or probe_failed)."""
        if self.devices is not None or self._broken is not None:
            return
        try:
            self._engine()
            from chattts_studio.core.services.model_jobs import probe_devices

            found = probe_devices()
        except Exception as exc:  # torch or ChatTTS missing or broken: every job says so
            self._broken = exc
            self.probe_failed.emit(exc)
            return
        self.devices = found
        garbage.freeze_imports()  # before any model exists: a model must stay collectable
        self.probed.emit(found)

    @Slot(object, object)
    def run(self, job: Job, op: Op) -> None:
        """Run the op's body with the engine; its events go out through `progress` (a Partial
        is kept instead: what a cancel or a failure hands over), then its outcome through
        `ended`. A job whose token was cancelled ends as cancelled, even when the body had just
        finished (unless the op says its body checks for itself)."""
        partial: Any = None

        def report(event: object) -> None:
            nonlocal partial
            if isinstance(event, Partial):
                partial = event.value
            else:
                self.progress.emit(job, event)

        self.progress.emit(job, Started())
        outcome: Outcome
        try:
            self.probe()  # done already, normally: it is the first job
            job.cancel.check()  # cancelled while it waited in the queue: nothing to undo
            value = self._body(op, job, report)
            if op.check_after:
                job.cancel.check()
            outcome = Done(job, value)
        except Cancelled:
            outcome = CancelledOutcome(job, partial)
        except Exception as exc:
            # StudioError is the user's sentence; anything else is a bug (or the device giving
            # out) and must reach the window as a message, not end the worker thread. The
            # error carries no traceback into the window: its frames would pin the failed
            # job's tensors (a KV cache).
            exc.__traceback__ = None
            exc.__context__ = exc.__cause__ = None
            self.live.update(stage="error")
            outcome = Failure(job, exc, partial)
            del exc
        self.ended.emit(outcome)

    def _body(self, op: Op, job: Job, report: Any) -> Any:
        if op.model is ModelUse.REPLACES:
            self.end_serving()  # another model or precision: the API does not outlive it
        elif op.model is ModelUse.USES and self.session is not None:
            raise ModelServing()
        elif op.model is ModelUse.TAKES:
            if self.session is None:
                self.session = op.body(self._engine(), job.cancel, report)
            return self.session
        return op.body(self._engine(), job.cancel, report)

    @Slot()
    def end_serving(self, quiet: bool = False) -> None:
        """Stop the speech API, if it runs: its threads are gone when this returns."""
        session, self.session = self.session, None
        if session is not None:
            session.close()
            if not quiet:
                self.serving_ended.emit()
