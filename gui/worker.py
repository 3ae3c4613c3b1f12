"""The one long-lived worker: a QObject on its own QThread that owns the Engine and its model.

Requests arrive through queued signals, so loading, synthesis, audition and downloads never run
on the UI thread. Its first job imports the engine (torch, ChatTTS) and probes the devices, so
the window is on screen before any of that is imported. Each kind of outcome leaves through a
signal of its own with its own payload; a failure carries the exception itself.
"""

import random
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, QThread, Signal, Slot

from core import models
from core.errors import Cancelled
from core.metrics import LiveMetrics
from core.request import AudioChunk, SegmentRestarted, SegmentResult

# The jobs and their outcomes, importable from here as before.
from .jobs import (
    AuditionJob,
    CancelledOutcome,
    Candidate,
    DeviceProbe,
    Failure,
    Job,
    JobKind,
    LoadJob,
    Progress,
    SeedSpeaker,
    SynthesisJob,
    SynthesisOutcome,
)

if TYPE_CHECKING:  # imported by the worker thread, never by the window's import chain
    from core.engine import Engine, LoadedModel

__all__ = [
    "AuditionJob",
    "CancelledOutcome",
    "Candidate",
    "DeviceProbe",
    "Failure",
    "Job",
    "JobKind",
    "LoadJob",
    "Progress",
    "SeedSpeaker",
    "SynthesisJob",
    "SynthesisOutcome",
    "Worker",
    "WorkerHost",
]


