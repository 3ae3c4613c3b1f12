"""The text being edited, kept in the data folder so that a crash or a power cut loses nothing:
written atomically a moment after typing stops, read back at the next start."""

from pathlib import Path

from core import paths
from core.atomic import os_error_sentence, write_text_atomic

DRAFT_FILE = "editor-draft.txt"
MAX_DRAFT_BYTES = 64 * 2**20  # far beyond any text worth synthesizing; guards a bogus file


def draft_path() -> Path:
    return paths.data_dir() / DRAFT_FILE


def load_draft() -> tuple[str, str | None]:
    """The saved text ("" when there is none) and a sentence when it could not all be read."""
    path = draft_path()
    try:
        if path.stat().st_size > MAX_DRAFT_BYTES:
            return "", f"The saved text {path} is too large to restore; it was left as it is."
        data = path.read_bytes()
    except FileNotFoundError:
        return "", None
    except OSError as exc:
        return "", f"The saved text {path} cannot be read ({exc.strerror or exc})."
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError:
        # Damaged bytes: keep what can be read rather than nothing.
        return data.decode("utf-8", errors="replace"), (
            f"Part of the saved text {path} was damaged; what could be read is restored."
        )


def save_draft(text: str) -> str | None:
    """Write the text; None when done, else the sentence saying why not."""
    path = draft_path()
    try:
        write_text_atomic(path, text)
    except (OSError, ValueError) as exc:
        return os_error_sentence("keep the text in", path, exc).replace(
            "Nothing was changed.", "The text is still in the editor."
        )
    return None
