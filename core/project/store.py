"""A project on disk: a folder `NAME.chattts/` holding `project.json` and `takes/`, one WAV
(32-bit float: the take's samples exactly) and one small JSON record per take.

Safe against a kill at any moment: every file is written whole (temp file, fsync, rename). A
take's audio is written first, then its record beside it: from then on the take exists, since
reading a project (`load`) adds every record project.json does not name yet. project.json itself
is replaced at most every SAVE_EVERY_S while takes come in (a 1,000-segment project's file is
3.7 MB and costs ~0.2 s to write: once a take it would slow a fast GPU's takes down), and after
every other change. So a kill loses at most the take being made, never one that was finished.

One writer at a time: a writer holds the folder's lock (`.lock`, released by the operating
system when the process dies) for as long as it has the project open; a second window or
command is told so in one sentence. Readers (list, export) need no lock: every file they read
is replaced whole.

A project written by a newer ChatTTS Studio (a higher `format`) is refused with one sentence;
keys this version does not know are kept and written back (a newer minor addition survives an
older app's save).
"""

import json
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from chattts_studio.core import SAMPLE_RATE
from chattts_studio.core.asr.score import AsrCheck
from chattts_studio.core.atomic import os_error_sentence, write_text_atomic, write_with
from chattts_studio.core.errors import StudioError
from chattts_studio.core.file_lock import try_hold
from chattts_studio.core.messages import QT_TRANSLATE_NOOP, Sentence
from chattts_studio.core.project import flags
from chattts_studio.core.project.model import (
    FORMAT,
    Maker,
    Project,
    Segment,
    Take,
    TakeSettings,
)
from chattts_studio.core.voices.voice import Voice

SUFFIX = ".chattts"
PROJECT_FILE = "project.json"
TAKES = "takes"
LOCK = ".lock"
SAVE_EVERY_S = 2.0  # project.json at most this often while takes come in (records cover them)
_RECORD = re.compile(r"s(\d{5})-t(\d{3})\.json")


class ProjectError(StudioError):
    """A project cannot be opened, written or changed as asked."""


def project_folder(path: Path | str) -> Path:
    """The folder a user's path names: `P` or `P.chattts` (the suffix added when missing)."""
    path = Path(path)
    return path if path.suffix == SUFFIX else path.with_name(path.name + SUFFIX)


def _damaged(folder: Path, reason: str) -> ProjectError:
    return ProjectError(
        Sentence(
            QT_TRANSLATE_NOOP("core", "The project {path} is damaged: {reason}"),
            path=str(folder),
            reason=reason,
        )
    )


# -- JSON -------------------------------------------------------------------------------------
def _take_json(take: Take) -> dict[str, Any]:
    data = asdict(take)
    data["measures"] = flags.to_json(take.measures)
    data["asr"] = None if take.asr is None else take.asr.to_json()
    return data


def _take(data: dict[str, Any]) -> Take:
    return Take(
        id=int(data["id"]),
        seed=int(data["seed"]),
        settings=TakeSettings(**data["settings"]),
        maker=Maker(**data["maker"]),
        text=str(data["text"]),
        spoken_text=str(data["spoken_text"]),
        model_text=str(data["model_text"]),
        voice=str(data["voice"]),
        audio=str(data["audio"]),
        steps=int(data["steps"]),
        cap=int(data["cap"]),
        eos=bool(data["eos"]),
        compute_seconds=float(data["compute_seconds"]),
        measures=flags.from_json(data["measures"]),
        made_at=str(data["made_at"]),
        asr=_asr(data.get("asr")),
    )


def _asr(data: Any) -> AsrCheck | None:
    """A take's check, or None: none made yet (projects before it have no key), or one that
    does not read (damaged: checking again makes it; the take itself is whole)."""
    if data is None:
        return None
    try:
        return AsrCheck.from_json(data)
    except (KeyError, TypeError, ValueError, AttributeError):
        return None


def to_json(project: Project) -> dict[str, Any]:
    voices = {s.voice.key(): asdict(s.voice) for s in project.segments}
    segments = [
        {
            "id": s.id,
            "text": s.text,
            "voice": s.voice.key(),
            "speaker": s.speaker,
            "pause_before": s.pause_before,
            "chosen": s.chosen,
            "picked": s.picked,
            "locked": s.locked,
            "takes": [_take_json(t) for t in s.takes],
        }
        for s in project.segments
    ]
    known = {
        "format": FORMAT,
        "app": "ChatTTS Studio",
        "title": project.title,
        "model": project.model,
        "device": project.device,
        "precision": project.precision,
        "engine": project.engine,
        "pause": project.pause,
        "settings": asdict(project.settings),
        "next_segment_id": project.next_segment_id,
        "voices": voices,
        "segments": segments,
    }
    return {**project.extra, **known}


