"""The window's voice features: a voice from a recording, a library speaker's preview, dialogue
script mode and the pronunciation dictionary tab. A part of the window.
"""

from dataclasses import replace
from pathlib import Path

from PySide6.QtCore import QObject
from PySide6.QtGui import QAction

from chattts_studio.core.engine.request import SynthesisRequest
from chattts_studio.core.errors import StudioError
from chattts_studio.core.services import audition
from chattts_studio.core.services.audition import VoiceJob, VoiceOutcome
from chattts_studio.core.services.synthesize import SynthesisJob
from chattts_studio.core.voices.speakers import SpeakerLibrary
from chattts_studio.core.voices.voice import Voice
from chattts_studio.gui.common.notices import MessageLabel
from chattts_studio.gui.control.context import WindowContext
from chattts_studio.gui.control.model_control import ModelControl
from chattts_studio.gui.i18n import core_text, translate
from chattts_studio.gui.panels.lexicon import LexiconPanel
from chattts_studio.gui.voices.script_mode import (
    ScriptHighlighter,
    TurnPause,
    check_script,
    script_problem,
)
from chattts_studio.gui.voices.voice_dialog import Recording, VoiceDialog
from chattts_studio.gui.worker.jobs import Job, JobKind
from chattts_studio.gui.worker.ops import Op

AUDITION_SEGMENT = 80


