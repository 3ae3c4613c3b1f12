"""Speakers heard before they are used: Audition's candidates, the blend dialog's preview and a
voice seed's embedding copied, each a worker job whose outcome goes back to the dialog that asked.
"""

from collections.abc import Callable

from PySide6.QtCore import QObject

from chattts_studio.core.errors import StudioError
from chattts_studio.core.services import audition
from chattts_studio.core.services.audition import AuditionJob, Candidate, SeedSpeaker
from chattts_studio.core.services.report import Progress
from chattts_studio.gui.common.notices import plural
from chattts_studio.gui.control.context import WindowContext
from chattts_studio.gui.control.model_control import ModelControl
from chattts_studio.gui.i18n import core_text, translate
from chattts_studio.gui.panels.blend import BlendDialog
from chattts_studio.gui.serve.serve_control import ServeControl
from chattts_studio.gui.voices.audition_dialog import AuditionDialog
from chattts_studio.gui.voices.voice_control import VoiceControl
from chattts_studio.gui.worker.jobs import CancelledOutcome, Failure, Job, JobKind
from chattts_studio.gui.worker.ops import Op

# How a request that must wait for the worker is held (SynthesisControl.wait_for_worker).
Wait = Callable[[Callable[[], object], bool], None]


class AuditionControl(QObject):
    def __init__(
        self,
        context: WindowContext,
        *,
        model: ModelControl,
        voices: VoiceControl,
        serve: ServeControl,
        wait: Wait,
    ) -> None:
        window, messages = context.window, context.messages
        super().__init__(window)
        self.host, self.jobs, self.messages, self.wait = context.host, context.jobs, messages, wait
        self.model, self.voices, self.serve = model, voices, serve
        panels = context.panels
        self.controls, self.speakers, result = panels.controls, panels.speakers, panels.result
        self.live = panels.live
        self.dialog = AuditionDialog(result.player, window)
        self.blend_dialog = BlendDialog(self.speakers, result.player, window)
        self.dialog.generate_requested.connect(self._audition)
        self.dialog.keep_requested.connect(self._keep_candidate)
        self.dialog.cancel_requested.connect(self._cancel)
        self.dialog.playing.connect(result.forget_playback)
        self.blend_dialog.preview_requested.connect(self._preview_blend)
        self.blend_dialog.cancel_requested.connect(self._cancel)
        self.blend_dialog.playing.connect(result.forget_playback)
        self.blend_dialog.message.connect(messages.show)
        self.speakers.embedding_wanted.connect(self._embedding_wanted)
        self.speakers.audition_wanted.connect(self.show_audition)
        self.speakers.blend_wanted.connect(self.show_blend)

    def show_audition(self) -> None:
        self.dialog.show()
        self.dialog.raise_()

    def show_blend(self) -> None:
        self.blend_dialog.show()
        self.blend_dialog.raise_()

    # -- requests ------------------------------------------------------------------------------
    def _audition(self, text: str, count: int, stability: bool | None = None) -> None:
        """Candidates for the dialog; rated for stability when its box is checked as asked."""
        rate = self.dialog.rate.isChecked() if stability is None else stability
        refusal = self.serve.refusal()
        if refusal is not None:
            self.dialog.failed(refusal)
            return
        if self.jobs.will_be_free():
            self.wait(lambda: self._audition(text, count, rate), True)
            return
        if self.jobs.current is not None or self.model.loaded is None:
            self.dialog.failed(
                translate("JobRequests", "Load a model and wait for the running job first.")
            )
            return
        base = self.voices.short_request(text, batch_size=4)
        self._submit(AuditionJob(text, count, base, stability=rate))

    def _preview_blend(self, spec: str, text: str) -> None:
        """The blend dialog's preview: an audition of one voice, the blend (mixed and read on
        the worker; the dialog hears how it ended through _auditioned)."""
        dialog = self.blend_dialog
        refusal = self.serve.refusal()
        if refusal is not None:
            dialog.failed(refusal)
            return
        if self.jobs.will_be_free():
            self.wait(lambda: self._preview_blend(spec, text), True)
            return
        if self.jobs.current is not None or self.model.loaded is None:
            dialog.failed(
                translate("JobRequests", "Load a model and wait for the running job first.")
            )
            return
        base = self.voices.short_request(text)
        voices = {e.name: e.voice for e in self.speakers.library.entries}
        spec_job = AuditionJob(text, 1, base, blend=spec, library=voices)
        dialog.job = self._submit(spec_job)

    def _submit(self, spec: AuditionJob) -> Job:
        return self.jobs.submit(
            Op(
                JobKind.AUDITION,
                lambda engine, cancel, report: audition.audition(engine, spec, cancel, report),
                done=self._auditioned,
                progress=lambda job, event: self._progress(job, event, spec.count),
                failed=self._failed,
                cancelled=self._cancelled,
            )
        )

    def _keep_candidate(self, name: str, candidate: Candidate, replace: bool = False) -> None:
        """The dialog says what the library did: kept, refused (a taken name: replace it or
        choose another), or could not be written."""
        from chattts_studio.core.voices.speaker_file import SpeakerNameTaken

        dialog = self.dialog
        try:
            entry = self.speakers.store(name, candidate.embedding, candidate.seed, replace)
        except SpeakerNameTaken as taken:
            dialog.name_taken(taken.name, candidate, self.speakers.library.free_name(taken.name))
            return
        except StudioError as exc:
            dialog.keep_failed(core_text(exc))
            self.messages.show(core_text(exc))
            return
        self.messages.show(dialog.kept(entry.name, candidate, replace))

    def _embedding_wanted(self, seed: int) -> None:
        if self.model.loaded is None or self.jobs.current is not None:
            self.messages.show(
                translate(
                    "JobRequests",
                    "The embedding of a voice seed needs a loaded model and an idle worker.",
                )
            )
            return
        # No busy state: it is quick.
        op = Op(JobKind.SPEAKER, audition.seed_speaker(seed), done=self._speaker_made)
        self.jobs.submit(op, busy=False)

    def _cancel(self) -> None:
        if self.jobs.running(JobKind.AUDITION):
            self.jobs.cancel()

    # -- outcomes ------------------------------------------------------------------------------
    def _asker(self, job: Job) -> AuditionDialog | BlendDialog:
        """The dialog an audition job is for: the blend dialog's preview, or the Audition."""
        return self.blend_dialog if job == self.blend_dialog.job else self.dialog

    def _progress(self, job: Job, event: object, count: int) -> None:
        if isinstance(event, Progress):
            detail = core_text(event.detail) if event.detail else plural(count, "candidate")
            self._asker(job).set_progress(event.fraction, detail)

    def _auditioned(self, job: Job, candidates: list[Candidate]) -> None:
        self.live.stop(None)
        if job == self.blend_dialog.job:
            self.blend_dialog.previewed(candidates[0].embedding, candidates[0].audio)
        else:
            self.dialog.show_candidates(candidates)

    def _speaker_made(self, _job: Job, speaker: SeedSpeaker) -> None:
        self.speakers.copy_text(
            speaker.embedding,
            translate("JobOutcomes", "Copied the embedding of seed {seed}.").format(
                seed=speaker.seed
            ),
        )

    def _failed(self, failure: Failure, sentence: str) -> None:
        asker = self._asker(failure.job)
        if self._show_unrated(asker, failure.partial):
            sentence = translate(
                "JobOutcomes", "Stability not rated: {reason} The candidates are here, unrated."
            ).format(reason=sentence)
        asker.failed(sentence)

    def _cancelled(self, outcome: CancelledOutcome) -> None:
        asker = self._asker(outcome.job)
        said = translate("JobOutcomes", "Audition cancelled.")
        if self._show_unrated(asker, outcome.partial):
            said = translate(
                "JobOutcomes", "Stability rating cancelled: the candidates are here, unrated."
            )
        asker.failed(said)
        self.messages.show(said)

    def _show_unrated(self, asker: AuditionDialog | BlendDialog, partial: object) -> bool:
        """Whether the job stopped while rating candidates it had made: they are shown, unrated,
        so a stopped rating loses no voice already heard."""
        if asker is not self.dialog or not isinstance(partial, list) or not partial:
            return False
        self.dialog.show_candidates(partial)
        return True
