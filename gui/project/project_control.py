"""The segment editor's part of the window: the Project menu, the segments panel (a tab beside
the editor), and each of its actions run where it belongs: takes (a new project, re-rolls, an
edited segment made again, the checks) as worker jobs on the loaded model; picks, locks,
splits, merges, another speaker and a voice's reference on the thread pool (no model:
core/project/edits.py); playing chosen takes (playing.py); export. Every change is saved by
the core as it is made; the panel then shows the project as it is on disk, read again off the
UI thread."""

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QMenu

from chattts_studio.core.engine.request import SynthesisRequest
from chattts_studio.core.errors import StudioError
from chattts_studio.core.project import edits, store
from chattts_studio.core.project.model import Project
from chattts_studio.core.services import project_job
from chattts_studio.core.services.project_job import (
    BestJob,
    CleanJob,
    EditJob,
    HearJob,
    NewProjectJob,
    ProjectDone,
    ProjectJob,
    RerollJob,
    VoiceJob,
    compares_with_demo,
    hears_with_demo,
)
from chattts_studio.core.services.report import Progress
from chattts_studio.core.text.prepare import check_text
from chattts_studio.gui.common import dialogs
from chattts_studio.gui.common.actions import add_action
from chattts_studio.gui.common.tasks import in_background
from chattts_studio.gui.control.context import WindowContext
from chattts_studio.gui.control.model_control import ModelControl
from chattts_studio.gui.i18n import core_text, translate
from chattts_studio.gui.project import said
from chattts_studio.gui.project.exporting import export_chosen
from chattts_studio.gui.project.panel import ProjectPanel
from chattts_studio.gui.project.playing import TakePlayer
from chattts_studio.gui.project.rows import SegmentRow, build_rows
from chattts_studio.gui.serve.serve_control import ServeControl
from chattts_studio.gui.voices.voice_control import VoiceControl
from chattts_studio.gui.worker.jobs import CancelledOutcome, Failure, Job, JobKind
from chattts_studio.gui.worker.ops import Op

# The window's settings as a request (SynthesisControl.settings_request).
SettingsRequest = Callable[[str], SynthesisRequest]


