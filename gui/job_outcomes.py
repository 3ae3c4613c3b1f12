"""What the main window does with each worker outcome (started, progress, audio, finished,
failed, cancelled): a part of MainWindow kept in its own module. Every method runs on the UI
thread (the worker's signals are queued to it)."""

from core import models
from core.engine import LoadedModel
from core.request import AudioChunk, SegmentResult

from .notices import figure, plural
from .worker import CancelledOutcome, Failure, Job, JobKind, Progress, SynthesisOutcome


class JobOutcomes:
    """Mixed into MainWindow; uses its panels, dialogs and job state."""

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
            self.show_message(f"Loading {self.model_name}: {progress.stage}")
        elif kind is JobKind.DOWNLOAD:
            self.model_dialog.download_progress(progress.detail)
        elif kind is JobKind.BUILD:
            self.model_dialog.build_progress(progress.stage, progress.fraction, progress.detail)
        elif kind is JobKind.AUDITION:
            self.audition_dialog.set_progress(progress.fraction, progress.detail)

    def _chunk_ready(self, _job: Job, chunk: AudioChunk) -> None:
        self.result.add_chunk(chunk)

    def _segment_restarted(self, _job: Job, index: int) -> None:
        self.result.restart_segment(index)

    def _segment_ready(self, _job: Job, result: SegmentResult) -> None:
        self.live.segment_done(result)
        self.result.add_segment(result)
        if result.partial:  # the kept start of a cancelled segment: the cancel says so
            return
        self.show_message(
            f"Segment {result.index + 1} of {result.segments} ready (RTF {figure(result.rtf)})."
        )

    def _job_done(self, job: Job) -> None:
        if self.current_job == job:
            self.current_job = None
        if self._cancelling == job:
            self._cancelling = None
        self._set_busy(False)

    def _job_finished(self, job: Job, payload: object) -> None:
        self._job_done(job)
        if job.kind is JobKind.LOAD and isinstance(payload, LoadedModel):
            self.load_progress.setVisible(False)
            self.live.stop(None, "model ready")
            self._set_loaded(payload)
        elif job.kind is JobKind.SYNTHESIZE and isinstance(payload, SynthesisOutcome):
            note = self.live.live.snapshot().note  # e.g. the batch lowered after out of memory
            self.live.stop(payload.summary)
            self.result.end(payload)
            summary = payload.summary
            self.show_message(
                (
                    f"Done: {summary.audio_seconds:.1f} s of audio, RTF {figure(summary.rtf)}."
                    if summary
                    else "Done."
                )
                + (f" Note: {note}." if note else "")
            )
        elif job.kind is JobKind.AUDITION and isinstance(payload, list):
            self.live.stop(None)
            self.audition_dialog.show_candidates(payload)
        elif job.kind is JobKind.SPEAKER and isinstance(payload, tuple):
            seed, embedding = payload
            self.speakers.copy_text(embedding, f"Copied the embedding of seed {seed}.")
        elif job.kind is JobKind.DOWNLOAD:
            self.model_dialog.download_ended("The official weights are downloaded and verified.")
            self.load_model("official")
        elif job.kind is JobKind.BUILD and isinstance(payload, models.ModelInfo):
            said = f"Built and verified {payload.name}: load it with its Load button."
            self.model_dialog.build_ended(said)
            self.show_message(said)
        self._run_waiting()

    def _job_failed(self, failure: Failure) -> None:
        job = failure.job
        self._job_done(job)
        self._show_error(failure.error)
        partial = failure.partial if job.kind is JobKind.SYNTHESIZE else None
        self.live.stop(partial.summary if partial else None, "error")
        self.load_progress.setVisible(False)
        sentence = self.error_sentence(failure.error)
        if job.kind is JobKind.SYNTHESIZE:
            # What was finished before the error stays: in the result, the history, saveable.
            self.result.end(failure.partial, failed=True)
            kept = len(failure.partial.results) if failure.partial else 0
            if kept:
                self.show_message(
                    f"{sentence} {plural(kept, 'finished segment')} kept: save them with Save…"
                )
        elif job.kind is JobKind.AUDITION:
            self.audition_dialog.failed(sentence)
        elif job.kind is JobKind.DOWNLOAD:
            self.model_dialog.download_ended(sentence)
        elif job.kind is JobKind.BUILD:
            self.model_dialog.build_ended(sentence)
        elif job.kind is JobKind.LOAD:
            self._load_stopped(sentence)
            self._drop_waiting(sentence)
        self._run_waiting()

    def _load_stopped(self, reason: str) -> None:
        """A load failed or was cancelled: show what the engine really holds now. Core checks
        the files before it drops the old model, so usually that one is still there."""
        loaded = self.host.worker.engine.loaded
        self.loaded = loaded
        self.model_dialog.show_loaded(loaded)
        self._update_banner()
        if loaded is None:
            self.model_label.setText("No model loaded")
            self.model_label.setStyleSheet("")
            self.controls.show_effective(None)
            said = f"{reason} No model is loaded: choose one in Models (Ctrl+M)."
            self.model_dialog.status_label.setText(said)
            self.show_message(said)
            return
        # Its name, device and precision again, so the next change reloads what works.
        self.model_name = loaded.info.name
        self.controls.select(loaded.device.id, loaded.precision.value)
        self.controls.show_effective(loaded.precision)
        said = (
            f"{reason} Still loaded: {loaded.info.label} on {loaded.device.id}, "
            f"{loaded.precision.value}."
        )
        self.model_dialog.status_label.setText(said)
        self.show_message(said)

    def _job_cancelled(self, outcome: CancelledOutcome) -> None:
        job = outcome.job
        self._job_done(job)
        self.load_progress.setVisible(False)
        partial = outcome.partial if job.kind is JobKind.SYNTHESIZE else None
        results = partial.results if partial else []
        cut = sum(1 for r in results if r.partial)  # the kept start of the segment in progress
        # The job's own figures (every step it ran); None for a job cancelled before it began.
        self.live.stop(partial.summary if partial else None, "cancelled", cut)
        if job.kind is JobKind.SYNTHESIZE:
            self.result.end(partial, cancelled=True)
            finished = len(results) - cut
            said = f"Cancelled; kept {plural(finished, 'finished segment')}"
            if cut:
                said += " and the start of the segment in progress (marked partial)"
            self.show_message(said + (": save with Save…" if results else "."))
        elif job.kind is JobKind.DOWNLOAD:
            self.model_dialog.download_ended("Download cancelled; the next try resumes.")
        elif job.kind is JobKind.BUILD:
            self.model_dialog.build_ended("Building cancelled.")
        elif job.kind is JobKind.AUDITION:
            self.audition_dialog.failed("Audition cancelled.")
            self.show_message("Audition cancelled.")
        elif job.kind is JobKind.LOAD:
            self._load_stopped("Loading cancelled.")
            self._drop_waiting("Loading was cancelled.")
        else:
            self.show_message("Cancelled.")
        self._run_waiting()