class Worker(QObject):
    started = Signal(object)  # Job
    progress = Signal(object)  # Progress
    probed = Signal(object)  # DeviceProbe: the engine is imported and the devices known
    probe_failed = Signal(object)  # Exception: the engine cannot be imported (a broken install)
    segment_ready = Signal(object, object)  # Job, SegmentResult
    chunk_ready = Signal(object, object)  # Job, AudioChunk: playable audio as soon as it exists
    segment_restarted = Signal(object, int)  # Job, segment index: drop what streamed of it
    # One signal per kind of outcome, each with its own payload (Qt carries them as objects).
    loaded = Signal(object, object)  # Job, LoadedModel
    synthesized = Signal(object, object)  # Job, SynthesisOutcome
    auditioned = Signal(object, object)  # Job, list[Candidate]
    speaker_made = Signal(object, object)  # Job, SeedSpeaker
    downloaded = Signal(object, object)  # Job, ModelInfo (verified and in place)
    built = Signal(object, object)  # Job, ModelInfo (demo weights built and verified)
    failed = Signal(object)  # Failure
    cancelled = Signal(object)  # CancelledOutcome
    finished = Signal(object)  # Job: it ended, whichever way (after its outcome)

    def __init__(self, live: LiveMetrics | None = None) -> None:
        super().__init__()
        # Made on the UI thread, where the live panel reads it; the engine writes to it.
        self.live = live or LiveMetrics()
        self.engine: Engine | None = None  # made by the first job, on the worker thread
        self.devices: DeviceProbe | None = None
        self._broken: Exception | None = None  # why the engine could not be imported
        # What a synthesis has finished so far, handed over when it is cancelled or fails.
        self._partial: SynthesisOutcome | None = None

    @property
    def loaded_model(self) -> "LoadedModel | None":
        """What the engine holds now (None before it exists)."""
        return self.engine.loaded if self.engine is not None else None

    def _engine(self) -> "Engine":
        """The engine, imported and made on first use (the probe, normally)."""
        if self.engine is None:
            if self._broken is not None:
                raise self._broken
            from core.engine import Engine

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
            from core.devices import (
                Precision,
                cuda_status,
                default_device,
                list_devices,
                precision_support,
            )

            devices = list_devices()
            found = DeviceProbe(
                devices,
                default_device().id,
                cuda_status(),
                {d.id: precision_support(d) for d in devices if d.usable},
                tuple(Precision),
            )
        except Exception as exc:  # torch or ChatTTS missing or broken: every job says so
            self._broken = exc
            self.probe_failed.emit(exc)
            return
        self.devices = found
        self.probed.emit(found)

    def _join_partial(self) -> None:
        """What a synthesis made, joined here: a long result is a copy of tens of MB."""
        if self._partial is not None:
            _ = self._partial.audio

    def _run(self, job: Job, body, outcome: Any) -> None:  # type: ignore[no-untyped-def]
        """Run body and emit its payload through `outcome` (or failed / cancelled), then
        finished. A job whose token was cancelled ends as cancelled, even when the engine
        finished it just before: the user asked for it to stop."""
        self.started.emit(job)
        try:
            job.cancel.check()  # cancelled while it waited in the queue: nothing to undo
            payload = body()
            job.cancel.check()
            outcome.emit(job, payload)
        except Cancelled:
            self._join_partial()
            self.cancelled.emit(CancelledOutcome(job, self._partial))
        except Exception as exc:
            # StudioError is the user's sentence; anything else is a bug (or the device giving
            # out) and must reach the window as a message, not end the worker thread. What a
            # synthesis finished before it stays the user's. The error carries no traceback
            # into the window: its frames would pin the failed job's tensors (a KV cache).
            exc.__traceback__ = None
            exc.__context__ = exc.__cause__ = None
            self.live.update(stage="error")
            self._join_partial()
            self.failed.emit(Failure(job, exc, self._partial))
            del exc
        self.finished.emit(job)

    @Slot(object, object)
    def load(self, job: Job, spec: LoadJob) -> None:
        self._partial = None

        def body() -> "LoadedModel":
            def report(stage: str, fraction: float) -> None:
                self.progress.emit(Progress(job, stage, fraction))

            self.probe()  # done already, normally: it is the first job
            engine = self._engine()
            device, precision = spec.device, spec.precision
            if spec.settle and self.devices is not None:
                device, chosen = self.devices.settle(device, precision)
                precision = chosen.value
            return engine.load(spec.model, device, precision, progress=report, cancel=job.cancel)

        self._run(job, body, self.loaded)

    @Slot(object, object)
    def synthesize(self, job: Job, spec: SynthesisJob) -> None:
        self._partial = None

        def body() -> SynthesisOutcome:
            engine = self._engine()
            request = spec.request
            if request.speaker is None and spec.speaker_seed is not None and engine.model:
                request = replace(request, speaker=engine.sample_speaker(spec.speaker_seed))
            plan = engine.plan(request)  # the job's one split; automatic batch settled
            request = replace(plan.request, batch_size=plan.batch_size)
            results: list[SegmentResult] = []
            final = replace(spec, request=request)
            self._partial = SynthesisOutcome(final, results, None, plan.speaker, engine.loaded)

            def listen(event: AudioChunk | SegmentRestarted) -> None:
                if isinstance(event, SegmentRestarted):
                    self.segment_restarted.emit(job, event.index)
                else:
                    self.chunk_ready.emit(job, event)

            before = engine.last_summary
            try:
                for result in engine.synthesize(plan, listen, job.cancel):
                    results.append(result)
                    self.segment_ready.emit(job, result)
            except Exception:
                # Cancelled or failed: what it made keeps its figures (steps run, wall time).
                if engine.last_summary is not before and self._partial is not None:
                    self._partial = replace(self._partial, summary=engine.last_summary)
                raise
            # All of it, also as what a late cancel hands over.
            self._partial = SynthesisOutcome(
                final, results, engine.last_summary, plan.speaker, engine.loaded
            )
            self._join_partial()  # here, not on the UI thread
            return self._partial

        self._run(job, body, self.synthesized)
        self._partial = None

    @Slot(object, object)
    def audition(self, job: Job, spec: AuditionJob) -> None:
        """All candidates read the sentence in one batched pass (one row per speaker)."""
        self._partial = None

        def body() -> list[Candidate]:
            engine = self._engine()
            seeds = random.sample(range(1, 100_000), spec.count)
            embeddings = [engine.sample_speaker(seed) for seed in seeds]
            self.progress.emit(Progress(job, "audition", 0.0, f"{spec.count} candidates"))
            request = replace(spec.base, text=spec.text, speaker=None)
            voices = engine.audition(request, embeddings, job.cancel)
            candidates = [
                Candidate(seed, embedding, audio)
                for seed, embedding, audio in zip(seeds, embeddings, voices, strict=True)
            ]
            self.progress.emit(Progress(job, "audition", 1.0, f"{spec.count} candidates"))
            return candidates

        self._run(job, body, self.auditioned)

    @Slot(object, int)
    def speaker_for_seed(self, job: Job, seed: int) -> None:
        self._partial = None
        self._run(
            job, lambda: SeedSpeaker(seed, self._engine().sample_speaker(seed)), self.speaker_made
        )

    @Slot(object)
    def download(self, job: Job) -> None:
        self._partial = None

        def body() -> models.ModelInfo:
            def report(done: int, _total: int) -> None:
                self.progress.emit(
                    Progress(job, "download", -1.0, f"{done / 2**20:.0f} MiB downloaded")
                )

            from core import download

            return download.download_official(report, lambda: job.cancel.cancelled)

        self._run(job, body, self.downloaded)  # a finished download is verified and in place

    @Slot(object, str)
    def build(self, job: Job, name: str) -> None:
        """Demo weights built into the data folder and verified, ready to load."""
        self._partial = None

        def body() -> models.ModelInfo:
            def report(done: int, total: int) -> None:
                self.progress.emit(Progress(job, "verifying", done / total if total else 0.0))

            def log(message: str) -> None:
                self.progress.emit(Progress(job, "building", -1.0, message))

            return models.ensure(name, report, lambda: job.cancel.cancelled, log=log)

        self._run(job, body, self.built)


