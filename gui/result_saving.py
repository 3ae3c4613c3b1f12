"""Saving the result: one file, or one per segment, all or none, in any format. The encoding
runs on the thread pool (a long FLAC takes seconds) and can be cancelled: every file is
written into a hidden folder beside the target and moved in place only at the end, so a
failure or a cancel half way leaves nothing behind. A part of ResultPanel."""

import os
import shutil
import tempfile
from pathlib import Path

import numpy as np

from core.atomic import os_error_sentence
from core.audio import check_output_path, save
from core.cancel import CancelToken
from core.errors import AudioError, Cancelled, StudioError

from . import dialogs
from .notices import plural
from .tasks import in_background


def write_files(
    targets: list[Path], audio: list[np.ndarray], cancel: CancelToken | None = None
) -> list[Path]:
    """Write each audio to its target, all or none; `cancel` is checked between files and
    before anything is moved in place. Raises AudioError (or Cancelled)."""
    first = targets[0]
    try:
        staging = Path(tempfile.mkdtemp(prefix=".export-", dir=first.parent))
    except OSError as exc:
        raise AudioError(os_error_sentence("save", first, exc)) from None
    try:
        parts = []
        for target, data in zip(targets, audio, strict=True):
            if cancel is not None:
                cancel.check()
            part = staging / target.name
            try:
                parts.append(save(part, data))
            except AudioError as exc:  # said of the file the user chose, not the hidden one
                raise AudioError(str(exc).replace(str(part), str(target))) from None
        if cancel is not None:
            cancel.check()
        for part, target in zip(parts, targets, strict=True):
            os.replace(part, target)
    except OSError as exc:
        raise AudioError(os_error_sentence("save", first, exc)) from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return targets


class ResultSaving:
    """Mixed into ResultPanel: Save (the dialog, then the pool) and save_to (at once)."""

    _export: CancelToken | None = None  # the export running now

    @property
    def exporting(self) -> bool:
        return self._export is not None

    def save_dialog(self) -> None:
        """Save… chooses a file and saves it in the background; pressed again while that
        runs, it cancels it."""
        if self._export is not None:
            self.cancel_export()
            return
        folder = Path(self.last_folder) if self.last_folder else Path.home()
        path = dialogs.save_audio_file(self, folder / "speech.wav")
        if path is not None:
            self.export(path)

    def _plan(self, path: Path) -> tuple[Path, list[Path], list[np.ndarray]]:
        """The files to write and their audio; raises StudioError for a path that cannot be
        written (a folder, a missing folder, a bad name) before anything is encoded."""
        path = Path(path)
        if not path.suffix and not path.is_dir():  # a folder stays a folder: refused below
            path = path.with_suffix(".wav")
        check_output_path(path)
        if not len(self.audio):
            raise AudioError("There is no audio to save.")
        if not self.per_segment.isChecked():
            return path, [path], [self.audio]
        results = sorted(self.results, key=lambda r: r.index)
        if not results:
            raise AudioError("There is no audio to save.")
        stem, suffix = path.stem, path.suffix
        targets = [path.with_name(f"{stem}_{r.index + 1:03d}{suffix}") for r in results]
        for target in targets:
            check_output_path(target)
        return path, targets, [r.audio for r in results]

    def save_to(self, path: Path) -> list[Path]:
        """Save now, on this thread (scripts and tests); the files written, [] when not."""
        try:
            path, targets, audio = self._plan(path)
            written = write_files(targets, audio)
        except StudioError as exc:
            self._say_save(str(exc))
            return []
        self._saved(path, written)
        return written

    def export(self, path: Path) -> None:
        """Save on the thread pool; the Save button cancels it meanwhile."""
        try:
            path, targets, audio = self._plan(path)
        except StudioError as exc:
            self._say_save(str(exc))
            return
        token = self._export = CancelToken()
        self.save_button.setText("Cancel saving")
        self.save_button.setEnabled(True)
        what = targets[0].name if len(targets) == 1 else plural(len(targets), "file")
        self._say_save(f"Saving {what}…")

        def ended(written: list[Path]) -> None:
            if self._export_ended(token):
                self._saved(path, written)

        def failed(error: Exception) -> None:
            if not self._export_ended(token):
                return
            if isinstance(error, Cancelled):
                self._say_save("Saving cancelled; no file was written.")
            elif isinstance(error, StudioError):
                self._say_save(str(error))
            else:
                raise error

        in_background(lambda: write_files(targets, audio, token), ended, failed, owner=self)

    def _export_ended(self, token: CancelToken) -> bool:
        if self._export is not token:
            return False
        self._export = None
        self.save_button.setText("Save…")
        self.save_button.setEnabled(bool(len(self.audio)))
        return True

    def cancel_export(self) -> None:
        if self._export is not None:
            self._export.cancel()
            self.save_note.setText("Cancelling the save…")

    def _saved(self, path: Path, written: list[Path]) -> None:
        self.last_folder = str(path.parent)
        self.folder_used.emit(self.last_folder)
        what = written[0].name if len(written) == 1 else plural(len(written), "file")
        self._say_save(f"Saved {what} to {path.parent}.")
