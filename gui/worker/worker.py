"""The one long-lived worker: a QObject on its own QThread that owns the Engine and its model.

Requests arrive through queued signals, so loading, synthesis, audition and downloads never run
on the UI thread. Its first job imports the engine (torch, ChatTTS) and probes the devices, so
the window is on screen before any of that is imported. Each kind of outcome leaves through a
signal of its own with its own payload; a failure carries the exception itself.
"""

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from PySide6.QtCore import QObject, Signal, Slot

from chattts_studio.core.engine.metrics import LiveMetrics
from chattts_studio.core.engine.request import AudioChunk, SegmentRestarted
from chattts_studio.core.errors import Cancelled
from chattts_studio.core.weights import models
from chattts_studio.gui.common import garbage
from chattts_studio.gui.common.notices import plural
from chattts_studio.gui.i18n import translate
from chattts_studio.gui.serve.serving import ModelServing, ServeSession
from chattts_studio.gui.worker.jobs import (
    AuditionJob,
    CancelledOutcome,
    Candidate,
    DeviceProbe,
    Failure,
    Job,
    JobKind,
    LoadJob,
    Progress,
    ProjectDone,
    ProjectJob,
    RenderDone,
    RenderSpec,
    SeedSpeaker,
    SynthesisJob,
    SynthesisOutcome,
    VoiceJob,
    VoiceOutcome,
)

if TYPE_CHECKING:  # imported by the worker thread, never by the window's import chain
    from chattts_studio.core.engine.engine import Engine
    from chattts_studio.core.engine.loading import LoadedModel

# The jobs that run the loaded model (a load stops serving instead; the rest never touch it).
MODEL_JOBS = {
    JobKind.SYNTHESIZE,
    JobKind.AUDITION,
    JobKind.SPEAKER,
    JobKind.RENDER,
    JobKind.VOICE,
    JobKind.PROJECT,
}


