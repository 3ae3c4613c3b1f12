"""A project on disk: a folder `NAME.chattts/` holding `project.json` and `takes/`, one WAV
(32-bit float) and one small JSON record per take. Every file is written whole, so a kill loses
at most the take being made; one writer at a time holds the folder's lock; damaged or hostile
files are one sentence. See docs/projects.md ("The rules", "Damaged files").
"""

import json
import os
import re
import stat
from pathlib import Path
from typing import Any

from chattts_studio.core.atomic import os_error_sentence
from chattts_studio.core.engine.request import check_ranges
from chattts_studio.core.errors import StudioError
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
from chattts_studio.core.project.codec import take_from
from chattts_studio.core.project.model import FORMAT, Project, Take, TakeSettings

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


def damaged(folder: Path, reason: str) -> ProjectError:
    return ProjectError(
        Sentence(
            QT_TRANSLATE_NOOP("core", "The project {path} is damaged: {reason}"),
            path=str(folder),
            reason=" ".join(reason.split()),  # one line, whatever a file put in it
        )
    )


def unsaveable(folder: Path, reason: str) -> ProjectError:
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
def inside(folder: Path, path: Path) -> bool:
    """Whether `path`, links followed, is in `folder` (links followed too)."""
    try:
        return path.resolve().is_relative_to(folder.resolve())
    except (OSError, RuntimeError):  # a link loop (RuntimeError before Python 3.13)
        return False


def takes_folder(folder: Path) -> Path:
    """takes/, refused (one sentence) when it leads out of the project: a re-roll would write
    there and the sweep of temp files would delete there."""
    takes = folder / TAKES
    if os.path.lexists(takes) and not inside(folder, takes):
        raise damaged(folder, f"{TAKES}/ leads outside the project")
    return takes


def regular(path: Path, limit: int) -> str | None:
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
    if inside(folder, target):
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
        raise damaged(folder, "project.json has no format number")
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
        raise damaged(folder, reason[:200]) from None


def load(path: Path | str) -> Project:
    """Read a project (no lock: project.json is always replaced whole). A take record that
    does not read is left out with a warning (Project.warnings)."""
    folder = project_folder(path)
    target = folder / PROJECT_FILE
    if not target.is_file():
        raise ProjectError(
            Sentence(QT_TRANSLATE_NOOP("core", "There is no project at {path}."), path=str(folder))
        )
    takes_folder(folder)
    problem = regular(target, MAX_PROJECT_BYTES)
    if problem is not None:
        raise damaged(folder, f"project.json is {problem}")
    try:
        text = target.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ProjectError(os_error_sentence("read", target, exc)) from None
    try:
        data = _json_of(text)
    except ValueError as exc:
        raise damaged(folder, f"project.json is {exc}") from None
    project = from_json(data, folder)
    _recover(project, folder)
    return project


def record_name(segment_id: int, take_id: int) -> str:
    """A take's record, relative to the project folder (beside its audio)."""
    return f"{TAKES}/s{segment_id:05d}-t{take_id:03d}.json"


def _record(folder: Path, name: str, take_id: int) -> tuple[Take, bool]:
    """The take in record `name` and whether it was chosen; ValueError with the reason."""
    path = folder / TAKES / name
    if not inside(folder, path):
        raise ValueError("it leads outside the project")
    problem = regular(path, MAX_RECORD_BYTES)
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
    check_ranges(checks)


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
