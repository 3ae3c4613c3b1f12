"""Keeping the window's state across starts: the text being edited, written atomically to the
data folder off the UI thread a moment after typing stops (so a crash or a power cut loses
nothing and a keystroke never waits for fsync), and the preferences; both read back at start."""

import threading
import weakref
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QObject

from chattts_studio.core import paths
from chattts_studio.core.atomic import os_error_reason, write_text_atomic
from chattts_studio.gui.common.tasks import in_background
from chattts_studio.gui.i18n import core_text, translate
from chattts_studio.gui.settings import Key

DRAFT_FILE = "editor-draft.txt"
MAX_DRAFT_BYTES = 64 * 2**20  # far beyond any text worth synthesizing; guards a bogus file


def draft_path() -> Path:
    return paths.data_dir() / DRAFT_FILE


def load_draft() -> tuple[str, str | None]:
    """The saved text ("" when there is none) and a sentence when it could not all be read."""
    path = draft_path()
    try:
        if path.stat().st_size > MAX_DRAFT_BYTES:
            return "", translate(
                "Draft", "The saved text {path} is too large to restore; it was left as it is."
            ).format(path=path)
        data = path.read_bytes()
    except FileNotFoundError:
        return "", None
    except OSError as exc:
        return "", translate("Draft", "The saved text {path} cannot be read ({reason}).").format(
            path=path, reason=exc.strerror or exc
        )
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError:
        # Damaged bytes: keep what can be read rather than nothing.
        return data.decode("utf-8", errors="replace"), translate(
            "Draft", "Part of the saved text {path} was damaged; what could be read is restored."
        ).format(path=path)


def save_draft(text: str) -> str | None:
    """Write the text; None when done, else the sentence saying why not."""
    path = draft_path()
    try:
        write_text_atomic(path, text)
    except (OSError, ValueError) as exc:
        return translate(
            "Draft", "Cannot keep the text in {path}: {reason}. The text is still in the editor."
        ).format(path=path, reason=core_text(os_error_reason(exc)))
    return None


class DraftKeeper:
    """Writes the text on the thread pool, one write at a time and the newest text last: a
    write asked for before a newer one is skipped, and a write now (closing) waits for the
    one in flight instead of being overtaken by it."""

    def __init__(self, owner: QObject | None = None) -> None:
        # A write that ends after the owner was destroyed reports nothing. Held weakly: the
        # write itself (on the pool) must not keep a window alive.
        self._owner = weakref.ref(owner) if owner is not None else None
        self._lock = threading.Lock()
        self._newest = 0  # the number of the newest text asked to be written

    def write_later(self, text: str, done: Callable[[str, str | None], None]) -> None:
        """`done(text, problem)` on the UI thread once written (not for a skipped write)."""
        self._newest += 1
        number = self._newest

        def write() -> tuple[bool, str | None]:
            with self._lock:
                if number != self._newest:
                    return False, None  # a newer text follows: it is the one to write
                return True, save_draft(text)

        def written(outcome: tuple[bool, str | None]) -> None:
            if outcome[0]:
                done(text, outcome[1])

        in_background(write, written, owner=self._owner() if self._owner else None)

    def write_now(self, text: str) -> str | None:
        self._newest += 1
        with self._lock:
            return save_draft(text)


class Persistence:
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
        if not (geometry and self.restoreGeometry(geometry)):  # type: ignore[arg-type]
            screen = self.screen().availableGeometry()  # a first start fits a 1280x800 screen
            self.resize(min(1200, screen.width()), min(760, screen.height()))
        # The device is settled when the worker's probe arrives ("" is the default device).
        self.controls.select(s.text(Key.DEVICE), s.text(Key.PRECISION))
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
        s.set(Key.SEGMENT_SIZE, self.controls.segment_slider.value())
        s.set(Key.BATCH_SIZE, self.controls.batch_box.value())
        s.set(Key.SPEAKER, self.speakers.current().key())
        s.set(Key.STREAM_PLAYBACK, self.result.stream_box.isChecked())
        s.set(Key.TURN_PAUSE, self.turn_pause.box.value())
        if self.result.last_folder:
            s.set(Key.LAST_FOLDER, self.result.last_folder)
        s.sync()