class WorkerHost(QObject):
    """Lives on the UI thread: owns the QThread, numbers the jobs and forwards requests."""

    _probe = Signal()
    _load = Signal(object, object)
    _synthesize = Signal(object, object)
    _audition = Signal(object, object)
    _speaker = Signal(object, int)
    _download = Signal(object)
    _build = Signal(object, str)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.thread = QThread()
        self.thread.setObjectName("chattts-worker")
        self.worker = Worker()
        self.worker.moveToThread(self.thread)
        self._probe.connect(self.worker.probe)
        self._load.connect(self.worker.load)
        self._synthesize.connect(self.worker.synthesize)
        self._audition.connect(self.worker.audition)
        self._speaker.connect(self.worker.speaker_for_seed)
        self._download.connect(self.worker.download)
        self._build.connect(self.worker.build)
        self._count = 0
        self._released = False
        self._open: dict[int, Job] = {}  # queued or running, by number
        self.worker.finished.connect(self._ended)
        # First in the worker's queue: every job after it finds the engine made. The thread
        # itself starts once the window is on screen (start()): importing torch meanwhile
        # would slow the window down (the GIL), and the jobs asked for wait in the queue.
        self._probe.emit()

    def start(self) -> None:
        """Start the worker thread: the probe, then the jobs queued so far, run."""
        if not self._released and not self.thread.isRunning():
            self.thread.start()

    @property
    def live(self) -> LiveMetrics:
        return self.worker.live

    def _next(self, kind: JobKind) -> Job:
        self._count += 1
        job = Job(kind, self._count)
        self._open[job.number] = job
        return job

    def load(self, spec: LoadJob) -> Job:
        job = self._next(JobKind.LOAD)
        self._load.emit(job, spec)
        return job

    def synthesize(self, spec: SynthesisJob) -> Job:
        job = self._next(JobKind.SYNTHESIZE)
        self._synthesize.emit(job, spec)
        return job

    def audition(self, spec: AuditionJob) -> Job:
        job = self._next(JobKind.AUDITION)
        self._audition.emit(job, spec)
        return job

    def speaker_for_seed(self, seed: int) -> Job:
        job = self._next(JobKind.SPEAKER)
        self._speaker.emit(job, seed)
        return job

    def download(self) -> Job:
        job = self._next(JobKind.DOWNLOAD)
        self._download.emit(job)
        return job

    def build(self, name: str) -> Job:
        job = self._next(JobKind.BUILD)
        self._build.emit(job, name)
        return job

    def cancel(self) -> None:
        """Cancel every job not ended yet: the one running and those waiting behind it."""
        for job in list(self._open.values()):
            job.cancel.cancel()

    def _ended(self, job: Job) -> None:
        self._open.pop(job.number, None)

    def stop(self, timeout_ms: int = 30_000) -> bool:
        """Cancel what runs, let the thread finish its slot, and wait for it; True when gone."""
        if not self.thread.isRunning():
            return True
        self.cancel()
        self.thread.quit()
        return bool(self.thread.wait(timeout_ms))

    def release(self) -> None:
        """After stop(): drop the model and every connection while Qt and torch are both alive,
        instead of leaving it to the interpreter's exit."""
        if self._released:
            return
        self._released = True
        worker = self.worker
        for signal in (
            worker.started,
            worker.progress,
            worker.probed,
            worker.probe_failed,
            worker.segment_ready,
            worker.chunk_ready,
            worker.segment_restarted,
            worker.loaded,
            worker.synthesized,
            worker.auditioned,
            worker.speaker_made,
            worker.downloaded,
            worker.built,
            worker.failed,
            worker.cancelled,
            worker.finished,
        ):
            try:
                signal.disconnect()
            except (RuntimeError, TypeError):
                pass  # nothing was connected
        if worker.engine is not None:
            worker.engine.unload()
