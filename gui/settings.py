"""The window's preferences: one typed class over QSettings in the app's data folder, so
CHATTTS_STUDIO_HOME moves them. A damaged file starts the defaults and says so; a newer version's
file is left untouched.
"""

import contextlib
import math
import os
from enum import StrEnum
from pathlib import Path
from typing import SupportsFloat, SupportsIndex, SupportsInt

from PySide6.QtCore import QByteArray, QSettings

from chattts_studio.core import paths
from chattts_studio.core.atomic import new_file, os_error_reason
from chattts_studio.gui.i18n import core_text, translate

SETTINGS_FILE = "gui-settings.ini"
SETTINGS_VERSION = 1  # raise it when a key changes meaning; older files are read as they are
MAX_SETTINGS_BYTES = 1 << 20  # a preferences file is a few KiB; anything huge is not ours


class Key(StrEnum):
    VERSION = "version"
    MODEL = "model"
    DEVICE = "device"
    PRECISION = "precision"
    ENGINE = "engine"  # auto, torch or onnx: what runs the GPT's decode step
    SEGMENT_SIZE = "segment_size"
    BATCH_SIZE = "batch_size"  # 0 means automatic
    SPEAKER = "speaker"  # "seed:N" or "library:NAME"
    STREAM_PLAYBACK = "stream_playback"
    FOLLOW_WORDS = "follow_words"  # the result panel's Follow words: time a result's words
    GEOMETRY = "window/geometry"
    STATE = "window/state"
    LAST_FOLDER = "last_folder"
    BANNER_DISMISSED = "banner/dismissed"  # the situation the first-run banner was dismissed in
    LANGUAGE = "language"  # "system" (the locale's), "en" or "zh_CN"; applied at the next start
    HISTORY_LIMIT_MB = "history/limit_mb"  # the most disk the result history may use, in MiB
    TURN_PAUSE = "script/turn_pause"  # seconds of silence between a dialogue script's turns
    SERVE_PORT = "serve/port"  # Run > Serve on localhost's port (another when it is taken)
    LAST_PROJECT = "project/last"  # the project folder open at the last close; "" for none


DEFAULTS: dict[Key, object] = {
    Key.VERSION: SETTINGS_VERSION,
    Key.MODEL: "",
    Key.DEVICE: "",  # empty: core's default device
    Key.PRECISION: "fp32",
    Key.ENGINE: "auto",  # the command line's default too
    Key.SEGMENT_SIZE: 50,
    Key.BATCH_SIZE: 0,
    Key.SPEAKER: "seed:2",
    Key.STREAM_PLAYBACK: True,
    Key.FOLLOW_WORDS: False,  # timing costs CPU beside synthesis (docs/window.md)
    Key.GEOMETRY: QByteArray(),
    Key.STATE: QByteArray(),
    Key.LAST_FOLDER: "",
    Key.BANNER_DISMISSED: "",
    Key.LANGUAGE: "system",
    Key.HISTORY_LIMIT_MB: 1024,
    Key.TURN_PAUSE: 0.4,  # SynthesisRequest's (and the CLI's --turn-pause) default
    Key.SERVE_PORT: 8000,  # core/services/serve_session.py's DEFAULT_PORT, the CLI's default
    Key.LAST_PROJECT: "",
}


