"""Synthesize: the run row's button, the request made from the window's settings, the job started
when the worker is free, and each of its outcomes shown.
"""

from collections.abc import Callable

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QPushButton

from chattts_studio.core import SAMPLE_RATE
from chattts_studio.core.engine.request import (
    AudioChunk,
    JobPlan,
    SegmentRestarted,
    SegmentResult,
    SynthesisRequest,
)
from chattts_studio.core.errors import StudioError
from chattts_studio.core.services import synthesize as synthesis
from chattts_studio.core.services.synthesize import SynthesisOutcome
from chattts_studio.core.text.prepare import check_text
from chattts_studio.gui.common.notices import figure, plural
from chattts_studio.gui.control.context import WindowContext
from chattts_studio.gui.control.model_control import ModelControl
from chattts_studio.gui.i18n import core_text, translate
from chattts_studio.gui.serve.serve_control import ServeControl
from chattts_studio.gui.voices.voice_control import VoiceControl
from chattts_studio.gui.worker.jobs import CancelledOutcome, Failure, Job, JobKind
from chattts_studio.gui.worker.ops import Op


def synthesize_text() -> str:
    """The button's text when it starts a synthesis."""
    return translate("Window", "Synthesize  (Ctrl+Enter)")


class SynthesisControl(QObject):
    def __init__(
        self,
        context: WindowContext,
        *,
        model: ModelControl,
        voices: VoiceControl,
        serve: ServeControl,
    ) -> None:
        super().__init__(context.window)  # gone with the window, like every part
        jobs = context.jobs
        self.host, self.jobs, self.messages = context.host, jobs, context.messages
        self.model, self.voices, self.serve = model, voices, serve
        panels = context.panels
        self.editor, self.controls, self.speakers = panels.editor, panels.controls, panels.speakers
        self.result, self.live = panels.result, panels.live
        self.button = QPushButton(synthesize_text())
        self.button.setMinimumHeight(34)
        self.button.clicked.connect(self.synthesize_or_cancel)
        jobs.busy_changed.connect(self._show_busy)
        jobs.waiting_dropped.connect(lambda: self.button.setText(synthesize_text()))

    # -- the request ---------------------------------------------------------------------------
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
            lexicon=self.voices.lexicon_entries(),
            seed=generation.seed,
            temperature=generation.temperature,
            top_p=generation.top_p,
            top_k=generation.top_k,
            refine_text=generation.refine_text,
            segment_size=self.controls.segment_slider.value(),
            batch_size=self.controls.batch_box.value(),  # 0: automatic, settled by the plan
            pause_seconds=generation.pause_seconds,
            turn_pause_seconds=self.voices.turn_pause.box.value(),  # dialogue scripts only
        )
        request.validate()
        return request

    # -- starting and cancelling ---------------------------------------------------------------
    def synthesize_or_cancel(self) -> None:
        jobs = self.jobs
        if jobs.waiting is not None or (
            jobs.running(JobKind.SYNTHESIZE) and jobs.cancelling is not jobs.current
        ):
            jobs.cancel()
            return
        self.synthesize()

    def wait_for_worker(self, run: Callable[[], object], audition: bool) -> None:
        """`run` runs as soon as the worker is free; the button and the notice say so."""
        self.jobs.wait(run)
        if self.jobs.running(JobKind.LOAD):
            self.button.setText(translate("JobRequests", "Waiting for the model…  (Esc cancels)"))
            said = (
                translate(
                    "JobRequests",
                    "The audition starts as soon as the model is ready; Esc cancels it.",
                )
                if audition
                else translate(
                    "JobRequests",
                    "The synthesis starts as soon as the model is ready; Esc cancels it.",
                )
            )
        else:
            self.button.setText(
                translate("JobRequests", "Waiting for the cancelled job to stop…  (Esc cancels)")
            )
            said = (
                translate(
                    "JobRequests",
                    "The audition starts as soon as the cancelled job has stopped; Esc cancels it.",
                )
                if audition
                else translate(
                    "JobRequests",
                    "The synthesis starts as soon as the cancelled job has stopped; Esc cancels "
                    "it.",
                )
            )
        self.messages.show(said)

    def synthesize(self) -> Job | None:
        refusal = self.serve.refusal()
        if refusal is not None:  # the speech API owns the model (gui/serve/serve_control.py)
            self.messages.show(refusal)
            return None
        if self.jobs.current is not None and not self.jobs.will_be_free():
            self.messages.show(
                translate(
                    "JobRequests", "Busy: wait for the running job or press Esc to cancel it."
                )
            )
            return None
        try:
            request = self.build_request()
            spec = self.voices.synthesis_job(request)  # a script that cannot be spoken stops here
        except StudioError as exc:
            self.messages.show_error(exc)
            return None
        if self.jobs.current is not None:
            self.wait_for_worker(self.synthesize, audition=False)
            return None
        if self.model.loaded is None:
            self.messages.show(
                translate("JobRequests", "No model is loaded: choose one in Models (Ctrl+M) first.")
                if self.model.banner.isHidden()
                else translate(
                    "JobRequests",
                    "No model is loaded: choose one in Models (Ctrl+M) or with the banner "
                    "above first.",
                )
            )
            return None
        self.messages.show("")  # the last job's outcome is not this one's
        self.result.begin(request.pause_seconds)
        job = self.jobs.submit(
            Op(
                JobKind.SYNTHESIZE,
                lambda engine, cancel, report: synthesis.synthesize(engine, spec, cancel, report),
                done=self._synthesized,
                progress=self._event,
                failed=self._failed,
                cancelled=self._cancelled,
            )
        )
        self.button.setText(translate("JobRequests", "Cancel  (Esc)"))
        return job

    def _show_busy(self, busy: bool) -> None:
        # Segment and batch size are the running synthesis's: locked until it ends.
        self.controls.set_busy(busy, busy and self.jobs.running(JobKind.SYNTHESIZE))
        self.speakers.audition.setEnabled(not busy)
        if not busy:
            self.button.setText(synthesize_text())

    # -- the outcomes --------------------------------------------------------------------------
    def _event(self, _job: Job, event: object) -> None:
        if isinstance(event, AudioChunk):
            self.result.add_chunk(event)
        elif isinstance(event, SegmentResult):
            self._segment_ready(event)
        elif isinstance(event, JobPlan):
            self.result.set_plan(event)
        elif isinstance(event, SegmentRestarted):
            self.result.restart_segment(event.index)

    def _segment_ready(self, result: SegmentResult) -> None:
        self.live.segment_done(result)
        if result.speaker:
            self.voices.show_speaking(result.speaker)
        self.result.add_segment(result)
        if result.partial:  # the kept start of a cancelled segment: the cancel says so
            return
        self.messages.show(
            translate("JobOutcomes", "Segment {number} of {count} ready (RTF {rtf}).").format(
                number=result.index + 1, count=result.segments, rtf=figure(result.rtf)
            )
        )

    def _synthesized(self, _job: Job, outcome: SynthesisOutcome) -> None:
        note = self.live.live.snapshot().note  # e.g. the batch lowered after out of memory
        self.result.end(outcome)  # the result whole (the worker's outcome keeps figures only)
        # The result's length as the history and the waveform show it (pauses included).
        length = len(self.result.audio) / SAMPLE_RATE
        self.live.stop(outcome.summary, audio_seconds=length)
        summary = outcome.summary
        said = (
            translate("JobOutcomes", "Done: {seconds:.1f} s of audio, RTF {rtf}.").format(
                seconds=length, rtf=figure(summary.rtf)
            )
            if summary
            else translate("JobOutcomes", "Done.")
        )
        if note:
            said = translate("JobOutcomes", "{done} Note: {note}.").format(
                done=said, note=core_text(note)
            )
        self.messages.show(said)

    def _failed(self, failure: Failure, sentence: str) -> None:
        # What was finished before the error stays: in the result, the history, saveable.
        self.result.end(failure.partial, failed=True)
        kept = len(failure.partial.results) if failure.partial else 0
        if kept:
            self.messages.show(
                translate("JobOutcomes", "{reason} {segments} kept: save them with Save…").format(
                    reason=sentence, segments=plural(kept, "finished segment")
                )
            )

    def _cancelled(self, outcome: CancelledOutcome) -> None:
        """What was made is kept: finished segments, and the start of the one in progress
        (marked partial) that was already streamed."""
        partial = outcome.partial
        self.result.end(partial, cancelled=True)
        results = partial.results if partial else []
        cut = sum(1 for r in results if r.partial)
        segments = plural(len(results) - cut, "finished segment")
        if cut:
            said = translate(
                "JobOutcomes",
                "Cancelled; kept {segments} and the start of the segment in progress (marked "
                "partial): save with Save…",
            )
        elif results:
            said = translate("JobOutcomes", "Cancelled; kept {segments}: save with Save…")
        else:
            said = translate("JobOutcomes", "Cancelled; kept {segments}.")
        self.messages.show(said.format(segments=segments))
