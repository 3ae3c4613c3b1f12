"""A project open for writing: the folder's lock held, changes saved as they are made, a take's
audio and record each written whole (see store.py for the folder's layout and its promises)."""

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from chattts_studio.core import SAMPLE_RATE
from chattts_studio.core.atomic import os_error_sentence, write_text_atomic, write_with
from chattts_studio.core.file_lock import try_hold
from chattts_studio.core.messages import QT_TRANSLATE_NOOP, Sentence
from chattts_studio.core.project import codec, store
from chattts_studio.core.project.codec import take_from, take_to_json, to_json
from chattts_studio.core.project.model import Project, Segment, Take, TakeSettings
from chattts_studio.core.project.store import ProjectError


def _checked_json(project: Project, folder: Path) -> dict[str, Any]:
    """The project's JSON, read back by the reader first: a value it would refuse (an id past
    its limit, a merge past the text limit) is refused here, before anything is written."""
    data = to_json(project)
    try:
        codec.project_from(data)
    except ValueError as exc:
        raise store.unsaveable(folder, str(exc)) from None
    return data


@dataclass
class OpenProject:
    """A project open for writing: the folder's lock held until close()."""

    folder: Path
    project: Project
    _lock: Any
    _saved_at: float = field(default_factory=time.monotonic)  # read just now: as saved

    def save(self) -> None:
        """project.json replaced atomically (what every change calls: autosave)."""
        self._saved_at = time.monotonic()
        data = _checked_json(self.project, self.folder)
        text = json.dumps(data, ensure_ascii=False, indent=1)
        try:
            write_text_atomic(self.folder / store.PROJECT_FILE, text + "\n")
        except OSError as exc:
            raise ProjectError(
                os_error_sentence("write", self.folder / store.PROJECT_FILE, exc)
            ) from None

    def add_take(self, segment: Segment, take: Take, chosen: bool) -> None:
        """A new take's record, written whole beside its audio (written before): the take
        exists from now on, whenever project.json is written next (see the module's note)."""
        data = take_to_json(take)
        try:
            take_from(data)  # what load would refuse is never written
        except ValueError as exc:
            raise store.unsaveable(self.folder, str(exc)) from None
        record = {"segment": segment.id, "chosen": chosen, "take": data}
        target = self.folder / store.record_name(segment.id, take.id)
        try:
            store.takes_folder(self.folder)
            write_text_atomic(target, json.dumps(record, ensure_ascii=False))
        except OSError as exc:
            raise ProjectError(os_error_sentence("write", target, exc)) from None

    def save_soon(self) -> None:
        """project.json written when it was last written store.SAVE_EVERY_S ago or more."""
        if time.monotonic() - self._saved_at >= store.SAVE_EVERY_S:
            self.save()

    def write_take_audio(self, segment: Segment, take_id: int, audio: np.ndarray) -> str:
        """The take's audio in its own file, written whole before anything names it; the
        file's name relative to the folder. Made in memory first (4 MB at most), so a full
        disk is the OSError that says so, not soundfile's "System error"."""
        import io

        import soundfile as sf

        name = f"{store.TAKES}/s{segment.id:05d}-t{take_id:03d}.wav"
        target = self.folder / name
        samples = np.ascontiguousarray(audio, dtype=np.float32)
        encoded = io.BytesIO()

        def write(tmp: Path) -> None:
            tmp.write_bytes(encoded.getbuffer())

        try:
            sf.write(encoded, samples, SAMPLE_RATE, subtype="FLOAT", format="WAV")
            store.takes_folder(self.folder).mkdir(exist_ok=True)
            write_with(target, write)
        except (OSError, sf.SoundFileError) as exc:
            raise ProjectError(os_error_sentence("write", target, exc)) from None
        return name

    def close(self) -> None:
        if self._lock is not None:
            self._lock.release()
            self._lock = None


def _hold(folder: Path) -> Any:
    lock = try_hold(folder / store.LOCK, ProjectError)
    if lock is None:
        raise ProjectError(
            Sentence(
                QT_TRANSLATE_NOOP(
                    "core",
                    "The project {path} is open in another ChatTTS Studio window or command; "
                    "close it there first.",
                ),
                path=str(folder),
            )
        )
    return lock


def _sweep(folder: Path) -> None:
    """Temp files a killed writer left (atomic.py's `.NAME.*.part*`): under the lock no other
    writer is at work, so every one of them is a dead writer's and is removed (only in the
    project: a takes/ that leads elsewhere is refused before)."""
    for place in (folder, store.takes_folder(folder)):
        for leftover in place.glob(".*.part*"):
            try:
                leftover.unlink(missing_ok=True)
            except OSError:  # a folder of that name, a read-only disk: not ours to force
                continue


@contextmanager
def opened(path: Path | str) -> Iterator[OpenProject]:
    """The project read under its lock, for changes (each saved as it is made)."""
    folder = store.project_folder(path)
    if not (folder / store.PROJECT_FILE).is_file():
        store.load(folder)  # says why in one sentence
    lock = _hold(folder)
    handle = OpenProject(folder, Project("", TakeSettings(), ""), lock)
    try:
        _sweep(folder)
        handle.project = store.load(folder)  # read again under the lock: the latest whole file
        yield handle
    finally:
        handle.close()


@contextmanager
def created(path: Path | str, project: Project) -> Iterator[OpenProject]:
    """A new project folder (refused when one is there, or when the project could not be read
    back), saved at once, open for changes."""
    folder = store.check_new(path)
    _checked_json(project, folder)
    try:
        (folder / store.TAKES).mkdir(parents=True)
    except OSError as exc:
        raise ProjectError(os_error_sentence("write", folder, exc)) from None
    handle = OpenProject(folder, project, _hold(folder))
    try:
        handle.save()
        yield handle
    finally:
        handle.close()
