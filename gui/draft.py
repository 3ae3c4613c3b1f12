"""The text being edited, kept across starts: written atomically to the data folder off the UI
thread a moment after typing stops, and read back at start (by gui/window/persistence.py).
"""

import threading
import weakref
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QObject

from chattts_studio.core import paths
from chattts_studio.core.atomic import os_error_reason, write_text_atomic
from chattts_studio.gui.common.tasks import in_background
from chattts_studio.gui.i18n import core_text, translate

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
