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

Damaged or hostile files are one sentence, never a traceback and never a write outside the
folder: every value of project.json and of a record is checked as it is read (codec.py and
checked.py: types, finite numbers, documented limits), a record that does not read is left out
with a warning, a take's audio is checked against its record's length, and a takes/ or a
take's file that leads out of the folder (a link) is refused.
"""

import json
import os
import re
import stat
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from chattts_studio.core import SAMPLE_RATE
from chattts_studio.core.atomic import os_error_sentence, write_text_atomic, write_with
from chattts_studio.core.errors import BadSettingError, StudioError
from chattts_studio.core.file_lock import try_hold
from chattts_studio.core.messages import QT_TRANSLATE_NOOP, Sentence
from chattts_studio.core.project import codec
from chattts_studio.core.project.checked import (
    MAX_ID,
    MAX_PAUSE_S,
    MAX_PROJECT_BYTES,
    MAX_RECORD_BYTES,
    SETTING_RANGES,
    flag,
    mapping,
    shown,
)
from chattts_studio.core.project.codec import take_from, take_to_json, to_json
from chattts_studio.core.project.model import FORMAT, Project, Segment, Take, TakeSettings

SUFFIX = ".chattts"
PROJECT_FILE = "project.json"
TAKES = "takes"
LOCK = ".lock"
SAVE_EVERY_S = 2.0  # project.json at most this often while takes come in (records cover them)
# A take's record: s{segment:05d}-t{take:03d}.json, the numbers growing past their padding.
_RECORD = re.compile(r"s(\d{5,9})-t(\d{3,9})\.(json|wav)")


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
            reason=" ".join(reason.split()),  # one line, whatever a file put in it
        )
    )


def _unsaveable(folder: Path, reason: str) -> ProjectError:
    return ProjectError(
        Sentence(
            QT_TRANSLATE_NOOP(
                "core",
                "The project {path} cannot be saved as it is ({reason}); nothing was changed.",
            ),
            path=str(folder),
            reason=" ".join(reason.split()),
        )
    )


# -- the folder's own files -------------------------------------------------------------------
def _inside(folder: Path, path: Path) -> bool:
    """Whether `path`, links followed, is in `folder` (links followed too)."""
    try:
        return path.resolve().is_relative_to(folder.resolve())
    except (OSError, RuntimeError):  # a link loop (RuntimeError before Python 3.13)
        return False


def _takes_folder(folder: Path) -> Path:
    """takes/, refused (one sentence) when it leads out of the project: a re-roll would write
    there and the sweep of temp files would delete there."""
    takes = folder / TAKES
    if os.path.lexists(takes) and not _inside(folder, takes):
        raise _damaged(folder, f"{TAKES}/ leads outside the project")
    return takes


def _regular(path: Path, limit: int) -> str | None:
    """Why `path` is not a plain file of at most `limit` bytes to read, or None. (A FIFO or a
    device would block or never end.)"""
    try:
        found = path.stat()
    except OSError as exc:
        return exc.strerror or type(exc).__name__
    if not stat.S_ISREG(found.st_mode):
        return "not a plain file"
    if found.st_size > limit:
        return f"larger than {limit:,} bytes"
    return None


def _json_of(text: str) -> Any:
    """The JSON value in `text`; ValueError with a short reason (nesting too deep for the
    parser, an integer of thousands of digits and a syntax error alike)."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not JSON ({exc.msg}, line {exc.lineno})") from None
    except RecursionError:
        raise ValueError("not JSON this version reads (nested too deep)") from None
    except ValueError as exc:
        raise ValueError(f"not JSON this version reads ({shown(str(exc), 60)})") from None


def refuse_inside(folder: Path, target: Path) -> None:
    """ProjectError (one sentence) when `target`, links followed, is in the project folder:
    an export there would overwrite a take's audio or the project's own files."""
    if _inside(folder, target):
        raise ProjectError(
            Sentence(
                QT_TRANSLATE_NOOP(
                    "core",
                    "{target} is inside the project {path}; export to a place outside it.",
                ),
                target=str(target),
                path=str(folder),
            )
        )