class Worker(QObject):
    started = Signal(object)  # Job
    progress = Signal(object)  # Progress
    probed = Signal(object)  # DeviceProbe: the engine is imported and the devices known
    probe_failed = Signal(object)  # Exception: the engine cannot be imported (a broken install)
    planned = Signal(object, object)  # Job, JobPlan: a synthesis's plan, before its audio
    segment_ready = Signal(object, object)  # Job, SegmentResult
    chunk_ready = Signal(object, object)  # Job, AudioChunk: playable audio as soon as it exists
    segment_restarted = Signal(object, int)  # Job, segment index: drop what streamed of it
    # One signal per kind of outcome, each with its own payload (Qt carries them as objects).
    loaded = Signal(object, object)  # Job, LoadedModel
    synthesized = Signal(object, object)  # Job, SynthesisOutcome
    auditioned = Signal(object, object)  # Job, list[Candidate]
    speaker_made = Signal(object, object)  # Job, SeedSpeaker
    downloaded = Signal(object, object)  # Job, ModelInfo or (the recogniser) its Path
    built = Signal(object, object)  # Job, ModelInfo (demo weights built and verified)
    rendered = Signal(object, object)  # Job, RenderDone (a render queue job's folder is done)
    voice_made = Signal(object, object)  # Job, VoiceOutcome (a cloned voice auditioned or kept)
    project_done = Signal(object, object)  # Job, ProjectDone (a segment editor's takes made)
    failed = Signal(object)  # Failure
    cancelled = Signal(object)  # CancelledOutcome
    finished = Signal(object)  # Job: it ended, whichever way (after its outcome)
    serving = Signal(object, object)  # Job, ServeSession: the speech API listens
    serving_ended = Signal()  # the speech API stopped; the model is the worker's again

    def __init__(self, live: LiveMetrics | None = None) -> None:
        super().__init__()
        # Made on the UI thread, where the live panel reads it; the engine writes to it.
        self.live = live or LiveMetrics()
        self.engine: Engine | None = None  # made by the first job, on the worker thread
        self.devices: DeviceProbe | None = None
        self._broken: Exception | None = None  # why the engine could not be imported
        # What a synthesis has finished so far, handed over when it is cancelled or fails.
        self._partial: SynthesisOutcome | None = None
        # While a ServeSession lives, its Batcher owns the model: the jobs that would use it
        # are refused (ModelServing) and a load stops the session first. Both are decided on
        # this thread, so no window job can ever run beside the server's batches.
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
            from chattts_studio.core.engine.devices import (
                Precision,
                cuda_status,
                default_device,
                list_devices,
                precision_support,
            )
            from chattts_studio.core.engine.onnxrt.choice import engine_support

            devices = list_devices()
            usable = [d for d in devices if d.usable]
            found = DeviceProbe(
                devices,
                default_device().id,
                cuda_status(),
                {d.id: precision_support(d) for d in usable},
                tuple(Precision),
                {
                    d.id: {
                        p: {str(k): why for k, why in engine_support(d, p).items()}
                        for p in Precision
                    }
                    for d in usable
                },
            )
        except Exception as exc:  # torch or ChatTTS missing or broken: every job says so
            self._broken = exc
            self.probe_failed.emit(exc)
            return
        self.devices = found
        garbage.freeze_imports()  # before any model exists: a model must stay collectable
        self.probed.emit(found)

    def _run(self, job: Job, body, outcome: Any, check_after: bool = True) -> None:  # type: ignore[no-untyped-def]
        """Run body and emit its payload through `outcome` (or failed / cancelled), then
        finished. A job whose token was cancelled ends as cancelled, even when the engine
        finished it just before: the user asked for it to stop (unless `check_after` is False:
        a body that did something a cancel cannot undo checks for itself before it)."""
        self.started.emit(job)
        try:
            job.cancel.check()  # cancelled while it waited in the queue: nothing to undo
            if self.session is not None and job.kind in MODEL_JOBS:
                raise ModelServing()
            payload = body()
            if check_after:
                job.cancel.check()
            outcome.emit(job, payload)
        except Cancelled:
            self.cancelled.emit(CancelledOutcome(job, self._partial))
        except Exception as exc:
            # StudioError is the user's sentence; anything else is a bug (or the device giving
            # out) and must reach the window as a message, not end the worker thread. What a
            # synthesis finished before it stays the user's. The error carries no traceback
            # into the window: its frames would pin the failed job's tensors (a KV cache).
            exc.__traceback__ = None
            exc.__context__ = exc.__cause__ = None
            self.live.update(stage="error")
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
            self.end_serving()  # another model or precision: the API does not outlive this one
            engine = self._engine()
            device, precision, kind = spec.device, spec.precision, spec.engine
            if spec.settle and self.devices is not None:
                device, chosen = self.devices.settle(device, precision)
                precision = chosen.value
                kind = self.devices.settle_engine(device, chosen, kind)
            return engine.load(
                spec.model, device, precision, progress=report, cancel=job.cancel, engine=kind
            )

        self._run(job, body, self.loaded)

    @Slot(object, object)
    def synthesize(self, job: Job, spec: SynthesisJob) -> None:
        self._partial = None

        def body() -> SynthesisOutcome:
            from chattts_studio.core.services.synthesize import SynthesisRun, plan_synthesis

            engine = self._engine()
            request = spec.request
            if request.speaker is None and spec.speaker_seed is not None and engine.model:
                request = replace(request, speaker=engine.sample_speaker(spec.speaker_seed))
            # A dialogue script (spec.voices): every line its speaker's voice. The job's one
            # split; automatic batch settled.
            plan = plan_synthesis(engine, request, spec.voices)
            self.planned.emit(job, plan)  # its pauses place the audio as it streams
            request = replace(plan.request, batch_size=plan.batch_size)
            final = replace(spec, request=request)
            # The window keeps the audio (on disk); the run keeps only the figures, so a long
            # job holds no audio in memory.
            run = SynthesisRun(engine, plan)
            self._partial = SynthesisOutcome(final, run.results, None, plan.speaker, engine.loaded)

            def listen(event: AudioChunk | SegmentRestarted) -> None:
                if isinstance(event, SegmentRestarted):
                    self.segment_restarted.emit(job, event.index)
                else:
                    self.chunk_ready.emit(job, event)

            try:
                run.run(job.cancel, lambda result: self.segment_ready.emit(job, result), listen)
            except Exception:
                # Cancelled or failed: what it made keeps its figures (steps run, wall time).
                if run.summary is not None and self._partial is not None:
                    self._partial = replace(self._partial, summary=run.summary)
                raise
            # All of it, also as what a late cancel hands over.
            self._partial = SynthesisOutcome(
                final, run.results, run.summary, plan.speaker, engine.loaded
            )
            return self._partial

        self._run(job, body, self.synthesized)
        self._partial = None

    @Slot(object, object)
    def audition(self, job: Job, spec: AuditionJob) -> None:
        """All candidates read the sentence in one batched pass (one row per speaker)."""
        self._partial = None

        def body() -> list[Candidate]:
            from chattts_studio.core.services.audition import audition_seeds

            request = replace(spec.base, text=spec.text)
            if spec.blend:
                from chattts_studio.core.services.audition import audition_blend

                embedding, audio = audition_blend(
                    self._engine(), spec.blend, spec.library, request, job.cancel
                )
                return [Candidate(None, embedding, audio)]
            said = plural(spec.count, "candidate")  # translate() is thread-safe
            self.progress.emit(Progress(job, "audition", 0.0, said))
            heard = audition_seeds(self._engine(), request, spec.count, job.cancel)
            self.progress.emit(Progress(job, "audition", 1.0, said))
            return [Candidate(c.seed, c.embedding, c.audio) for c in heard]

        self._run(job, body, self.auditioned)

    @Slot(object, object)
    def voice(self, job: Job, spec: VoiceJob) -> None:
        """Clone a voice from a recording, then audition it or keep it (with its preview)."""
        self._partial = None

        def body() -> VoiceOutcome:
            from chattts_studio.core.services.audition import audition_recording
            from chattts_studio.core.services.keep_voice import VoiceSource, keep_new_voice
            from chattts_studio.core.voices.clone import check_clip, read_clip
            from chattts_studio.core.voices.speakers import SpeakerLibrary

            engine = self._engine()
            if spec.source is not None:
                clip = read_clip(spec.source)
            else:
                take = spec.take if spec.take is not None else np.zeros(0, np.float32)
                clip = check_clip(take, spec.rate or 1)
            if spec.name:
                library = SpeakerLibrary(spec.library)
                source = VoiceSource(clip=clip, transcript=spec.transcript)
                entry = keep_new_voice(
                    library, engine, spec.name, source, replace=spec.replace, cancel=job.cancel
                )
                return VoiceOutcome(spec, None, entry.name)  # kept: a cancel now comes too late
            base = replace(spec.base, speaker=None)
            audio = audition_recording(engine, clip, spec.transcript, base, job.cancel)
            return VoiceOutcome(spec, audio)

        # No check after the body: once the voice is in the library, the job says so.
        self._run(job, body, self.voice_made, check_after=False)

    @Slot(object, int)
    def speaker_for_seed(self, job: Job, seed: int) -> None:
        self._partial = None
        self._run(
            job, lambda: SeedSpeaker(seed, self._engine().sample_speaker(seed)), self.speaker_made
        )

    @Slot(object, str)
    def download(self, job: Job, what: str = "official") -> None:
        self._partial = None

        def body() -> models.ModelInfo | Path:
            def report(done: int, _total: int) -> None:
                said = translate("Worker", "{size:.0f} MiB downloaded").format(size=done / 2**20)
                self.progress.emit(Progress(job, "download", -1.0, said))

            if what == "asr":
                from chattts_studio.core.asr import models as asr_models

                return asr_models.download(report, lambda: job.cancel.cancelled)
            from chattts_studio.core.weights import download

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

    @Slot(object, object)
    def render(self, job: Job, spec: RenderSpec) -> None:
        """A render queue job, with the model already loaded (never a second copy)."""
        self._partial = None

        def body() -> RenderDone:
            from chattts_studio.gui.render.work import run_render

            def report(stage: str, fraction: float, detail: str) -> None:
                self.progress.emit(Progress(job, stage, fraction, detail))

            return run_render(self._engine(), spec, job.cancel, report)

        self._run(job, body, self.rendered)

    @Slot(object, object)
    def project(self, job: Job, spec: ProjectJob) -> None:
        """Takes for the segment editor, on the loaded model; each saved as it is made, so a
        cancel or a failure keeps the ones made before it."""
        self._partial = None

        def body() -> ProjectDone:
            from chattts_studio.gui.project.work import run_project

            checking = spec.action == "check"
            stage = "checking takes" if checking else "takes"

            def report(made: int, asked: int) -> None:
                said = (
                    translate("Live", "{done} of {total} takes checked")
                    if checking
                    else translate("Live", "{done} of {total} takes made")
                )
                detail = said.format(done=made, total=asked)
                self.progress.emit(Progress(job, stage, made / max(1, asked), detail))

            return run_project(self._engine(), spec, job.cancel, report)

        self._run(job, body, self.project_done)

    @Slot(object, int, bool)
    def serve(self, job: Job, port: int, others: bool = False) -> None:
        """The speech API over the loaded model itself (never a second copy): on 127.0.0.1, or
        with `others` on every interface with a key (gui/serve/serving.py)."""
        self._partial = None

        def body() -> ServeSession:
            engine = self._engine()
            if engine.model is None:
                from chattts_studio.core.errors import StudioError

                raise StudioError(translate("Worker", "Load a model before serving it."))
            if self.session is None:
                self.session = ServeSession(engine, port, others)
            return self.session

        self._run(job, body, self.serving)

    @Slot()
    def end_serving(self, quiet: bool = False) -> None:
        """Stop the speech API, if it runs: its threads are gone when this returns."""
        session, self.session = self.session, None
        if session is not None:
            session.close()
            if not quiet:
                self.serving_ended.emit()