class ProjectControl(QObject):
    opened = Signal()  # a project is shown: the window brings the segments to the front
    closed = Signal()  # no project is shown any more
    queue_wanted = Signal(object, str)  # Path, title: the project into the render queue

    def __init__(
        self,
        context: WindowContext,
        *,
        model: ModelControl,
        voices: VoiceControl,
        serve: ServeControl,
        settings_request: SettingsRequest,
    ) -> None:
        super().__init__(context.window)
        self.window, self.host, self.jobs = context.window, context.host, context.jobs
        self.messages = context.messages
        self._warned: set[tuple[Path, str]] = set()  # the project's warnings already shown
        self.model, self.voices, self.serve = model, voices, serve
        self.speakers, self.result = context.panels.speakers, context.panels.result
        self.settings_request, self.text_source = settings_request, context.panels.editor.text
        self.panel = ProjectPanel()
        self.project: Project | None = None
        self.folder: Path | None = None
        self.running: ProjectJob | None = None  # the takes job under way (or the last one)
        self.player = TakePlayer(self.result, self.messages.show, self._problem, self)
        self._connect()

    def add_menu(self) -> None:
        """The Project menu, before the last one (Help on Linux, else Settings)."""
        window = self.window
        bar = window.menuBar()
        menu = QMenu(translate("Projects", "&Project"), window)
        bar.insertMenu(bar.actions()[-1], menu)
        self.new_action = add_action(
            window,
            menu,
            translate("Projects", "&New from text…"),
            QKeySequence("Ctrl+Shift+N"),
            self.new_from_text,
        )
        self.open_action = add_action(
            window, menu, translate("Projects", "&Open…"), QKeySequence("Ctrl+Shift+O"), self.open
        )
        self.export_action = add_action(
            window, menu, translate("Projects", "&Export…"), None, self.export
        )
        self.queue_action = add_action(
            window,
            menu,
            translate("Projects", "Add to the render &queue"),
            None,
            self.add_to_queue,
        )
        self.close_action = add_action(
            window, menu, translate("Projects", "&Close"), None, self.close_project
        )

    def _connect(self) -> None:
        panel = self.panel
        player = self.player
        panel.play_toggled.connect(lambda number: player.toggle(self.folder, self.project, number))
        player.words.spoken.connect(panel.model.set_spoken)  # the word spoken, in its text
        panel.play_segment_wanted.connect(lambda number: self.play(number, number))
        panel.play_from_wanted.connect(lambda number: self.play(number, None))
        panel.play_take_wanted.connect(
            lambda number, take: player.take(self.folder, self.project, number, take)
        )
        panel.reroll_wanted.connect(
            lambda numbers, takes: self._make(RerollJob(self._path(), tuple(numbers), takes))
        )
        panel.reroll_flagged_wanted.connect(
            lambda takes: self._make(RerollJob(self._path(), (), takes, flagged=True))
        )
        panel.reroll_unlocked_wanted.connect(
            lambda takes: self._make(RerollJob(self._path(), (), takes, unlocked=True))
        )
        panel.check_wanted.connect(lambda: self._make(HearJob(self._path())))
        panel.voice_check_wanted.connect(lambda: self._make(VoiceJob(self._path())))
        panel.clean_wanted.connect(
            lambda tries: self._make(CleanJob(self._path(), tries, self.panel.with_voice))
        )
        panel.best_wanted.connect(
            lambda takes: self._make(BestJob(self._path(), takes, self.panel.with_voice))
        )
        panel.text_edited.connect(
            lambda number, text: self._make(EditJob(self._path(), number, text))
        )
        panel.pick_wanted.connect(self._pick)
        panel.reference_wanted.connect(self._reference)
        panel.lock_wanted.connect(self._lock)
        panel.split_wanted.connect(
            lambda number, at: self._change(lambda p: edits.split(p, number, at))
        )
        panel.merge_wanted.connect(lambda number: self._change(lambda p: edits.merge(p, number)))
        panel.speaker_wanted.connect(self._speaker)
        panel.export_wanted.connect(self.export)
        self.voices.lexicon.changed.connect(self._lexicon_changed)
        self.jobs.busy_changed.connect(self._busy)

    def _path(self) -> Path:
        assert self.folder is not None  # the panel offers its actions only with a project
        return self.folder

    # -- showing a project -------------------------------------------------------------------
    def open(self) -> None:
        folder = dialogs.open_project_folder(self.window, self.result.last_folder)
        if folder is not None:
            self.show_folder(folder)

    def show_folder(
        self, folder: Path, numbers: list[int] | None = None, front: bool = True
    ) -> None:
        """Read the project off the UI thread (a 1,000-segment one is ~70 ms) and make its
        rows there too (~15 ms more), then show it; `numbers`: only those rows changed (a
        pick or a lock), made on the UI thread. `front`: the window shows the segments tab
        (not when the last session's project reopens at start)."""
        lexicon = self.voices.lexicon_entries()
        every_row = numbers is None or self.panel.model.project is None

        def read() -> tuple[Project, list[SegmentRow] | None]:
            project = store.load(folder)
            return project, build_rows(project, lexicon) if every_row else None

        def shown(read: tuple[Project, list[SegmentRow] | None]) -> None:
            project, rows = read
            self.project, self.folder = project, folder
            if rows is None and numbers is not None and self.panel.model.project is not None:
                self.panel.update_segments(project, numbers)
            else:
                self.panel.show_project(project, folder, lexicon, rows)
            if front:
                self.opened.emit()
            for warning in project.warnings:  # a stray take record left out, once each
                if (folder, warning) not in self._warned:
                    self._warned.add((folder, warning))
                    self.messages.show(core_text(warning))

        in_background(read, shown, self._problem, owner=self)

    def _lexicon_changed(self) -> None:
        """A changed dictionary entry: the takes that read a segment otherwise now go stale."""
        if self.project is not None:
            self.panel.show_project(self.project, self.folder, self.voices.lexicon_entries())

    def close_project(self) -> None:
        if self.jobs.running(JobKind.PROJECT):
            self.messages.show(
                translate("Projects", "Wait for the takes being made, or press Esc to cancel.")
            )
            return
        self.project = self.folder = None
        self.panel.show_project(None, None)
        self.closed.emit()

    def _problem(self, error: Exception) -> None:
        if not isinstance(error, StudioError):
            raise error  # a bug: Qt prints it, the app's excepthook says it
        self.messages.show(core_text(error))

    # -- takes: worker jobs on the loaded model ------------------------------------------------
    def _refusal(self) -> str | None:
        refusal = self.serve.refusal()  # the speech API owns the model
        if refusal is not None:
            return refusal
        if self.jobs.current is not None:
            return translate(
                "JobRequests", "Busy: wait for the running job or press Esc to cancel it."
            )
        if self.model.loaded is None:
            return translate(
                "JobRequests", "No model is loaded: choose one in Models (Ctrl+M) first."
            )
        return None

    def new_from_text(self) -> None:
        refusal = self._refusal()
        if refusal is not None:
            self.messages.show(refusal)
            return
        try:
            request = self.settings_request(self.text_source())
            check_text(request.text)
            lines = self.voices.script_lines(request.text)  # () outside script mode
        except StudioError as exc:
            self.messages.show_error(exc)
            return
        path = dialogs.new_project_path(self.window, self.result.last_folder)
        if path is None:
            return
        try:
            store.check_new(path)
        except StudioError as exc:
            self.messages.show_error(exc)
            return
        speaker = self.speakers.current()
        seed = speaker.seed if speaker.embedding is None and speaker.voice is None else None
        spec = NewProjectJob(
            path, takes=self.panel.takes, request=request, speaker_seed=seed, lines=lines
        )
        self._make(spec)

    def _make(self, spec: ProjectJob) -> Job | None:
        refusal = self._refusal()
        if refusal is not None:
            self.messages.show(refusal)
            return None
        if not isinstance(spec, NewProjectJob):
            spec = replace(spec, request=self.settings_request(""))
        ready = spec
        job = self.jobs.submit(
            Op(
                JobKind.PROJECT,
                lambda engine, cancel, report: project_job.run_project(
                    engine, ready, cancel, report
                ),
                done=self._done,
                progress=self._progress,
                failed=self._failed,
                cancelled=self._cancelled,
            )
        )
        self.running = spec
        self.messages.show(said.working(spec))
        return job

    def _busy(self, busy: bool) -> None:
        # A takes job holds the project (its lock): nothing else may change it meanwhile.
        # Another job (a synthesis) leaves picks and locks free; a re-roll is refused then.
        self.panel.set_busy(busy and self.jobs.running(JobKind.PROJECT))

    def _progress(self, _job: Job, event: object) -> None:
        if isinstance(event, Progress) and self.running is not None:
            self.messages.show(said.working(self.running, core_text(event.detail)))

    def _done(self, _job: Job, done: ProjectDone) -> None:
        loaded = self.model.loaded
        random_tts = loaded is not None and loaded.info.random_weights
        demo, voice_demo = hears_with_demo(random_tts), compares_with_demo(random_tts)
        made, seconds, skipped = done.made, done.seconds, done.skipped
        if self.running is not None:
            finished = said.finished(self.running, made, seconds, demo, voice_demo, skipped)
            self.messages.show(finished)
        self.show_folder(done.folder)

    def _failed(self, failure: Failure, _sentence: str) -> None:
        self._after_stop(failure.job)

    def _cancelled(self, outcome: CancelledOutcome) -> None:
        self.messages.show(translate("Projects", "Cancelled; the takes already made are kept."))
        self._after_stop(outcome.job)

    def _after_stop(self, _job: Job) -> None:
        """The takes made before a failure or a cancel are saved: show them."""
        if self.folder is not None and self.folder.is_dir():
            self.show_folder(self.folder)

    # -- changes without the model: on the thread pool -------------------------------------------
    def _change(
        self,
        change: Callable[[Path], object],
        numbers: list[int] | None = None,
        done: str = "",
    ) -> None:
        """`change` made on the thread pool, then the project shown again and `done` said."""
        if self.folder is None or self.jobs.running(JobKind.PROJECT):
            return  # a job holds the project: the panel is busy and offers nothing
        folder = self.folder

        def changed(_result: object) -> None:
            if done:
                self.messages.show(done)
            self.show_folder(folder, numbers)

        in_background(lambda: change(folder), changed, self._problem, self)

    def _place(self, number: int, take: int) -> int:
        """Take `take`'s place among segment `number`'s takes, as the take list counts them."""
        segment = self.project.at(number) if self.project is not None else None
        ids = [t.id for t in segment.takes] if segment is not None else []
        return ids.index(take) + 1 if take in ids else take

    def _pick(self, number: int, take: int) -> None:
        done = said.picked(number, self._place(number, take))
        self._change(lambda p: edits.pick(p, number, take), [number], done)

    def _reference(self, number: int, take: int) -> None:
        """The take becomes its voice's reference (any other take of that voice stops being
        one: every row of the voice is shown again)."""
        done = said.reference(number, self._place(number, take))
        self._change(lambda p: edits.mark_reference(p, number, take), None, done)

    def _lock(self, numbers: list[int], locked: bool) -> None:
        spec = ",".join(str(n) for n in numbers)
        done = said.locked(numbers, locked)
        self._change(lambda p: edits.set_locked(p, spec, locked), numbers, done)

    def _speaker(self, numbers: list[int]) -> None:
        """The segments read in the Speaker tab's voice from now on (their takes go stale)."""
        speaker = self.speakers.current()
        voice = speaker.voice
        if voice is None and speaker.embedding:
            from chattts_studio.core.voices.voice import Voice

            voice = Voice(embedding=speaker.embedding)
        if voice is None:
            self.messages.show(
                translate(
                    "Projects",
                    "Choose a library voice or paste a speaker embedding in the Speaker tab "
                    "first: a seed's voice needs the model to be read.",
                )
            )
            return
        spec = ",".join(str(n) for n in numbers)
        name = speaker.label if speaker.voice is not None else ""
        self._change(lambda p: edits.set_voice(p, spec, voice, name), numbers)

    # -- hearing and exporting ---------------------------------------------------------------
    def play(self, first: int, last: int | None) -> None:
        """Segments `first`..`last` (to the end when None): their chosen takes and pauses."""
        self.player.play(self.folder, self.project, first, last)

    def add_to_queue(self) -> None:
        """The chosen takes exported by the render queue, in its format, after its other
        jobs (the project as it is when its turn comes)."""
        if self.folder is None:
            self.messages.show(translate("Projects", "Open or make a project first."))
            return
        self.queue_wanted.emit(self.folder, self.folder.stem)

    def export(self) -> None:
        """The chosen takes as one audio file or one per segment (exporting.py)."""
        if self.folder is None:
            self.messages.show(translate("Projects", "Open or make a project first."))
            return
        show = self.messages.show
        export_chosen(self.window, self.folder, self.result, show, self._problem, self)
