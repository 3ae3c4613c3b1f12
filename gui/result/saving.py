"""Saving the result (a part of ResultPanel): one file, or one per segment, in any format, with
subtitles beside each when asked, read from the store a block at a time.

The encoding runs on the thread pool and can be cancelled. It is all or none: every file is written
into a hidden folder beside the target and moved in place only at the end, and a file another
program holds open (which Windows will not replace) makes the whole save one sentence that names
it, nothing changed."""

import contextlib
import os
import shutil
import tempfile
from pathlib import Path

from chattts_studio.core.atomic import (
    AccessDenied,
    FileInUse,
    keep_mode,
    os_error_sentence,
    replace_file,
)
from chattts_studio.core.audio.output import check_output_path
from chattts_studio.core.audio.stream_writer import AudioStreamWriter
from chattts_studio.core.audio.subtitles import Cue, check_subtitle_path, cues_for, write_subtitles
from chattts_studio.core.engine.cancel import CancelToken
from chattts_studio.core.errors import AudioError, Cancelled, StudioError
from chattts_studio.core.messages import replaced
from chattts_studio.core.results.result_store import ResultStore
from chattts_studio.gui.common import dialogs
from chattts_studio.gui.common.notices import plural
from chattts_studio.gui.common.tasks import in_background
from chattts_studio.gui.i18n import core_text
from chattts_studio.gui.result.base import ResultBase

Span = tuple[int, int]  # samples [first, end) of a store
Subtitles = tuple[Path, list[Cue]]  # a subtitle file to write and its cues


def write_files(
    targets: list[Path],
    spans: list[Span],
    store: ResultStore,
    cancel: CancelToken | None = None,
    subtitles: list[Subtitles] | None = None,
) -> list[Path]:
    """Write each span of the store to its target, and each of `subtitles`, all or none;
    `cancel` is checked between blocks and before anything is moved in place. Raises
    AudioError (or Cancelled). The paths written: the audio files, then the subtitles."""
    first = targets[0]
    try:
        staging = Path(tempfile.mkdtemp(prefix=".export-", dir=first.parent))
    except OSError as exc:
        raise AudioError(os_error_sentence("save", first, exc)) from None
    try:
        parts = []
        for target, (start, end) in zip(targets, spans, strict=True):
            part = staging / target.name
            try:
                with AudioStreamWriter(part, pause_seconds=0.0) as out:
                    for block in store.blocks(start, end):
                        if cancel is not None:
                            cancel.check()
                        out.write(block)
            except AudioError as exc:  # said of the file the user chose, not the hidden one
                said = exc.args[0] if len(exc.args) == 1 and isinstance(exc.args[0], str) else ""
                raise AudioError(replaced(said or str(exc), str(part), str(target))) from None
            parts.append(part)
        subtitle_targets = [target for target, _ in subtitles or []]
        for target, cues in subtitles or []:
            parts.append(write_subtitles(staging / target.name, cues))
        if cancel is not None:
            cancel.check()
        move_in(parts, targets + subtitle_targets, staging)
    except (FileInUse, AccessDenied) as exc:
        raise AudioError(os_error_sentence("save", Path(exc.filename), exc)) from None
    except OSError as exc:
        raise AudioError(os_error_sentence("save", first, exc)) from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return targets + subtitle_targets


def move_in(parts: list[Path], targets: list[Path], staging: Path) -> None:
    """Each part renamed onto its target, all or none: the files already there are moved
    into `staging` first, where Windows refuses one that another program holds open (then
    each goes back and FileInUse names it); only then do the parts move in, each with the
    mode of the file it replaces."""
    aside: list[tuple[Path, Path]] = []  # (where an old file waits, its place)
    moved: list[Path] = []
    try:
        for number, target in enumerate(targets):
            if os.path.lexists(target):
                backup = staging / f".old-{number}"
                replace_file(target, backup, name=target)
                aside.append((backup, target))
        kept = dict((place, backup) for backup, place in aside)
        for part, target in zip(parts, targets, strict=True):
            if target in kept:  # as saving over it in place would, its mode stays
                keep_mode(part, kept[target])
            replace_file(part, target)
            moved.append(target)
    except OSError:
        for target in moved:
            with contextlib.suppress(OSError):
                target.unlink()
        for backup, target in reversed(aside):
            with contextlib.suppress(OSError):
                replace_file(backup, target)
        raise