def from_json(data: Any, folder: Path) -> Project:
    """The project in `data`; ProjectError (one sentence) for a newer format or a damaged one."""
    if not isinstance(data, dict) or not isinstance(data.get("format"), int):
        raise _damaged(folder, "project.json has no format number")
    if data["format"] > FORMAT:
        raise ProjectError(
            Sentence(
                QT_TRANSLATE_NOOP(
                    "core",
                    "The project {path} was saved by a newer ChatTTS Studio (format {found}; this "
                    "one reads up to {known}); update ChatTTS Studio to open it.",
                ),
                path=str(folder),
                found=str(data["format"]),
                known=str(FORMAT),
            )
        )
    try:
        voices = {k: Voice(**v) for k, v in data["voices"].items()}
        segments = []
        for s in data["segments"]:
            segment = Segment(
                id=int(s["id"]),
                text=str(s["text"]),
                voice=voices[s["voice"]],
                speaker=str(s.get("speaker", "")),
                pause_before=float(s.get("pause_before", 0.0)),
                takes=[_take(t) for t in s["takes"]],
                chosen=None if s.get("chosen") is None else int(s["chosen"]),
                picked=bool(s.get("picked", False)),
                locked=bool(s.get("locked", False)),
            )
            if segment.chosen is not None and segment.take(segment.chosen) is None:
                raise ValueError(f"segment {segment.id} chooses take {segment.chosen}, not there")
            segments.append(segment)
        ids = [s.id for s in segments]
        if len(set(ids)) != len(ids):
            raise ValueError("two segments share an id")
        known = {
            "format", "app", "title", "model", "device", "precision", "engine", "pause",
            "settings", "next_segment_id", "voices", "segments",
        }  # fmt: skip
        return Project(
            title=str(data["title"]),
            settings=TakeSettings(**data["settings"]),
            model=str(data["model"]),
            segments=segments,
            next_segment_id=max(int(data["next_segment_id"]), max(ids, default=0) + 1),
            device=None if data.get("device") is None else str(data["device"]),
            precision=str(data.get("precision", "fp32")),
            engine=str(data.get("engine", "auto")),
            pause=float(data.get("pause", 0.25)),
            extra={k: v for k, v in data.items() if k not in known},
        )
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        reason = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        raise _damaged(folder, reason[:200]) from None


# -- reading ----------------------------------------------------------------------------------
def load(path: Path | str) -> Project:
    """Read a project (no lock: project.json is always replaced whole)."""
    folder = project_folder(path)
    target = folder / PROJECT_FILE
    if not target.is_file():
        raise ProjectError(
            Sentence(QT_TRANSLATE_NOOP("core", "There is no project at {path}."), path=str(folder))
        )
    try:
        text = target.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ProjectError(os_error_sentence("read", target, exc)) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise _damaged(folder, f"project.json is not JSON ({exc.msg}, line {exc.lineno})") from None
    project = from_json(data, folder)
    _recover(project, folder)
    return project


def record_name(segment_id: int, take_id: int) -> str:
    """A take's record, relative to the project folder (beside its audio)."""
    return f"{TAKES}/s{segment_id:05d}-t{take_id:03d}.json"


def _recover(project: Project, folder: Path) -> None:
    """The takes whose record is in takes/ but whose project.json was not written since (the
    writer was killed, or saves more seldom than takes come): added to their segments, chosen
    as they were. A record of a segment that no longer exists (merged away) is left alone."""
    segments = {s.id: s for s in project.segments}
    named = {(s.id, t.id) for s in project.segments for t in s.takes}
    try:
        names = sorted(p.name for p in (folder / TAKES).iterdir())
    except OSError:
        return
    for name in names:
        match = _RECORD.fullmatch(name)
        if match is None:
            continue
        key = (int(match.group(1)), int(match.group(2)))
        segment = segments.get(key[0])
        if segment is None or key in named:
            continue
        try:
            data = json.loads((folder / TAKES / name).read_text(encoding="utf-8"))
            take = _take(data["take"])
        except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError):
            continue  # written whole or not at all: an unreadable one is no take of ours
        if take.id != key[1]:
            continue
        segment.takes.append(take)
        segment.takes.sort(key=lambda t: t.id)
        chosen = bool(data.get("chosen")) and not segment.picked and not segment.locked
        if chosen or segment.chosen is None:
            segment.chosen = take.id