# -- reading ----------------------------------------------------------------------------------
def from_json(data: Any, folder: Path) -> Project:
    """The project in `data`; ProjectError (one sentence) for a newer format or a damaged one."""
    found = data.get("format") if isinstance(data, dict) else None
    if isinstance(found, bool) or not isinstance(found, int) or found < 1:
        raise _damaged(folder, "project.json has no format number")
    if found > FORMAT:
        raise ProjectError(
            Sentence(
                QT_TRANSLATE_NOOP(
                    "core",
                    "The project {path} was saved by a newer ChatTTS Studio (format {found}; this "
                    "one reads up to {known}); update ChatTTS Studio to open it.",
                ),
                path=str(folder),
                found=shown(found, 20),
                known=str(FORMAT),
            )
        )
    try:
        return codec.project_from(data)
    except (ValueError, KeyError, TypeError, AttributeError, OverflowError, RecursionError) as exc:
        # Only ValueError is expected (codec checks every value); the others are a value it
        # missed, still said in one sentence.
        reason = str(exc) if isinstance(exc, ValueError) else f"{type(exc).__name__}: {exc}"
        raise _damaged(folder, reason[:200]) from None


def load(path: Path | str) -> Project:
    """Read a project (no lock: project.json is always replaced whole). A take record that
    does not read is left out with a warning (Project.warnings)."""
    folder = project_folder(path)
    target = folder / PROJECT_FILE
    if not target.is_file():
        raise ProjectError(
            Sentence(QT_TRANSLATE_NOOP("core", "There is no project at {path}."), path=str(folder))
        )
    _takes_folder(folder)
    problem = _regular(target, MAX_PROJECT_BYTES)
    if problem is not None:
        raise _damaged(folder, f"project.json is {problem}")
    try:
        text = target.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ProjectError(os_error_sentence("read", target, exc)) from None
    try:
        data = _json_of(text)
    except ValueError as exc:
        raise _damaged(folder, f"project.json is {exc}") from None
    project = from_json(data, folder)
    _recover(project, folder)
    return project


def record_name(segment_id: int, take_id: int) -> str:
    """A take's record, relative to the project folder (beside its audio)."""
    return f"{TAKES}/s{segment_id:05d}-t{take_id:03d}.json"


def _record(folder: Path, name: str, take_id: int) -> tuple[Take, bool]:
    """The take in record `name` and whether it was chosen; ValueError with the reason."""
    path = folder / TAKES / name
    if not _inside(folder, path):
        raise ValueError("it leads outside the project")
    problem = _regular(path, MAX_RECORD_BYTES)
    if problem is not None:
        raise ValueError(f"it is {problem}")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(getattr(exc, "strerror", None) or type(exc).__name__) from None
    data = mapping(_json_of(text), "the record")
    take = take_from(data.get("take"))
    if take.id != take_id:
        raise ValueError(f"it holds take {take.id}")
    return take, flag(data, "chosen", "", False)


def _recover(project: Project, folder: Path) -> None:
    """The takes whose record is in takes/ but whose project.json was not written since (the
    writer was killed, or saves more seldom than takes come): added to their segments, chosen
    as they were. A record of a segment that no longer exists (merged away) is left alone; one
    that does not read is left out with a warning. Every take id with files there is kept
    from new takes (Segment.reserved)."""
    segments = {s.id: s for s in project.segments}
    named = {(s.id, t.id) for s in project.segments for t in s.takes}
    try:
        names = sorted(os.listdir(folder / TAKES))
    except OSError:
        return
    for name in names:
        match = _RECORD.fullmatch(name)
        if match is None:
            continue
        key = (int(match.group(1)), int(match.group(2)))
        stem = name.rsplit(".", 1)[0]
        if record_name(*key) != f"{TAKES}/{stem}.json" or not 0 < key[1] <= MAX_ID:
            continue  # not a name the writer gives (s1-t01.json): no take of ours
        segment = segments.get(key[0])
        if segment is None:
            continue
        segment.reserved = max(segment.reserved, key[1])
        if key in named or match.group(3) == "wav":
            continue
        try:
            take, chosen = _record(folder, name, key[1])
        except (ValueError, KeyError, TypeError, OverflowError, RecursionError) as exc:
            project.warnings.append(
                Sentence(
                    QT_TRANSLATE_NOOP(
                        "core", "The take record {name} does not read and was left out: {reason}"
                    ),
                    name=f"{TAKES}/{name}",
                    reason=" ".join(str(exc).split())[:200],
                )
            )
            continue
        segment.takes.append(take)
        segment.takes.sort(key=lambda t: t.id)
        if (chosen and not segment.picked and not segment.locked) or segment.chosen is None:
            segment.chosen = take.id


