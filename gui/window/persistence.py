"""Keeping the window's state across starts: the text being edited (gui/draft.py writes it
off the UI thread) and the preferences, restored at start and kept as they change. A part of
MainWindow kept in its own module."""

from PySide6.QtCore import QByteArray

from chattts_studio.gui.draft import load_draft
from chattts_studio.gui.settings import Key
from chattts_studio.gui.window.base import WindowBase


class Persistence(WindowBase):
    """Mixed into MainWindow: restores the text and preferences at start and keeps them."""

    def _restore(self) -> None:
        s = self.settings
        if s.problem:
            self.warn(s.problem)
        draft, self._draft_problem = load_draft()
        if self._draft_problem:
            self.warn(self._draft_problem)
        if draft:
            self.editor.set_text(draft)
        self._saved_draft = draft
        geometry = s.get(Key.GEOMETRY)
        if not (isinstance(geometry, QByteArray) and geometry and self.restoreGeometry(geometry)):
            screen = self.screen().availableGeometry()  # a first start fits a 1280x800 screen
            self.resize(min(1200, screen.width()), min(760, screen.height()))
        # The device is settled when the worker's probe arrives ("" is the default device).
        self.controls.select(s.text(Key.DEVICE), s.text(Key.PRECISION), s.text(Key.ENGINE))
        self.controls.segment_slider.setValue(s.number(Key.SEGMENT_SIZE))
        self.controls.batch_box.setValue(s.number(Key.BATCH_SIZE))
        self.speakers.restore(s.text(Key.SPEAKER))
        self.result.stream_box.setChecked(s.flag(Key.STREAM_PLAYBACK))
        self.turn_pause.box.setValue(s.seconds(Key.TURN_PAUSE))  # out of range: clamped
        self.result.last_folder = s.text(Key.LAST_FOLDER)
        self.editor.set_segment_size(self.controls.segment_slider.value())

    def _persist_soon(self) -> None:
        """The persist timer's end: the text written on the thread pool, the settings now
        (QSettings writes a few KiB without fsync)."""
        self.persist_timer.stop()
        text = self.editor.text()
        if text != self._saved_draft:
            self.drafts.write_later(text, self._draft_written)
        self.save_settings()

    def persist(self) -> None:
        """Write the editor text (atomically) and the settings now (closing, tests)."""
        self.persist_timer.stop()
        text = self.editor.text()
        if text != self._saved_draft:
            self._draft_written(text, self.drafts.write_now(text))
        self.save_settings()

    def _draft_written(self, text: str, problem: str | None) -> None:
        if problem is None:
            self._saved_draft = text
            self._draft_problem = None
        elif problem != self._draft_problem:  # once per problem, not once per keystroke
            self._draft_problem = problem
            self.show_message(problem)

    def save_settings(self) -> None:
        s = self.settings
        s.set(Key.GEOMETRY, self.saveGeometry())
        s.set(Key.DEVICE, self.controls.device_id())
        s.set(Key.PRECISION, self.controls.precision_value())
        s.set(Key.ENGINE, self.controls.engine_value())
        s.set(Key.SEGMENT_SIZE, self.controls.segment_slider.value())
        s.set(Key.BATCH_SIZE, self.controls.batch_box.value())
        s.set(Key.SPEAKER, self.speakers.current().key())
        s.set(Key.STREAM_PLAYBACK, self.result.stream_box.isChecked())
        s.set(Key.TURN_PAUSE, self.turn_pause.box.value())
        if self.result.last_folder:
            s.set(Key.LAST_FOLDER, self.result.last_folder)
        s.sync()
