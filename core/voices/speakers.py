"""The speaker library: named voices in a human-readable JSON file shared by the app and CLI.
Its file format, entries and safe reading live in speaker_file.py."""

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TypeVar

from chattts_studio.core import paths
from chattts_studio.core.atomic import os_error_sentence, target_problem, write_text_atomic
from chattts_studio.core.errors import SpeakerError
from chattts_studio.core.file_lock import SPEAKER_LIBRARY, changing
from chattts_studio.core.messages import QT_TRANSLATE_NOOP, Sentence, cannot_read, said
from chattts_studio.core.voices.speaker_file import (
    MAX_NAME,
    ImportResult,
    NewerFormat,
    SpeakerEntry,
    SpeakerNameTaken,
    clean_name,
    file_body,
    free_name,
    now_stamp,
    parse_library,
    read_library,
)

T = TypeVar("T")
# What one change makes of the entries on disk: the entries to write (the same list: nothing to
# write), what the caller gets, and the entries it dropped (their files are removed).
_Changed = tuple[list[SpeakerEntry], T, Sequence[SpeakerEntry]]


class SpeakerLibrary:
    """Loaded on creation. A damaged file is moved aside (never overwritten) and reported in
    `problem`; a file from a newer version is refused and left alone."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = Path(path) if path else paths.speakers_file()
        self.problem = ""
        self.entries: list[SpeakerEntry] = []
        if not self.path.exists():
            return
        if not self.path.is_file():
            raise SpeakerError(
                Sentence(
                    QT_TRANSLATE_NOOP(
                        "core", "The speaker library {path} is not a file; move it away."
                    ),
                    path=str(self.path),
                )
            )
        try:
            self.entries = parse_library(read_library(self.path), self.path)
        except NewerFormat:
            raise
        except SpeakerError as exc:
            aside = self.path.with_name(f"{self.path.name}.damaged-{int(time.time())}")
            try:
                self.path.replace(aside)
            except OSError as move:
                raise SpeakerError(
                    Sentence(
                        QT_TRANSLATE_NOOP(
                            "core",
                            "The speaker library {path} is damaged ({problem}) and could not be "
                            "moved aside ({reason}); it was left as it is.",
                        ),
                        path=str(self.path),
                        problem=said(exc),
                        reason=move.strerror or str(move),
                    )
                ) from None
            self.problem = Sentence(
                QT_TRANSLATE_NOOP(
                    "core",
                    "The speaker library was damaged ({problem}); it was kept as {aside} "
                    "and a new one was started.",
                ),
                problem=said(exc),
                aside=str(aside),
            )
        except OSError as exc:
            raise SpeakerError(
                Sentence(
                    QT_TRANSLATE_NOOP("core", "Cannot read the speaker library {path}: {reason}."),
                    path=str(self.path),
                    reason=exc.strerror or str(exc),
                )
            ) from None

    @classmethod
    def open_or_locked(cls, path: Path | None = None) -> "SpeakerLibrary":
        """The library, or, when it cannot be used (a newer format, unreadable), an empty one
        that refuses every change, so the file is never overwritten; `problem` says why."""
        try:
            return cls(path)
        except SpeakerError as exc:
            locked = cls.__new__(cls)
            locked.path = Path(path) if path else paths.speakers_file()
            locked.entries = []
            locked.problem = said(exc)
            locked.locked = True
            return locked

    locked = False

    def names(self) -> list[str]:
        return [e.name for e in self.entries]

    def get(self, name: str) -> SpeakerEntry | None:
        return next((e for e in self.entries if e.name == name), None)

    def reload(self) -> bool:
        """Take the entries on disk now (another process may have changed the file); True when
        they differ from the ones held. SpeakerError when the file cannot be read as it is."""
        if self.locked:
            return False
        entries = self._on_disk()
        changed = entries != self.entries
        self.entries = entries
        return changed

    def _on_disk(self) -> list[SpeakerEntry]:
        if not self.path.exists():
            return []
        try:
            return parse_library(read_library(self.path), self.path)
        except OSError as exc:
            raise SpeakerError(cannot_read(self.path, exc)) from None

    def _change(self, change: Callable[[list[SpeakerEntry]], _Changed[T]]) -> T:
        """One read-modify-write under the library's lock: the file read again (another
        process may have changed it since), `change` applied to what it holds, the result
        written atomically and adopted; then the files of entries it dropped are removed."""
        if self.locked:
            raise SpeakerError(
                Sentence(
                    QT_TRANSLATE_NOOP("core", "The speaker library cannot be changed: {problem}"),
                    problem=self.problem,
                )
            )
        with changing(self.path, SPEAKER_LIBRARY, SpeakerError):
            current = self.entries = self._on_disk()  # held even when `change` refuses
            entries, result, gone = change(current)
            if entries is not current:
                self._write(entries)
            self.entries = entries
            for entry in gone:  # under the lock: no other writer can start using its files
                self._drop_files(entry)
        return result

    def _write(self, entries: list[SpeakerEntry]) -> None:
        body = file_body(entries)
        try:
            write_text_atomic(self.path, json.dumps(body, ensure_ascii=False, indent=2) + "\n")
        except (OSError, ValueError) as exc:
            raise SpeakerError(
                os_error_sentence("save the speaker library", self.path, exc)
            ) from None

    def add(
        self,
        name: str,
        embedding: str,
        seed: int | None = None,
        note: str = "",
        replace: bool = False,
        *,
        sample: str = "",
        transcript: str = "",
        preview: str = "",
        recording: str = "",
    ) -> SpeakerEntry:
        """A new speaker at the end; with `replace`, a speaker of that name takes the new voice
        in its place (its position in the list kept). A taken name without `replace` raises
        SpeakerNameTaken. A cloned voice gives `sample` and `transcript` (and maybe no
        embedding); `preview` and `recording` are file names relative to the library's folder."""
        entry = SpeakerEntry.from_dict(
            {
                "name": name,
                "embedding": embedding,
                "seed": seed,
                "note": note,
                "created": now_stamp(),
                "sample": sample,
                "transcript": transcript,
                "preview": preview,
                "recording": recording,
            }
        )

        def change(entries: list[SpeakerEntry]) -> _Changed[SpeakerEntry]:
            old = next((e for e in entries if e.name == entry.name), None)
            if old is None:
                return [*entries, entry], entry, ()
            if not replace:
                raise SpeakerNameTaken(entry.name)
            return [entry if e is old else e for e in entries], entry, (old,)

        return self._change(change)

    def file(self, relative: str) -> Path | None:
        """A preview or recording file of an entry, as a path (None when it has none)."""
        return self.path.parent / relative if relative else None

    def _drop_files(self, gone: SpeakerEntry) -> None:
        """Remove the preview and recording of an entry no other entry uses (best effort: a
        file left behind costs disk space, never a wrong voice)."""
        used = {f for e in self.entries for f in (e.preview, e.recording) if f}
        for relative in (gone.preview, gone.recording):
            path = self.file(relative)
            if path is not None and relative not in used:
                path.unlink(missing_ok=True)

    def free_name(self, name: str) -> str:
        """`name`, or the first of 'name (2)', 'name (3)', ... that no speaker has."""
        return free_name(clean_name(name), self.names())

    def rename(self, old: str, new: str) -> None:
        new = clean_name(new)
        if not new or len(new) > MAX_NAME:
            raise SpeakerError(
                QT_TRANSLATE_NOOP("core", "A speaker name must have 1-100 characters.")
            )

        def change(entries: list[SpeakerEntry]) -> _Changed[None]:
            entry = _need(entries, old)
            if any(e.name == new for e in entries):
                raise SpeakerNameTaken(new)
            return [replace(entry, name=new) if e is entry else e for e in entries], None, ()

        self._change(change)

    def remove(self, name: str) -> None:
        def change(entries: list[SpeakerEntry]) -> _Changed[None]:
            gone = _need(entries, name)
            return [e for e in entries if e is not gone], None, (gone,)

        self._change(change)

    def _need(self, name: str) -> SpeakerEntry:
        return _need(self.entries, name)

    def export(self, target: Path, names: list[str] | None = None) -> int:
        """Write the chosen speakers (all by default) to `target` atomically; a failure leaves
        any existing file as it was and no temp file behind."""
        chosen = [self._need(n) for n in names] if names else list(self.entries)
        body = file_body(chosen, portable=True)
        target = Path(target)
        problem = target_problem(target, example="speakers.json")
        if problem:
            raise SpeakerError(problem)
        try:
            write_text_atomic(target, json.dumps(body, ensure_ascii=False, indent=2) + "\n")
        except (OSError, ValueError) as exc:
            raise SpeakerError(os_error_sentence("write", target, exc)) from None
        return len(chosen)

    def import_file(self, source: Path) -> ImportResult:
        """Add every speaker in `source` whose voice (embedding) the library does not have yet;
        one already there, under any name, is skipped. A name already taken by another voice
        gets ' (2)', ' (3)', ... Names are labels inside the library file: no file is ever named
        after one. Nothing is written when nothing is added."""
        source = Path(source)
        try:
            text = read_library(source)
        except OSError as exc:
            raise SpeakerError(cannot_read(source, exc)) from None
        incoming = parse_library(text, source)

        def change(current: list[SpeakerEntry]) -> _Changed[ImportResult]:
            entries = list(current)
            voices = {e.voice for e in entries}
            added: list[str] = []
            skipped: list[str] = []
            renamed: list[tuple[str, str]] = []
            for entry in incoming:
                if entry.voice in voices:
                    skipped.append(entry.name)
                    continue
                name = free_name(entry.name, [e.name for e in entries])
                if name != entry.name:
                    renamed.append((entry.name, name))
                # Files named in another library's file are not ours: never adopt its paths.
                kept = replace(entry, name=name, created=entry.created or now_stamp())
                entries.append(replace(kept, preview="", recording=""))
                voices.add(entry.voice)
                added.append(name)
            result = ImportResult(tuple(added), tuple(skipped), tuple(renamed))
            return (entries if added else current), result, ()

        return self._change(change)


def _need(entries: list[SpeakerEntry], name: str) -> SpeakerEntry:
    entry = next((e for e in entries if e.name == name), None)
    if entry is None:
        raise SpeakerError(
            Sentence(QT_TRANSLATE_NOOP("core", "There is no speaker named '{name}'."), name=name)
        )
    return entry
