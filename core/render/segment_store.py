"""What a render keeps in its folder so it can be killed at any moment and resumed: one FLAC per
finished segment in FOLDER/.segments/ and a journal that trusts only matching, whole segments. See
docs/reliability.md.
"""

import errno
import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import soundfile as sf

from chattts_studio.core import SAMPLE_RATE
from chattts_studio.core.atomic import atomic_path, os_error_sentence
from chattts_studio.core.errors import StudioError
from chattts_studio.core.render.journal import RenderFolder, journal_entries

STORE = ".segments"
OUTPUTS = "outputs.json"
# 24-bit FLAC: lossless enough for a later gain change, about half the size of float WAV.
SEGMENT_SUBTYPE = "PCM_24"


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
    # With the voice check (render/voice_guard.py): the kept audio's similarity to the
    # render's reference (None: not judged) and how many times it was made again.
    voice: float | None = None
    tries: int = 0

    def matches(self, text: str, group: str, settings: str) -> bool:
        return (self.text, self.group, self.settings) == (text, group, settings)


class SegmentStore(RenderFolder):
    """A book render's segments, opened once per render (a lock file keeps a second render
    out of the folder): FOLDER/.segments/ with the journal (render/journal.py)."""

    def __init__(self, folder: Path) -> None:
        super().__init__(folder, STORE)
        self._entries: dict[str, Entry] = {}  # file name -> the last line written for it

    def _read_journal(self, path: Path) -> None:
        for entry in journal_entries(path, Entry):
            self._entries[entry.file] = entry

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
        voice: float | None = None,
        tries: int = 0,
    ) -> Entry:
        """Keep one finished segment: its file first (atomically), then its journal line,
        flushed to the disk."""
        assert self._journal is not None, "the store is not open"
        data = np.clip(np.asarray(audio, dtype=np.float32).reshape(-1), -1.0, 1.0)
        name = self.file_name(chapter, index, settings)
        entry = Entry(
            chapter, index, text, group, settings, len(data), audio_digest(audio), name,
            voice=None if voice is None else round(voice, 4), tries=tries,
        )  # fmt: skip
        target = self.store / name
        try:
            with atomic_path(target) as tmp:
                sf.write(str(tmp), data, SAMPLE_RATE, format="FLAC", subtype=SEGMENT_SUBTYPE)
            self.append(entry)
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
