"""Keeping the window's state across starts: the text being edited (written by gui/draft.py), the
preferences and the open project, restored at start and written a moment after each change.
"""

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QByteArray, QObject, QTimer, SignalInstance

from chattts_studio.gui.control.context import WindowContext
from chattts_studio.gui.draft import DraftKeeper, load_draft
from chattts_studio.gui.settings import Key
from chattts_studio.gui.voices.script_mode import TurnPause

if TYPE_CHECKING:
    from chattts_studio.gui.project.project_control import ProjectControl

# The text and the settings are written this long after the last change, so a crash loses at
# most that much typing and a keystroke never waits for the disk.
PERSIST_DELAY_MS = 1_500


class Persistence(QObject):
    def __init__(self, context: WindowContext, turn_pause: TurnPause) -> None:
        super().__init__(context.window)
        self.window, self.settings = context.window, context.settings
        self.messages, panels = context.messages, context.panels
        self.editor, self.controls, self.speakers = panels.editor, panels.controls, panels.speakers
        self.result = panels.result
        self.turn_pause = turn_pause
        self.saved_draft = ""  # the editor text as last written to the data folder
        self.draft_problem: str | None = None
        self.settings_problem: str | None = None  # the settings' last failed save, said once
        self.drafts = DraftKeeper(self)
        self.timer = QTimer(self)
        self.timer.setSingleShot(True)
        self.timer.setInterval(PERSIST_DELAY_MS)
        self.timer.timeout.connect(self._persist_soon)

    def watch(self, *changes: SignalInstance) -> None:
        """Anything worth keeping changes: written a moment later (see PERSIST_DELAY_MS)."""
        for changed in changes:
            changed.connect(lambda *_args: self.timer.start())

    def restore(self) -> None:
        s = self.settings
        if s.problem:
            self.messages.warn(s.problem)
        draft, self.draft_problem = load_draft()
        if self.draft_problem:
            self.messages.warn(self.draft_problem)
        if draft:
            self.editor.set_text(draft)
        self.saved_draft = draft
        geometry = s.get(Key.GEOMETRY)
        window = self.window
        if not (isinstance(geometry, QByteArray) and geometry and window.restoreGeometry(geometry)):
            screen = window.screen().availableGeometry()  # a first start fits a 1280x800 screen
            window.resize(min(1200, screen.width()), min(760, screen.height()))
        # The device is settled when the worker's probe arrives ("" is the default device).
        self.controls.select(s.text(Key.DEVICE), s.text(Key.PRECISION), s.text(Key.ENGINE))
        self.controls.segment_slider.setValue(s.number(Key.SEGMENT_SIZE))
        self.controls.batch_box.setValue(s.number(Key.BATCH_SIZE))
        self.speakers.restore(s.text(Key.SPEAKER))
        self.result.stream_box.setChecked(s.flag(Key.STREAM_PLAYBACK))
        self.result.words_box.setChecked(s.flag(Key.FOLLOW_WORDS))
        self.turn_pause.box.setValue(s.seconds(Key.TURN_PAUSE))  # out of range: clamped
        self.result.last_folder = s.text(Key.LAST_FOLDER)
        self.editor.set_segment_size(self.controls.segment_slider.value())
        self._restore_project()

    def _projects(self) -> "ProjectControl | None":
        """The window's segment editor part, when it has one (made before restore)."""
        from chattts_studio.gui.project.project_control import ProjectControl

        projects = getattr(self.window, "projects", None)
        return projects if isinstance(projects, ProjectControl) else None

    def _restore_project(self) -> None:
        """The project open at the last close opens again (read off the UI thread, the editor
        left in front); one that is gone since is forgotten without a word."""
        projects = self._projects()
        if projects is None:
            return
        self.watch(projects.opened, projects.closed)
        last = self.settings.text(Key.LAST_PROJECT)
        if last and Path(last).is_dir():
            projects.show_folder(Path(last), front=False)

    def _persist_soon(self) -> None:
        """The timer's end: the text written on the thread pool, the settings now (QSettings
        writes a few KiB without fsync)."""
        self.timer.stop()
        text = self.editor.text()
        if text != self.saved_draft:
            self.drafts.write_later(text, self._draft_written)
        self.save_settings()

    def persist(self) -> None:
        """Write the editor text (atomically) and the settings now (closing, tests)."""
        self.timer.stop()
        text = self.editor.text()
        if text != self.saved_draft:
            self._draft_written(text, self.drafts.write_now(text))
        self.save_settings()

    def _draft_written(self, text: str, problem: str | None) -> None:
        if problem is None:
            self.saved_draft = text
            self.draft_problem = None
        elif problem != self.draft_problem:  # once per problem, not once per keystroke
            self.draft_problem = problem
            self.messages.show(problem)

    def save_settings(self) -> None:
        s = self.settings
        s.set(Key.GEOMETRY, self.window.saveGeometry())
        s.set(Key.DEVICE, self.controls.device_id())
        s.set(Key.PRECISION, self.controls.precision_value())
        s.set(Key.ENGINE, self.controls.engine_value())
        s.set(Key.SEGMENT_SIZE, self.controls.segment_slider.value())
        s.set(Key.BATCH_SIZE, self.controls.batch_box.value())
        s.set(Key.SPEAKER, self.speakers.current().key())
        s.set(Key.STREAM_PLAYBACK, self.result.stream_box.isChecked())
        s.set(Key.FOLLOW_WORDS, self.result.words_box.isChecked())
        s.set(Key.TURN_PAUSE, self.turn_pause.box.value())
        if self.result.last_folder:
            s.set(Key.LAST_FOLDER, self.result.last_folder)
        projects = self._projects()
        if projects is not None:
            s.set(Key.LAST_PROJECT, str(projects.folder) if projects.folder is not None else "")
        problem = s.sync()
        if problem and problem != self.settings_problem:  # once per problem, not per change
            self.messages.warn(problem)
        self.settings_problem = problem
