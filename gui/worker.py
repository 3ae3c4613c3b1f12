"""The one long-lived worker: a QObject on its own QThread that owns the Engine and its model.

Requests arrive through queued signals, so loading, synthesis, audition and downloads never run
on the UI thread. Every outcome leaves as a signal carrying a dataclass or the exception itself.
"""

import random
import threading
from dataclasses import dataclass, field, replace
from enum import StrEnum

import numpy as np
from PySide6.QtCore import QObject, QThread, QTimer, Signal, Slot

from core import models
from core.engine import Engine, LoadedModel
from core.errors import Cancelled
from core.request import (
    AudioChunk,
    JobSummary,
    SegmentResult,
    SynthesisRequest,
    auto_batch_size,
    join_audio,
)

CANCEL_REPEAT_MS = 100  # how often a cancel is repeated until its job has ended


class JobKind(StrEnum):
    LOAD = "load"
    SYNTHESIZE = "synthesize"
    AUDITION = "audition"
    DOWNLOAD = "download"
    SPEAKER = "speaker"


@dataclass(frozen=True)
class Job:
    kind: JobKind
    number: int


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
    finished = Signal(object, object)  # Job, LoadedModel | SynthesisOutcome | list | ModelInfo
    failed = Signal(object)  # Failure
    cancelled = Signal(object)  # CancelledOutcome

    def __init__(self) -> None:
        super().__init__()
        self.engine = Engine()
        self._download_cancel = threading.Event()
        # What a synthesis has finished so far, handed over when it is cancelled or fails.
        self._partial: SynthesisOutcome | None = None
        # Jobs numbered up to this one were cancelled, even those still waiting in the queue
        # (the engine clears its own flag when a job starts). Written by the UI thread.
        self._cancel_upto = 0
        # The job running now (0: none). With the lock, a cancel reaches the engine only while
        # a job it targets runs, and a job that starts uncancelled drops any stray cancel.
        self._current = 0
        self._cancel_lock = threading.Lock()

    def cancel(self, upto: int = 0) -> None:
        """Called from the UI thread: the engine's flag and the download flag are thread-safe."""
        with self._cancel_lock:
            self._cancel_upto = max(self._cancel_upto, upto)
            if self._current and self._current <= self._cancel_upto:
                self.engine.cancel()
                self._download_cancel.set()

    def _cancelled(self, job: Job) -> bool:
        return job.number <= self._cancel_upto

    def _run(self, job: Job, body, late_cancel: bool = False) -> None:  # type: ignore[no-untyped-def]
        """Run body and emit its outcome. With late_cancel, a job the user cancelled ends as
        cancelled even when the engine finished it: a cancel that landed while the engine was
        starting the job (it clears its flag then) must not come back as a result."""
        with self._cancel_lock:
            self._current = job.number
            if not self._cancelled(job):
                self.engine.reset_cancel()
        self.started.emit(job)
        try:
            if self._cancelled(job):
                raise Cancelled()  # cancelled before it began: nothing to undo
            payload = body()
            if late_cancel and self._cancelled(job):
                raise Cancelled()
            self.finished.emit(job, payload)
        except Cancelled:
            self.cancelled.emit(CancelledOutcome(job, self._partial))
        except Exception as exc:
            # StudioError is the user's sentence; anything else is a bug (or the device giving
            # out) and must reach the window as a message, not end the worker thread. What a
            # synthesis finished before it stays the user's.
            self.engine.live.update(stage="error")
            self.failed.emit(Failure(job, exc, self._partial))
        finally:
            with self._cancel_lock:
                self._current = 0

    @Slot(object, object)
    def load(self, job: Job, spec: LoadJob) -> None:
        self._partial = None

        def body() -> LoadedModel:
            def report(stage: str, fraction: float) -> None:
                self.progress.emit(Progress(job, stage, fraction))

            return self.engine.load(spec.model, spec.device, spec.precision, progress=report)

        self._run(job, body)  # a load that finished is kept: the old model is gone by then

    @Slot(object, object)
    def synthesize(self, job: Job, spec: SynthesisJob) -> None:
        self._partial = None

        def body() -> SynthesisOutcome:
            request = spec.request
            if (
                request.speaker is None
                and spec.speaker_seed is not None
                and self.engine.chat is not None
            ):
                request = replace(request, speaker=self.engine.sample_speaker(spec.speaker_seed))
            if request.batch_size <= 0:
                loaded = self.engine.loaded
                count = len(self.engine.plan(replace(request, batch_size=1)))
                device = loaded.device.id if loaded else "cpu"
                request = replace(request, batch_size=auto_batch_size(device, count))
            results: list[SegmentResult] = []
            final = replace(spec, request=request)
            self._partial = SynthesisOutcome(
                final, results, None, request.speaker or "", self.engine.loaded
            )

            def on_chunk(chunk: AudioChunk) -> None:
                if self._cancelled(job):
                    self.engine.cancel()  # again: see _run
                self.chunk_ready.emit(job, chunk)

            for result in self.engine.synthesize(request, on_chunk=on_chunk):
                results.append(result)
                self.segment_ready.emit(job, result)
            # All of it, also as what a late cancel hands over.
            self._partial = SynthesisOutcome(
                final, results, self.engine.last_summary, request.speaker or "", self.engine.loaded
            )
            return self._partial

        self._run(job, body, late_cancel=True)
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
            voices = self.engine.audition(request, embeddings)
            candidates = [
                Candidate(seed, embedding, audio)
                for seed, embedding, audio in zip(seeds, embeddings, voices, strict=True)
            ]
            self.progress.emit(Progress(job, "audition", 1.0, f"{spec.count} candidates"))
            return candidates

        self._run(job, body, late_cancel=True)

    @Slot(object, int)
    def speaker_for_seed(self, job: Job, seed: int) -> None:
        self._partial = None
        self._run(job, lambda: (seed, self.engine.sample_speaker(seed)))

    @Slot(object)
    def download(self, job: Job) -> None:
        self._partial = None
        self._download_cancel.clear()

        def body() -> models.ModelInfo:
            def report(done: int, _total: int) -> None:
                self.progress.emit(
                    Progress(job, "download", -1.0, f"{done / 2**20:.0f} MiB downloaded")
                )

            return models.download_official(report, self._download_cancel.is_set)

        self._run(job, body)  # a finished download is verified and in place: kept

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
        self._count = 0
        self._released = False
        # A cancel is repeated until the job it targets has ended: the engine clears its flag
        # when a load, synthesis or audition begins, so one that lands just before that moment
        # would otherwise be lost. Connected first, so it stops before the window reacts.
        self._cancelling = 0  # the job number being cancelled; 0: none
        self._cancel_timer = QTimer(self)
        self._cancel_timer.setInterval(CANCEL_REPEAT_MS)
        self._cancel_timer.timeout.connect(lambda: self.worker.cancel(self._cancelling))
        for signal in (self.worker.finished, self.worker.failed, self.worker.cancelled):
            signal.connect(self._ended)
        self.thread.start()

    @property
    def live(self):  # type: ignore[no-untyped-def]
        return self.worker.engine.live

    def _next(self, kind: JobKind) -> Job:
        self._count += 1
        return Job(kind, self._count)

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

    def cancel(self) -> None:
        """Cancel the newest job and any before it, even one that has not started yet."""
        self._cancelling = self._count
        self.worker.cancel(self._count)
        self._cancel_timer.start()

    def _ended(self, outcome: object, _payload: object = None) -> None:
        job = outcome if isinstance(outcome, Job) else getattr(outcome, "job", None)
        if isinstance(job, Job) and job.number >= self._cancelling:
            self._cancel_timer.stop()
            self._cancelling = 0

    def stop(self, timeout_ms: int = 30_000) -> bool:
        """Cancel what runs, let the thread finish its slot, and wait for it; True when gone."""
        self._cancel_timer.stop()
        if not self.thread.isRunning():
            return True
        self.thread.quit()
        waited = 0
        while waited < timeout_ms:  # cancel again on each wait: see _cancel_timer
            self.worker.cancel(self._count)
            if self.thread.wait(CANCEL_REPEAT_MS):
                return True
            waited += CANCEL_REPEAT_MS
        return False

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
            self.worker.finished,
            self.worker.failed,
            self.worker.cancelled,
        ):
            try:
                signal.disconnect()
            except (RuntimeError, TypeError):
                pass  # nothing was connected
        self.worker.engine.unload()
