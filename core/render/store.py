"""What a render keeps in its folder so that it can be killed at any moment and resumed:
FOLDER/.segments/ holds one FLAC per finished segment (written atomically) and a journal, one
JSON line per segment, appended and fsync'd only after the segment's file is in place.

A journal line names the segment (chapter, index), hashes of its text, of its run group and
of the settings, its length in samples and a hash of the audio as it was made. A line is
trusted only when those hashes match the render being planned, it is the last line written
for its file, and the file is there with that many samples. A line cut short by a kill is
ignored; its segment is made again."""

import contextlib
import errno
import hashlib
import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO, Any, TypeVar

import numpy as np
import soundfile as sf
from filelock import BaseFileLock

from chattts_studio.core import SAMPLE_RATE
from chattts_studio.core.atomic import atomic_path, os_error_sentence
from chattts_studio.core.errors import StudioError
from chattts_studio.core.file_lock import try_hold
from chattts_studio.core.messages import QT_TRANSLATE_NOOP, Sentence

STORE = ".segments"
JOURNAL = "journal.jsonl"
OUTPUTS = "outputs.json"
LOCK = "lock"
VERSION = 1
# 24-bit FLAC: lossless enough for a later gain change, about half the size of float WAV.
SEGMENT_SUBTYPE = "PCM_24"


def hold_render_folder(lock: Path, folder: Path) -> BaseFileLock:
    """The lock that keeps a second render (book or manifest) out of `folder`, held until
    released; one sentence when another holds it. filelock: an OS lock on POSIX and Windows
    alike (fcntl alone left Windows unlocked)."""
    held = try_hold(lock)
    if held is None:
        raise StudioError(
            Sentence(
                QT_TRANSLATE_NOOP(
                    "core", "Another render is working in {folder}; wait for it or stop it."
                ),
                folder=str(folder),
            )
        )
    return held


T = TypeVar("T")


def journal_records(path: Path) -> list[dict[str, Any]]:
    """The JSON objects of a journal (one a line), in order; a line cut short by a kill is
    skipped, and ended on disk so that the next line appended starts on its own."""
    if not path.exists():
        return []
    raw = path.read_bytes()
    if raw and not raw.endswith(b"\n"):
        with open(path, "ab") as fh:
            fh.write(b"\n")
            fh.flush()
            os.fsync(fh.fileno())
    records = []
    for line in raw.decode("utf-8", errors="replace").splitlines():
        try:
            data = json.loads(line)
        except ValueError:
            continue
        if isinstance(data, dict):
            records.append(data)
    return records


def journal_entries(path: Path, kind: type[T]) -> list[T]:
    """A journal's records made into `kind` (a dataclass), in order; a record missing a field
    or holding a wrong one (a journal from another version) is skipped."""
    entries = []
    for data in journal_records(path):
        try:
            entries.append(kind(**{k: data[k] for k in kind.__dataclass_fields__}))  # type: ignore[attr-defined]
        except (TypeError, KeyError):
            continue
    return entries


def digest(*parts: object) -> str:
    """A short stable hash of the parts (as JSON)."""
    data = json.dumps(parts, ensure_ascii=False, sort_keys=True, default=str).encode()
    return hashlib.sha256(data).hexdigest()[:16]


def audio_digest(audio: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(audio, dtype=np.float32).tobytes()).hexdigest()[:16]


@dataclass(frozen=True)
class Entry:
    """One finished segment, as the journal records it."""

    chapter: int
    index: int
    text: str  # hash of the segment's text
    group: str  # hash of its run group (first index and every text in it)
    settings: str  # hash of everything else that shapes the audio
    samples: int
    audio: str  # hash of the float32 audio as it was made
    file: str  # name in the store

    def matches(self, text: str, group: str, settings: str) -> bool:
        return (self.text, self.group, self.settings) == (text, group, settings)


class RenderFolder:
    """What a render's store holds open while it works: its journal (appended to) and the
    folder's lock (a second render is kept out). Book and manifest stores both are one."""

    def __init__(self, folder: Path, store: str) -> None:
        self.folder = Path(folder)
        self.store = self.folder / store  # the render's own files, a hidden folder
        self._journal: IO[str] | None = None
        self._lock: BaseFileLock | None = None

    def _take_lock(self) -> None:
        self._lock = hold_render_folder(self.store / LOCK, self.folder)

    def close(self) -> None:
        if self._journal is not None:
            with contextlib.suppress(OSError):
                self._journal.close()
        if self._lock is not None:
            self._lock.release()
        self._journal, self._lock = None, None