class VoiceControl(QObject):
    def __init__(self, context: WindowContext, model: ModelControl) -> None:
        window = context.window
        super().__init__(window)
        self.host, self.jobs, self.messages = context.host, context.jobs, context.messages
        self.model = model
        panels = context.panels
        self.editor, self.controls, self.speakers = panels.editor, panels.controls, panels.speakers
        self.result, self.live = panels.result, panels.live
        self.voice_dialog = VoiceDialog(self.result.player, window)
        self.lexicon = LexiconPanel(self.editor.text)
        self.script_action = QAction(translate("Voices", "S&cript mode (Name: text lines)"), window)
        self.script_action.setCheckable(True)
        self.script_action.setToolTip(
            translate("Voices", "Each line is 'Name: text', spoken by that library speaker")
        )
        self.highlighter: ScriptHighlighter | None = None
        # Script mode: the pause between speakers' turns (hidden outside script mode), and why
        # the script cannot be spoken (a line's unknown speaker), in view under the editor.
        self.turn_pause = TurnPause()
        self.script_label = MessageLabel(lines=1)
        self.script_label.setObjectName("scriptProblem")
        self.script_label.setAccessibleName(translate("Window", "Script problem"))
        self.script_label.setVisible(False)
        self._connect()

    def _connect(self) -> None:
        self.speakers.new_voice_wanted.connect(self.show_voice_dialog)
        self.speakers.preview_wanted.connect(self._play_preview)
        self.voice_dialog.audition_requested.connect(self._audition_voice)
        self.voice_dialog.keep_requested.connect(self._keep_voice)
        self.voice_dialog.cancel_requested.connect(self._cancel_voice)
        self.voice_dialog.playing.connect(self.result.forget_playback)
        self.lexicon.message.connect(self.messages.show)
        self.editor.editor.textChanged.connect(self._editor_changed)
        self.script_action.toggled.connect(self.set_script_mode)
        if self.lexicon.problem:
            self.messages.warn(self.lexicon.problem)

    # -- requests --------------------------------------------------------------------------
    def lexicon_entries(self) -> tuple[tuple[str, str], ...]:
        return self.lexicon.entries()

    def library_voices(self) -> dict[str, Voice]:
        return {entry.name: entry.voice for entry in self.speakers.library.entries}

    def synthesis_job(self, request: SynthesisRequest) -> SynthesisJob:
        """The job for the editor's text: a dialogue in script mode, else the chosen speaker's
        (ScriptError, naming the line, for a script that cannot be spoken)."""
        if self.script_action.isChecked():
            _turns, voices = check_script(request.text, self.library_voices())
            label = ", ".join(voices)
            return SynthesisJob(replace(request, voice=None), None, label, voices=voices)
        speaker = self.speakers.current()
        seed = speaker.seed if speaker.embedding is None else None
        return SynthesisJob(request, seed, speaker.label)

    def script_lines(self, text: str) -> tuple[tuple[str, Voice, str], ...]:
        """In script mode, each turn's speaker, voice and text (a project keeps each line's
        speaker); () outside it. ScriptError, naming the line, for a script that cannot be
        spoken."""
        if not self.script_action.isChecked():
            return ()
        turns, voices = check_script(text, self.library_voices())
        return tuple((t.name, voices[t.name], t.text) for t in turns)

    # -- script mode -----------------------------------------------------------------------
    def set_script_mode(self, on: bool) -> None:
        if on and self.highlighter is None:
            self.highlighter = ScriptHighlighter(
                self.editor.editor.document(), lambda: set(self.library_voices())
            )
        elif not on and self.highlighter is not None:
            self.highlighter.setDocument(None)
            self.highlighter = None
        self.turn_pause.set_shown(on)
        self._editor_changed()

    def script_problem(self) -> str:
        if not self.script_action.isChecked():
            return ""
        return script_problem(self.editor.text(), self.library_voices())

    def _editor_changed(self) -> None:
        self.lexicon.preview_soon()
        problem = self.script_problem()
        self.script_label.setText(problem)
        self.script_label.setVisible(bool(problem))

    def show_speaking(self, name: str) -> None:
        """The live panel names who speaks (the dialogue's segment that just came)."""
        self.live.speaking.setText(name or "-")

    # -- a voice from a recording ----------------------------------------------------------
    def show_voice_dialog(self) -> None:
        self.voice_dialog.show()
        self.voice_dialog.raise_()

    def short_request(self, text: str, seed: int = 0, batch_size: int = 0) -> SynthesisRequest:
        """A short take's request (an audition, a voice's preview): the panel's sampling, no
        refine pass, short segments, the dictionary."""
        generation = self.controls.generation()
        return SynthesisRequest(
            text=text,
            seed=seed,
            temperature=generation.temperature,
            top_p=generation.top_p,
            top_k=generation.top_k,
            refine_text=False,
            segment_size=AUDITION_SEGMENT,
            batch_size=batch_size,
            lexicon=self.lexicon_entries(),
        )

    def _voice_job(self, spec: VoiceJob) -> Job | None:
        if self.jobs.current is not None or self.model.loaded is None:
            self.voice_dialog.failed(
                translate("Voices", "Load a model and wait for the running job first.")
            )
            return None
        return self.jobs.submit(
            Op(
                JobKind.VOICE,
                lambda engine, cancel, report: audition.clone_voice(engine, spec, cancel, report),
                done=self._voice_made,
                failed=lambda _f, sentence: self.voice_dialog.failed(sentence),
                cancelled=lambda _o: self.voice_dialog.failed(
                    translate("JobOutcomes", "Cancelled.")
                ),
                check_after=False,  # once the voice is in the library, the job says so
            )
        )

    def _recording_spec(self, recording: Recording, transcript: str, text: str) -> VoiceJob:
        return VoiceJob(
            transcript,
            self.short_request(text, self.controls.generation().seed),
            recording.source,
            recording.take,
            recording.rate,
            library=self.speakers.library.path,
        )

    def _audition_voice(self, recording: Recording, transcript: str, text: str) -> None:
        self._voice_job(self._recording_spec(recording, transcript, text))

    def _keep_voice(self, recording: Recording, transcript: str, name: str) -> None:
        if self.speakers.library.locked:
            self.voice_dialog.failed(core_text(StudioError(self.speakers.library.problem)))
            return
        spec = self._recording_spec(recording, transcript, "")
        self._voice_job(replace(spec, name=name))

    def _voice_made(self, _job: Job, outcome: VoiceOutcome) -> None:
        if outcome.kept:
            # The worker wrote the library file: read it again, then select the new voice.
            self.speakers.library = SpeakerLibrary.open_or_locked(self.speakers.library.path)
            self.speakers.refresh(select=outcome.kept)
            self.speakers.library_mode.setChecked(True)
            self.messages.show(self.voice_dialog.kept(outcome.kept))
        elif outcome.audio is not None:
            self.voice_dialog.auditioned(outcome.audio)

    def _cancel_voice(self) -> None:
        """The dialog's Cancel (or closing it): only the voice job stops; the worker ends it as
        cancelled and the dialog says so (job_outcomes.py)."""
        job = self.jobs.current
        if is_voice(job) and self.jobs.cancelling is not job:
            self.jobs.cancel_job(job)  # type: ignore[arg-type]
            self.voice_dialog.status.setText(translate("Voices", "Cancelling…"))

    def _play_preview(self, path: Path) -> None:
        """A library speaker's preview clip (a few seconds of FLAC): read and played."""
        import soundfile as sf

        try:
            audio, _rate = sf.read(str(path), dtype="float32")
            self.result.forget_playback()
            self.result.player.play(audio)
        except (OSError, RuntimeError, sf.LibsndfileError) as exc:
            self.messages.show(
                translate("Voices", "Cannot play the preview {path}: {reason}").format(
                    path=path.name, reason=exc
                )
            )
        except StudioError as exc:
            self.messages.show(core_text(exc))


def is_voice(job: Job | None) -> bool:
    return job is not None and job.kind is JobKind.VOICE