def take_frames(take: Take) -> int:
    """The samples a take's audio holds: its measures say its length exactly (`seconds` is
    the sample count over the rate, measured on the samples that were written)."""
    return round(take.measures.seconds * SAMPLE_RATE)


def _wav_problem(path: Path) -> str | None:
    """Why the file is not a whole WAV file, or None: soundfile reads a file cut short (a
    copy that stopped, a full disk) as if it were whole, so the data chunk's length is checked
    against the bytes there."""
    with open(path, "rb") as file:
        size = os.fstat(file.fileno()).st_size
        head = file.read(12)
        if len(head) < 12 or head[:4] != b"RIFF" or head[8:] != b"WAVE":
            return "not a WAV file"
        offset = 12
        for _ in range(64):  # fmt, fact, PEAK, data: a handful of chunks
            chunk = file.read(8)
            if len(chunk) < 8:
                break
            length = int.from_bytes(chunk[4:], "little")
            if chunk[:4] == b"data":
                present = size - offset - 8
                if length > present:
                    return f"cut short: {present:,} of its {length:,} bytes of audio"
                return None
            offset += 8 + length + (length & 1)
            file.seek(offset)
    return "no audio data"


def take_audio(folder: Path, take: Take) -> np.ndarray:
    """A take's samples (float32, exactly as made); ProjectError (one sentence) when its file
    is gone, leads outside the project, is cut short or is not the length its record says."""
    import soundfile as sf

    try:
        codec.audio_name(take.audio, "a take's file")
    except ValueError:
        said = shown(take.audio)
        raise _damaged(folder, f"a take names a file outside takes/ ({said})") from None
    path = folder / take.audio
    if not _inside(folder, path):
        raise _damaged(folder, f"the audio of a take leads outside the project ({take.audio})")

    def unreadable(why: str) -> ProjectError:
        return _damaged(folder, f"the audio of a take cannot be read ({take.audio}: {why})")

    expected = take_frames(take)
    problem = _regular(path, 64 + 4 * expected + (1 << 20))
    try:
        problem = problem or _wav_problem(path)
        if problem is not None:
            raise unreadable(problem)
        with sf.SoundFile(str(path)) as file:
            if file.samplerate != SAMPLE_RATE or file.channels != 1:
                raise _damaged(folder, f"the audio of a take is not 24 kHz mono ({take.audio})")
            if file.frames != expected:
                raise unreadable(f"{file.frames:,} samples where its record says {expected:,}")
            audio = file.read(dtype="float32", always_2d=False)
    except (OSError, RuntimeError) as exc:  # soundfile says RuntimeError for a bad file
        detail = exc.strerror if isinstance(exc, OSError) else None
        raise unreadable(detail or str(exc)) from None
    if len(audio) != expected:
        raise unreadable(f"{len(audio):,} samples where its record says {expected:,}")
    return np.ascontiguousarray(audio, dtype=np.float32)


