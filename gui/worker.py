"""The one long-lived worker: a QObject on its own QThread that owns the Engine and its model.

Requests arrive through queued signals, so loading, synthesis, audition and downloads never run
on the UI thread. Every outcome leaves as a signal carrying a dataclass or the exception itself.
"""

import random
from dataclasses import dataclass, field, replace
from enum import StrEnum

import numpy as np
from PySide6.QtCore import QObject, QThread, Signal, Slot

from core import download, models
from core.cancel import CancelToken
from core.engine import Engine, LoadedModel
from core.errors import Cancelled
from core.request import (
    AudioChunk,
    JobSummary,
    SegmentRestarted,
    SegmentResult,
    SynthesisRequest,
    join_audio,
)

STOP_POLL_MS = 100


class JobKind(StrEnum):
    LOAD = "load"
    SYNTHESIZE = "synthesize"
    AUDITION = "audition"
    DOWNLOAD = "download"
    SPEAKER = "speaker"
    BUILD = "build"  # demo weights built (and verified) without loading them


@dataclass(frozen=True)
class Job:
    kind: JobKind
    number: int
    # Made when the job is queued: a cancel before it starts, while it runs, or just as it
    # ends all reach this job and no other.
    cancel: CancelToken = field(default_factory=CancelToken, compare=False, repr=False)


@dataclass(frozen=True)
class LoadJob:
    model: str
    device: str | None
    precision: str


@dataclass(frozen=True)
class SynthesisJob:
    request: SynthesisRequest
    speaker_seed: int | None = None  # the speaker of this seed when request.speaker is None
    speaker_label: str = ""


@dataclass(frozen=True)
class AuditionJob:
    text: str
    count: int
    base: SynthesisRequest


@dataclass(frozen=True)
class Progress:
    job: Job
    stage: str
    fraction: float  # 0..1; negative when the total is unknown
    detail: str = ""


@dataclass(frozen=True)
class SynthesisOutcome:
    job: SynthesisJob
    results: list[SegmentResult]
    summary: JobSummary | None
    speaker: str  # the embedding that was used
    loaded: LoadedModel | None = None

    @property
    def audio(self) -> np.ndarray:
        return join_audio(self.results, self.job.request.pause_seconds)


@dataclass(frozen=True)
class Candidate:
    seed: int
    embedding: str
    audio: np.ndarray = field(repr=False)


@dataclass(frozen=True)
class CancelledOutcome:
    job: Job
    partial: SynthesisOutcome | None = None


@dataclass(frozen=True)
class Failure:
    job: Job
    error: Exception
    partial: SynthesisOutcome | None = None  # the segments a synthesis finished before it


