"""Turning the user's requests into worker jobs: synthesis, audition, a speaker's embedding,
cancel, and a request that waits for the worker to be free. A part of MainWindow kept in its
own module (job_outcomes.py shows how each job ends)."""

from collections.abc import Callable

from chattts_studio.core.engine.request import SynthesisRequest
from chattts_studio.core.errors import StudioError
from chattts_studio.core.text.prepare import check_text
from chattts_studio.gui.i18n import core_text, translate
from chattts_studio.gui.window.base import WindowBase
from chattts_studio.gui.worker.jobs import AuditionJob, Candidate, Job, JobKind

AUDITION_SEGMENT = 80


class JobRequests(WindowBase):
    """Mixed into MainWindow; uses its panels, dialogs and job state."""

    @staticmethod
    def synthesize_text() -> str:
        """The synth button's text when it starts a synthesis (as gui/window/layout.py made it)."""
        return translate("Window", "Synthesize  (Ctrl+Enter)")

    # -- synthesis -------------------------------------------------------------------------
    def build_request(self) -> SynthesisRequest:
        request = self.settings_request(self.editor.text())
        check_text(request.text)  # empty or unspeakable text: say so before queueing
        return request

    def settings_request(self, text: str) -> SynthesisRequest:
        """A request with every setting the window shows (BadSettingError when one is out
        of range); the text is not checked."""
        generation = self.controls.generation()
        speaker = self.speakers.current()
        request = SynthesisRequest(
            text=text,
            speaker=speaker.embedding or None,
            voice=speaker.voice,  # a library voice, cloned ones included
            lexicon=self.lexicon_entries(),
            seed=generation.seed,
            temperature=generation.temperature,
            top_p=generation.top_p,
            top_k=generation.top_k,
            refine_text=generation.refine_text,
            segment_size=self.controls.segment_slider.value(),
            batch_size=self.controls.batch_box.value(),  # 0: automatic, settled by the plan
            pause_seconds=generation.pause_seconds,
            turn_pause_seconds=self.turn_pause.box.value(),  # used by dialogue scripts only
        )
        request.validate()
        return request

    def synthesize_or_cancel(self) -> None:
        if self.waiting is not None or (
            self.current_job is not None
            and self.current_job.kind is JobKind.SYNTHESIZE
            and self._cancelling is not self.current_job
        ):
            self.cancel()
            return
        self.synthesize()

    def _worker_will_be_free(self) -> bool:
        """The running job is a load (the model comes next) or a job already cancelled."""
        job = self.current_job
        return job is not None and (job.kind is JobKind.LOAD or job is self._cancelling)

    def _wait_for_worker(self, run: Callable[[], object], audition: bool) -> None:
        self.waiting = run
        loading = self.current_job is not None and self.current_job.kind is JobKind.LOAD
        if loading:
            self.synth_button.setText(self.tr("Waiting for the model…  (Esc cancels)"))
            said = (
                self.tr("The audition starts as soon as the model is ready; Esc cancels it.")
                if audition
                else self.tr("The synthesis starts as soon as the model is ready; Esc cancels it.")
            )
        else:
            self.synth_button.setText(
                self.tr("Waiting for the cancelled job to stop…  (Esc cancels)")
            )
            said = (
                self.tr(
                    "The audition starts as soon as the cancelled job has stopped; Esc cancels it."
                )
                if audition
                else self.tr(
                    "The synthesis starts as soon as the cancelled job has stopped; Esc cancels it."
                )
            )
        self.show_message(said)

    def _run_waiting(self) -> None:
        run, self.waiting = self.waiting, None
        if run is not None:
            run()

    def _drop_waiting(self, reason: str) -> None:
        if self.waiting is not None:
            self.waiting = None
            self.synth_button.setText(self.synthesize_text())
            self.show_message(
                self.tr("{reason} The waiting request was not run.").format(reason=reason)
            )

    def synthesize(self) -> Job | None:
        refusal = self.serving_refusal()
        if refusal is not None:  # the speech API owns the model (gui/serve/control.py)
            self.show_message(refusal)
            return None
        if self.current_job is not None and not self._worker_will_be_free():
            self.show_message(self.tr("Busy: wait for the running job or press Esc to cancel it."))
            return None
        try:
            request = self.build_request()
            spec = self.synthesis_job(request)  # a script that cannot be spoken stops here
        except StudioError as exc:
            self._show_error(exc)
            return None
        if self.current_job is not None:
            self._wait_for_worker(self.synthesize, audition=False)
            return None
        if self.loaded is None:
            self.show_message(
                self.tr("No model is loaded: choose one in Models (Ctrl+M) first.")
                if self.banner.isHidden()
                else self.tr(
                    "No model is loaded: choose one in Models (Ctrl+M) or with the banner "
                    "above first."
                )
            )
            return None
        self.result.begin(request.pause_seconds)
        self.current_job = self.host.synthesize(spec)
        self._set_busy(True)
        self.synth_button.setText(self.tr("Cancel  (Esc)"))
        return self.current_job

    def cancel(self) -> None:
        if self.waiting is not None:  # Esc drops what waits, not the load it waits for
            self.waiting = None
            self.synth_button.setText(self.synthesize_text())
            self.show_message(self.tr("The waiting request is cancelled."))
            return
        if self.current_job is not None:
            self._cancelling = self.current_job
            self.host.cancel()
            self.show_message(self.tr("Cancelling…"))

    def _cancel_audition(self) -> None:
        if self.current_job is not None and self.current_job.kind is JobKind.AUDITION:
            self.cancel()

    def _set_busy(self, busy: bool) -> None:
        job = self.current_job
        # Segment and batch size are the running synthesis's: locked until it ends.
        synthesizing = busy and job is not None and job.kind is JobKind.SYNTHESIZE
        self.controls.set_busy(busy, synthesizing)
        self.speakers.audition.setEnabled(not busy)
        if not busy:
            self.synth_button.setText(self.synthesize_text())

    # -- audition and speakers -------------------------------------------------------------
    def show_audition(self) -> None:
        self.audition_dialog.show()
        self.audition_dialog.raise_()

    def _audition(self, text: str, count: int) -> None:
        refusal = self.serving_refusal()
        if refusal is not None:
            self.audition_dialog.failed(refusal)
            return
        if self._worker_will_be_free():
            self._wait_for_worker(lambda: self._audition(text, count), audition=True)
            return
        if self.current_job is not None or self.loaded is None:
            self.audition_dialog.failed(self.tr("Load a model and wait for the running job first."))
            return
        base = self._audition_base(text, batch_size=4)
        self.current_job = self.host.audition(AuditionJob(text, count, base))
        self._set_busy(True)

    def _audition_base(self, text: str, batch_size: int = 0) -> SynthesisRequest:
        """An audition's request: the panel's sampling, no refine pass, short segments."""
        generation = self.controls.generation()
        return SynthesisRequest(
            text=text,
            temperature=generation.temperature,
            top_p=generation.top_p,
            top_k=generation.top_k,
            refine_text=False,
            segment_size=AUDITION_SEGMENT,
            batch_size=batch_size,
            lexicon=self.lexicon_entries(),
        )

    def show_blend(self) -> None:
        self.blend_dialog.show()
        self.blend_dialog.raise_()

    def _preview_blend(self, spec: str, text: str) -> None:
        """The blend dialog's preview: an audition of one voice, the blend (mixed and read on
        the worker; the dialog hears how it ended through job_outcomes.py)."""
        dialog = self.blend_dialog
        refusal = self.serving_refusal()
        if refusal is not None:
            dialog.failed(refusal)
            return
        if self._worker_will_be_free():
            self._wait_for_worker(lambda: self._preview_blend(spec, text), audition=True)
            return
        if self.current_job is not None or self.loaded is None:
            dialog.failed(self.tr("Load a model and wait for the running job first."))
            return
        base = self._audition_base(text)
        voices = {e.name: e.voice for e in self.speakers.library.entries}
        spec_job = AuditionJob(text, 1, base, blend=spec, library=voices)
        self.current_job = dialog.job = self.host.audition(spec_job)
        self._set_busy(True)

    def _keep_candidate(self, name: str, candidate: Candidate, replace: bool = False) -> None:
        """The dialog says what the library did: kept, refused (a taken name: replace it or
        choose another), or could not be written."""
        from chattts_studio.core.voices.speaker_file import SpeakerNameTaken

        dialog = self.audition_dialog
        try:
            entry = self.speakers.store(name, candidate.embedding, candidate.seed, replace)
        except SpeakerNameTaken as taken:
            dialog.name_taken(taken.name, candidate, self.speakers.library.free_name(taken.name))
            return
        except StudioError as exc:
            dialog.keep_failed(core_text(exc))
            self.show_message(core_text(exc))
            return
        self.show_message(dialog.kept(entry.name, candidate, replace))

    def _embedding_wanted(self, seed: int) -> None:
        if self.loaded is None or self.current_job is not None:
            self.show_message(
                self.tr("The embedding of a voice seed needs a loaded model and an idle worker.")
            )
            return
        self.current_job = self.host.speaker_for_seed(seed)