class ResultSaving(ResultBase):
    """Mixed into ResultPanel: Save (the dialog, then the pool) and save_to (at once)."""

    _export: CancelToken | None = None  # the export running now

    @property
    def exporting(self) -> bool:
        return self._export is not None

    def _say_save(self, text: str) -> None:
        """A saving problem (or a cancel): beside Save, where the user acted, and to the
        window's status line."""
        self.save_note.setText(text)
        self.message.emit(text)

    def _say_saving(self, text: str) -> None:
        """Saving goes on or went well: the window's status line says it; the note beside
        Save (an earlier problem) is cleared, so nothing stale stays there."""
        self.save_note.clear()
        self.message.emit(text)

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

    @property
    def subtitle_kind(self) -> str | None:
        """The subtitles Save also writes, "srt" or "vtt"; None when it writes none."""
        if not self.subtitles_box.isChecked():
            return None
        return str(self.subtitle_format.currentData())

    def _timeline(self, store: ResultStore) -> dict[int, tuple[str, str, Span]]:
        """Each segment in the store: its text as written, its speaker, its samples."""
        results = {r.index: r for r in self.results}
        return {
            i: (results[i].text, results[i].speaker, span)
            for i, span in sorted(store.segments.items())
            if i in results
        }

    def _subtitles(
        self, targets: list[Path], spans: list[Span], store: ResultStore
    ) -> list[Subtitles]:
        """For each audio target its subtitle file and cues (the segments inside its span,
        timed from the span's start); [] when Subtitles is not ticked."""
        kind = self.subtitle_kind
        if kind is None:
            return []
        timeline = self._timeline(store)
        dialogue = any(speaker for _text, speaker, _span in timeline.values())
        out: list[Subtitles] = []
        for target, (first, end) in zip(targets, spans, strict=True):
            inside = [
                (text, speaker, (start - first, stop - first))
                for text, speaker, (start, stop) in timeline.values()
                if first <= start and stop <= end and stop > start
            ]
            cues = cues_for(
                [(text, *span) for text, _speaker, span in inside],
                speakers=[speaker for _text, speaker, _span in inside] if dialogue else None,
            )
            subtitle = target.with_suffix(f".{kind}")
            check_subtitle_path(subtitle)
            out.append((subtitle, cues))
        return out

    def _plan(
        self, path: Path
    ) -> tuple[Path, list[Path], list[Span], ResultStore, list[Subtitles]]:
        """The files to write, their spans of the store and the subtitles to write beside
        them; raises StudioError for a path that cannot be written (a folder, a missing
        folder, a bad name) before anything is encoded. During a run: what there is now."""
        path, targets, spans, store = self._audio_plan(path)
        return path, targets, spans, store, self._subtitles(targets, spans, store)

    def _audio_plan(self, path: Path) -> tuple[Path, list[Path], list[Span], ResultStore]:
        path = Path(path)
        if not path.suffix and not path.is_dir():  # a folder stays a folder: refused below
            path = path.with_suffix(".wav")
        check_output_path(path)
        store = self.store
        if store is None or not store.length:
            raise AudioError(self.tr("There is no audio to save."))
        if not self.per_segment.isChecked():
            return path, [path], [(0, store.length)], store
        spans = [(i, span) for i, span in sorted(store.segments.items()) if span[1] > span[0]]
        if not spans:
            raise AudioError(self.tr("There is no audio to save."))
        stem, suffix = path.stem, path.suffix
        targets = [path.with_name(f"{stem}_{i + 1:03d}{suffix}") for i, _ in spans]
        for target in targets:
            check_output_path(target)
        return path, targets, [span for _, span in spans], store

    def save_to(self, path: Path) -> list[Path]:
        """Save now, on this thread (scripts and tests); the files written, [] when not."""
        try:
            path, targets, spans, store, subtitles = self._plan(path)
            written = write_files(targets, spans, store, subtitles=subtitles)
        except StudioError as exc:
            self._say_save(core_text(exc))
            return []
        self._saved(path, written)
        return written

    def export(self, path: Path) -> None:
        """Save on the thread pool; the Save button cancels it meanwhile."""
        try:
            path, targets, spans, store, subtitles = self._plan(path)
        except StudioError as exc:
            self._say_save(core_text(exc))
            return
        token = self._export = CancelToken()
        self.save_button.setText(self.tr("Cancel saving"))
        self.save_button.setEnabled(True)
        what = targets[0].name if len(targets) == 1 else plural(len(targets), "file")
        self._say_saving(self.tr("Saving {what}…").format(what=what))

        def ended(written: list[Path]) -> None:
            if self._export_ended(token):
                self._saved(path, written)

        def failed(error: Exception) -> None:
            if not self._export_ended(token):
                return
            if isinstance(error, Cancelled):
                self._say_save(self.tr("Saving cancelled; no file was written."))
            elif isinstance(error, StudioError):
                self._say_save(core_text(error))
            else:
                raise error

        in_background(
            lambda: write_files(targets, spans, store, token, subtitles),
            ended,
            failed,
            owner=self,
        )

    def _export_ended(self, token: CancelToken) -> bool:
        if self._export is not token:
            return False
        self._export = None
        self.save_button.setText(self.tr("Save…"))
        self.save_button.setEnabled(bool(self.length))
        return True

    def cancel_export(self) -> None:
        if self._export is not None:
            self._export.cancel()
            self.save_note.setText(self.tr("Cancelling the save…"))

    def _saved(self, path: Path, written: list[Path]) -> None:
        self.last_folder = str(path.parent)
        self.folder_used.emit(self.last_folder)
        audio = [p for p in written if p.suffix.lower() not in (".srt", ".vtt")]
        what = audio[0].name if len(audio) == 1 else plural(len(audio), "file")
        said = (
            self.tr("Saved {what} and subtitles to {folder}.")
            if len(audio) < len(written)
            else self.tr("Saved {what} to {folder}.")
        )
        self._say_saving(said.format(what=what, folder=path.parent))