class Worker(QObject):
    started = Signal(object)  # Job
    progress = Signal(object)  # Progress
    segment_ready = Signal(object, object)  # Job, SegmentResult
    chunk_ready = Signal(object, object)  # Job, AudioChunk: playable audio as soon as it exists
    segment_restarted = Signal(object, int)  # Job, segment index: drop what streamed of it
    finished = Signal(object, object)  # Job, LoadedModel | SynthesisOutcome | list | ModelInfo
    failed = Signal(object)  # Failure
    cancelled = Signal(object)  # CancelledOutcome

    def __init__(self) -> None:
        super().__init__()
        self.engine = Engine()
        # What a synthesis has finished so far, handed over when it is cancelled or fails.
        self._partial: SynthesisOutcome | None = None

    def _run(self, job: Job, body) -> None:  # type: ignore[no-untyped-def]
        """Run body and emit its outcome. A job whose token was cancelled ends as cancelled,
        even when the engine finished it just before: the user asked for it to stop."""
        self.started.emit(job)
        try:
            job.cancel.check()  # cancelled while it waited in the queue: nothing to undo
            payload = body()
            job.cancel.check()
            self.finished.emit(job, payload)
        except Cancelled:
            self.cancelled.emit(CancelledOutcome(job, self._partial))
        except Exception as exc:
            # StudioError is the user's sentence; anything else is a bug (or the device giving
            # out) and must reach the window as a message, not end the worker thread. What a
            # synthesis finished before it stays the user's. The error carries no traceback
            # into the window: its frames would pin the failed job's tensors (a KV cache).
            exc.__traceback__ = None
            exc.__context__ = exc.__cause__ = None
            self.engine.live.update(stage="error")
            self.failed.emit(Failure(job, exc, self._partial))
            del exc

    @Slot(object, object)
    def load(self, job: Job, spec: LoadJob) -> None:
        self._partial = None

        def body() -> LoadedModel:
            def report(stage: str, fraction: float) -> None:
                self.progress.emit(Progress(job, stage, fraction))

            return self.engine.load(
                spec.model, spec.device, spec.precision, progress=report, cancel=job.cancel
            )

        self._run(job, body)

    @Slot(object, object)
    def synthesize(self, job: Job, spec: SynthesisJob) -> None:
        self._partial = None

        def body() -> SynthesisOutcome:
            request = spec.request
            if (
                request.speaker is None
                and spec.speaker_seed is not None
                and self.engine.model is not None
            ):
                request = replace(request, speaker=self.engine.sample_speaker(spec.speaker_seed))
            plan = self.engine.plan(request)  # the job's one split; automatic batch settled
            request = replace(plan.request, batch_size=plan.batch_size)
            results: list[SegmentResult] = []
            final = replace(spec, request=request)
            self._partial = SynthesisOutcome(final, results, None, plan.speaker, self.engine.loaded)

            def listen(event: AudioChunk | SegmentRestarted) -> None:
                if isinstance(event, SegmentRestarted):
                    self.segment_restarted.emit(job, event.index)
                else:
                    self.chunk_ready.emit(job, event)

            before = self.engine.last_summary
            try:
                for result in self.engine.synthesize(plan, listen, job.cancel):
                    results.append(result)
                    self.segment_ready.emit(job, result)
            except Exception:
                # Cancelled or failed: what it made keeps its figures (steps run, wall time).
                if self.engine.last_summary is not before and self._partial is not None:
                    self._partial = replace(self._partial, summary=self.engine.last_summary)
                raise
            # All of it, also as what a late cancel hands over.
            self._partial = SynthesisOutcome(
                final, results, self.engine.last_summary, plan.speaker, self.engine.loaded
            )
            return self._partial

        self._run(job, body)
        self._partial = None

    @Slot(object, object)
    def audition(self, job: Job, spec: AuditionJob) -> None:
        """All candidates read the sentence in one batched pass (one row per speaker)."""
        self._partial = None

        def body() -> list[Candidate]:
            seeds = random.sample(range(1, 100_000), spec.count)
            embeddings = [self.engine.sample_speaker(seed) for seed in seeds]
            self.progress.emit(Progress(job, "audition", 0.0, f"{spec.count} candidates"))
            request = replace(spec.base, text=spec.text, speaker=None)
            voices = self.engine.audition(request, embeddings, job.cancel)
            candidates = [
                Candidate(seed, embedding, audio)
                for seed, embedding, audio in zip(seeds, embeddings, voices, strict=True)
            ]
            self.progress.emit(Progress(job, "audition", 1.0, f"{spec.count} candidates"))
            return candidates

        self._run(job, body)

    @Slot(object, int)
    def speaker_for_seed(self, job: Job, seed: int) -> None:
        self._partial = None
        self._run(job, lambda: (seed, self.engine.sample_speaker(seed)))

    @Slot(object)
    def download(self, job: Job) -> None:
        self._partial = None

        def body() -> models.ModelInfo:
            def report(done: int, _total: int) -> None:
                self.progress.emit(
                    Progress(job, "download", -1.0, f"{done / 2**20:.0f} MiB downloaded")
                )

            return download.download_official(report, lambda: job.cancel.cancelled)

        self._run(job, body)  # a finished download is verified and in place: kept

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

        self._run(job, body)

    @Slot()
    def shutdown(self) -> None:
        self.engine.unload()


class WorkerHost(QObject):
    """Lives on the UI thread: owns the QThread, numbers the jobs and forwards requests."""

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
        self._load.connect(self.worker.load)
        self._synthesize.connect(self.worker.synthesize)
        self._audition.connect(self.worker.audition)
        self._speaker.connect(self.worker.speaker_for_seed)
        self._download.connect(self.worker.download)
        self._build.connect(self.worker.build)
        self._count = 0
        self._released = False
        self._open: dict[int, Job] = {}  # queued or running, by number
        for signal in (self.worker.finished, self.worker.failed, self.worker.cancelled):
            signal.connect(self._ended)
        self.thread.start()

    @property
    def live(self):  # type: ignore[no-untyped-def]
        return self.worker.engine.live

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

    def _ended(self, outcome: object, _payload: object = None) -> None:
        job = outcome if isinstance(outcome, Job) else getattr(outcome, "job", None)
        if isinstance(job, Job):
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
        for signal in (
            self.worker.started,
            self.worker.progress,
            self.worker.segment_ready,
            self.worker.chunk_ready,
            self.worker.segment_restarted,
            self.worker.finished,
            self.worker.failed,
            self.worker.cancelled,
        ):
            try:
                signal.disconnect()
            except (RuntimeError, TypeError):
                pass  # nothing was connected
        self.worker.engine.unload()