class SegmentStore(RenderFolder):
    """Opened once per render (a lock file keeps a second render out of the folder)."""

    def __init__(self, folder: Path) -> None:
        super().__init__(folder, STORE)
        self._entries: dict[str, Entry] = {}  # file name -> the last line written for it

    # -- opening ---------------------------------------------------------------------------
    def open(self) -> "SegmentStore":
        try:
            if not self.folder.exists():
                if not self.folder.parent.is_dir():
                    raise StudioError(
                        Sentence(
                            QT_TRANSLATE_NOOP("core", "The folder {folder} does not exist."),
                            folder=str(self.folder.parent),
                        )
                    )
                self.folder.mkdir()
            elif not self.folder.is_dir():
                raise StudioError(
                    Sentence(
                        QT_TRANSLATE_NOOP(
                            "core", "{folder} is not a folder; give a folder for the render."
                        ),
                        folder=str(self.folder),
                    )
                )
            self.store.mkdir(exist_ok=True)
            self._take_lock()
            self._clean_temp_files()
            self._read_journal()
            self._journal = open(self.store / JOURNAL, "a", encoding="utf-8")  # noqa: SIM115
        except OSError as exc:
            self.close()
            raise StudioError(os_error_sentence("write to", self.folder, exc)) from None
        return self

    def _clean_temp_files(self) -> None:
        """Temp files a killed render left behind (atomic writes not yet renamed)."""
        for folder in (self.store, self.folder):
            for tmp in folder.glob(".*.part*"):
                with contextlib.suppress(OSError):
                    tmp.unlink()

    def _read_journal(self) -> None:
        for entry in journal_entries(self.store / JOURNAL, Entry):
            self._entries[entry.file] = entry

    def __enter__(self) -> "SegmentStore":
        return self.open()

    def __exit__(self, *_exc: object) -> None:
        self.close()

    # -- segments --------------------------------------------------------------------------
    @staticmethod
    def file_name(chapter: int, index: int, settings: str) -> str:
        return f"c{chapter:04d}-s{index:05d}-{settings[:8]}.flac"

    def find(self, chapter: int, index: int, text: str, group: str, settings: str) -> Entry | None:
        """The finished segment when the journal has it for exactly this text, group and
        settings and its file is whole; None when it must be made."""
        entry = self._entries.get(self.file_name(chapter, index, settings))
        if entry is None or not entry.matches(text, group, settings):
            return None
        try:
            frames = sf.info(str(self.store / entry.file)).frames
        except (OSError, RuntimeError):
            return None
        return entry if frames == entry.samples else None

    def add(
        self,
        chapter: int,
        index: int,
        text: str,
        group: str,
        settings: str,
        audio: np.ndarray,
    ) -> Entry:
        """Keep one finished segment: its file first (atomically), then its journal line,
        flushed to the disk."""
        assert self._journal is not None, "the store is not open"
        data = np.clip(np.asarray(audio, dtype=np.float32).reshape(-1), -1.0, 1.0)
        name = self.file_name(chapter, index, settings)
        entry = Entry(chapter, index, text, group, settings, len(data), audio_digest(audio), name)
        target = self.store / name
        try:
            with atomic_path(target) as tmp:
                sf.write(str(tmp), data, SAMPLE_RATE, format="FLAC", subtype=SEGMENT_SUBTYPE)
            self._journal.write(json.dumps({"v": VERSION, **asdict(entry)}) + "\n")
            self._journal.flush()
            os.fsync(self._journal.fileno())
        except (OSError, RuntimeError) as exc:  # RuntimeError: libsndfile's LibsndfileError
            raise StudioError(not_written(target, exc)) from None
        self._entries[name] = entry
        return entry

    def read(self, entry: Entry) -> np.ndarray:
        audio, _rate = sf.read(str(self.store / entry.file), dtype="float32")
        return np.asarray(audio, dtype=np.float32).reshape(-1)

    # -- what was assembled ----------------------------------------------------------------
    def outputs(self) -> dict[str, Any]:
        """{output file name: {"key": ..., ...}} of the outputs made so far."""
        try:
            data = json.loads((self.store / OUTPUTS).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def save_outputs(self, outputs: dict[str, Any]) -> None:
        """The record of the outputs made (atomically); one sentence when the disk refuses."""
        from chattts_studio.core.atomic import write_text_atomic

        target = self.store / OUTPUTS
        try:
            write_text_atomic(target, json.dumps(outputs, ensure_ascii=False, indent=1))
        except OSError as exc:
            raise StudioError(not_written(target, exc)) from None


def not_written(target: Path, exc: BaseException) -> str:
    """'Cannot write to X: the disk is full (...). Nothing was changed.' for a render's file;
    libsndfile says "System error" for a full disk, so the disk is asked (see
    audio/output.py's cannot_save)."""
    from chattts_studio.core.audio.output import disk_nearly_full

    if not isinstance(exc, OSError) and disk_nearly_full(target.parent):
        exc = OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(target))
    return os_error_sentence("write to", target, exc)