def damage(path: Path) -> str | None:
    """Why the file at `path` is not a settings file QSettings wrote, or None when it looks
    like one (or does not exist). QSettings itself reads almost anything without complaint."""
    try:
        if path.stat().st_size > MAX_SETTINGS_BYTES:
            return translate("Settings", "it is far too large")
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        return translate("Settings", "it cannot be read ({reason})").format(
            reason=exc.strerror or exc
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return translate("Settings", "it is not text")
    if "\0" in text:
        return translate("Settings", "it contains binary data")
    for line in text.splitlines():
        line = line.strip()
        if line and not (line[0] in ";#" or (line[0] == "[" and line[-1] == "]") or "=" in line):
            return translate("Settings", "it has lines that are not settings")
    return None


def saved_language() -> str:
    """The language saved in the preferences, read before the window (and its Settings) is
    made: without Settings' checks, which move a damaged file aside and must do so only once,
    for the window to report it. Anything unreadable reads as the system's language."""
    path = paths.data_dir() / SETTINGS_FILE
    if damage(path) is not None:
        return str(DEFAULTS[Key.LANGUAGE])
    value = QSettings(str(path), QSettings.Format.IniFormat).value(Key.LANGUAGE.value)
    return str(value) if isinstance(value, str) else str(DEFAULTS[Key.LANGUAGE])


class Settings:
    """Typed access: every read gets the type of its default back, whatever QSettings stored.
    `problem` is the sentence to show when the file could not be used as it was."""

    def __init__(self, qsettings: QSettings | None = None) -> None:
        self.problem: str | None = None
        self.save_problem: str | None = None  # why the last sync did not reach the disk
        self._memory: dict[str, object] | None = None  # set: nothing is written to disk
        if qsettings is None:
            path = paths.data_dir() / SETTINGS_FILE
            self._check_file(path)
            qsettings = QSettings(str(path), QSettings.Format.IniFormat)
        # Qt writes the file through a temp file and a rename (atomic sync is its default).
        qsettings.setAtomicSyncRequired(True)
        self._q = qsettings
        self._check_contents()

    def _check_file(self, path: Path) -> None:
        reason = damage(path)
        if reason is None:
            if path.is_file() and path.stat().st_size == 0:
                self.problem = translate(
                    "Settings",
                    "The settings file {path} was empty (perhaps cut short by a crash); the "
                    "defaults are used.",
                ).format(path=path)
            return
        kept = path.with_name(path.name + ".damaged")
        try:
            os.replace(path, kept)  # kept for the curious, out of the way of the next start
        except OSError:
            self._memory = {}  # cannot move it: leave it alone and keep this session in memory
            self.problem = translate(
                "Settings", "The settings file {path} is damaged ({reason}); the defaults are used."
            ).format(path=path, reason=reason)
            return
        self.problem = translate(
            "Settings",
            "The settings file {path} was damaged ({reason}); it was kept as {kept} and the "
            "defaults are used.",
        ).format(path=path, reason=reason, kept=kept.name)

    def _check_contents(self) -> None:
        if self._memory is not None:
            return
        if self._q.status() != QSettings.Status.NoError:
            self._memory = {}
            self.problem = translate(
                "Settings",
                "The settings file {path} cannot be read; the defaults are used and changes are "
                "not saved this session.",
            ).format(path=self._q.fileName())
            return
        stored = self._q.value(Key.VERSION.value)
        if stored is None:
            if self._q.allKeys():  # a file from before versions were written: version 1
                self._q.setValue(Key.VERSION.value, SETTINGS_VERSION)
            return
        try:
            version = int(str(stored))
        except ValueError:
            version = SETTINGS_VERSION + 1  # not ours to interpret: treat it as newer
        if version > SETTINGS_VERSION:
            # A newer app wrote it: reading its keys could misread them, and writing would
            # break it for that app. Defaults in memory; the file stays as it is.
            self._memory = {}
            self.problem = translate(
                "Settings",
                "The settings file {path} comes from a newer version of ChatTTS Studio (version "
                "{version}); it is left unchanged and the defaults are used this session.",
            ).format(path=self._q.fileName(), version=stored)

    @property
    def in_memory(self) -> bool:
        return self._memory is not None

    def _raw(self, key: Key, default: object) -> object:
        if self._memory is not None:
            return self._memory.get(key.value, default)
        return self._q.value(key.value, default)

    def get(self, key: Key) -> object:
        default = DEFAULTS[key]
        value = self._raw(key, default)
        try:
            if isinstance(default, bool):
                return value if isinstance(value, bool) else str(value).lower() == "true"
            # A value int() or float() cannot take falls back to the default (the except).
            if isinstance(default, int):
                if not isinstance(value, (str, bytes, SupportsInt, SupportsIndex)):
                    raise TypeError(value)
                return int(value)
            if isinstance(default, float):
                if not isinstance(value, (str, bytes, SupportsFloat, SupportsIndex)):
                    raise TypeError(value)
                number = float(value)
                return number if math.isfinite(number) else default
            if isinstance(default, QByteArray):
                return value if isinstance(value, QByteArray) else QByteArray()
            return str(value)
        except (TypeError, ValueError):
            return default

    def set(self, key: Key, value: object) -> None:
        if self._memory is not None:
            self._memory[key.value] = value
            return
        if key is not Key.VERSION and self._q.value(Key.VERSION.value) is None:
            self._q.setValue(Key.VERSION.value, SETTINGS_VERSION)
        self._q.setValue(key.value, value)

    def text(self, key: Key) -> str:
        return str(self.get(key))

    def number(self, key: Key) -> int:
        value = self.get(key)
        return value if isinstance(value, int) else int(str(DEFAULTS[key]))

    def seconds(self, key: Key) -> float:
        value = self.get(key)
        return value if isinstance(value, float) else float(str(DEFAULTS[key]))

    def flag(self, key: Key) -> bool:
        return bool(self.get(key))

    def sync(self) -> str | None:
        """Write now (a crash later loses nothing). A disk that refuses (read-only, full) never
        stops the window: the file keeps what it held (Qt writes a temp file and renames it),
        the changes stay in memory and go to disk at the next sync that can, and the sentence
        to show is returned (and kept in `save_problem` until a sync works again)."""
        if self._memory is not None:
            return None
        if self.save_problem is not None:
            # Qt keeps a QSettings' first error for ever: a fresh one, made now and holding
            # the same values, tells whether this sync works.
            failed = self._q
            self._q = QSettings(failed.fileName(), failed.format())
            self._q.setAtomicSyncRequired(True)
            for key in failed.allKeys():
                self._q.setValue(key, failed.value(key))
        with contextlib.suppress(RuntimeError):
            self._q.sync()
        if self._q.status() != QSettings.Status.AccessError:
            self.save_problem = None
            return None
        path = Path(self._q.fileName())
        self.save_problem = translate(
            "Settings",
            "The settings cannot be saved to {path} ({reason}); they are kept for this session "
            "and saved as soon as the disk allows.",
        ).format(path=path, reason=_refusal(path.parent))
        return self.save_problem


def _refusal(folder: Path) -> str:
    """Why `folder` takes no file now, in the app's words: a small file is tried there (the
    settings file itself cannot say: QSettings reports only that access failed)."""
    try:
        probe = new_file(folder, ".settings-check-")
    except OSError as exc:
        return core_text(os_error_reason(exc))
    try:
        fd = os.open(probe, os.O_WRONLY)
        try:
            os.write(fd, b"\0" * 8192)
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError as exc:
        return core_text(os_error_reason(exc))
    finally:
        with contextlib.suppress(OSError):
            os.unlink(probe)
    return translate("Settings", "the file could not be written")