def take_audio(folder: Path, take: Take) -> np.ndarray:
    """A take's samples (float32, exactly as made); ProjectError when its file is gone."""
    import soundfile as sf

    path = folder / take.audio
    if Path(take.audio).is_absolute() or ".." in Path(take.audio).parts:
        raise _damaged(folder, f"a take names a file outside the project ({take.audio})")
    try:
        audio, rate = sf.read(str(path), dtype="float32", always_2d=False)
    except (OSError, RuntimeError) as exc:  # soundfile says RuntimeError for a bad file
        raise _damaged(
            folder, f"the audio of a take cannot be read ({take.audio}: {exc})"
        ) from None
    if rate != SAMPLE_RATE or audio.ndim != 1:
        raise _damaged(folder, f"the audio of a take is not 24 kHz mono ({take.audio})")
    return np.ascontiguousarray(audio, dtype=np.float32)


# -- writing ----------------------------------------------------------------------------------
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
        text = json.dumps(to_json(self.project), ensure_ascii=False, indent=1)
        try:
            write_text_atomic(self.folder / PROJECT_FILE, text + "\n")
        except OSError as exc:
            raise ProjectError(
                os_error_sentence("write", self.folder / PROJECT_FILE, exc)
            ) from None

    def add_take(self, segment: Segment, take: Take, chosen: bool) -> None:
        """A new take's record, written whole beside its audio (written before): the take
        exists from now on, whenever project.json is written next (see the module's note)."""
        record = {"segment": segment.id, "chosen": chosen, "take": _take_json(take)}
        target = self.folder / record_name(segment.id, take.id)
        try:
            write_text_atomic(target, json.dumps(record, ensure_ascii=False))
        except OSError as exc:
            raise ProjectError(os_error_sentence("write", target, exc)) from None

    def save_soon(self) -> None:
        """project.json written when it was last written SAVE_EVERY_S ago or more."""
        if time.monotonic() - self._saved_at >= SAVE_EVERY_S:
            self.save()

    def write_take_audio(self, segment: Segment, take_id: int, audio: np.ndarray) -> str:
        """The take's audio in its own file, written whole before anything names it; the
        file's name relative to the folder."""
        import soundfile as sf

        name = f"{TAKES}/s{segment.id:05d}-t{take_id:03d}.wav"
        target = self.folder / name
        samples = np.ascontiguousarray(audio, dtype=np.float32)

        def write(tmp: Path) -> None:
            sf.write(str(tmp), samples, SAMPLE_RATE, subtype="FLOAT", format="WAV")

        try:
            target.parent.mkdir(exist_ok=True)
            write_with(target, write)
        except OSError as exc:
            raise ProjectError(os_error_sentence("write", target, exc)) from None
        return name

    def close(self) -> None:
        if self._lock is not None:
            self._lock.release()
            self._lock = None


def _hold(folder: Path) -> Any:
    lock = try_hold(folder / LOCK)
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
    writer is at work, so every one of them is a dead writer's and is removed."""
    for place in (folder, folder / TAKES):
        for leftover in place.glob(".*.part*"):
            leftover.unlink(missing_ok=True)


@contextmanager
def opened(path: Path | str) -> Iterator[OpenProject]:
    """The project read under its lock, for changes (each saved as it is made)."""
    folder = project_folder(path)
    if not (folder / PROJECT_FILE).is_file():
        load(folder)  # says why in one sentence
    lock = _hold(folder)
    handle = OpenProject(folder, Project("", TakeSettings(), ""), lock)
    try:
        _sweep(folder)
        handle.project = load(folder)  # read again under the lock: the latest whole file
        yield handle
    finally:
        handle.close()


def check_new(path: Path | str) -> Path:
    """The folder a new project at `path` would take; ProjectError when one is there."""
    folder = project_folder(path)
    if folder.exists():
        raise ProjectError(
            Sentence(
                QT_TRANSLATE_NOOP(
                    "core", "{path} exists already; give another name or open it instead."
                ),
                path=str(folder),
            )
        )
    return folder


@contextmanager
def created(path: Path | str, project: Project) -> Iterator[OpenProject]:
    """A new project folder (refused when one is there), saved at once, open for changes."""
    folder = check_new(path)
    try:
        (folder / TAKES).mkdir(parents=True)
    except OSError as exc:
        raise ProjectError(os_error_sentence("write", folder, exc)) from None
    handle = OpenProject(folder, project, _hold(folder))
    try:
        handle.save()
        yield handle
    finally:
        handle.close()
