"""A job's audio kept on disk instead of in memory: float32 samples appended to a raw file in the
cache folder, read back in any range, with a min/max envelope updated per append.

Memory stays bounded (ENVELOPE_BUCKETS). Appends come from one thread, reads from any. A full or
read-only disk never stops a run: the audio stays in memory from the refused write on, `failure`
says why and finish() raises it if the disk still refuses. Deleting follows Windows' rules: the
record goes first, and a folder whose audio is still mapped goes with its last view."""

import contextlib
import errno
import json
import logging
import mmap
import os
import shutil
import threading
import time
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from chattts_studio.core.atomic import atomic_path, new_folder
from chattts_studio.core.errors import AudioError
from chattts_studio.core.messages import QT_TRANSLATE_NOOP, Sentence
from chattts_studio.core.results.envelope import (
    Envelope,
)

AUDIO = "audio.f32"
META = "meta.json"
ENVELOPE = "envelope.npy"
BLOCK = 1 << 18  # samples per read when a range is streamed (1 MiB)
SAMPLE_BYTES = 4

log = logging.getLogger("chattts_studio")


def _write_replacing(target: Path, write: Any) -> None:
    """Write through a temp file and a rename. No fsync: a cache may lose its last entry in a
    power cut, and an fsync on the UI thread can take far longer than the write."""
    with atomic_path(target, durable=False) as tmp:
        write(tmp)


def remove_result(folder: Path) -> bool:
    """Remove a result's folder, its record first: what cannot be removed (a file another
    program holds open, which Windows refuses to delete) stays in a folder that is no longer
    a result. True when the folder is gone."""
    with contextlib.suppress(OSError):
        (folder / META).unlink(missing_ok=True)
    shutil.rmtree(folder, ignore_errors=True)
    return not folder.exists()