def check_settings(settings: TakeSettings, *pauses: float) -> None:
    """BadSettingError (one sentence) for generation settings or pauses a project does not
    keep (its ranges: checked.py), said before any work starts."""
    names = {
        "temperature": QT_TRANSLATE_NOOP("core", "temperature"),
        "top_p": QT_TRANSLATE_NOOP("core", "top-P"),
        "top_k": QT_TRANSLATE_NOOP("core", "top-K"),
        "speed": QT_TRANSLATE_NOOP("core", "speed"),
    }
    checks = [(names[k], getattr(settings, k), *SETTING_RANGES[k]) for k in names]
    checks += [(QT_TRANSLATE_NOOP("core", "pause"), p, 0.0, MAX_PAUSE_S) for p in pauses]
    for name, value, low, high in checks:
        if not low <= value <= high:  # NaN too: it compares false
            raise BadSettingError(
                Sentence(
                    QT_TRANSLATE_NOOP(
                        "core", "The {setting} must be between {low} and {high} (got {value})."
                    ),
                    setting=Sentence(name),
                    low=f"{low:g}",
                    high=f"{high:g}",
                    value=f"{value:g}",
                )
            )


# -- writing ----------------------------------------------------------------------------------
def _checked_json(project: Project, folder: Path) -> dict[str, Any]:
    """The project's JSON, read back by the reader first: a value it would refuse (an id past
    its limit, a merge past the text limit) is refused here, before anything is written."""
    data = to_json(project)
    try:
        codec.project_from(data)
    except ValueError as exc:
        raise _unsaveable(folder, str(exc)) from None
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
            write_text_atomic(self.folder / PROJECT_FILE, text + "\n")
        except OSError as exc:
            raise ProjectError(
                os_error_sentence("write", self.folder / PROJECT_FILE, exc)
            ) from None

    def add_take(self, segment: Segment, take: Take, chosen: bool) -> None:
        """A new take's record, written whole beside its audio (written before): the take
        exists from now on, whenever project.json is written next (see the module's note)."""
        data = take_to_json(take)
        try:
            take_from(data)  # what load would refuse is never written
        except ValueError as exc:
            raise _unsaveable(self.folder, str(exc)) from None
        record = {"segment": segment.id, "chosen": chosen, "take": data}
        target = self.folder / record_name(segment.id, take.id)
        try:
            _takes_folder(self.folder)
            write_text_atomic(target, json.dumps(record, ensure_ascii=False))
        except OSError as exc:
            raise ProjectError(os_error_sentence("write", target, exc)) from None

    def save_soon(self) -> None:
        """project.json written when it was last written SAVE_EVERY_S ago or more."""
        if time.monotonic() - self._saved_at >= SAVE_EVERY_S:
            self.save()

    def write_take_audio(self, segment: Segment, take_id: int, audio: np.ndarray) -> str:
        """The take's audio in its own file, written whole before anything names it; the
        file's name relative to the folder. Made in memory first (4 MB at most), so a full
        disk is the OSError that says so, not soundfile's "System error"."""
        import io

        import soundfile as sf

        name = f"{TAKES}/s{segment.id:05d}-t{take_id:03d}.wav"
        target = self.folder / name
        samples = np.ascontiguousarray(audio, dtype=np.float32)
        encoded = io.BytesIO()

        def write(tmp: Path) -> None:
            tmp.write_bytes(encoded.getbuffer())

        try:
            sf.write(encoded, samples, SAMPLE_RATE, subtype="FLOAT", format="WAV")
            _takes_folder(self.folder).mkdir(exist_ok=True)
            write_with(target, write)
        except (OSError, sf.SoundFileError) as exc:
            raise ProjectError(os_error_sentence("write", target, exc)) from None
        return name

    def close(self) -> None:
        if self._lock is not None:
            self._lock.release()
            self._lock = None


def _hold(folder: Path) -> Any:
    lock = try_hold(folder / LOCK, ProjectError)
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
    for place in (folder, _takes_folder(folder)):
        for leftover in place.glob(".*.part*"):
            try:
                leftover.unlink(missing_ok=True)
            except OSError:  # a folder of that name, a read-only disk: not ours to force
                continue


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
    if os.path.lexists(folder):
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
    """A new project folder (refused when one is there, or when the project could not be read
    back), saved at once, open for changes."""
    folder = check_new(path)
    _checked_json(project, folder)
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
