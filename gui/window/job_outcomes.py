"""What the main window does with each worker outcome: one handler per kind (loaded,
synthesized, auditioned, speaker made, downloaded, built), and per kind of job for a failure
or a cancel; plus started, progress and audio. A part of MainWindow kept in its own module.
Every method runs on the UI thread (the worker's signals are queued to it)."""

from collections.abc import Callable
from typing import TYPE_CHECKING

from chattts_studio.core.engine.request import AudioChunk, JobPlan, SegmentResult
from chattts_studio.core.weights import models
from chattts_studio.gui.common.notices import figure, plural
from chattts_studio.gui.i18n import core_text, model_label
from chattts_studio.gui.panels.live import stage_text
from chattts_studio.gui.window.base import WindowBase
from chattts_studio.gui.worker.jobs import (
    CancelledOutcome,
    Candidate,
    DeviceProbe,
    Failure,
    Job,
    JobKind,
    Progress,
    SeedSpeaker,
    SynthesisOutcome,
)

if TYPE_CHECKING:
    from chattts_studio.core.engine.loading import LoadedModel
    from chattts_studio.gui.panels.blend import BlendDialog
    from chattts_studio.gui.voices.audition_dialog import AuditionDialog


class JobOutcomes(WindowBase):
    """Mixed into MainWindow; uses its panels, dialogs and job state."""

    def _connect_worker(self) -> None:
        worker = self.host.worker
        # Bound methods of this QObject: Qt queues the calls onto the UI thread.
        worker.probed.connect(self._devices_found)
        worker.probe_failed.connect(self._engine_unavailable)
        worker.started.connect(self._job_started)
        worker.progress.connect(self._job_progress)
        worker.planned.connect(self._planned)
        worker.segment_ready.connect(self._segment_ready)
        worker.chunk_ready.connect(self._chunk_ready)
        worker.segment_restarted.connect(self._segment_restarted)
        worker.loaded.connect(self._loaded)
        worker.synthesized.connect(self._synthesized)
        worker.auditioned.connect(self._auditioned)
        worker.speaker_made.connect(self._speaker_made)
        worker.downloaded.connect(self._downloaded)
        worker.built.connect(self._built)
        worker.failed.connect(self._job_failed)
        worker.cancelled.connect(self._job_cancelled)

    def _devices_found(self, probe: DeviceProbe) -> None:
        self.controls.show_probe(probe)

    def _engine_unavailable(self, error: Exception) -> None:
        sentence = self.tr("The engine cannot start: {reason}").format(
            reason=self.error_sentence(error)
        )
        self.controls.show_probe_failed(sentence)
        self.warn(sentence)

    def _job_started(self, job: Job) -> None:
        if job.kind in (JobKind.LOAD, JobKind.SYNTHESIZE, JobKind.AUDITION):
            self.live.start(job.kind.value)
        if job.kind is JobKind.LOAD:
            self.load_progress.setVisible(True)
            self.load_progress.setValue(0)

    def _job_progress(self, progress: Progress) -> None:
        kind = progress.job.kind
        if kind is JobKind.LOAD:
            # One source: the bar here, the live panel's bar and its line show the same.
            self.load_progress.setValue(int(max(0.0, progress.fraction) * 100))
            self.live.show_load(progress.stage, progress.fraction)
            self.show_message(
                self.tr("Loading {model}: {stage}").format(
                    model=self.model_name, stage=stage_text(progress.stage)
                )
            )
        elif kind is JobKind.DOWNLOAD:
            self.model_dialog.download_progress(progress.detail)
        elif kind is JobKind.BUILD:
            self.model_dialog.build_progress(progress.stage, progress.fraction, progress.detail)
        elif kind is JobKind.AUDITION:
            self._audition_asker(progress.job).set_progress(progress.fraction, progress.detail)
        elif kind is JobKind.RENDER:
            self.render_queue.show_progress(progress)

    def _planned(self, _job: Job, plan: JobPlan) -> None:
        self.result.set_plan(plan)

    def _chunk_ready(self, _job: Job, chunk: AudioChunk) -> None:
        self.result.add_chunk(chunk)

    def _segment_restarted(self, _job: Job, index: int) -> None:
        self.result.restart_segment(index)

    def _segment_ready(self, _job: Job, result: SegmentResult) -> None:
        self.live.segment_done(result)
        if result.speaker:
            self.show_speaking(result.speaker)
        self.result.add_segment(result)
        if result.partial:  # the kept start of a cancelled segment: the cancel says so
            return
        self.show_message(
            self.tr("Segment {number} of {count} ready (RTF {rtf}).").format(
                number=result.index + 1, count=result.segments, rtf=figure(result.rtf)
            )
        )

    def _job_done(self, job: Job) -> None:
        if self.current_job == job:
            self.current_job = None
        if self._cancelling == job:
            self._cancelling = None
        self._set_busy(False)

    # -- one handler per kind of outcome ---------------------------------------------------
    def _loaded(self, job: Job, loaded: "LoadedModel") -> None:
        self._job_done(job)
        self.load_progress.setVisible(False)
        self.live.stop(None, "model ready")
        self._set_loaded(loaded)
        self._run_waiting()

    def _synthesized(self, job: Job, outcome: SynthesisOutcome) -> None:
        self._job_done(job)
        note = self.live.live.snapshot().note  # e.g. the batch lowered after out of memory
        self.live.stop(outcome.summary)
        self.result.end(outcome)
        summary = outcome.summary
        said = (
            self.tr("Done: {seconds:.1f} s of audio, RTF {rtf}.").format(
                seconds=summary.audio_seconds, rtf=figure(summary.rtf)
            )
            if summary
            else self.tr("Done.")
        )
        if note:
            said = self.tr("{done} Note: {note}.").format(done=said, note=core_text(note))
        self.show_message(said)
        self._run_waiting()

    def _auditioned(self, job: Job, candidates: list[Candidate]) -> None:
        self._job_done(job)
        self.live.stop(None)
        if job == self.blend_dialog.job:
            self.blend_dialog.previewed(candidates[0].embedding, candidates[0].audio)
        else:
            self.audition_dialog.show_candidates(candidates)
        self._run_waiting()

    def _audition_asker(self, job: Job) -> "AuditionDialog | BlendDialog":
        """The dialog an audition job is for: the blend dialog's preview, or the Audition."""
        return self.blend_dialog if job == self.blend_dialog.job else self.audition_dialog

    def _speaker_made(self, job: Job, speaker: SeedSpeaker) -> None:
        self._job_done(job)
        self.speakers.copy_text(
            speaker.embedding,
            self.tr("Copied the embedding of seed {seed}.").format(seed=speaker.seed),
        )
        self._run_waiting()

    def _downloaded(self, job: Job, info: models.ModelInfo) -> None:
        self._job_done(job)
        self.model_dialog.download_ended(
            self.tr("The official weights are downloaded and verified.")
        )
        self.model_dialog.mark_ready(info.name)
        self.load_model("official")
        self._run_waiting()

    def _built(self, job: Job, info: models.ModelInfo) -> None:
        self._job_done(job)
        said = self.tr("Built and verified {name}: load it with its Load button.").format(
            name=info.name
        )
        self.model_dialog.build_ended(said)
        self.model_dialog.mark_ready(info.name)
        self.show_message(said)
        self._run_waiting()

    # -- a failure or a cancel, by the kind of job -------------------------------------------
    def _job_failed(self, failure: Failure) -> None:
        job = failure.job
        self._job_done(job)
        self._show_error(failure.error)
        partial = failure.partial if job.kind is JobKind.SYNTHESIZE else None
        self.live.stop(partial.summary if partial else None, "error")
        self.load_progress.setVisible(False)
        sentence = self.error_sentence(failure.error)
        said: dict[JobKind, Callable[[], object]] = {
            JobKind.SYNTHESIZE: lambda: self._synthesis_failed(failure, sentence),
            JobKind.AUDITION: lambda: self._audition_asker(job).failed(sentence),
            JobKind.DOWNLOAD: lambda: self.model_dialog.download_ended(sentence),
            JobKind.BUILD: lambda: self.model_dialog.build_ended(sentence),
            JobKind.LOAD: lambda: self._load_failed(sentence),
            JobKind.RENDER: lambda: self.render_queue.stopped(job, False, sentence),
            JobKind.VOICE: lambda: self.voice_failed(sentence),
            JobKind.SERVE: lambda: self._serving_not_started(job),
        }
        said.get(job.kind, lambda: None)()
        self._run_waiting()

    def _synthesis_failed(self, failure: Failure, sentence: str) -> None:
        # What was finished before the error stays: in the result, the history, saveable.
        self.result.end(failure.partial, failed=True)
        kept = len(failure.partial.results) if failure.partial else 0
        if kept:
            self.show_message(
                self.tr("{reason} {segments} kept: save them with Save…").format(
                    reason=sentence, segments=plural(kept, "finished segment")
                )
            )

    def _load_failed(self, sentence: str) -> None:
        self._load_stopped(sentence)
        self._drop_waiting(sentence)

    def _load_stopped(self, reason: str) -> None:
        """A load failed or was cancelled: show what the engine really holds now. Core checks
        the files before it drops the old model, so usually that one is still there."""
        loaded = self.host.worker.loaded_model
        self.loaded = loaded
        self.model_dialog.show_loaded(loaded)
        self._update_banner()
        if loaded is None:
            self.model_label.setText(self.tr("No model loaded"))
            self.model_label.setStyleSheet("")
            self.controls.show_effective(None)
            said = self.tr("{reason} No model is loaded: choose one in Models (Ctrl+M).").format(
                reason=reason
            )
            self.model_dialog.status_label.setText(said)
            self.show_message(said)
            return
        # Its name, device and precision again, so the next change reloads what works.
        self.model_name = loaded.info.name
        self.controls.select(loaded.device.id, loaded.precision.value, loaded.engine.value)
        self.controls.show_effective(loaded.precision, loaded.engine.value)
        said = self.tr("{reason} Still loaded: {model} on {device}, {precision}.").format(
            reason=reason,
            model=model_label(loaded.info),
            device=loaded.device.id,
            precision=loaded.precision.value,
        )
        self.model_dialog.status_label.setText(said)
        self.show_message(said)

    def _job_cancelled(self, outcome: CancelledOutcome) -> None:
        job = outcome.job
        self._job_done(job)
        self.load_progress.setVisible(False)
        partial = outcome.partial if job.kind is JobKind.SYNTHESIZE else None
        cut = sum(1 for r in partial.results if r.partial) if partial else 0
        # The job's own figures (every step it ran); None for a job cancelled before it began.
        self.live.stop(partial.summary if partial else None, "cancelled", cut)
        said: dict[JobKind, Callable[[], object]] = {
            JobKind.SYNTHESIZE: lambda: self._synthesis_cancelled(partial, cut),
            JobKind.DOWNLOAD: lambda: self.model_dialog.download_ended(
                self.tr("Download cancelled; the next try resumes.")
            ),
            JobKind.BUILD: lambda: self.model_dialog.build_ended(self.tr("Building cancelled.")),
            JobKind.AUDITION: lambda: self._audition_cancelled(job),
            JobKind.LOAD: self._load_cancelled,
            JobKind.RENDER: lambda: self._render_cancelled(job),
            JobKind.VOICE: lambda: self.voice_failed(self.tr("Cancelled.")),
            JobKind.SERVE: lambda: self._serving_not_started(job),
        }
        said.get(job.kind, lambda: self.show_message(self.tr("Cancelled.")))()
        self._run_waiting()

    def _synthesis_cancelled(self, partial: SynthesisOutcome | None, cut: int) -> None:
        """What was made is kept: finished segments, and the start of the one in progress
        (marked partial) that was already streamed."""
        self.result.end(partial, cancelled=True)
        results = partial.results if partial else []
        segments = plural(len(results) - cut, "finished segment")
        if cut:
            said = self.tr(
                "Cancelled; kept {segments} and the start of the segment in progress (marked "
                "partial): save with Save…"
            )
        elif results:
            said = self.tr("Cancelled; kept {segments}: save with Save…")
        else:
            said = self.tr("Cancelled; kept {segments}.")
        self.show_message(said.format(segments=segments))

    def _audition_cancelled(self, job: Job) -> None:
        said = self.tr("Audition cancelled.")
        self._audition_asker(job).failed(said)
        self.show_message(said)

    def _load_cancelled(self) -> None:
        self._load_stopped(self.tr("Loading cancelled."))
        self._drop_waiting(self.tr("Loading was cancelled."))