class ResultStore:
    """One job's audio in its own folder: AUDIO (raw float32), and once finished META (its
    length, its segments' places and the caller's `info`) and ENVELOPE."""

    def __init__(self, folder: Path, failure: OSError | None = None) -> None:
        """`failure`: why the folder could not be made (the store keeps its audio in memory)."""
        self.folder = Path(folder)
        self.path = self.folder / AUDIO
        self._lock = threading.Lock()
        self._file: Any = None
        self.failure = failure  # why the audio from `on_disk` on is in memory, not on disk
        if failure is None:
            try:
                self._file = open(self.path, "a+b", buffering=0)  # noqa: SIM115 (close())
            except OSError as exc:  # a read-only disk: what is there is still read
                self.failure = exc
                with contextlib.suppress(OSError):
                    self._file = open(self.path, "rb", buffering=0)  # noqa: SIM115
        self.length = 0
        if self._file is not None:
            self.length = int(os.fstat(self._file.fileno()).st_size // SAMPLE_BYTES)
        self.on_disk = self.length  # samples the file holds; the rest are in `_spill`
        self._spill: list[np.ndarray] = []  # the audio the disk refused, in order
        self.envelope = Envelope()
        self.segments: dict[int, tuple[int, int]] = {}  # index: (first sample, end sample)
        self.info: dict[str, Any] = {}
        self.finished = False
        self.made = time.time()
        self._maps: list[weakref.ref[mmap.mmap]] = []  # the mappings `samples` made

    @classmethod
    def create(cls, parent: Path) -> "ResultStore":
        """A new store in a folder of its own under `parent`; where none can be made (a
        read-only or full disk) a store that keeps its audio in memory, `failure` saying why."""
        try:
            parent.mkdir(parents=True, exist_ok=True)
            folder = new_folder(parent, time.strftime("%Y%m%d-%H%M%S-"))
        except OSError as exc:
            return cls(parent / "unsaved", failure=exc)
        return cls(folder)

    @classmethod
    def open(cls, folder: Path) -> "ResultStore":
        """A finished store as it was kept; ValueError or OSError when it is not whole."""
        meta = json.loads((Path(folder) / META).read_text(encoding="utf-8"))
        store = cls(folder)
        try:
            if store.length < int(meta["samples"]):
                raise ValueError("the audio file is shorter than its record")
            store.length = int(meta["samples"])
            store.segments = {int(i): (int(a), int(b)) for i, a, b in meta["segments"]}
            store.info = dict(meta.get("info", {}))
            store.made = float(meta.get("made", store.made))
            env = meta["envelope"]
            pairs = np.load(store.folder / ENVELOPE)
            store.envelope.restore(pairs[0], pairs[1], int(env["bucket"]), int(env["samples"]))
        except (KeyError, TypeError, ValueError, OSError):
            store.close()
            raise ValueError(f"{folder} is not a whole result") from None
        store.finished = True
        return store

    # -- writing (one thread) --------------------------------------------------------------
    def append(self, audio: np.ndarray) -> tuple[int, int]:
        """Add samples at the end; return where they sit (first sample, end sample). Never
        raises for the disk: what it refuses is kept in memory (see the module's note)."""
        data = np.ascontiguousarray(audio, dtype=np.float32).reshape(-1)
        start = self.length
        if len(data):
            with self._lock:
                if self.failure is None:
                    self._write_at(start, data)
                if self.failure is not None:
                    self._spill.append(data.copy())
                self.length = start + len(data)
            self.envelope.add(data)
        return start, self.length

    def _write_at(self, start: int, data: np.ndarray) -> None:
        """`data` into the file from sample `start`, all of it or none: a write the disk
        refuses part-way is cut back to `start`, and `failure` is set."""
        raw = memoryview(data.tobytes())
        try:
            self._file.seek(start * SAMPLE_BYTES)
            while raw:  # an unbuffered write may take part of it and say so
                written = self._file.write(raw)
                if not written:
                    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(self.path))
                raw = raw[written:]
        except OSError as exc:
            with contextlib.suppress(OSError):
                self._file.truncate(start * SAMPLE_BYTES)
            self.failure = exc
            log.warning(
                "The result's audio is kept in memory: %s cannot be written (%s).", self.path, exc
            )
            return
        self.on_disk = start + len(data)

    def append_silence(self, samples: int) -> None:
        if samples > 0:
            self.append(np.zeros(samples, dtype=np.float32))

    def truncate(self, samples: int) -> None:
        """Drop everything from `samples` on (a segment that is made again)."""
        samples = max(0, min(samples, self.length))
        with self._lock:
            if samples < self.on_disk:
                self._spill = []
                self.on_disk = samples
                if self._file is not None:
                    with contextlib.suppress(OSError):  # shorter never needs room
                        self._file.truncate(samples * SAMPLE_BYTES)
            else:
                self._spill = _cut(self._spill, samples - self.on_disk)
            self.length = samples
        self.segments = {i: (a, b) for i, (a, b) in self.segments.items() if b <= samples}
        kept = self.envelope.cut(samples)
        for block in self.blocks(kept, samples):
            self.envelope.add(block)

    def mark_segment(self, index: int, start: int, end: int) -> None:
        self.segments[index] = (start, end)

    def finish(self, info: dict[str, Any] | None = None) -> None:
        """The job is over: its record and envelope written beside the audio, so the store
        opens again (after a restart) without reading the audio. OSError when the disk cannot
        keep it (what was in memory stays there, readable; the record is not written)."""
        if info is not None:
            self.info = dict(info)
        self._unspill()
        env = self.envelope
        meta = {
            "version": 1,
            "samples": self.length,
            "made": self.made,
            "segments": [[i, a, b] for i, (a, b) in sorted(self.segments.items())],
            "envelope": env.state(),
            "info": self.info,
        }
        pairs = np.stack([env.mins, env.maxs])

        def save_envelope(tmp: Path) -> None:
            with open(tmp, "wb") as fh:
                np.save(fh, pairs)

        _write_replacing(self.folder / ENVELOPE, save_envelope)
        _write_replacing(
            self.folder / META,
            lambda tmp: tmp.write_text(json.dumps(meta, ensure_ascii=False), encoding="utf-8"),
        )
        self.finished = True

    def _unspill(self) -> None:
        """What the disk refused, written now that it may have room; the OSError when it
        still has none (or no folder), the audio staying in memory."""
        with self._lock:
            if self.failure is None:
                return
            if self._file is None or not self._file.writable():  # no folder, or read-only
                raise self.failure
            kept = np.concatenate(self._spill) if self._spill else np.zeros(0, np.float32)
            self.failure = None
            self._write_at(self.on_disk, kept)
            if self.failure is not None:
                raise self.failure
            self._spill = []

    # -- reading (any thread) --------------------------------------------------------------
    def read(self, start: int, end: int) -> np.ndarray:
        """Samples [start, end), clamped to what the store holds."""
        start, end = max(0, start), min(end, self.length)
        if end <= start:
            return np.zeros(0, dtype=np.float32)
        try:
            with self._lock:
                parts = []
                if start < self.on_disk:
                    self._file.seek(start * SAMPLE_BYTES)
                    raw = self._file.read((min(end, self.on_disk) - start) * SAMPLE_BYTES)
                    parts.append(np.frombuffer(raw, dtype=np.float32))
                if end > self.on_disk:
                    parts += _span(
                        self._spill, max(start, self.on_disk) - self.on_disk, end - self.on_disk
                    )
        except (OSError, ValueError, AttributeError) as exc:  # closed: removed meanwhile
            raise AudioError(
                Sentence(
                    QT_TRANSLATE_NOOP("core", "The audio of this result is gone ({reason})."),
                    reason=str(exc),
                )
            ) from None
        if not parts:
            return np.zeros(0, dtype=np.float32)
        return np.concatenate(parts) if len(parts) > 1 else parts[0].copy()

    def blocks(
        self, start: int = 0, end: int | None = None, size: int = BLOCK
    ) -> Iterator[np.ndarray]:
        """The range [start, end) a block at a time (all of it when end is None)."""
        end = self.length if end is None else min(end, self.length)
        for first in range(max(0, start), end, size):
            yield self.read(first, min(first + size, end))

    def samples(self) -> np.ndarray:
        """All of it as a read-only view of the file (memory-mapped: nothing is read until
        used, and what is read is the page cache's, not the process's own memory)."""
        if not self.length:
            return np.zeros(0, dtype=np.float32)
        if self.on_disk < self.length:  # part of it is in memory: a copy, disk and memory
            return self.read(0, self.length)
        view = np.memmap(self.path, dtype=np.float32, mode="r", shape=(self.length,))
        if isinstance(view.base, mmap.mmap):  # what every slice of the view keeps alive
            with self._lock:
                self._maps = [ref for ref in self._maps if ref() is not None]
                self._maps.append(weakref.ref(view.base))
        return view

    def mapped(self) -> list[mmap.mmap]:
        """The mappings of the audio file that views `samples` handed out still hold (Windows
        cannot delete the file until the last one goes)."""
        with self._lock:
            maps = [ref() for ref in self._maps]
        return [held for held in maps if held is not None]

    @property
    def size_bytes(self) -> int:
        total = 0
        for child in self.folder.iterdir() if self.folder.is_dir() else ():
            with contextlib.suppress(OSError):
                total += child.stat().st_size
        return total

    def close(self) -> None:
        with self._lock, contextlib.suppress(OSError):
            if self._file is not None:
                self._file.close()

    def delete(self) -> bool:
        """Close the store and remove its folder; True when it is gone now. When a view of
        its audio is still held (a result list that lets go a moment later), the folder goes
        when the last view does. Closing the views here is no way out: numpy reads through
        a closed mapping without a check, and the process crashes."""
        self.close()
        if remove_result(self.folder):
            return True
        maps = self.mapped()
        if maps:
            _remove_when_released(self.folder, maps)
        log.info("The result %s stays on disk for now: a file in it is in use.", self.folder)
        return False


def _span(parts: list[np.ndarray], start: int, end: int) -> list[np.ndarray]:
    """Samples [start, end) of `parts` laid end to end, as copies of the pieces they cover."""
    out, at = [], 0
    for part in parts:
        first, last = max(start, at), min(end, at + len(part))
        if first < last:
            out.append(part[first - at : last - at].copy())
        at += len(part)
        if at >= end:
            break
    return out


def _cut(parts: list[np.ndarray], samples: int) -> list[np.ndarray]:
    """`parts` laid end to end, cut to their first `samples` samples."""
    return _span(parts, 0, samples) if samples > 0 else []


def _remove_when_released(folder: Path, maps: list[mmap.mmap]) -> None:
    """Remove `folder` once every one of `maps` is gone, on the thread that drops the last
    view (a mapping's finalizer runs after it is unmapped and its file closed)."""
    lock = threading.Lock()
    left = [len(maps)]

    def released() -> None:
        with lock:
            left[0] -= 1
            last = left[0] == 0
        if last:
            remove_result(folder)

    for held in maps:
        weakref.finalize(held, released)
