"""The window's preferences: one typed class over QSettings, stored in the app's data folder so
CHATTTS_STUDIO_HOME moves them along with the models and speakers."""

from enum import StrEnum

from PySide6.QtCore import QByteArray, QSettings

from core import paths


class Key(StrEnum):
    MODEL = "model"
    DEVICE = "device"
    PRECISION = "precision"
    SEGMENT_SIZE = "segment_size"
    BATCH_SIZE = "batch_size"  # 0 means automatic
    SPEAKER = "speaker"  # "seed:N" or "library:NAME"
    STREAM_PLAYBACK = "stream_playback"
    GEOMETRY = "window/geometry"
    STATE = "window/state"
    LAST_FOLDER = "last_folder"


DEFAULTS: dict[Key, object] = {
    Key.MODEL: "",
    Key.DEVICE: "",  # empty: core's default device
    Key.PRECISION: "fp32",
    Key.SEGMENT_SIZE: 50,
    Key.BATCH_SIZE: 0,
    Key.SPEAKER: "seed:2",
    Key.STREAM_PLAYBACK: True,
    Key.GEOMETRY: QByteArray(),
    Key.STATE: QByteArray(),
    Key.LAST_FOLDER: "",
}


class Settings:
    """Typed access: every read gets the type of its default back, whatever QSettings stored."""

    def __init__(self, qsettings: QSettings | None = None) -> None:
        self._q = qsettings or QSettings(
            str(paths.data_dir() / "gui-settings.ini"), QSettings.Format.IniFormat
        )

    def get(self, key: Key) -> object:
        default = DEFAULTS[key]
        value = self._q.value(key.value, default)
        try:
            if isinstance(default, bool):
                return value if isinstance(value, bool) else str(value).lower() == "true"
            if isinstance(default, int):
                return int(value)  # type: ignore[call-overload]
            if isinstance(default, QByteArray):
                return value if isinstance(value, QByteArray) else QByteArray()
            return str(value)
        except (TypeError, ValueError):
            return default

    def set(self, key: Key, value: object) -> None:
        self._q.setValue(key.value, value)

    def text(self, key: Key) -> str:
        return str(self.get(key))

    def number(self, key: Key) -> int:
        value = self.get(key)
        return value if isinstance(value, int) else int(str(DEFAULTS[key]))

    def flag(self, key: Key) -> bool:
        return bool(self.get(key))

    def sync(self) -> None:
        self._q.sync()
